"""One collector pause for the P4Runtime server's threads and the simulator: pauses nest across threads, the
collector comes back when the last ends, and a forked worker can pause although another thread held the lock."""

from __future__ import annotations

import gc
import os
import signal
import threading

from p4exec.runtime import gcpause


def test_pauses_nest_across_threads_and_the_last_one_resumes() -> None:
    assert gc.isenabled()
    inner_started, outer_may_end = threading.Event(), threading.Event()
    seen: list[bool] = []

    def other() -> None:
        with gcpause.paused() as was_on:
            seen.append(was_on)
            inner_started.set()
            outer_may_end.wait(10)
        seen.append(gc.isenabled())  # the main thread's pause still holds

    with gcpause.paused() as was_on:
        assert was_on and not gc.isenabled()
        t = threading.Thread(target=other)
        t.start()
        assert inner_started.wait(10)
        outer_may_end.set()
        t.join(10)
        assert not gc.isenabled()
    assert seen == [True, False]
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off_and_says_so() -> None:
    gc.disable()
    try:
        with gcpause.paused() as was_on:
            assert was_on is False
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_forked_child_pauses_although_another_thread_held_the_lock() -> None:
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with gcpause._lock:  # what a server thread does for an instant while it enters or leaves a pause
            holding.set()
            release.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    assert holding.wait(10)
    pid = os.fork()
    if pid == 0:  # the child: a pause must not wait for a lock no thread here will release
        code = 1
        signal.alarm(10)  # a child stuck on the lock dies of SIGALRM: a failure, not a hang
        try:
            with gcpause.paused():
                code = 0 if not gc.isenabled() else 2
        finally:
            os._exit(code)
    release.set()
    t.join(10)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
