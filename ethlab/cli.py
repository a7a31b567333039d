"""The `ethlab` command: a thin argparse shell; each subcommand lives in its own module.

A command module defines `register(subparsers)` which adds its parser and sets `func=run(args) -> int`.
Modules named `ethlab/*_cmd.py` are picked up automatically, so adding a command never edits this file.
Commands that accept free `--param value` pairs (topology parameters) read them from `args.extra`."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import pkgutil
import signal
import sys
from collections.abc import Sequence

import ethlab

# Modules whose names do not follow the *_cmd convention.
_EXTRA_MODULES = ("doctor",)


def _command_modules() -> list[str]:
    found = sorted(m.name for m in pkgutil.iter_modules(ethlab.__path__) if m.name.endswith("_cmd"))
    return found + [m for m in _EXTRA_MODULES if importlib.util.find_spec(f"ethlab.{m}") is not None]


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """All commands, or only `<command>_cmd` when that module exists: importing every command module (some
    pull in plotting and packet libraries) would make `ethlab topo list` wait seconds for nothing."""
    parser = argparse.ArgumentParser(prog="ethlab", description="AI-cluster Ethernet fabric emulation testbed")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = _command_modules()
    if command is not None and f"{command}_cmd" in modules:
        modules = [f"{command}_cmd"]
    for name in modules:
        try:
            module = importlib.import_module(f"ethlab.{name}")
        except ImportError as err:  # one broken command must not take the others down
            print(f"ethlab: command module {name} not loaded: {err}", file=sys.stderr)
            continue
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)
    parser.set_defaults(_commands=set(sub.choices))
    return parser


def _raise_interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(first)
    if first is None or first not in parser.get_default("_commands"):
        parser = build_parser()  # help, or a command whose module is not named after it
    args, extra = parser.parse_known_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    if extra and not getattr(args, "accepts_extra", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.extra = extra
    # SIGTERM unwinds like Ctrl-C, so every `with` block tears its fabric down instead of leaking it.
    signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except (ValueError, OSError) as err:  # bad input (TopologyError, UsageError, SpecError, ...), a bad path
        print(f"ethlab: error: {_one_line(err)}", file=sys.stderr)
        return 1
    except Exception as err:  # noqa: BLE001 - no traceback reaches a user; ETHLAB_DEBUG=1 shows it
        if os.environ.get("ETHLAB_DEBUG"):
            raise
        print(f"ethlab: {args.command} failed: {type(err).__name__}: {err}\n"
              f"(ETHLAB_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 1


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split()) or type(err).__name__
    return text if len(text) <= 400 else text[:397] + "..."


if __name__ == "__main__":
    sys.exit(main())
