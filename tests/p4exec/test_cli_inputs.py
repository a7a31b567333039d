"""The `p4exec` commands on the inputs of issue 34 (points 11 and 12): a binary or non-UTF-8 STF file,
/dev/zero, a FIFO, a directory, files in missing directories, and numbers out of range. Each is one clear
line and a non-zero exit — no traceback, no hang, no value silently clamped or ignored.

The cases run `main(argv)` in-process (tests/support/cli.py: same exit code and output, bounded by an alarm);
`test_each_command_refuses_as_a_process` keeps one case per command through a real interpreter, for what only
the process boundary shows (the module's entry point, the exit status, nothing on stderr but the line)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from p4exec.cli import main as p4exec_main
from p4exec.switch.cli import main as switch_main
from tests.support.cli import run_main

PROG = str(Path(__file__).resolve().parents[1] / "p4runtime" / "fuzz.p4")


def p4exec_process(*args: str, module: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def refused(done: subprocess.CompletedProcess[str], *words: str) -> None:
    text = done.stdout + done.stderr
    assert done.returncode != 0, text
    assert "Traceback" not in text, text
    lines = [ln for ln in done.stderr.splitlines() if ln.strip() and not ln.startswith("usage:")
             and not ln.startswith("  ") and not ln.startswith("[")]
    assert len(lines) == 1, done.stderr
    for w in words:
        assert w in text, (w, text)


@pytest.fixture
def odd_files(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "binary").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "latin1.stf").write_bytes(b"packet 0 \xe9\xe9\n")
    os.mkfifo(tmp_path / "fifo")
    return {"binary": str(tmp_path / "binary"), "latin1": str(tmp_path / "latin1.stf"),
            "fifo": str(tmp_path / "fifo"), "dir": str(tmp_path), "zero": "/dev/zero"}


@pytest.mark.parametrize("which,words", [("binary", ("not UTF-8",)), ("latin1", ("not UTF-8",)),
                                         ("fifo", ("not a regular file",)), ("dir", ("a directory",)),
                                         ("zero", ("not a regular file",))])
def test_stf_and_compile_refuse_odd_files(odd_files: dict[str, str], which: str, words: tuple[str, ...],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    refused(run_main(p4exec_main, ["stf", PROG, odd_files[which]], capsys), *words)
    refused(run_main(p4exec_main, ["compile", odd_files[which]], capsys), *words)


@pytest.mark.parametrize("args,words", [
    (("--queue-rate-port", "1:-5"), ("--queue-rate-port",)),
    (("--queue-rate-port", "1:nan"), ("--queue-rate-port",)),
    (("--queue-depth-port", "700:5"), ("--queue-depth-port",)),
    (("--grpc-server-addr", "127.0.0.1:99999"), ("99999",)),
    (("--device-id", "-1"), ("--device-id",)),
    (("--device-id", str(2 ** 64)), ("--device-id",)),
    (("--cpu-port", "-1"), ("--cpu-port",)),
    (("-i", "99999999@lo"), ("-i",)),
    (("-i", "1@" + "x" * 20), ("-i",)),
    (("--queue-depth", "-1"), ("--queue-depth",)),
    (("--queue-rate", "inf"), ("--queue-rate",)),
    (("--queue-rate-bps", "-3"), ("--queue-rate-bps",)),
    (("--priority-queues", "-1"), ("--priority-queues",)),
    (("--priority-queues", "0"), ("--priority-queues",)),
    (("--rx-ring-mb", "-1"), ("--rx-ring-mb",)),
    (("--log-file", "/nonexistent-dir/x.log"), ("--log-file", "does not exist")),
    (("--stats-file", "/nonexistent-dir/s.json"), ("--stats-file", "does not exist")),
    (("--state-budget-mb", "nan"), ("--state-budget-mb",)),
])
def test_switch_refuses_bad_values(args: tuple[str, ...], words: tuple[str, ...],
                                   capsys: pytest.CaptureFixture[str]) -> None:
    refused(run_main(switch_main, ["--no-p4", "--no-grpc", *args], capsys), *words)


def test_switch_refuses_odd_program_files(odd_files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    for which in ("zero", "fifo", "binary"):
        refused(run_main(switch_main, [odd_files[which], "--no-grpc"], capsys), "cannot load")


@pytest.mark.parametrize("args", [("--", "-1"), ("1", "--depth", "-3"), ("1", "--rate", "-1"),
                                  ("1", "--grpc-server-addr", "127.0.0.1:70000"), ("1", "--device-id", "-1")])
def test_queue_refuses_bad_values(args: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    refused(run_main(p4exec_main, ["queue", *args], capsys))


@pytest.mark.parametrize("module,args,words", [
    ("p4exec.cli", ("stf", PROG, "FIFO"), ("not a regular file",)),
    ("p4exec.cli", ("compile", "BINARY"), ("not UTF-8",)),
    ("p4exec.cli", ("queue", "1", "--depth", "-3"), ("--depth",)),
    ("p4exec.switch", ("--no-p4", "--no-grpc", "-i", "99999999@lo"), ("-i",)),  # a SystemExit("text") refusal
    ("p4exec.switch", ("FIFO", "--no-grpc"), ("cannot load",)),
])
def test_each_command_refuses_as_a_process(odd_files: dict[str, str], module: str, args: tuple[str, ...],
                                           words: tuple[str, ...]) -> None:
    argv = [odd_files["fifo"] if a == "FIFO" else odd_files["binary"] if a == "BINARY" else a for a in args]
    refused(p4exec_process(*argv, module=module), *words)
