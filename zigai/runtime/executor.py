"""``BoundedExecutor``: run one function over many items concurrently, results in source order.

:meth:`BoundedExecutor.map` runs ``fn(item, ctx)`` for each item on at most ``max_workers``
threads and returns an owned :class:`ExecutorResults` whose values are in the items' order,
whatever order the threads finished in.

Items start only while fewer than ``max_workers`` run.  The first failing item (by
completion), the run's cancellation token or its deadline stop the batch: no further item
starts, the batch token every :class:`TaskContext` carries is set, and the coordinator waits
for the running ones to return (the drain) before it raises.  On a failure it raises the exception of the
lowest-index item that failed, unwrapped; otherwise ``Cancelled`` or ``RunTimedOut``.

Invariants: at most ``max_tasks`` items per call (:class:`TooManyTasks` before anything
runs); only the coordinator builds the returned values; Python cannot stop a thread, so a
task still running when the drain budget (``drain_timeout_s``, and never past the run
deadline) is spent is abandoned with its token set and its late result is discarded.
"""

from __future__ import annotations

import concurrent.futures as cf
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from zigai._owner import Owner
from zigai._workers import WorkerPool
from zigai.control import CancellationToken, RunControl
from zigai.runtime.errors import ExecutorClosed, TooManyTasks

__all__ = ["TaskContext", "BoundedExecutor", "ExecutorResults"]

T = TypeVar("T")
R = TypeVar("R")

_POLL_S = 0.05


@dataclass(frozen=True, slots=True)
class TaskContext:
    """What one item's call sees: its index and the batch's control (run deadline, batch token)."""

    index: int
    control: RunControl

    @property
    def cancelled(self) -> bool:
        return self.control.cancelled


class ExecutorResults(Owner, Generic[R]):
    """The source-ordered values of one :meth:`BoundedExecutor.map`; owned until ``close()``."""

    __slots__ = ("_values",)
    _closed_error = ExecutorClosed

    def __init__(self, values: tuple[R, ...]) -> None:
        super().__init__()
        self._values: tuple[R, ...] | None = values

    def _release(self) -> None:
        self._values = None

    @property
    def values(self) -> tuple[R, ...]:
        self._check()
        assert self._values is not None
        return self._values

    def __len__(self) -> int:
        return len(self.values)


class BoundedExecutor:
    """Bounded concurrent map with source-ordered results and cancel-then-drain on failure."""

    def __init__(self, *, max_workers: int = 4, max_tasks: int = 1024, drain_timeout_s: float = 5.0) -> None:
        for name, value in (("max_workers", max_workers), ("max_tasks", max_tasks)):
            if type(value) is not int or value <= 0:
                raise ValueError(f"{name} must be an int > 0, got {value!r}")
        if isinstance(drain_timeout_s, bool) or not isinstance(drain_timeout_s, (int, float)) or drain_timeout_s < 0:
            raise ValueError(f"drain_timeout_s must be a number >= 0, got {drain_timeout_s!r}")
        self._max_workers = max_workers
        self._max_tasks = max_tasks
        self._drain_timeout_s = float(drain_timeout_s)
        self._closed = False

    @property
    def max_workers(self) -> int:
        return self._max_workers

    @property
    def max_tasks(self) -> int:
        return self._max_tasks

    def close(self) -> None:
        self._closed = True

    def __enter__(self) -> BoundedExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def map(self, fn: Callable[[T, TaskContext], R], items: Iterable[T], *,
            control: RunControl | None = None) -> ExecutorResults[R]:
        """``fn(item, ctx)`` for every item, at most ``max_workers`` at a time; values in item order."""
        if self._closed:
            raise ExecutorClosed("the bounded executor was used after close()")
        batch = list(itertools.islice(items, self._max_tasks + 1))
        if len(batch) > self._max_tasks:
            raise TooManyTasks(f"more than {self._max_tasks} items were given; split the batch",
                               limit=self._max_tasks)
        run = control if control is not None else RunControl()
        run.check()
        token = CancellationToken()
        shared = RunControl(deadline=run.deadline, token=token)
        pool = WorkerPool(min(self._max_workers, max(1, len(batch))), "zigai-runtime")
        futures: list[cf.Future[R]] = []
        try:
            stop = self._feed(pool, fn, batch, shared, futures, run)
            if stop is not None:
                token.cancel(stop)
                self._drain(futures, run)
                self._raise_first_failure(futures)
                run.check()
            return ExecutorResults(tuple(future.result() for future in futures))
        finally:
            pool.shutdown()

    def _feed(self, pool: WorkerPool, fn: Callable[[T, TaskContext], R], batch: list[T],
              shared: RunControl, futures: list[cf.Future[R]], run: RunControl) -> str | None:
        """Start items only while fewer than ``max_workers`` run; the reason to stop early, or ``None``."""
        in_flight: set[cf.Future[R]] = set()
        while len(futures) < len(batch) or in_flight:
            while len(futures) < len(batch) and len(in_flight) < self._max_workers:
                future = pool.submit(fn, batch[len(futures)], TaskContext(len(futures), shared))
                futures.append(future)
                in_flight.add(future)
            if run.cancelled:
                return run.token.reason or "run cancelled"
            remaining = run.remaining()
            if remaining is not None and remaining <= 0:
                return "run deadline exceeded"
            budget = _POLL_S if remaining is None else min(_POLL_S, remaining)
            done, in_flight = cf.wait(in_flight, timeout=budget, return_when=cf.FIRST_COMPLETED)
            if any(future.exception() is not None for future in done):
                return "a sibling task failed"
        return None

    def _drain(self, futures: list[cf.Future[R]], run: RunControl) -> None:
        budget = self._drain_timeout_s
        remaining = run.remaining()
        if remaining is not None:
            budget = min(budget, remaining)
        cf.wait([future for future in futures if not future.done()], timeout=budget)

    @staticmethod
    def _raise_first_failure(futures: list[cf.Future[Any]]) -> None:
        for future in futures:
            if future.done() and future.exception() is not None:
                raise future.exception()  # type: ignore[misc]
