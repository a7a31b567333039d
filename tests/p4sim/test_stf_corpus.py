"""Conformance corpus: every tests/p4/NN_topic.p4 must pass its STF test under `p4sim stf`.

The programs are plain P4_16 for v1model (p4c-bm2-ss accepts them too); the STF files are in p4c's
bmv2 test-driver format with literal expected packets, so a failure here is a behavioural
difference from BMv2, not a formatting quirk.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[1] / "p4"
P4SIM = Path(sys.executable).parent / "p4sim"
PROGRAMS = sorted(CORPUS.glob("[0-9][0-9]_*.p4"))


def test_corpus_size() -> None:
    """The acceptance criterion asks for at least 40 programs, each with an STF test."""
    assert len(PROGRAMS) >= 40
    for prog in PROGRAMS:
        assert prog.with_suffix(".stf").is_file(), f"{prog.name} has no STF test"


def test_corpus_covers_topics() -> None:
    """Spot-check that the constructs issue 2 lists appear somewhere in the corpus."""
    text = "\n".join(p.read_text() for p in PROGRAMS)
    stf = "\n".join(p.with_suffix(".stf").read_text() for p in PROGRAMS)
    for needle in [
        "int<", "bool", "typedef", "type bit", "const ", "enum bit<", "error {", "header ", "struct ", "[4]",
        ".next", ".last", "push_front", "pop_front", "lookahead", "advance", "verify(", "&&&", "..",
        "default:", "_:", "PacketTooShort", "NoMatch", "StackOutOfBounds", ": exact", ": lpm",
        ": ternary", ": range", ": optional", "const default_action", "const entries", "priority=",
        "size =", "counters =", "meters =", "action_profile(", "action_selector(", ".hit", ".miss",
        "action_run", "exit;", "return;", "|+|", "|-|", "<<", ">>", "++", "[15:8]", "(int<8>)", "?",
        "isValid()", "setValid()", "setInvalid()", "mark_to_drop", "9w511", "HashAlgorithm.crc16,",
        "HashAlgorithm.crc32,", "crc16_custom", "identity", "csum16", "xor16", "random(", "register<",
        "counter<", "direct_counter", "meter<", "direct_meter", "digest<", "clone(", "clone3(",
        "clone_preserving_field_list", "resubmit_preserving_field_list",
        "recirculate_preserving_field_list", "verify_checksum(", "update_checksum(",
        "verify_checksum_with_payload", "update_checksum_with_payload", "mcast_grp", "log_msg",
        "assert(", "assume(",
    ]:
        assert needle in text, f"no corpus program uses {needle!r}"
    for cmd in ["add ", "setdefault ", "mirroring_add ", "mc_mgrp_create", "mc_node_create",
                "mc_node_associate", "register_write", "meter_set_rates", "$"]:
        assert cmd in stf, f"no STF file uses {cmd!r}"


@pytest.mark.parametrize("prog", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_stf(prog: Path) -> None:
    """Run one corpus program under `p4sim stf` and require a pass (exit status 0)."""
    res = subprocess.run(
        [str(P4SIM), "stf", str(prog), str(prog.with_suffix(".stf"))],
        capture_output=True, text=True, timeout=60,
    )
    assert "Traceback" not in res.stderr, res.stderr
    assert res.returncode == 0, f"{prog.name} failed:\n{res.stdout}\n{res.stderr}"
