"""Racing application callbacks against the run deadline and cancellation, like tool calls.

:func:`call_bounded` calls one application callback — a ``FunctionModel`` function, a
dynamic instruction, an output function or validator, the dynamic tool approval — so that
the *caller* returns by the deadline, or promptly after the run's token is set, even when
the callback blocks.  :class:`BoundedIterator` does the same for every item an application
iterator yields (a ``FunctionModel`` stream function).

Invariants:

* with no deadline and a token that nobody outside the run holds
  (``RunControl.cancellable`` is False), the callback runs inline on the caller's thread —
  there is nothing to race, so no thread and no cost;
* otherwise it runs on a daemon thread that carries a copy of the caller's ``contextvars``,
  and the caller waits for the first of: its result (or exception, re-raised unchanged),
  the deadline, the token;
* a callback that loses is *abandoned*: Python cannot stop a thread, so it keeps running,
  its late result or exception is discarded, and it counts against the process-wide
  abandoned-thread bound of :mod:`zigai.tool.scheduler` (at the bound a callback that would
  need a thread fails fast with :class:`~zigai.tool.ToolThreadLimitReached`);
* the loser's error is the control's: ``Cancelled`` before ``RunTimedOut``.
"""

from __future__ import annotations

import contextvars
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from concurrent.futures import wait as wait_futures
from typing import Any, TypeVar

from zigai.control import Cancelled, RunControl, RunTimedOut
from zigai.tool.scheduler import check_thread_budget, track_abandoned

__all__ = ["BoundedIterator", "call_bounded", "needs_race"]

T = TypeVar("T")

_POLL_S = 0.02  # how often a waiting caller looks at the cancellation token


def _limit(control: RunControl, deadline: float | None) -> float | None:
    if deadline is None:
        return control.deadline
    if control.deadline is None:
        return deadline
    return min(deadline, control.deadline)


def needs_race(control: RunControl, deadline: float | None = None) -> bool:
    """Whether a callback under ``control`` (and ``deadline``) must run on its own thread."""
    return control.cancellable or deadline is not None or control.deadline is not None


def _check(control: RunControl, limit: float | None, what: str) -> None:
    token = control.token
    if token.cancelled:
        raise Cancelled(token.reason or "run cancelled")
    if limit is not None and time.monotonic() >= limit:
        raise RunTimedOut(
            f"{what} was still running at the deadline; it was abandoned (Python cannot stop "
            "a thread) and its late result will be discarded"
        )


def _wait(future: Future[Any], control: RunControl, limit: float | None, what: str) -> Any:
    """The future's result, or the control's error once the deadline or token wins."""
    while True:
        timeout = _POLL_S if limit is None else min(_POLL_S, max(0.0, limit - time.monotonic()))
        wait_futures((future,), timeout)
        if future.done():
            return future.result()
        try:
            _check(control, limit, what)
        except BaseException:
            track_abandoned(future)
            raise


def call_bounded(
    fn: Callable[..., T], *args: Any, control: RunControl, deadline: float | None = None,
    what: str,
) -> T:
    """``fn(*args)``, returning or raising by the deadline / cancellation (module docs)."""
    limit = _limit(control, deadline)
    if limit is None and not control.cancellable:
        return fn(*args)
    _check(control, limit, what)
    check_thread_budget(what)
    future: Future[T] = Future()
    future.set_running_or_notify_cancel()
    context = contextvars.copy_context()

    def work() -> None:
        try:
            result = context.run(fn, *args)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller (or discarded)
            future.set_exception(exc)
        else:
            future.set_result(result)

    threading.Thread(target=work, name="zigai-callback", daemon=True).start()
    return _wait(future, control, limit, what)


_END = object()


class BoundedIterator:
    """The items of an application iterable, each pull raced like :func:`call_bounded`.

    One worker thread pulls the items in order (only when racing is needed; otherwise the
    iterable is consumed inline).  :meth:`close` (or exhaustion, or an abandoned pull) ends
    the worker; an abandoned pull is counted like an abandoned callback.
    """

    __slots__ = ("_items", "_control", "_limit", "_what", "_requests", "_worker", "_done")

    def __init__(
        self, items: Iterable[T], *, control: RunControl, deadline: float | None = None,
        what: str,
    ) -> None:
        self._items: Iterator[Any] = iter(items)
        self._control = control
        self._limit = _limit(control, deadline)
        self._what = what
        self._requests: queue.SimpleQueue[Future[Any] | None] | None = None
        self._worker: threading.Thread | None = None
        self._done = False
        if self._limit is not None or control.cancellable:
            check_thread_budget(what)
            self._requests = queue.SimpleQueue()
            context = contextvars.copy_context()
            self._worker = threading.Thread(
                target=context.run, args=(self._pull_loop,), name="zigai-callback-items", daemon=True
            )
            self._worker.start()

    def _pull_loop(self) -> None:
        requests = self._requests
        assert requests is not None
        items = self._items
        while True:
            future = requests.get()
            if future is None:
                return
            try:
                item = next(items, _END)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller (or discarded)
                future.set_exception(exc)
                return
            future.set_result(item)
            if item is _END:
                return

    def __iter__(self) -> BoundedIterator:
        return self

    def __next__(self) -> Any:
        if self._done:
            raise StopIteration
        requests = self._requests
        if requests is None:
            return next(self._items)
        _check(self._control, self._limit, self._what)
        future: Future[Any] = Future()
        future.set_running_or_notify_cancel()
        requests.put(future)
        try:
            item = _wait(future, self._control, self._limit, self._what)
        except BaseException:
            self.close()
            raise
        if item is _END:
            self._done = True
            raise StopIteration
        return item

    def close(self) -> None:
        """Stop pulling; a worker busy with an abandoned pull exits once it returns."""
        if not self._done:
            self._done = True
            if self._requests is not None:
                self._requests.put(None)
