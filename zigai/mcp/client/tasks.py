"""The client side of the MCP Tasks extension: get / update / cancel, ``wait_task``, ``resume_tasks``.

Job
    The narrow application boundary over a :class:`~zigai.mcp.Client`: every tasks request
    names its task in the body (``taskId``) and as the HTTP routing name, is refused with
    :class:`TaskExtensionRequired` before any I/O when the client does not declare the
    extension, and its reply is validated for its status before it is returned.  ``wait_task``
    polls a task to its end, answering input through the client's :data:`InputHandler`;
    ``resume_tasks`` finishes what a previous process left in the task store.

Invariants
    * Polling is capped both ways: never faster than ``min_interval_ms`` (whatever the
      server's ``pollIntervalMs`` says), never slower than ``max_interval_ms``, at most
      ``max_polls`` ``tasks/get`` requests; one monotonic deadline covers the whole wait.
    * Input request keys are deduplicated across polls: a key already pending or answered is
      never given to the handler again, even when an eventually consistent server still lists
      it.  With a task store, responses are persisted before ``tasks/update`` and marked
      answered only after the server acknowledges (two-phase; see ``task_store``).
    * Local cancellation, the deadline and an exhausted poll budget each send a best-effort
      ``tasks/cancel`` (its own failure is logged, never raised over the original error).
    * Terminal tasks are removed from the store; a record that fails mid-way stays for retry.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from zigai.mcp.client.options import RequestOptions, _checked_options
from zigai.mcp.client.task_store import TaskRecord, TaskStore
from zigai.mcp.errors import (
    McpError,
    McpInputRequired,
    McpRequestCancelled,
    McpRequestTimedOut,
    TaskExtensionRequired,
    TaskStoreError,
    TaskWaitExhausted,
)
from zigai.mcp.wire.input import InputHandler, answer_inputs
from zigai.mcp.wire.primitives import ClientCapabilities
from zigai.mcp.wire.tasks import (
    TASKS_EXTENSION,
    TaskCompleted,
    TaskNeedsInput,
    TaskState,
    cancel_params,
    get_params,
    parse_task,
    update_params,
)


class Client(Protocol):
    """What the task calls need of :class:`zigai.mcp.Client` (kept structural: no import cycle)."""

    capabilities: ClientCapabilities
    task_store: TaskStore | None
    task_polling: TaskPolling
    input_handler: InputHandler | None

    def request_json(self, method: str, params: Mapping[str, Any] | None = None,
                     options: RequestOptions | None = None) -> dict[str, Any]: ...

    def _deadline(self, options: RequestOptions) -> float | None: ...

__all__ = ["TaskPolling", "get_task", "update_task", "cancel_task", "wait_task", "resume_tasks", "track_created"]

_log = logging.getLogger("zigai.mcp.tasks")
_SLICE_S = 0.05


@dataclass(frozen=True, slots=True)
class TaskPolling:
    """How ``wait_task`` polls: interval floor and ceiling (ms) and the request budget."""

    min_interval_ms: int = 100
    max_interval_ms: int = 5_000
    max_polls: int = 1_000

    def __post_init__(self) -> None:
        from zigai.mcp.errors import InvalidMcpRequest

        for name in ("min_interval_ms", "max_interval_ms", "max_polls"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < (1 if name == "max_polls" else 0):
                raise InvalidMcpRequest(f"TaskPolling.{name} must be a {'positive' if name == 'max_polls' else 'non-negative'} integer")
        if self.max_interval_ms < self.min_interval_ms:
            raise InvalidMcpRequest("TaskPolling.max_interval_ms must be >= min_interval_ms")

    def interval_s(self, suggested_ms: int | None) -> float:
        wanted = self.min_interval_ms if suggested_ms is None else suggested_ms
        return min(max(wanted, self.min_interval_ms), self.max_interval_ms) / 1000.0


def _require_extension(client: Client, method: str) -> None:
    extensions = client.capabilities.extensions or {}
    if TASKS_EXTENSION not in extensions:
        raise TaskExtensionRequired(f"{method} needs the {TASKS_EXTENSION} extension: declare it with "
                                    f"ClientCapabilities(extensions={{{TASKS_EXTENSION!r}: {{}}}})")


def get_task(client: Client, task_id: str, options: RequestOptions | None = None) -> TaskState:
    params = get_params(task_id)
    _require_extension(client, "tasks/get")
    state = parse_task(client.request_json("tasks/get", params, options), "tasks/get result")
    if state.task_id != task_id:
        from zigai.mcp.errors import InvalidMcpMessage

        raise InvalidMcpMessage(f"tasks/get for {task_id!r} answered task {state.task_id!r}")
    return state


def update_task(client: Client, task_id: str, responses: Mapping[str, Any],
                options: RequestOptions | None = None) -> dict[str, Any]:
    """Send input responses; the (empty) acknowledgement result."""
    params = update_params(task_id, responses)
    _require_extension(client, "tasks/update")
    return client.request_json("tasks/update", params, options)


def cancel_task(client: Client, task_id: str, options: RequestOptions | None = None) -> TaskState | None:
    """Ask the server to cancel; the task state when the server reports one, else None."""
    params = cancel_params(task_id)
    _require_extension(client, "tasks/cancel")
    result = client.request_json("tasks/cancel", params, options)
    state = parse_task(result, "tasks/cancel result") if "status" in result or "task" in result else None
    if state is None or state.terminal:
        _forget(client, task_id)
    return state


def _forget(client: Client, task_id: str) -> None:
    if client.task_store is not None:
        client.task_store.remove(task_id)


def _record(client: Client, task_id: str) -> TaskRecord:
    if client.task_store is not None:
        for record in client.task_store.load():
            if record.task_id == task_id:
                return record
    return TaskRecord(task_id)


def _save(client: Client, record: TaskRecord) -> None:
    if client.task_store is not None:
        client.task_store.save(record)


def track_created(client: Client, state: TaskState, method: str, name: str | None,
                  options: RequestOptions | None) -> None:
    """Record a task a request just created; if that first write fails, cancel it and raise."""
    if client.task_store is None or state.terminal:
        return
    try:
        client.task_store.save(TaskRecord(state.task_id, method, name))
    except TaskStoreError:
        _best_effort_cancel(client, state.task_id, options)
        raise


def _best_effort_cancel(client: Client, task_id: str, options: RequestOptions | None) -> None:
    short = RequestOptions(timeout_ms=2_000, metadata=options.metadata if options is not None else None)
    try:
        cancel_task(client, task_id, short)
    except McpError as exc:
        _log.warning("best-effort tasks/cancel of %r failed: %s", task_id, exc)


def _interrupted(client: Client, task_id: str, options: RequestOptions | None, deadline: float | None,
                 exc: McpError) -> McpError:
    """What a wait (or watch) raises when a request inside it failed with ``exc``.

    A real failure before the deadline is ``exc`` itself and the record stays for
    ``resume_tasks``.  A local timeout or cancel, or any failure once the deadline passed, first
    cancels the remote task (best effort); a failure past the deadline then becomes
    :class:`McpRequestTimedOut`."""
    local_stop = isinstance(exc, (McpRequestTimedOut, McpRequestCancelled))
    if not local_stop and (deadline is None or time.monotonic() < deadline):
        return exc
    _best_effort_cancel(client, task_id, options)
    if local_stop:
        return exc
    return McpRequestTimedOut(f"task {task_id!r} did not finish before the deadline (the task was cancelled)")


def wait_task(client: Client, task_id: str, *, options: RequestOptions | None = None,
              polling: TaskPolling | None = None, on_state: Callable[[TaskState], None] | None = None) -> TaskState:
    """Poll ``task_id`` until it is completed, failed or cancelled; that terminal state."""
    get_params(task_id)
    _require_extension(client, "tasks/get")
    options = _checked_options(options)
    polling = polling or client.task_polling
    deadline = client._deadline(options)

    def cancelled() -> bool:
        return bool((options.cancel is not None and options.cancel.cancelled)
                    or (options.control is not None and options.control.cancelled))

    def each(request_options: RequestOptions) -> RequestOptions:
        remaining = None if deadline is None else max(0, int((deadline - time.monotonic()) * 1000))
        return dataclasses.replace(request_options, request_id=None, timeout_ms=remaining)

    stopped: list[bool] = []

    def stop(error: McpError) -> McpError:
        stopped.append(True)
        _best_effort_cancel(client, task_id, options)
        return error

    record = _record(client, task_id)
    _save(client, record)
    polls = 0
    try:
        if record.pending:  # a previous process persisted answers the server never acknowledged
            record = _send(client, record, dict(record.pending), each(options))
        while True:
            if cancelled():
                raise stop(McpRequestCancelled(f"waiting for task {task_id!r} was cancelled (the task was cancelled)"))
            if deadline is not None and time.monotonic() >= deadline:
                raise stop(McpRequestTimedOut(f"task {task_id!r} did not finish before the deadline "
                                              "(the task was cancelled)"))
            state = get_task(client, task_id, each(options))
            polls += 1
            if on_state is not None:
                on_state(state)
            if state.terminal:
                _forget(client, task_id)
                return state
            if isinstance(state, TaskNeedsInput):
                record = _answer(client, record, state, each(options))
            if polls >= polling.max_polls:
                raise stop(TaskWaitExhausted(f"task {task_id!r} was still {state.status} after {polls} polls "
                                             "(the task was cancelled; raise TaskPolling.max_polls to wait longer)",
                                             task_id=task_id, last_status=state.status))
            _sleep(polling.interval_s(state.poll_interval_ms), deadline, cancelled)
    except McpError as exc:
        if stopped:
            raise
        failure = _interrupted(client, task_id, options, deadline, exc)
        if failure is exc:
            raise
        raise failure from exc


def _answer(client: Client, record: TaskRecord, state: TaskNeedsInput, options: RequestOptions) -> TaskRecord:
    seen = set(record.answered) | set(record.pending)
    fresh = [request for request in state.requests if request.key not in seen]
    if not fresh:
        return record
    if client.input_handler is None:
        raise McpInputRequired(f"task {record.task_id!r} needs input but the client has no input_handler",
                               result=state.to_json())
    answers = answer_inputs(client.input_handler, fresh)
    record = dataclasses.replace(record, pending={**record.pending, **answers})
    _save(client, record)  # phase one: the validated answers are durable before they are sent
    return _send(client, record, answers, options)


def _send(client: Client, record: TaskRecord, answers: dict[str, Any], options: RequestOptions) -> TaskRecord:
    update_task(client, record.task_id, answers, options)
    pending = {key: value for key, value in record.pending.items() if key not in answers}
    answered = record.answered + tuple(key for key in answers if key not in record.answered)
    record = dataclasses.replace(record, pending=pending, answered=answered)
    _save(client, record)  # phase two: acknowledged
    return record


def _sleep(seconds: float, deadline: float | None, cancelled: Callable[[], bool]) -> None:
    end = time.monotonic() + seconds
    if deadline is not None:
        end = min(end, deadline)
    while not cancelled():
        left = end - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(left, _SLICE_S))


def resume_tasks(client: Client, *, options: RequestOptions | None = None,
                 polling: TaskPolling | None = None) -> list[TaskState]:
    """Wait for every stored task in order; their terminal states.  On failure the rest stay stored."""
    if client.task_store is None:
        from zigai.mcp.errors import InvalidMcpRequest

        raise InvalidMcpRequest("resume_tasks needs a client with a task_store")
    return [wait_task(client, record.task_id, options=options, polling=polling)
            for record in client.task_store.load()]


def completed_result(state: TaskState, method: str) -> dict[str, Any]:
    """The original request's result of a terminal task, or the error the task ended with."""
    from zigai.mcp.errors import error_for_code

    if isinstance(state, TaskCompleted):
        return dict(state.result)
    if state.status == "failed":
        raise error_for_code(state.code, state.message, state.data)  # type: ignore[union-attr]
    raise McpRequestCancelled(f"{method}: the server cancelled task {state.task_id!r}")
