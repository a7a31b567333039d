"""Long fuzz run of p4exec's frontend/checker: random token streams and mutated corpus programs.

Run: .venv/bin/python bench/fuzz_frontend.py [TOKEN_CASES] [MUTATED_CASES]   (default 8000 + 2000)

Every case must compile or fail with a located P4Error; anything else (a Python exception, an "internal
compiler error") is counted and the first few are printed with their input. Exit status 1 if any failed.
The short in-suite version is tests/p4exec/test_frontend_fuzz.py.
"""
from __future__ import annotations

import sys
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, given, settings  # noqa: E402

from tests.p4exec.p4fuzz import check_compile, mutated_programs, token_streams  # noqa: E402


def run(strategy, n: int, label: str) -> tuple[Counter, list[tuple[str, str]]]:
    outcomes: Counter = Counter()
    failures: list[tuple[str, str]] = []

    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def case(text: str) -> None:
        try:
            outcomes[check_compile(text)] += 1
        except BaseException:  # noqa: BLE001 - every failure is recorded, the run goes on
            outcomes["FAILED"] += 1
            if len(failures) < 5:
                failures.append((text, traceback.format_exc(limit=4)))

    t0 = time.monotonic()
    case()
    dt = time.monotonic() - t0
    total = sum(outcomes.values())
    print(f"{label}: {total} cases in {dt:.1f} s ({total / dt:.0f}/s): {dict(outcomes)}")
    return outcomes, failures


def main() -> int:
    n_tok = int(sys.argv[1]) if len(sys.argv) > 1 else 8000
    n_mut = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    total: Counter = Counter()
    bad: list[tuple[str, str]] = []
    for strategy, n, label in ((token_streams(), n_tok, "token streams"), (mutated_programs(), n_mut, "mutated")):
        o, f = run(strategy, n, label)
        total += o
        bad += f
    print(f"total: {sum(total.values())} cases, {total['FAILED']} failed")
    for text, tb in bad:
        print("---- input ----\n" + text[:2000] + "\n---- failure ----\n" + tb)
    return 1 if total["FAILED"] else 0


if __name__ == "__main__":
    sys.exit(main())
