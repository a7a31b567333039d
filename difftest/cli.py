"""A persistent `simple_switch_CLI` session: one process per switch, one command at a time.

The CLI prints its prompt before reading each command, so the text between two prompts is one command's
answer. runtime_CLI reports a refused command as text (exit status stays 0): `failed()` spots it.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import subprocess
import time

from difftest.toolchain import CLI

PROMPT = "RuntimeCmd: "
_FAILED = re.compile(r"(?i)(\binvalid\b|\berror\b|could not|unknown syntax|traceback|bad format|exception"
                     r"|usage:|not a valid|has no )")


class CliError(RuntimeError):
    """The CLI is missing, died, or did not answer in time."""


class CliSession:
    def __init__(self, thrift_port: int, timeout_s: float = 30.0) -> None:
        exe = shutil.which(CLI)
        if exe is None:
            raise CliError(f"{CLI} not on PATH")
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.timeout_s = timeout_s
        self.proc = subprocess.Popen([exe, "--thrift-port", str(thrift_port)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        self._pending = b""
        self.banner = self._read_answer()

    def _read_answer(self) -> str:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + self.timeout_s
        marker = PROMPT.encode()
        while marker not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CliError(f"{CLI}: no answer within {self.timeout_s:g}s: {self._pending[-300:]!r}")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise CliError(f"{CLI} exited: {self._pending.decode(errors='replace')[-500:]}")
                self._pending += chunk
        answer, _, self._pending = self._pending.partition(marker)
        return answer.decode(errors="replace")

    def run(self, command: str) -> str:
        """The CLI's answer to one command (text, possibly an error message)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(command.encode() + b"\n")
        self.proc.stdin.flush()
        return self._read_answer()

    @staticmethod
    def failed(answer: str) -> bool:
        return bool(_FAILED.search(answer))

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                if self.proc.stdin is not None:
                    self.proc.stdin.close()
                self.proc.wait(timeout=5)
            except (subprocess.TimeoutExpired, BrokenPipeError):
                self.proc.kill()
                self.proc.wait(timeout=5)
