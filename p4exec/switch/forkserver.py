"""Start many `p4exec switch` processes by forking one warmed-up process.

A switch process spends most of its start-up importing (gRPC, protobuf, the compiler: ~0.8 s of CPU) and,
once the controller pushes the pipeline, compiling the program (~0.6 s). A fabric of 48 switches on two cores
pays that 48 times. The fork server pays it once: it imports everything a switch runs, compiles the
program it is told to preload (into the compiler's in-process cache), and then forks one child per switch.
Each child is an ordinary `p4exec switch` (same flags, same code: `cli.main`), with its own session, its
output in its own file; a pushed config equal to the preloaded one is found in the inherited cache instead
of being compiled again. Nothing is shared at run time: a fork is a copy.

Protocol (one JSON object per line): the client writes `{"argv": [...], "out": PATH}`; the server answers
`{"pid": N}` (or `{"error": MSG}`) and, whenever a child ends, `{"exit": PID, "status": S}` (S as
`Popen.returncode`: negative for a signal). When its stdin closes (the client ended, however it ended), the
server stops its children (SIGTERM, then SIGKILL after a bound) and exits: no switch outlives its fabric.

`ForkServer` is the client side; `ForkedProcess` is the subset of `subprocess.Popen` that switch classes and
the fabric use (pid, poll, wait, send_signal, terminate, kill, returncode).
"""

from __future__ import annotations

import gc
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

STOP_GRACE_S = 5.0
_REAP_EVERY_S = 0.1


# ---------------------------------------------------------------------------------------------- the server
def _warm(preload: str | None) -> None:
    """Import what a switch runs, and compile `preload` into the compiler's cache (errors are left for the
    switch that loads it to report, with its own context)."""
    from p4exec.device.program import load_program
    from p4exec.p4runtime import P4RuntimeServer  # noqa: F401 - imported to be inherited
    from p4exec.switch import cli  # noqa: F401
    from p4exec.switch.dataplane import DataPlane  # noqa: F401
    from p4exec.switch.device import SwitchDevice  # noqa: F401

    if preload:
        try:
            load_program(Path(preload).read_bytes())
        except Exception as exc:  # noqa: BLE001 - the switch loading it says what is wrong
            print(f"p4exec forkserver: preload {preload}: {exc}", file=sys.stderr, flush=True)


