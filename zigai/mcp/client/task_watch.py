"""Task status streams on the client: follow one task through ``subscriptions/listen``.

Job
    :func:`watch_task` opens a listen stream whose filter names one task id, observes each
    ``notifications/tasks`` event the server sends (every event carries the whole task
    state), answers input through the client's :data:`~zigai.mcp.InputHandler` exactly as
    :func:`~zigai.mcp.client.tasks.wait_task` does, and returns the terminal state.  Status
    events are optional for servers, so the watch also asks ``tasks/get`` once the stream is
    acknowledged (a task may have finished before), and again whenever the stream stays
    quiet for ``TaskPolling.max_interval_ms``; a server that does not honor task streams,
    or a stream that ends early, leaves plain polling.

Invariants
    * The same bounds as ``wait_task``: one monotonic deadline for the whole watch, at most
      ``TaskPolling.max_polls`` observed states (events and ``tasks/get`` results together),
      input keys deduplicated and answered two-phase through the task store, and a
      best-effort ``tasks/cancel`` on local cancellation, the deadline or an exhausted budget.
    * Only the newest unobserved state is kept while the application is busy (each event is
      a whole state, so nothing is lost by skipping an older one): memory is bounded whatever
      the server sends.  Events for other task ids never reach the application.
    * The stream runs on one daemon thread that is cancelled and joined before the call
      returns or raises.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from zigai.control import CancellationToken
from zigai.mcp.client.options import RequestOptions, _checked_options
from zigai.mcp.client.tasks import (
    Client,
    TaskPolling,
    _answer,
    _best_effort_cancel,
    _forget,
    _interrupted,
    _record,
    _require_extension,
    _save,
    _send,
    get_task,
    wait_task,
)
from zigai.mcp.errors import (
    McpError,
    McpRequestCancelled,
    McpRequestTimedOut,
    MethodNotFound,
    TaskWaitExhausted,
)
from zigai.mcp.wire.primitives import Notification, SubscriptionFilter
from zigai.mcp.wire.tasks import TaskNeedsInput, TaskState, get_params

__all__ = ["watch_task"]

_SLICE_S = 0.05
_JOIN_S = 2.0


class StreamingClient(Client, Protocol):
    def listen(self, notifications: SubscriptionFilter, on_event: Callable[[Notification], None],
               options: RequestOptions | None = None) -> Any: ...  # pragma: no cover - a protocol


class _Stream:
    """The listen stream on its thread, and the newest task state it delivered."""

    def __init__(self, client: StreamingClient, task_id: str, options: RequestOptions,
                 deadline: float | None) -> None:
        self.task_id = task_id
        self.stop = CancellationToken()
        self.changed = threading.Condition()
        self.acknowledged: SubscriptionFilter | None = None
        self.latest: TaskState | None = None
        self.ended = False
        self.error: McpError | None = None
        remaining = None if deadline is None else max(1, int((deadline - time.monotonic()) * 1000))
        listen_options = RequestOptions(timeout_ms=remaining, cancel=self.stop, metadata=options.metadata)
        self.thread = threading.Thread(target=self._run, args=(client, listen_options), daemon=True,
                                       name=f"zigai-mcp-task-watch-{task_id}")
        self.thread.start()

    def _run(self, client: StreamingClient, options: RequestOptions) -> None:
        try:
            client.listen(SubscriptionFilter(task_ids=(self.task_id,)), self._event, options)
        except McpError as exc:
            self.error = exc
        finally:
            with self.changed:
                self.ended = True
                self.changed.notify_all()

    def _event(self, notification: Notification) -> None:
        acknowledged = notification.acknowledged_filter
        state = notification.task
        with self.changed:
            if acknowledged is not None:
                self.acknowledged = acknowledged
            elif state is not None:  # listen admits only events for the filter's (this) task id
                self.latest = state
            self.changed.notify_all()

    def wait(self, ready: Callable[[], bool], end: float, cancelled: Callable[[], bool]) -> None:
        """Block until ``ready()`` (under the lock), ``end`` (monotonic) or local cancellation."""
        with self.changed:
            while not ready() and not cancelled():
                left = end - time.monotonic()
                if left <= 0:
                    return
                self.changed.wait(min(left, _SLICE_S))

    def take(self) -> TaskState | None:  # the caller holds self.changed
        state, self.latest = self.latest, None
        return state

    def close(self) -> None:
        self.stop.cancel("the task watch is over")
        self.thread.join(_JOIN_S)


def watch_task(client: StreamingClient, task_id: str, *, options: RequestOptions | None = None,
               polling: TaskPolling | None = None,
               on_state: Callable[[TaskState], None] | None = None) -> TaskState:
    """Follow ``task_id`` on its status stream until it is completed, failed or cancelled."""
    get_params(task_id)
    _require_extension(client, "subscriptions/listen for task status")
    options = _checked_options(options)
    polling = polling or client.task_polling
    deadline = client._deadline(options)

    def cancelled() -> bool:
        return bool((options.cancel is not None and options.cancel.cancelled)
                    or (options.control is not None and options.control.cancelled))

    def each() -> RequestOptions:
        remaining = None if deadline is None else max(0, int((deadline - time.monotonic()) * 1000))
        return dataclasses.replace(options, request_id=None, timeout_ms=remaining)

    def horizon(seconds: float) -> float:
        end = time.monotonic() + seconds
        return end if deadline is None else min(end, deadline)

    stopped: list[bool] = []  # set once this watch has sent its own tasks/cancel (or handed over)

    def stop(error: McpError) -> McpError:
        stopped.append(True)
        _best_effort_cancel(client, task_id, options)
        return error

    def check_time() -> None:
        if cancelled():
            raise stop(McpRequestCancelled(f"watching task {task_id!r} was cancelled (the task was cancelled)"))
        if deadline is not None and time.monotonic() >= deadline:
            raise stop(McpRequestTimedOut(f"task {task_id!r} did not finish before the deadline "
                                          "(the task was cancelled)"))

    stream = _Stream(client, task_id, options, deadline)
    try:
        stream.wait(lambda: stream.acknowledged is not None or stream.ended, horizon(polling.max_interval_ms / 1000),
                    cancelled)
        check_time()
        if stream.acknowledged is None and stream.error is not None and not isinstance(stream.error, MethodNotFound):
            raise stream.error  # the stream was refused (capability, connection): nothing to fall back on
        if stream.acknowledged is None or task_id not in stream.acknowledged.task_ids:
            stream.close()  # no task streams here, or no acknowledgement in time: poll instead
            stopped.append(True)
            return wait_task(client, task_id, options=options, polling=polling, on_state=on_state)
        record = _record(client, task_id)
        _save(client, record)
        if record.pending:  # a previous process persisted answers the server never acknowledged
            record = _send(client, record, dict(record.pending), each())
        state: TaskState = get_task(client, task_id, each())  # it may have changed before the stream opened
        observed = 1
        while True:
            if on_state is not None:
                on_state(state)
            if state.terminal:
                _forget(client, task_id)
                return state
            if isinstance(state, TaskNeedsInput):
                record = _answer(client, record, state, each())
            if observed >= polling.max_polls:
                raise stop(TaskWaitExhausted(f"task {task_id!r} was still {state.status} after {observed} observed "
                                             "states (the task was cancelled; raise TaskPolling.max_polls to watch "
                                             "longer)", task_id=task_id, last_status=state.status))
            quiet_s = (polling.max_interval_ms / 1000 if not stream.ended
                       else polling.interval_s(state.poll_interval_ms))
            stream.wait(lambda: stream.latest is not None, horizon(quiet_s), cancelled)
            check_time()
            with stream.changed:
                pushed = stream.take()
            state = pushed if pushed is not None else get_task(client, task_id, each())
            observed += 1
    except McpError as exc:
        if stopped:
            raise
        failure = _interrupted(client, task_id, options, deadline, exc)
        if failure is exc:
            raise
        raise failure from exc
    finally:
        stream.close()
