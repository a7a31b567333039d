"""p4c's own v1model STF tests (testdata/p4_16_samples/*-bmv2.stf of a p4c checkout, e.g. /opt/p4ref-src/p4c) on both of
p4exec's pipelines: per test pass/fail/error on each, the pass counts, and every test where the two differ.
Nothing of p4c is copied into the repository; the directory is read where it lies.

    .venv/bin/python -m difftest.p4c_corpus /opt/p4ref-src/p4c/testdata/p4_16_samples [--limit N]

Each test runs in its own process (a program may loop forever on an input; it is stopped after --timeout s).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

KINDS = ("python", "native")


def one(p4: str, stf: str) -> dict:
    """Both pipelines on one test, in this process: {kind: "pass" | "fail" | "error: ..."} and whether the
    native pipeline really ran."""
    from p4exec.compiler.program import compile_file
    from p4exec.native import select
    from p4exec.stf.runner import run_stf

    out: dict = {}
    inc = [str(Path(p4).parent)]
    for kind in KINDS:
        select.set_default(kind)
        try:
            res = run_stf(p4, stf, seed=1, include_dirs=inc)
            out[kind] = "pass" if res.passed else "fail"
        except Exception as e:  # noqa: BLE001 - a test p4exec cannot run is counted, with its reason
            out[kind] = f"error: {type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
    try:
        out["native_ran"] = select.native_reason(compile_file(p4, include_dirs=inc)) is None
    except Exception:  # noqa: BLE001
        out["native_ran"] = False
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("samples", nargs="?", type=Path)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--glob", default="*-bmv2.stf", help="which STF files (default: the v1model ones)")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--one", nargs=2, metavar=("P4", "STF"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one(*args.one)))
        return 0
    if args.samples is None or not args.samples.is_dir():
        ap.error("give the p4_16_samples directory of a p4c checkout")
    tests = [(s.with_suffix(".p4"), s) for s in sorted(args.samples.glob(args.glob)) if s.with_suffix(".p4").is_file()]
    if args.limit:
        tests = tests[:args.limit]
    counts: Counter = Counter()
    differ = []
    for p4, stf in tests:
        try:
            r = subprocess.run([sys.executable, "-m", "difftest.p4c_corpus", "--one", str(p4), str(stf)],
                               capture_output=True, text=True, timeout=args.timeout)
            res = json.loads(r.stdout.strip().splitlines()[-1]) if r.stdout.strip() else \
                {k: f"error: exit {r.returncode}" for k in KINDS}
        except subprocess.TimeoutExpired:
            res = {k: "error: timeout" for k in KINDS}
        for k in KINDS:
            counts[(k, res[k].split(":")[0])] += 1
        counts["native_ran"] += bool(res.get("native_ran"))
        if res["python"] != res["native"]:
            differ.append(f"{stf.name}: python {res['python']} / native {res['native']}")
        print(f"{stf.name}: python {res['python']}, native {res['native']}"
              f"{'' if res.get('native_ran') else ' (native declined: ran in Python)'}", flush=True)
    print(f"{len(tests)} tests; " + "; ".join(
        f"{k}: {counts[(k, 'pass')]} pass, {counts[(k, 'fail')]} fail, {counts[(k, 'error')]} error" for k in KINDS)
        + f"; native pipeline ran {counts['native_ran']}; {len(differ)} differ")
    for d in differ:
        print("DIFFERENT", d)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
