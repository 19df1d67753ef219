"""Fork/join execution: bounded concurrent branches, fail-fast, deterministic join.

A fork turns the current value into *items* (broadcast: the value itself, once; map: what
the ``items`` callback emits, at most ``GraphLimits.max_fork_items``) and runs every branch
callback on every item -- ``items x branches`` tasks, numbered item-major, branch-major.

Invariants:

* At most ``max_concurrency`` callbacks run at once (the fork's, else the graph's); tasks are
  admitted in task order on a ``concurrent.futures`` pool owned by this one fork call.
* Completions are observed in the order they happen.  The first failure (an exception, a
  result of the wrong type, the run's cancellation or deadline) sets the fork's
  cancellation token, which every branch sees in ``ctx.control``; nothing more is admitted.
  Running siblings are waited for (cooperative cancellation) unless the run deadline
  passes, in which case they are abandoned and their late results discarded.
* Successes are stored by task index, so the join reduces in item-major, branch-major order
  whatever the scheduling was.  An empty map returns ``finish(initial())``.
* ``cleanup`` (when given) receives every value the fork owns and drops: emitted map items
  once the fork is over, branch results that are never reduced (fail-fast), late results
  of abandoned branches, and the accumulator of a join that raised.  The broadcast item is
  the run's current value and is not cleaned up.
* Only the fork's own bookkeeping is synchronized.  State, dependencies and values are
  shared application data: branch callbacks must treat them as immutable or lock them.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from zigai._workers import WorkerPool
from zigai.control import CancellationToken, Cancelled, RunControl, RunTimedOut
from zigai.graph.context import BranchContext
from zigai.graph.errors import ForkItemLimitExceeded
from zigai.graph.types import check_value

if TYPE_CHECKING:
    from zigai.graph.context import StepContext
    from zigai.graph.limits import GraphLimits
    from zigai.graph.nodes import Fork
    from zigai.graph.types import GraphTypes

__all__ = ["run_fork"]

_POLL_S = 0.05  # how often a waiting fork looks at the run's own cancellation token


class _Cleanup:
    """Calls the fork's cleanup once per dropped value; remembers the first cleanup error."""

    def __init__(self, cleanup: Callable[[Any], None] | None) -> None:
        self._cleanup = cleanup
        self.error: BaseException | None = None

    def __call__(self, value: Any) -> None:
        if self._cleanup is None:
            return
        try:
            self._cleanup(value)
        except Exception as error:
            if self.error is None:
                self.error = error


def _collect_items(fork: Fork, ctx: StepContext[Any, Any], value: Any, limits: GraphLimits,
                   types: GraphTypes, cleanup: _Cleanup) -> list[Any]:
    if fork.items is None:
        return [value]
    items: list[Any] = []
    limit = limits.max_fork_items

    def emit(item: Any) -> None:
        if len(items) >= limit:
            cleanup(item)
            raise ForkItemLimitExceeded(
                f"fork {fork.name!r} emitted more than {limit} items (GraphLimits.max_fork_items)"
            )
        check_value(types, "value", item, fork.name)
        items.append(item)

    try:
        fork.items(ctx, value, emit)
    except BaseException:
        for item in items:
            cleanup(item)
        raise
    return items


def run_fork(fork: Fork, ctx: StepContext[Any, Any], value: Any, limits: GraphLimits,
             types: GraphTypes) -> Any:
    """Run one fork/join node to its joined value (see module docstring)."""
    cleanup = _Cleanup(fork.cleanup)
    items = _collect_items(fork, ctx, value, limits, types, cleanup)
    error: BaseException | None = None
    try:
        results = _schedule(fork, ctx, items, limits, types, cleanup)
        joined = _join(fork, results, cleanup)
    except BaseException as failure:
        error = failure
        raise
    finally:
        if fork.items is not None:
            for item in items:
                cleanup(item)
        if error is None and cleanup.error is not None:
            raise cleanup.error
    return joined


def _schedule(fork: Fork, ctx: StepContext[Any, Any], items: list[Any], limits: GraphLimits,
              types: GraphTypes, cleanup: _Cleanup) -> list[Any]:
    width = len(fork.branches)
    total = len(items) * width
    if total == 0:
        return []
    admitted = min(fork.max_concurrency or limits.max_concurrency, total)
    token = CancellationToken()
    control = RunControl(deadline=ctx.control.deadline, token=token)
    finished: queue.SimpleQueue[tuple[int, bool, Any]] = queue.SimpleQueue()
    abandoned = threading.Event()
    lock = threading.Lock()

    def task(index: int) -> None:
        item_index, branch_index = divmod(index, width)
        branch_ctx = BranchContext(
            ctx.state, ctx.deps, control, ctx.run_id, ctx.node_index, ctx.node_name, ctx.step,
            item_index, branch_index,
        )
        try:
            result = fork.branches[branch_index](branch_ctx, items[item_index])
        except BaseException as failure:
            finished.put((index, False, failure))
            return
        with lock:
            if abandoned.is_set():
                cleanup(result)
                return
            finished.put((index, True, result))

    results: list[Any] = [None] * total
    stored = [False] * total
    first_error: BaseException | None = None
    running = 0
    next_task = 0
    pool = WorkerPool(admitted, f"zigai-graph-{fork.name[:24]}")  # daemon: never holds exit
    try:
        while running or (first_error is None and next_task < total):
            while first_error is None and next_task < total and running < admitted:
                pool.submit(task, next_task)
                next_task += 1
                running += 1
            try:
                index, ok, payload = finished.get(timeout=_wait_slice(ctx.control))
            except queue.Empty:
                stop = _control_error(ctx.control)
                if stop is None:
                    continue
                if first_error is None:
                    first_error = stop
                    token.cancel(str(stop))
                if isinstance(stop, RunTimedOut):
                    break  # past the deadline: abandon what still runs
                continue
            running -= 1
            if ok and first_error is None:
                try:
                    check_value(types, "value", payload, fork.name)
                except BaseException as mismatch:
                    cleanup(payload)
                    ok, payload = False, mismatch
            if ok:
                if first_error is None:
                    results[index] = payload
                    stored[index] = True
                else:
                    cleanup(payload)
            elif first_error is None:
                first_error = payload
                token.cancel(f"fork {fork.name!r}: a sibling branch failed")
    finally:
        with lock:
            abandoned.set()
            while True:
                try:
                    _, late_ok, late = finished.get_nowait()
                except queue.Empty:
                    break
                if late_ok:  # pragma: no cover - timing: landed between the deadline break and here
                    cleanup(late)
        pool.shutdown()
    if first_error is not None:
        for index in range(total):
            if stored[index]:
                cleanup(results[index])
        raise first_error
    return results


def _wait_slice(control: RunControl) -> float:
    remaining = control.remaining()
    return _POLL_S if remaining is None else max(0.0, min(_POLL_S, remaining))


def _control_error(control: RunControl) -> BaseException | None:
    try:
        control.check()
    except (Cancelled, RunTimedOut) as stop:
        return stop
    return None


def _join(fork: Fork, results: list[Any], cleanup: _Cleanup) -> Any:
    join = fork.join
    accumulator = join.initial()
    for position, result in enumerate(results):
        try:
            accumulator = join.reduce(accumulator, result)
        except BaseException:
            for unreduced in results[position + 1:]:
                cleanup(unreduced)
            cleanup(accumulator)
            raise
    try:
        return join.finish(accumulator)
    except BaseException:
        cleanup(accumulator)
        raise
