"""Which programs the native pipeline runs, and why it declines the others: every `.p4` under the given files or
directories is compiled and loaded with `pipeline="native"`; the reason `p4exec.native.select` logs is grouped
and counted, most programs first (what to implement next in p4exec/native/cgen.py).

    .venv/bin/python -m difftest.native_coverage tests/p4 p4src /opt/p4ref-src/p4c/testdata/p4_16_samples/*-bmv2.p4

A directory contributes its `*.p4` files; programs that do not compile are counted apart (negative tests).
"""
from __future__ import annotations

import argparse
import logging
import re
import sys
from collections import defaultdict
from pathlib import Path


def programs(args: list[str]) -> list[Path]:
    out: list[Path] = []
    for a in args:
        p = Path(a)
        out.extend(sorted(p.glob("*.p4")) if p.is_dir() else [p])
    return out


def reason_of(path: Path) -> str | None:
    """None when the native pipeline runs the program, "compile error" when it does not compile, else the
    reason the native pipeline declined it."""
    from p4exec.compiler.program import compile_file
    from p4exec.errors import P4Error
    from p4exec.native import select
    from p4exec.v1model.loader import load

    try:
        prog = compile_file(str(path), include_dirs=[str(path.parent)])
    except P4Error:
        return "compile error"
    except Exception as e:  # noqa: BLE001 - counted, with its kind
        return f"compile crash: {type(e).__name__}"
    try:
        load(prog, pipeline="native")
    except Exception as e:  # noqa: BLE001
        return f"load failed: {type(e).__name__}: {e}"
    return select.native_reason(prog)


def category(reason: str) -> str:
    """The reason without the names of the program's own objects (so that programs group)."""
    return re.sub(r"\b(table|register|field list|action|extern|constant|name|local|header union) \S+", r"\1 …",
                  reason)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every program with its reason")
    args = ap.parse_args(argv)
    logging.getLogger("p4exec.native").setLevel(logging.ERROR)
    progs = programs(args.paths)
    groups: dict[str, list[str]] = defaultdict(list)
    native = 0
    for p in progs:
        r = reason_of(p)
        if r is None:
            native += 1
        else:
            groups[category(r)].append(p.name)
        if args.verbose:
            print(f"{p}: {'native' if r is None else r}", flush=True)
    negative = len(groups.pop("compile error", []))
    print(f"{len(progs)} programs: {native} native, {len(progs) - native - negative} in Python, "
          f"{negative} do not compile")
    for cat, names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"{len(names):4d}  {cat}: {', '.join(names[:6])}{' …' if len(names) > 6 else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
