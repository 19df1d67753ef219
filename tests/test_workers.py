"""zigai._workers.WorkerPool: bounded daemon workers, reuse, outcomes, shutdown."""

from __future__ import annotations

import threading
from concurrent.futures import wait

import pytest

from zigai._workers import WorkerPool


def test_outcomes_arrive_through_futures_and_idle_workers_are_reused() -> None:
    pool = WorkerPool(2, "zigai-test")
    assert pool.submit(lambda x: x * 2, 21).result(timeout=10) == 42
    failing = pool.submit(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        failing.result(timeout=10)
    assert pool.submit(threading.current_thread).result(timeout=10).daemon
    assert pool.threads == 1  # one worker served all three in turn
    pool.shutdown()


def test_at_most_max_workers_threads_and_shutdown_cancels_what_waits() -> None:
    release = threading.Event()
    pool = WorkerPool(2, "zigai-test")
    busy = [pool.submit(release.wait, 10) for _ in range(2)]
    queued = pool.submit(lambda: "never")
    assert pool.threads == 2
    pool.shutdown()
    assert queued.cancelled()
    with pytest.raises(RuntimeError, match="shut down"):
        pool.submit(lambda: None)
    release.set()
    done, _ = wait(busy, timeout=10)
    assert len(done) == 2 and all(f.result() for f in busy)


def test_max_workers_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_workers"):
        WorkerPool(0, "zigai-test")


def test_a_future_cancelled_while_queued_never_runs_and_shutdown_twice_is_harmless() -> None:
    release = threading.Event()
    ran: list[str] = []
    pool = WorkerPool(1, "zigai-test")
    busy = pool.submit(release.wait, 10)
    queued = pool.submit(ran.append, "queued")
    assert queued.cancel()
    release.set()
    assert busy.result(timeout=10) is True
    assert pool.submit(ran.append, "after").result(timeout=10) is None
    assert ran == ["after"]
    pool.shutdown()
    pool.shutdown()  # the wake-up marker left by the first call is skipped
