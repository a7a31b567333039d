"""Where p4exec and BMv2 are known to differ on the project's STF tests, and why (docs/difftest.md).

Each entry is asserted, not skipped: the test checks that the documented evidence is what happens (p4c's
message, or exactly which packets differ), so a change on either side shows up as a failure to look at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from difftest.stf_both import StfVerdict


@dataclass(frozen=True)
class Expected:
    reason: str
    compile_error: str | None = None     # regex p4c-bm2-ss's error must match (the program is refused)
    compile_warning: str | None = None   # regex a warning of a successful compile must match
    load_error: str | None = None        # regex simple_switch_grpc's refusal of p4c's JSON must match
    differing_ports: tuple[int, ...] = ()  # the ports whose packets differ (program compiled)
    bmv2_meets_stf: bool = True          # BMv2's packets still satisfy the STF file (wildcards)

    def problems(self, v: StfVerdict) -> list[str]:
        """What about the verdict does not match this documented difference (empty: as documented)."""
        out = []
        if v.embedded_failures:
            out.append("p4exec fails its own STF test: " + "; ".join(v.embedded_failures))
        if self.compile_error is not None:
            if v.compile_error is None:
                out.append(f"p4c-bm2-ss now accepts the program (expected /{self.compile_error}/)")
            elif not re.search(self.compile_error, v.compile_error):
                out.append(f"p4c-bm2-ss refused it for another reason: {v.compile_error[:300]}")
            return out
        if v.compile_error is not None:
            return [*out, f"p4c-bm2-ss refused the program: {v.compile_error[:300]}"]
        if self.load_error is not None:
            if v.load_error is None or not re.search(self.load_error, v.load_error):
                out.append(f"BMv2 load: expected /{self.load_error}/, got {v.load_error!r}")
            return out
        if v.load_error is not None:
            return [*out, f"BMv2 could not load the program: {v.load_error[:300]}"]
        if self.compile_warning is not None and not re.search(self.compile_warning, v.compile_warnings):
            out.append(f"p4c-bm2-ss no longer warns /{self.compile_warning}/")
        ports = tuple(sorted({int(d.split()[1].rstrip(":")) for d in v.differences()}))
        if ports != self.differing_ports:
            out.append(f"packets differ on ports {ports}, documented {self.differing_ports}: {v.differences()}")
        if self.bmv2_meets_stf and v.bmv2_failures:
            out.append("BMv2's packets fail the STF file: " + "; ".join(v.bmv2_failures))
        if not self.bmv2_meets_stf and not v.bmv2_failures:
            out.append("BMv2 now meets the STF file: the documented difference is gone")
        return out


_NEWER_SYNTAX = ("syntax newer than p4c 1.2.4.17 (compound assignment and `for` loops came with later "
                 "P4_16 releases); p4exec implements them")

EXPECTED: dict[str, Expected] = {
    "08_parser_errors": Expected(
        "a `select` with no matching case and no default: the P4_16 spec says the parser rejects with "
        "error.NoMatch (p4exec); p4c-bm2-ss 1.2.4.17 leaves the state's default transition empty and BMv2 "
        "then accepts with error.NoError, so the program sees no parser error (its BMv2 mid-end lacks the "
        "HandleNoMatch pass: p4c issue #220, fixed for simple_switch by p4c PR #5746)",
        differing_ports=(1,), bmv2_meets_stf=False),
    "76_compound_assign": Expected(_NEWER_SYNTAX, compile_error=r"syntax error, unexpected \+"),
    "77_for_loops": Expected(_NEWER_SYNTAX, compile_error=r"syntax error"),
    "90_compound_lvalue_once": Expected(_NEWER_SYNTAX, compile_error=r"syntax error, unexpected \+"),
    "89_eval_order": Expected(
        "`a[i] = f(i)` with an inout i: P4_16 evaluates the l-value first, so p4exec writes the element i named "
        "before the call; p4c's side-effect ordering (frontends/p4/sideEffects.cpp) moves only calls into "
        "temporaries, leaves a call-free target in place, and BMv2 then writes the element of the new i. A "
        "target whose index holds a call is evaluated first on both",
        differing_ports=(1,), bmv2_meets_stf=False),
    "33_random": Expected(
        "random() is target-specific: each target has its own generator; the STF file expects '*' there and "
        "both targets meet it", differing_ports=(1,)),
    "50_action_selector": Expected(
        "BMv2 cannot run the default action of a table with an action profile or selector: p4c warns and a "
        "miss runs no action at all (action_run is none of the actions), where p4exec runs default_action",
        compile_warning=r"does not support default_action for MyIngress.ecmp \(due to action profiles\)",
        differing_ports=(2,), bmv2_meets_stf=False),
}
