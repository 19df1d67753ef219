"""The bounded tool scheduler: runs one model step's tool calls under ``ToolLimits``.

One :class:`ToolScheduler` serves one agent run (``max_tool_calls`` counts
across all of its batches).  :meth:`ToolScheduler.run_batch` takes the calls
of one model response, already validated, and returns one
:class:`ToolCallResult` per call, in the model's call order.

Admission (before anything runs, in call order): a call is ``rejected`` —
its function is never called — when the run's ``max_tool_calls`` is used up,
when the batch already holds ``max_active + max_queued`` accepted calls, or
when its tool already holds its own (tightened) ``max_active + max_queued``.

Execution: at most ``max_active`` calls run at once overall and at most the
tool's tightened ``max_active`` per tool; a ``sequential`` tool starts only
when nothing is running and nothing else starts until it ends; calls never
start ahead of an earlier sequential call.  Each call races its own
``timeout_ms`` (measured from its start), the run deadline and the run's
cancellation token.  Outcomes:

* ``success`` — the encoded result and follow-ups fit the limits (checked
  before returning: oversize becomes ``retry`` with a ToolResultTooLarge /
  ToolFollowUpOverflow message);
* ``retry`` — ``ModelRetry`` or ``InvalidToolArguments`` from the function;
* ``timed_out`` — the call's own timeout passed (or it raised ToolTimedOut);
* a run deadline or cancellation raises ``RunTimedOut`` / ``Cancelled``;
* any other exception is fatal: outstanding calls are flagged cancelled,
  queued ones never start, running ones get ``drain_grace_s`` to finish, and
  the original exception is re-raised unwrapped.

After a batch raised, :attr:`ToolScheduler.failed_call_id` names the call whose own function
raised the error (None when the run deadline or cancellation ended the batch); every result
carries ``duration_s``, the call's run time measured on its own thread.

On cancellation running calls likewise get up to ``drain_grace_s`` to observe
their tokens before ``Cancelled`` is raised; a passed run deadline raises at
once (the deadline is the promise), with every running call flagged.

Each call runs in a copy of the submitting thread's ``contextvars`` (taken when it starts).

Honest limits of Python: a thread cannot be killed.  A call that loses a race
has its per-call token set (visible as ``ctx.cancelled``) and is *abandoned*:
it may keep running in its worker thread, its late result or exception is
discarded and never returned, and :attr:`ToolScheduler.abandoned` counts it
until it ends.  The worker pool has ``2 * max_active`` threads so abandoned
calls do not starve later work unless more than ``max_active`` of them are
still running; a call's timeout starts when it is dispatched.  The workers are daemon
threads (:mod:`zigai._workers`): an abandoned call never keeps the process alive —
the interpreter exits without waiting for it, stopping it wherever it is.

Abandoned threads are also bounded process-wide, across every run and
scheduler: :func:`abandoned_tool_threads` counts the abandoned calls (and the
application callbacks :mod:`zigai.tool.race` abandoned) still running, and once it reaches :func:`max_abandoned_tool_threads` (default
:data:`DEFAULT_MAX_ABANDONED_TOOL_THREADS`, changed with
:func:`set_max_abandoned_tool_threads`) a call that would need a worker thread
fails fast with :class:`ToolThreadLimitReached` before its function runs.  The
count falls as abandoned functions finally return.  A batch with a
single accepted call, no timeout and no run deadline runs inline on the
caller's thread (cancellation is then observed only cooperatively and after
the call returns).
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass, replace
from typing import Any, Literal

from zigai._workers import WorkerPool
from zigai.control import CancellationToken, Cancelled, RunControl, RunTimedOut
from zigai.json import encoded_size
from zigai.messages import RequestMessage, ToolCallPart
from zigai.tool.context import ToolRunContext, check_follow_ups
from zigai.tool.errors import (
    InvalidToolArguments,
    ModelRetry,
    ToolThreadLimitReached,
    ToolTimedOut,
)
from zigai.tool.limits import ToolLimits
from zigai.tool.tool import Tool, ValidatedArgs

__all__ = [
    "DEFAULT_MAX_ABANDONED_TOOL_THREADS",
    "ScheduledCall",
    "ToolCallResult",
    "ToolScheduler",
    "ToolCallStatus",
    "abandoned_tool_threads",
    "execute_call",
    "max_abandoned_tool_threads",
    "set_max_abandoned_tool_threads",
]

ToolCallStatus = Literal["success", "retry", "timed_out", "rejected"]

DEFAULT_MAX_ABANDONED_TOOL_THREADS = 64

# Process-wide accounting of abandoned calls whose worker threads still run.
_abandoned_lock = threading.Lock()
_abandoned_futures: set[Future[Any]] = set()
_abandoned_limit = DEFAULT_MAX_ABANDONED_TOOL_THREADS


def abandoned_tool_threads() -> int:
    """Abandoned tool calls (timed out or cancelled) whose threads are still running, in
    this process, across every run."""
    with _abandoned_lock:
        return len(_abandoned_futures)


def max_abandoned_tool_threads() -> int:
    """The process-wide bound on :func:`abandoned_tool_threads`."""
    return _abandoned_limit


def set_max_abandoned_tool_threads(limit: int) -> int:
    """Set the process-wide bound (an int >= 1); returns the previous bound."""
    global _abandoned_limit
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError("the abandoned tool thread limit must be an int >= 1")
    with _abandoned_lock:
        previous, _abandoned_limit = _abandoned_limit, limit
    return previous


def track_abandoned(future: Future[Any]) -> None:
    """Count ``future`` (a call or callback that lost its race) until it finishes."""
    with _abandoned_lock:
        _abandoned_futures.add(future)
    future.add_done_callback(_untrack_abandoned)  # runs at once when already done


def _untrack_abandoned(future: Future[Any]) -> None:
    with _abandoned_lock:
        _abandoned_futures.discard(future)


def check_thread_budget(what: str) -> None:
    """Raise ToolThreadLimitReached when ``what`` (a tool call or callback) may not get a thread."""
    with _abandoned_lock:
        count, limit = len(_abandoned_futures), _abandoned_limit
    if count >= limit:
        raise ToolThreadLimitReached(
            f"{what} was not started: {count} abandoned tool threads (timed out or "
            f"cancelled calls and callbacks that never returned) are still running in this "
            f"process, the limit is {limit}. Make long tools observe ctx.cancelled, or raise the "
            "limit with zigai.tool.set_max_abandoned_tool_threads().",
            limit=limit,
            abandoned=count,
        )


@dataclass(frozen=True, slots=True)
class ScheduledCall:
    """One validated call: the model's part, the tool, its arguments and its context."""

    call: ToolCallPart
    tool: Tool
    args: ValidatedArgs
    ctx: ToolRunContext


