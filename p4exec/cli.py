"""`p4exec` command line: subcommands registered per module (compile, stf here; switch, queue elsewhere)."""
from __future__ import annotations

import argparse
import importlib
import sys

from p4exec.errors import P4Error

# Subcommands owned by other modules. A module either has register(subparsers) (adding parsers whose
# `func(args) -> int` runs the command) or main(argv) -> int, which gets the rest of the command line
# untouched (`p4exec switch` keeps simple_switch_grpc's `--` convention). Missing modules are skipped.
EXTRA_COMMANDS = {
    "switch": ("p4exec.switch.cli", "run the p4exec software switch (simple_switch_grpc flags)"),
    "queue": ("p4exec.switch.queue_cmd", "read or set egress queue depth/rate over P4Runtime"),
}


def _cmd_compile(args) -> int:
    from p4exec.compiler.program import compile_file

    prog = compile_file(args.program, args.include)
    for warning in prog.info.warnings:  # what p4c-bm2-ss would only warn about (and then behave differently)
        print(warning, file=sys.stderr)
    if args.output:
        with open(args.output, "w") as f:
            f.write(prog.to_json())
    if args.p4runtime_files:
        from google.protobuf import json_format, text_format

        for path in args.p4runtime_files.split(","):
            path = path.strip()
            if not path:
                continue
            with open(path, "w") as f:
                if path.endswith(".json"):
                    f.write(json_format.MessageToJson(prog.p4info))
                else:
                    f.write(text_format.MessageToString(prog.p4info))
    if args.emit_python:
        with open(args.emit_python, "w") as f:
            f.write(prog.pysource)
    if args.emit_c or args.pipeline == "native":
        from p4exec.native.cgen import Unsupported, generate

        try:
            cprog = generate(prog)
        except Unsupported as e:
            print(f"p4exec: the native pipeline does not support this program yet ({e}); "
                  f"it runs on the Python pipeline", file=sys.stderr)
            return 0
        if args.emit_c:
            with open(args.emit_c, "w") as f:
                f.write(cprog.source)
        if args.pipeline == "native":
            from p4exec.native.build import BuildError, build

            try:
                build(cprog.source, cprog.cdef)
            except BuildError as e:
                print(f"p4exec: native build failed ({e}); the program runs on the Python pipeline", file=sys.stderr)
    return 0


def _cmd_stf(args) -> int:
    from p4exec.stf.runner import run_stf

    if args.pipeline:
        from p4exec.native import select

        select.set_default(args.pipeline)
    res = run_stf(args.program, args.stf, seed=args.seed, include_dirs=args.include)
    out = res.report()
    print(out)
    return 0 if res.passed else 1


def register(sub) -> None:
    p = sub.add_parser("compile", help="compile a P4_16 v1model program (like p4c-bm2-ss)")
    p.add_argument("program")
    p.add_argument("-o", "--output", help="p4exec compiled form (JSON)")
    p.add_argument("--p4runtime-files", help="P4Info output file(s), comma separated (.txt/.txtpb text, .json)")
    p.add_argument("-I", dest="include", action="append", default=[], help="include directory")
    p.add_argument("--arch", default="v1model", choices=["v1model"])
    p.add_argument("--emit-python", help="write the generated Python code here (debugging)")
    p.add_argument("--emit-c", help="write the generated C code of the native pipeline here")
    p.add_argument("--pipeline", choices=["python", "native"],
                   help="native: also generate and build the C pipeline (cached), saying why when it cannot")
    p.set_defaults(func=_cmd_compile)
    s = sub.add_parser("stf", help="run a p4c STF test against a program")
    s.add_argument("program")
    s.add_argument("stf")
    s.add_argument("-I", dest="include", action="append", default=[], help="include directory")
    s.add_argument("--seed", type=int, default=1, help="seed of random()")
    s.add_argument("--pipeline", choices=["python", "native"],
                   help="run on the generated Python or the native C pipeline (default: $P4EXEC_PIPELINE, else native where a C compiler is present)")
    s.set_defaults(func=_cmd_stf)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="p4exec", description="p4exec: the embedded P4 target")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    register(sub)
    for name, (modname, helptext) in EXTRA_COMMANDS.items():
        mod = _module(modname)
        if mod is None:
            continue
        reg = getattr(mod, "register", None)
        if reg is not None:
            reg(sub)
        else:
            sub.add_parser(name, help=helptext, add_help=False)
    return ap


def _module(modname: str):
    try:
        return importlib.import_module(modname)
    except ImportError:
        return None


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in EXTRA_COMMANDS:
        mod = _module(EXTRA_COMMANDS[argv[0]][0])
        if mod is not None and getattr(mod, "register", None) is None and hasattr(mod, "main"):
            return int(mod.main(argv[1:]) or 0)
    ap = build_parser()
    args = ap.parse_args(argv)
    if not getattr(args, "func", None):
        ap.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except P4Error as e:
        print(str(e), file=sys.stderr)
        return 1
    except OSError as e:
        print(f"p4exec: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
