"""Differential testing: the embedded target (p4exec) against BMv2, the reference.

`stf_both` runs one STF test on both targets, `randomdiff` sends seeded random frames through both with the
fabric controller's entries; `python -m difftest` runs either from the command line. See docs/difftest.md.
"""
