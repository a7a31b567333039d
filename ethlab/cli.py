"""The `ethlab` command: a thin argparse shell; each subcommand lives in its own module.

A command module defines `register(subparsers)` which adds its parser and sets `func=run(args) -> int`.
Modules named `ethlab/*_cmd.py` are picked up automatically, so adding a command never edits this file.
Commands that accept free `--param value` pairs (topology parameters) read them from `args.extra`."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import pkgutil
import sys
from collections.abc import Sequence

import ethlab

# Modules whose names do not follow the *_cmd convention.
_EXTRA_MODULES = ("doctor",)


def _command_modules() -> list[str]:
    found = sorted(m.name for m in pkgutil.iter_modules(ethlab.__path__) if m.name.endswith("_cmd"))
    return found + [m for m in _EXTRA_MODULES if importlib.util.find_spec(f"ethlab.{m}") is not None]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ethlab", description="AI-cluster Ethernet fabric emulation testbed")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _command_modules():
        try:
            module = importlib.import_module(f"ethlab.{name}")
        except ImportError as err:  # one broken command must not take the others down
            print(f"ethlab: command module {name} not loaded: {err}", file=sys.stderr)
            continue
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    if extra and not getattr(args, "accepts_extra", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.extra = extra
    from topologies.model import TopologyError

    try:
        return int(args.func(args) or 0)
    except TopologyError as err:
        print(f"ethlab: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
