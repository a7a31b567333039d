"""A command's `main(argv)` run in the test process as the installed script runs it, bounded in time.

Why: a new interpreter per case (import grpc, the compiler, the switch) costs a second or more on a loaded
machine, and the CLI input tests run dozens; in-process, imports and compiled programs are shared. What the
script's process adds is kept: `SystemExit("text")` prints the text and exits 1 as Python does, a blocked call
(a FIFO opened for reading, a server that never answers) is cut by SIGALRM, and what a `main` sets for its
process (signal handlers, the p4exec logger, the state budget) is put back so the next test sees a clean one.
Tests that need the process boundary itself still start the real command."""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import pytest

HANG_S = 30
_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1, signal.SIGALRM)


class Hung(BaseException):
    """The alarm fired: the command neither finished nor refused within the bound (a BaseException, so a
    command's own `except Exception` cannot turn a hang into what looks like a clean refusal)."""


def _alarm(_signum: int, _frame: object) -> None:
    raise Hung


@contextmanager
def _process_state_kept() -> Iterator[None]:
    from p4exec.runtime import budget

    handlers = {s: signal.getsignal(s) for s in _SIGNALS}
    logger = logging.getLogger("p4exec")
    log_state = (list(logger.handlers), logger.level, logger.propagate)
    saved_budget = budget.budget()
    try:
        yield
    finally:
        for s, h in handlers.items():
            signal.signal(s, h)
        for h in logger.handlers:
            if h not in log_state[0]:
                h.close()
        logger.handlers[:] = log_state[0]
        logger.setLevel(log_state[1])
        logger.propagate = log_state[2]
        budget.set_budget(saved_budget)


def run_main(main: Callable[[list[str]], int | None], argv: Sequence[str], capsys: pytest.CaptureFixture[str],
             hang_s: int = HANG_S) -> subprocess.CompletedProcess[str]:
    """`main(argv)`'s exit code, stdout and stderr as a process would give them; over `hang_s` fails the test."""
    capsys.readouterr()  # what earlier steps printed is not this command's output
    with _process_state_kept():
        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(hang_s)
        try:
            try:
                code = main(list(argv))
            finally:
                signal.alarm(0)
        except SystemExit as exit_:
            if exit_.code is None or isinstance(exit_.code, int):
                code = exit_.code or 0
            else:  # as the interpreter does: the message on stderr, exit status 1
                print(exit_.code, file=sys.stderr)
                code = 1
        except Hung:
            pytest.fail(f"hung over {hang_s} s: {list(argv)}")
    out = capsys.readouterr()
    return subprocess.CompletedProcess(list(argv), int(code or 0), out.out, out.err)
