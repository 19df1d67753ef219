"""Worker threads for abandonable work: a bounded pool of *daemon* threads (a leaf).

Used wherever zigai races application code against a deadline and may abandon it (the tool
scheduler, graph forks, the runtime's bounded executor, harness producers).

Job: run submitted functions on at most ``max_workers`` threads and report each outcome
through a :class:`concurrent.futures.Future`, like ``ThreadPoolExecutor`` — with one
difference that matters for abandoned tool calls.

``ThreadPoolExecutor`` workers are joined when the interpreter exits, so one tool function
that ignores its cancellation token (a blocking ``time.sleep``, a socket read without a
timeout) keeps the process alive long after the run returned its timeout.  These workers are
daemon threads: the interpreter never waits for them.  A function still running at exit is
stopped where it stands by interpreter shutdown — its ``finally`` blocks and context
managers do not run — which is the documented fate of an abandoned call (its result was
already discarded).

Invariants: at most ``max_workers`` threads per pool; an idle worker is reused before a new
one starts; after :meth:`WorkerPool.shutdown` no function starts, queued futures are
cancelled and idle workers end.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

__all__ = ["WorkerPool"]

_Item = tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]


class WorkerPool:
    """At most ``max_workers`` daemon threads running submitted calls in submission order."""

    def __init__(self, max_workers: int, name: str) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be >= 1")
        self._max_workers = max_workers
        self._name = name
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._idle = threading.Semaphore(0)
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._shutdown = False

    @property
    def threads(self) -> int:
        """Worker threads started so far (never more than ``max_workers``)."""
        return len(self._threads)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        future: Future[Any] = Future()
        with self._lock:
            if self._shutdown:
                raise RuntimeError("the worker pool is shut down")
            self._queue.put((future, fn, args))
            if not self._idle.acquire(timeout=0) and len(self._threads) < self._max_workers:
                worker = threading.Thread(
                    target=self._work, name=f"{self._name}_{len(self._threads)}", daemon=True
                )
                self._threads.append(worker)
                worker.start()
        return future

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                self._queue.put(None)  # wake the next idle worker so it ends too
                return
            future, fn, args = item
            del item
            if future.set_running_or_notify_cancel():
                try:
                    result = fn(*args)
                except BaseException as exc:  # noqa: BLE001 - delivered through the future
                    future.set_exception(exc)
                else:
                    future.set_result(result)
            del future, fn, args
            self._idle.release()

    def shutdown(self) -> None:
        """Start nothing more: cancel queued calls and let idle workers end (never waits)."""
        with self._lock:
            self._shutdown = True
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                item[0].cancel()
        self._queue.put(None)
