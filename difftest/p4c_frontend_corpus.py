"""p4exec's frontend on p4c's public corpus, as a new user would meet it: which valid v1model programs it
compiles, whether its P4Info equals the one p4c's test suite expects, and which invalid ones it wrongly accepts.
Nothing of p4c is copied; the checkout is read where it lies (e.g. /opt/p4ref-src/p4c/testdata).

    PATH=/opt/p4ref/bin:$PATH .venv/bin/python -m difftest.p4c_frontend_corpus /opt/p4ref-src/p4c/testdata

- valid: every `p4_16_samples/**/*.p4` naming v1model that `p4c-bm2-ss` accepts; p4exec compiles it or not
  (an `unsupported:` refusal counts as not compiled);
- P4Info: for a compiled sample with `p4_16_samples_outputs/<path>.p4info.txtpb`, protobuf equality with it;
- invalid: every `p4_16_errors` and `p4_16_bmv_errors` program naming v1model that `p4c-bm2-ss` refuses;
  p4exec must refuse it too;
- any exception other than a located P4 error is a traceback and is listed.

p4c's verdicts are cached (--cache, JSON keyed by path and file size) since they do not change between runs.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


def p4c_accepts(prog: Path, timeout: float) -> bool:
    exe = shutil.which("p4c-bm2-ss")
    if exe is None:
        raise SystemExit("p4c-bm2-ss is not on PATH (PATH=/opt/p4ref/bin:$PATH)")
    with tempfile.TemporaryDirectory() as tmp:
        try:
            r = subprocess.run([exe, "--arch", "v1model", "-o", f"{tmp}/out.json", str(prog)], cwd=prog.parent,
                               capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
    return r.returncode == 0


def p4exec_compile(path: str, expected: str | None) -> dict:
    """One program through `compile_file`: {"verdict": ok|error|unsupported|traceback, "detail", "p4info"}."""
    from google.protobuf import text_format
    from p4.config.v1 import p4info_pb2

    from p4exec.compiler.program import compile_file
    from p4exec.errors import P4Error, P4Unsupported

    out: dict = {}
    try:
        c = compile_file(path, include_dirs=[str(Path(path).parent)])
        out["verdict"] = "ok"
        if expected is not None:
            want = text_format.Parse(Path(expected).read_text(), p4info_pb2.P4Info())
            out["p4info"] = "equal" if want == c.p4info else "differs"
    except P4Unsupported as e:
        out.update(verdict="unsupported", detail=str(e).splitlines()[0][:200])
    except P4Error as e:
        text = str(e).splitlines()[0][:200]
        located = not text.startswith("<unknown>") and ":" in text.split(" ", 1)[0]
        out.update(verdict="error", detail=text, located=located)
    except Exception as e:  # noqa: BLE001 - counted and listed: no traceback may reach a user
        out.update(verdict="traceback", detail=f"{type(e).__name__}: {e}"[:200])
    return out


def _v1model(paths) -> list[Path]:
    return sorted(p for p in paths if "v1model" in p.read_text(errors="replace"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("testdata", type=Path, help="testdata/ of a p4c checkout")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "p4c_verdicts.json")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--list", action="store_true", help="print every program not compiled / differing")
    args = ap.parse_args(argv)
    td = args.testdata
    samples = _v1model((td / "p4_16_samples").rglob("*.p4"))
    errors = _v1model([*(td / "p4_16_errors").glob("*.p4"), *(td / "p4_16_bmv_errors").glob("*.p4")])
    cache = json.loads(args.cache.read_text()) if args.cache.is_file() else {}

    def key(p: Path) -> str:
        return f"{p}:{p.stat().st_size}"

    todo = [p for p in samples + errors if key(p) not in cache]
    with ThreadPoolExecutor(args.jobs) as pool:
        for p, ok in zip(todo, pool.map(lambda q: p4c_accepts(q, args.timeout), todo), strict=True):
            cache[key(p)] = ok
    args.cache.write_text(json.dumps(cache))
    valid = [p for p in samples if cache[key(p)]]
    invalid = [p for p in errors if not cache[key(p)]]

    def expected(p: Path) -> str | None:
        e = td / "p4_16_samples_outputs" / p.relative_to(td / "p4_16_samples").parent / f"{p.name}.p4info.txtpb"
        return str(e) if e.is_file() else None

    # fork workers, each replaced after 40 programs (the compiler caches what it compiled)
    with multiprocessing.get_context("fork").Pool(args.jobs, maxtasksperchild=40) as workers:
        vres = workers.starmap(p4exec_compile, [(str(p), expected(p)) for p in valid], chunksize=1)
        ires = workers.starmap(p4exec_compile, [(str(p), None) for p in invalid], chunksize=1)
    compiled = sum(r["verdict"] == "ok" for r in vres)
    with_info = [r for r in vres if "p4info" in r]
    equal = sum(r["p4info"] == "equal" for r in with_info)
    accepted = [p for p, r in zip(invalid, ires, strict=True) if r["verdict"] == "ok"]
    tracebacks = [(p, r) for p, r in zip(valid + invalid, vres + ires, strict=True) if r["verdict"] == "traceback"]
    unlocated = [(p, r) for p, r in zip(valid + invalid, vres + ires, strict=True)
                 if r["verdict"] == "error" and not r["located"]]
    if args.list:
        for p, r in zip(valid, vres, strict=True):
            if r["verdict"] != "ok" or r.get("p4info") == "differs":
                print(f"valid {p.relative_to(td)}: {r['verdict']} {r.get('p4info', '')} {r.get('detail', '')}")
        for p in accepted:
            print(f"invalid accepted {p.relative_to(td)}")
    for p, r in tracebacks + unlocated:
        print(f"{'TRACEBACK' if r['verdict'] == 'traceback' else 'UNLOCATED'} {p.relative_to(td)}: {r['detail']}")
    print(f"valid v1model samples (p4c-bm2-ss accepts {len(valid)} of {len(samples)}): p4exec compiles {compiled}; "
          f"P4Info equal to p4c's expected one for {equal} of {len(with_info)} compiled samples that have one; "
          f"invalid v1model programs (p4c-bm2-ss refuses {len(invalid)} of {len(errors)}): p4exec accepts "
          f"{len(accepted)}; tracebacks {len(tracebacks)}; errors without a location {len(unlocated)}")
    return 1 if tracebacks or unlocated else 0


if __name__ == "__main__":
    sys.exit(main())