def _child(argv: list[str], out: str) -> None:
    """In the forked child: become a switch process (never returns)."""
    code = 1
    try:
        os.setsid()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        fd = os.open(out, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)  # made by the client, private
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        os.close(null)
        _set_comm(b"p4exec-switch")  # what ps/top show
        _set_cmdline([sys.executable, "-m", "p4exec.switch", *argv])  # what /proc/PID/cmdline and ps -f show
        from p4exec.switch import cli

        sys.argv = ["p4exec switch", *argv]
        code = cli.main(argv) or 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, int) and exc.code is not None:
            print(exc.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - a child must end here, whatever happened
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _set_comm(name: bytes) -> None:
    try:
        import ctypes

        ctypes.CDLL(None).prctl(15, name[:15], 0, 0, 0)  # PR_SET_NAME
    except (OSError, AttributeError):
        pass


CMDLINE_ROOM = 32 << 10  # bytes of padding on the server's command line, rewritten by each child


def _set_cmdline(argv: list[str]) -> None:
    """Make /proc/self/cmdline say what this switch runs (tools find a switch by its flags): the server was
    started with room on its command line (`--room`), which the child overwrites in place, as setproctitle
    does. Left as it is if the room is too small."""
    try:
        import ctypes

        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        start, end = int(fields[45]), int(fields[46])  # arg_start, arg_end (fields 48 and 49)
        data = b"\0".join(a.encode() for a in argv) + b"\0"
        if len(data) > end - start:
            return
        ctypes.memmove(start, data + b"\0" * (end - start - len(data)), end - start)
    except (OSError, ValueError, IndexError):
        pass


def _reply(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def _reap(children: set[int]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            children.clear()
            return
        if pid == 0:
            return
        children.discard(pid)
        _reply({"exit": pid, "status": os.waitstatus_to_exitcode(status)})


def _stop_all(children: set[int]) -> None:
    for pid in children:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + STOP_GRACE_S
    while children and time.monotonic() < deadline:
        _reap(children)
        time.sleep(0.05)
    for pid in list(children):
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


def serve(preload: str | None = None) -> int:
    _warm(preload)
    # Everything warmed up so far is shared with the children; a garbage collection in a child would walk
    # (and so copy, page by page) all of it. Frozen objects are never collected: each child keeps sharing.
    gc.collect()
    gc.freeze()
    children: set[int] = set()
    stdin = sys.stdin.buffer
    _reply({"ready": os.getpid()})
    buf = b""
    try:
        while True:
            readable, _, _ = select.select([stdin.fileno()], [], [], _REAP_EVERY_S)
            _reap(children)
            if not readable:
                continue
            chunk = os.read(stdin.fileno(), 1 << 16)
            if not chunk:
                return 0
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    req = json.loads(line)
                    argv, out = [str(a) for a in req["argv"]], str(req["out"])
                except (ValueError, KeyError, TypeError) as exc:
                    _reply({"error": f"bad request: {exc}"})
                    continue
                sys.stdout.flush()
                sys.stderr.flush()
                try:
                    pid = os.fork()
                except OSError as exc:
                    _reply({"error": f"fork: {exc.strerror}"})
                    continue
                if pid == 0:
                    _child(argv, out)
                children.add(pid)
                _reply({"pid": pid})
    finally:
        _stop_all(children)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--room"] and len(args) >= 2:  # padding for the children's command lines
        args = args[2:]
    preload = None
    if args[:1] == ["--preload"] and len(args) == 2:
        preload = args[1]
    elif args:
        print("usage: python -m p4exec.switch.forkserver [--room PAD] [--preload CONFIG]", file=sys.stderr)
        return 2
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the client's Ctrl-C ends us through our stdin

    def on_term(_signum: int, _frame: object) -> None:
        raise SystemExit(0)  # through serve()'s finally: the children are stopped first

    signal.signal(signal.SIGTERM, on_term)
    return serve(preload)


# ---------------------------------------------------------------------------------------------- the client
class ForkServerError(RuntimeError):
    """The fork server is gone or refused a start."""


class ForkedProcess:
    """A switch process forked by the server: what the fabric does with a `subprocess.Popen`."""

    def __init__(self, server: ForkServer, pid: int) -> None:
        self.server = server
        self.pid = pid
        self.returncode: int | None = None
        self._ended = threading.Event()

    def _exited(self, status: int) -> None:
        self.returncode = status
        self._ended.set()

    def poll(self) -> int | None:
        if self.returncode is None and not self.server.alive() and not pid_alive(self.pid):
            self._exited(1)  # the server died first, nobody can tell us its status
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(f"p4exec switch (pid {self.pid})", timeout or 0.0)
            self._ended.wait(0.1 if left is None else min(0.1, left))
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def pid_alive(pid: int) -> bool:
    """Whether `pid` is a running (not zombie) process, from one read of its stat: it may exit between two."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


class ForkServer:
    """Client of one fork server process; `spawn()` is `subprocess.Popen` for `p4exec switch` argv."""

    def __init__(self, preload: Path | None = None, stderr: IO[bytes] | None = None,
                 ready_timeout_s: float = 60.0) -> None:
        cmd = [sys.executable, "-m", "p4exec.switch.forkserver", "--room", " " * CMDLINE_ROOM]
        cmd += ["--preload", str(preload)] if preload else []
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=stderr if stderr is not None else subprocess.DEVNULL,
                                     start_new_session=True)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._stdin = self.proc.stdin
        self._stdout = self.proc.stdout
        self._lock = threading.Lock()  # one spawn at a time: replies come in request order
        self._replies: list[dict[str, Any]] = []
        self._replied = threading.Condition()
        self._children: dict[int, ForkedProcess] = {}
        self._early_exits: dict[int, int] = {}
        self._ready_timeout_s = ready_timeout_s
        self._ready = False  # its warm-up overlaps with whatever the client does until the first spawn
        self._reader = threading.Thread(target=self._read, name="forkserver-reader", daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _read(self) -> None:
        for raw in self._stdout:
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            if "exit" in msg:
                with self._replied:
                    child = self._children.get(int(msg["exit"]))
                    if child is None:
                        self._early_exits[int(msg["exit"])] = int(msg["status"])
                if child is not None:
                    child._exited(int(msg["status"]))
                continue
            with self._replied:
                self._replies.append(msg)
                self._replied.notify_all()
        with self._replied:
            self._replied.notify_all()
        for child in list(self._children.values()):
            if child.returncode is None and not pid_alive(child.pid):
                child._exited(1)

    def _await_reply(self, key: str, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._replied:
            while not self._replies:
                left = deadline - time.monotonic()
                if not self._reader.is_alive() or left <= 0:
                    code = self.proc.poll()
                    why = f"exited with status {code}" if code is not None else f"no answer in {timeout:g} s"
                    raise ForkServerError(f"p4exec switch fork server {why}")
                self._replied.wait(min(left, 0.2))
            msg = self._replies.pop(0)
        if "error" in msg:
            raise ForkServerError(f"p4exec switch fork server: {msg['error']}")
        if key not in msg:
            raise ForkServerError(f"p4exec switch fork server: unexpected answer {msg}")
        return msg

    def spawn(self, argv: list[str], out: Path, timeout_s: float = 10.0) -> ForkedProcess:
        """Fork a switch running `p4exec switch ARGV`, its output appended to `out` (which must exist)."""
        with self._lock:
            if not self._ready:
                self._await_reply("ready", self._ready_timeout_s)
                self._ready = True
            try:
                self._stdin.write((json.dumps({"argv": argv, "out": str(out)}) + "\n").encode())
                self._stdin.flush()
            except (BrokenPipeError, ValueError):
                raise ForkServerError("p4exec switch fork server is gone") from None
            pid = int(self._await_reply("pid", timeout_s)["pid"])
            child = ForkedProcess(self, pid)
            with self._replied:
                self._children[pid] = child
                early = self._early_exits.pop(pid, None)
            if early is not None:
                child._exited(early)
            return child

    def close(self, timeout_s: float = STOP_GRACE_S + 2.0) -> None:
        """Stop the server; it stops any child still running first."""
        try:
            self._stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()  # our own child, by its Popen handle
            self.proc.wait(2.0)
        self._reader.join(1.0)


if __name__ == "__main__":
    sys.exit(main())
