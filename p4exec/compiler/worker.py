"""Compile P4 source that came from the network in a bounded worker process.

A ``SetForwardingPipelineConfig`` may carry P4 source.  Compiling it in the switch process would let one
request read the switch's filesystem (``#include``), or freeze it (a macro bomb, a deep program) while it
holds the server's lock.  So source goes to ``python -m p4exec.compiler.worker``: a fresh process with CPU,
address-space, output and wall-clock limits that preprocesses in untrusted mode (only ``<core.p4>`` and
``<v1model.p4>``; cpp runs as ``nobody`` in an empty private directory when the switch runs as root) and
compiles.  It hands back ``p4exec compile``'s JSON, which the switch then loads like any compiled config:
that format is already preprocessed, so loading it reads no file.  Nothing but text crosses back (no pickle).

Errors keep their ``file:line:col`` and never name a file other than the program and the standard headers.
"""
from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass

from p4exec.errors import P4Error, SourceLoc
from p4exec.frontend.preprocess import bounded
from p4exec.runtime.errors import RuntimeOpError

DEVICE_CONFIG = "<device_config>"


@dataclass(frozen=True)
class WorkerLimits:
    """What one compile of received source may cost; a large real program needs well under a tenth."""
    cpu_s: int = 60
    memory_bytes: int = 2 << 30
    wall_s: float = 120.0
    output_bytes: int = 64 << 20
    input_bytes: int = 8 << 20


DEFAULT_LIMITS = WorkerLimits()
# Compiles of received source running at once in this process: each worker may take its memory limit, so
# unbounded concurrent VERIFYs added up (6 workers, 2.7 GB). One more is refused at once (RESOURCE_EXHAUSTED)
# rather than queued: a waiting request would hold one of the server's threads.
MAX_CONCURRENT = 2
_slots = threading.BoundedSemaphore(MAX_CONCURRENT)


def is_compiled_json(data: bytes) -> bool:
    """True for ``p4exec compile`` output (the format that needs no preprocessing)."""
    head = data.lstrip()[:1]
    if head != b"{":
        return False
    try:
        obj = json.loads(data)
    except ValueError:
        return False
    return isinstance(obj, dict) and isinstance(obj.get("program"), str)


def untrusted_config(data: bytes, limits: WorkerLimits = DEFAULT_LIMITS) -> bytes:
    """A config a client sent, as `p4exec compile` JSON: P4 source is compiled in the bounded worker first."""
    if is_compiled_json(data):
        return data
    return compile_in_worker(data, limits).encode()


def compile_in_worker(source: bytes, limits: WorkerLimits = DEFAULT_LIMITS) -> str:
    """``p4exec compile`` JSON for ``source``, compiled in a bounded child process; P4Error otherwise."""
    where = SourceLoc(DEVICE_CONFIG, 1, 1)
    if len(source) > limits.input_bytes:
        raise P4Error(f"program too large ({len(source)} bytes; at most {limits.input_bytes})", where)

    if not _slots.acquire(blocking=False):
        raise RuntimeOpError("RESOURCE_EXHAUSTED", f"{MAX_CONCURRENT} compiles of received source are already "
                             "running on this switch: try again when one has finished")
    try:
        return _run_worker(source, limits, where)
    finally:
        _slots.release()


def _run_worker(source: bytes, limits: WorkerLimits, where: SourceLoc) -> str:
    with tempfile.TemporaryFile() as out:
        try:
            # -I: no current directory, PYTHONPATH or user site on sys.path, so nothing in the server's working
            # directory is imported; cwd "/" for the same reason.
            argv = bounded([sys.executable, "-I", "-m", "p4exec.compiler.worker"], limits.cpu_s,
                           limits.memory_bytes, limits.output_bytes)
            proc = subprocess.run(argv, input=source, stdout=out, stderr=subprocess.DEVNULL, cwd="/",
                                  timeout=limits.wall_s)
        except subprocess.TimeoutExpired:
            raise P4Error(f"compiling the program took longer than {limits.wall_s:g} s (stopped)", where) from None
        out.seek(0)
        raw = out.read()
    try:
        reply = json.loads(raw) if raw else None
    except ValueError:
        reply = None
    if proc.returncode != 0 or not isinstance(reply, dict):
        # no answer: the kernel stopped it (SIGXCPU/SIGKILL) or an allocation failed (MemoryError)
        raise P4Error(f"compiling the program exceeded its CPU or memory limit (stopped; status {proc.returncode})",
                      where)
    if "error" in reply:
        f, ln, col = reply.get("loc") or (DEVICE_CONFIG, 1, 1)
        raise P4Error(str(reply["error"]), SourceLoc(str(f), int(ln), int(col)))
    return str(reply["compiled"])


# ---------------------------------------------------------------------------------------------- the child
def _private_tree() -> tuple[str, str, str, tuple[int, int] | None]:
    """(root, empty cwd, include dir, user for cpp): a fresh directory only the preprocessor's user can read,
    holding copies of the standard headers (the checkout itself may not be readable by ``nobody``)."""
    from p4exec.frontend.preprocess import INCLUDE_DIR, SYSTEM_INCLUDES

    root = tempfile.mkdtemp(prefix="p4exec-src-")
    work, inc = os.path.join(root, "work"), os.path.join(root, "include")
    os.mkdir(work, 0o700)
    os.mkdir(inc, 0o700)
    for name in SYSTEM_INCLUDES:
        shutil.copyfile(INCLUDE_DIR / name, os.path.join(inc, name))
    run_as = None
    if os.geteuid() == 0:
        try:
            nobody = pwd.getpwnam("nobody")
            run_as = (nobody.pw_uid, nobody.pw_gid)
        except KeyError:
            run_as = (65534, 65534)
        for path in (root, work, inc, *(os.path.join(inc, n) for n in SYSTEM_INCLUDES)):
            os.chown(path, *run_as)
    return root, work, inc, run_as


def _compile(source: bytes) -> dict:
    from p4exec.compiler.program import load_compiled
    from p4exec.frontend.preprocess import preprocess

    try:
        text = source.decode("utf-8")
    except UnicodeDecodeError:
        raise P4Error("device config is neither UTF-8 P4 source nor p4exec JSON",
                      SourceLoc(DEVICE_CONFIG, 0, 0)) from None
    root, work, inc, run_as = _private_tree()
    try:
        pre = preprocess(text, DEVICE_CONFIG, untrusted=True, base_dir=work, include_dir=inc, run_as=run_as)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    compiled = load_compiled(json.dumps({"filename": DEVICE_CONFIG, "program": pre.text, "linemap": pre.linemap}))
    return {"compiled": compiled.to_json()}


def main() -> int:
    source = sys.stdin.buffer.read()
    try:
        reply = _compile(source)
    except P4Error as err:
        reply = {"error": err.message, "loc": [err.loc.file, err.loc.line, err.loc.col]}
    except RecursionError:
        reply = {"error": "program nesting too deep", "loc": [DEVICE_CONFIG, 1, 1]}
    except MemoryError:
        return 3
    sys.stdout.write(json.dumps(reply))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