@dataclass(frozen=True, slots=True)
class ToolCallResult:
    """The outcome of one call; ``retry_message`` is set for every status but success.

    ``duration_s`` is the call's own run time, measured by the thread that ran it, and
    ``started_ns`` the wall-clock time (``time.time_ns()``) it started there; both None for a
    call that never ran or whose thread lost its race.
    """

    tool_call_id: str
    tool_name: str
    status: ToolCallStatus
    content: Any = None
    retry_message: str | None = None
    follow_up_messages: tuple[RequestMessage, ...] = ()
    duration_s: float | None = None
    started_ns: int | None = None


def _result(sc: ScheduledCall, status: ToolCallStatus, message: str) -> ToolCallResult:
    return ToolCallResult(sc.call.tool_call_id, sc.call.tool_name, status, retry_message=message)


def too_large_message(tool_name: str, limit: int) -> str:
    """The retry text for a result whose encoding passed ``limit`` (measured only up to limit + 1)."""
    return (
        f"ToolResultTooLarge: the result of tool {tool_name!r} encodes to more than {limit} bytes; "
        f"at most {limit} are allowed. Ask for less data."
    )


def _timed_out_message(sc: ScheduledCall, timeout_ms: int | None) -> str:
    return (
        f"ToolTimedOut: tool {sc.call.tool_name!r} timed out: it did not finish within "
        f"{timeout_ms} ms; the call was cancelled and any late result is discarded."
    )


