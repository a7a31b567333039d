"""Safety net for compiler refactorings: write what the compiler produces for every program in the repository,
so two trees (before/after a change) can be compared byte for byte.

    .venv/bin/python tests/p4exec/codegen_snapshot.py write /tmp/before     # on the old tree
    .venv/bin/python tests/p4exec/codegen_snapshot.py write /tmp/after      # on the new tree
    .venv/bin/python tests/p4exec/codegen_snapshot.py compare /tmp/before /tmp/after

For each program (tests/p4/**/*.p4, p4src/*.p4, bench/*.p4) it writes the generated Python (`.py`), the P4Info
as text (`.p4info`) and the runtime bindings and warnings (`.bind`), or the located error of a rejected
program (`.err`). Keep snapshots outside the repository: they are large and change with every codegen change.
"""
from __future__ import annotations

import filecmp
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def programs() -> list[Path]:
    found = set(ROOT.glob("tests/p4/**/*.p4")) | set(ROOT.glob("p4src/*.p4")) | set(ROOT.glob("bench/*.p4"))
    return sorted(found)


def write(out: Path) -> int:
    sys.path.insert(0, str(ROOT))
    from google.protobuf import text_format

    from p4exec.compiler.program import compile_file
    from p4exec.errors import P4Error

    out.mkdir(parents=True, exist_ok=True)
    progs = programs()
    for p in progs:
        rel = p.relative_to(ROOT)
        stem = out / str(rel).replace("/", "__")
        try:
            c = compile_file(str(rel))
        except P4Error as e:
            stem.with_name(stem.name + ".err").write_text(str(e))
            continue
        stem.with_name(stem.name + ".py").write_text(c.pysource)
        stem.with_name(stem.name + ".p4info").write_text(text_format.MessageToString(c.p4info))
        stem.with_name(stem.name + ".bind").write_text(f"{c.bindings!r}\n{c.info.warnings!r}\n")
    print(f"{len(progs)} programs written to {out}")
    return 0


def compare(a: Path, b: Path) -> int:
    names = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
    differ = [n for n in names if not ((a / n).exists() and (b / n).exists() and filecmp.cmp(a / n, b / n, False))]
    for n in differ:
        print("differs:", n)
    print(f"{len(names)} files, {len(differ)} differ")
    return 1 if differ else 0


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "write":
        return write(Path(argv[1]))
    if len(argv) == 3 and argv[0] == "compare":
        return compare(Path(argv[1]), Path(argv[2]))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
