"""The compiled-program cache under concurrency: a controller pushes one program to many in-process switches
from a thread pool, and the program must be compiled once, not once per thread that asked first."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

import pytest

import p4exec.compiler.program as program_mod
from p4exec.compiler.program import compile_source
from p4exec.errors import P4Error

ROOT = Path(__file__).resolve().parents[2]


def _source() -> str:
    # a comment no other test has: a cache miss for this test alone
    return f"// {uuid.uuid4()}\n" + (ROOT / "p4src" / "basic_l3.p4").read_text()


def _ask_at_once(text: str, threads: int, monkeypatch: pytest.MonkeyPatch) -> tuple[list[object], int]:
    runs = [0]
    real_run = program_mod.Compiler.run

    def counted(self: object) -> None:
        runs[0] += 1
        real_run(self)  # type: ignore[arg-type]

    monkeypatch.setattr(program_mod.Compiler, "run", counted)
    start = threading.Barrier(threads)
    got: list[object] = [None] * threads

    def ask(i: int) -> None:
        start.wait()
        try:
            got[i] = compile_source(text, str(ROOT / "p4src" / "basic_l3.p4"), [str(ROOT / "p4src")])
        except P4Error as err:
            got[i] = err

    workers = [threading.Thread(target=ask, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
    return got, runs[0]


def test_threads_asking_for_one_program_at_once_compile_it_once(monkeypatch: pytest.MonkeyPatch) -> None:
    got, runs = _ask_at_once(_source(), 8, monkeypatch)
    assert runs == 1
    assert all(g is got[0] for g in got)
    assert type(got[0]).__name__ == "CompiledProgram"
    assert not program_mod._compiling  # no gate left behind


def test_a_program_that_fails_fails_for_every_thread_and_leaves_no_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    got, _runs = _ask_at_once(_source() + "\ncontrol broken(", 4, monkeypatch)
    assert all(isinstance(g, P4Error) for g in got)
    assert not program_mod._compiling