def execute_call(sc: ScheduledCall, ctx: ToolRunContext, limits: ToolLimits) -> ToolCallResult:
    """Run one call on this thread; classify recoverable outcomes, let fatal ones propagate."""
    started_ns = time.time_ns()
    started = time.perf_counter()
    result = _execute_call(sc, ctx, limits)
    return replace(result, duration_s=time.perf_counter() - started, started_ns=started_ns)


def _execute_call(sc: ScheduledCall, ctx: ToolRunContext, limits: ToolLimits) -> ToolCallResult:
    try:
        output = sc.tool.execute(sc.args, ctx)
    except ModelRetry as exc:
        return _result(sc, "retry", str(exc))
    except InvalidToolArguments as exc:
        return _result(sc, "retry", str(exc))
    except ToolTimedOut as exc:
        deadline = ctx.call_deadline
        if limits.timeout_ms is not None and deadline is not None and time.monotonic() >= deadline:
            # the call's own deadline: the same words whichever side noticed it first
            return _result(sc, "timed_out", _timed_out_message(sc, limits.timeout_ms))
        return _result(sc, "timed_out", str(exc) or f"tool {sc.call.tool_name!r} timed out")
    except Exception as exc:
        if not sc.tool.is_recoverable(exc):
            raise
        return _result(sc, "retry", f"{type(exc).__name__}: {exc}")
    if encoded_size(output.content, limits.max_result_bytes) > limits.max_result_bytes:
        return _result(sc, "retry", too_large_message(sc.call.tool_name, limits.max_result_bytes))
    problem = check_follow_ups(
        output.follow_up_messages,
        max_count=limits.max_follow_ups,
        max_bytes=limits.max_follow_up_bytes,
    )
    if problem is not None:
        return _result(sc, "retry", f"ToolFollowUpOverflow: {problem}.")
    return ToolCallResult(
        sc.call.tool_call_id,
        sc.call.tool_name,
        "success",
        content=output.content,
        follow_up_messages=output.follow_up_messages,
    )


@dataclass(slots=True)
class _Running:
    sc: ScheduledCall
    limits: ToolLimits
    token: CancellationToken
    call_deadline: float | None
    future: Future[ToolCallResult | None]


