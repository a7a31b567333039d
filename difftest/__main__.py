"""`python -m difftest stf [FILE...]` and `python -m difftest random [--packets N]`: run the differential
tests by hand and print what differs (needs the BMv2 toolchain on PATH)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from difftest.stf_both import ROOT, run_both
from difftest.toolchain import skip_reason


def stf_files() -> list[Path]:
    return sorted((ROOT / "tests" / "p4").glob("*.stf")) + sorted((ROOT / "tests" / "dataplane").glob("*.stf"))


def _stf(args: argparse.Namespace) -> int:
    files = [Path(f) for f in args.files] or stf_files()
    agree = 0
    for f in files:
        try:
            verdict = run_both(f)
        except Exception as e:  # noqa: BLE001 - one broken file must not hide the others' results
            print(f"{f.name}: could not run: {type(e).__name__}: {e}")
            continue
        ok = verdict.agree and not verdict.bmv2_failures and not verdict.embedded_failures
        agree += ok
        print(f"{f.name}: {'same' if ok else 'DIFFERENT'}" if ok else verdict.report(), flush=True)
    print(f"{agree} of {len(files)} STF tests: same packets on both targets, STF expectations met on both")
    return 0 if agree == len(files) else 1


def _random(args: argparse.Namespace) -> int:
    from difftest.randomdiff import PROGRAMS, run_random

    ok = True
    for program in args.programs or PROGRAMS:
        report = run_random(program, args.packets, seed=args.seed, batch=args.batch, policy=args.policy)
        print(report.summary(), flush=True)
        ok = ok and report.agree
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m difftest", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("stf", help="run STF tests on p4exec and BMv2 and compare")
    p.add_argument("files", nargs="*", help="STF files (default: tests/p4/*.stf and tests/dataplane/*.stf)")
    p.set_defaults(fn=_stf)
    p = sub.add_parser("random", help="seeded random frames through both targets with the fabric's entries")
    p.add_argument("programs", nargs="*", help="basic_l3 and/or ethplus (default: both)")
    p.add_argument("--packets", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--batch", type=int, default=1,
                   help="frames sent before waiting for BMv2 (>1 is faster but lets queues build up)")
    p.add_argument("--policy", default="ecmp", help="ethplus.p4 path selection: ecmp or spray (clock-free)")
    p.set_defaults(fn=_random)
    args = parser.parse_args(argv)
    reason = skip_reason()
    if reason:
        print(f"python -m difftest: {reason}", file=sys.stderr)
        return 2
    return int(args.fn(args))


if __name__ == "__main__":
    sys.exit(main())