class ToolScheduler:
    """Bounded, order-preserving execution of tool batches for one run (see module docstring)."""

    def __init__(
        self,
        limits: ToolLimits | None = None,
        max_tool_calls: int | None = None,
        *,
        drain_grace_s: float = 1.0,
        poll_interval_s: float = 0.01,
    ) -> None:
        if limits is None:
            limits = ToolLimits()
        if not isinstance(limits, ToolLimits):
            raise TypeError("limits must be a ToolLimits")
        if max_tool_calls is not None and (
            isinstance(max_tool_calls, bool) or not isinstance(max_tool_calls, int) or max_tool_calls < 0
        ):
            raise ValueError("max_tool_calls must be None or an int >= 0")
        if drain_grace_s < 0 or poll_interval_s <= 0:
            raise ValueError("drain_grace_s must be >= 0 and poll_interval_s > 0")
        self._limits = limits
        self._max_tool_calls = max_tool_calls
        self._drain_grace_s = drain_grace_s
        self._poll_s = poll_interval_s
        self._admitted_total = 0
        self._executor: WorkerPool | None = None
        self._lock = threading.Lock()
        self._busy = threading.Lock()
        self._abandoned: set[Future[Any]] = set()
        self._closed = False
        self.failed_call_id: str | None = None

    @property
    def limits(self) -> ToolLimits:
        return self._limits

    @property
    def admitted_calls(self) -> int:
        """Calls accepted so far in this run (what ``max_tool_calls`` caps)."""
        return self._admitted_total

    @property
    def abandoned(self) -> int:
        """Calls that lost a race but whose threads are still running."""
        with self._lock:
            return sum(1 for f in self._abandoned if not f.done())

    def close(self) -> None:
        """Shut the worker pool down without waiting for abandoned calls."""
        self._closed = True
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown()

    def __enter__(self) -> ToolScheduler:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- admission ----------------------------------------------------------------------

    def _admit(
        self, calls: Sequence[ScheduledCall], results: list[ToolCallResult | None]
    ) -> list[tuple[int, ScheduledCall, ToolLimits]]:
        accepted: list[tuple[int, ScheduledCall, ToolLimits]] = []
        per_tool: Counter[str] = Counter()
        batch_cap = self._limits.max_active + self._limits.max_queued
        for index, sc in enumerate(calls):
            limits = self._limits.tightened_by(sc.tool.limits)
            name = sc.tool.name
            tool_cap = limits.max_active + limits.max_queued
            if self._max_tool_calls is not None and self._admitted_total >= self._max_tool_calls:
                results[index] = _result(
                    sc, "rejected",
                    f"ToolQueueOverflow: this run allows at most {self._max_tool_calls} tool calls "
                    "and they are used up; the call was not executed.",
                )
            elif len(accepted) >= batch_cap:
                results[index] = _result(
                    sc, "rejected",
                    f"ToolQueueOverflow: at most {batch_cap} tool calls may run or wait at once "
                    f"({self._limits.max_active} running, {self._limits.max_queued} queued); "
                    "the call was not executed. Request fewer calls per step.",
                )
            elif per_tool[name] >= tool_cap:
                results[index] = _result(
                    sc, "rejected",
                    f"ToolQueueOverflow: tool {name!r} accepts at most {tool_cap} calls at once "
                    f"({limits.max_active} running, {limits.max_queued} queued); "
                    "the call was not executed. Request fewer calls per step.",
                )
            else:
                accepted.append((index, sc, limits))
                per_tool[name] += 1
                self._admitted_total += 1
        return accepted

    # -- execution ----------------------------------------------------------------------

    def run_batch(self, calls: Sequence[ScheduledCall], control: RunControl) -> list[ToolCallResult]:
        """Execute one batch; results are in call order (see the module docstring)."""
        if self._closed:
            raise RuntimeError("ToolScheduler is closed")
        if not self._busy.acquire(blocking=False):
            raise RuntimeError("ToolScheduler.run_batch is already running (one batch at a time)")
        self.failed_call_id = None
        try:
            control.check()
            results: list[ToolCallResult | None] = [None] * len(calls)
            accepted = self._admit(calls, results)
            if len(accepted) == 1 and accepted[0][2].timeout_ms is None and control.deadline is None:
                index, sc, limits = accepted[0]
                ctx = sc.ctx.for_call(call_deadline=None, call_token=CancellationToken())
                self.failed_call_id = sc.call.tool_call_id  # cleared below when it returns
                outcome = execute_call(sc, ctx, limits)
                self.failed_call_id = None
                control.check()
                results[index] = outcome
            elif accepted:
                self._run_parallel(accepted, control, results)
        finally:
            self._busy.release()
        done = [r for r in results if r is not None]
        assert len(done) == len(calls)
        return done

    def _pool(self) -> WorkerPool:
        if self._executor is None:
            self._executor = WorkerPool(2 * self._limits.max_active, "zigai-tool")
        return self._executor

    def _abandon(self, run: _Running, reason: str) -> None:
        run.token.cancel(reason)
        future = run.future
        if future.done():
            return
        with self._lock:
            self._abandoned.add(future)
        future.add_done_callback(self._forget)
        track_abandoned(future)

    def _forget(self, future: Future[Any]) -> None:
        with self._lock:
            self._abandoned.discard(future)

    @staticmethod
    def _task(sc: ScheduledCall, ctx: ToolRunContext, limits: ToolLimits) -> ToolCallResult | None:
        if ctx.call_token.cancelled:
            return None  # lost its race before a worker picked it up: never call the function
        return execute_call(sc, ctx, limits)

    def _start(self, entry: tuple[int, ScheduledCall, ToolLimits]) -> _Running:
        _, sc, limits = entry
        check_thread_budget(f"tool {sc.call.tool_name!r}")
        token = CancellationToken()
        deadline = None
        if limits.timeout_ms is not None:
            deadline = time.monotonic() + limits.timeout_ms / 1000.0
        ctx = sc.ctx.for_call(call_deadline=deadline, call_token=token)
        # the call runs in a copy of the run thread's contextvars (as race.call_bounded does), so
        # context-local state such as Agent.override reaches agents that tools call
        future = self._pool().submit(contextvars.copy_context().run, self._task, sc, ctx, limits)
        return _Running(sc, limits, token, deadline, future)

    def _dispatch(
        self,
        pending: list[tuple[int, ScheduledCall, ToolLimits]],
        running: dict[int, _Running],
        per_tool: Counter[str],
    ) -> None:
        if any(run.sc.tool.sequential for run in running.values()):
            return
        position = 0
        while position < len(pending):
            index, sc, limits = pending[position]
            if sc.tool.sequential:
                if position == 0 and not running:
                    running[index] = self._start(pending.pop(0))
                    per_tool[sc.tool.name] += 1
                return
            if len(running) >= self._limits.max_active:
                return
            if per_tool[sc.tool.name] >= limits.max_active:
                position += 1
                continue
            running[index] = self._start(pending.pop(position))
            per_tool[sc.tool.name] += 1

    def _run_parallel(
        self,
        accepted: list[tuple[int, ScheduledCall, ToolLimits]],
        control: RunControl,
        results: list[ToolCallResult | None],
    ) -> None:
        pending = list(accepted)
        running: dict[int, _Running] = {}
        per_tool: Counter[str] = Counter()
        fatal: BaseException | None = None
        drain_until = 0.0
        try:
            while True:
                for index, run in list(running.items()):
                    if not run.future.done():
                        continue
                    del running[index]
                    per_tool[run.sc.tool.name] -= 1
                    if fatal is not None:
                        continue
                    error = run.future.exception()
                    if error is None:
                        results[index] = run.future.result()
                    elif isinstance(error, (Cancelled, RunTimedOut)) and (
                        control.cancelled or control.expired()
                    ):
                        pass  # the run-level check below reports it
                    else:
                        fatal = error
                        self.failed_call_id = run.sc.call.tool_call_id
                        pending.clear()
                        drain_until = time.monotonic() + self._drain_grace_s
                        for other in running.values():
                            other.token.cancel("a sibling tool call failed")
                if control.cancelled or control.expired():
                    if control.cancelled and running:
                        # Give cooperative calls a bounded chance to observe the token and end.
                        for run in running.values():
                            run.token.cancel("the run was cancelled")
                        wait_futures([r.future for r in running.values()], timeout=self._drain_grace_s)
                    control.check()
                now = time.monotonic()
                for index, run in list(running.items()):
                    if run.call_deadline is not None and now >= run.call_deadline:
                        del running[index]
                        per_tool[run.sc.tool.name] -= 1
                        self._abandon(run, "tool call timed out")
                        if fatal is None:
                            results[index] = _result(
                                run.sc, "timed_out", _timed_out_message(run.sc, run.limits.timeout_ms)
                            )
                if fatal is not None:
                    if not running or now >= drain_until:
                        raise fatal
                else:
                    self._dispatch(pending, running, per_tool)
                    if not pending and not running:
                        return
                timeout = self._poll_s
                for deadline in [r.call_deadline for r in running.values()] + [
                    control.deadline, drain_until if fatal is not None else None
                ]:
                    if deadline is not None:
                        timeout = min(timeout, max(0.0, deadline - now))
                wait_futures([r.future for r in running.values()], timeout=timeout,
                             return_when=FIRST_COMPLETED)
        finally:
            for run in running.values():
                self._abandon(run, "the tool batch ended before this call finished")
