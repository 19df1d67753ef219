"""The server side of the MCP Tasks extension: task tools that run in the background.

Job
    :class:`TaskServer` attaches the extension to a :class:`~zigai.mcp.Server`: it declares
    ``io.modelcontextprotocol/tasks``, serves ``tasks/get``, ``tasks/update`` and
    ``tasks/cancel``, and registers *task tools*.  A task tool called by a client that
    declared the extension answers at once with a task handle (``resultType: "task"``) while
    its work runs on a worker thread; the work may ask the client for input with
    :meth:`TaskContext.ask`, which parks the task in ``input_required`` until ``tasks/update``
    delivers every answer.  Without the extension the tool runs inline, like any tool.

Invariants
    * The capability and routing checks of the core dispatcher run first: tasks methods need
      the client's extension declaration (-32021 otherwise) and, over HTTP, an ``Mcp-Name``
      equal to ``taskId``.  Unknown task ids are -32602.
    * ``tasks/update`` validates each answer against the method of the request it answers
      (-32602 on a mismatch) and ignores answers for keys already satisfied or never asked.
    * States are reported whole: ``tasks/get`` always returns a complete task object whose
      payload matches its status.  Terminal states never change.  At most ``max_tasks`` tasks are kept (finished ones are dropped
      oldest first, after ``ttl_ms``); beyond that a new task is refused with -32603.
    * ``tasks/update`` and ``tasks/cancel`` answer an empty acknowledgement; the state is read
      with ``tasks/get`` (cancelling a finished task leaves it unchanged).
    * Task work runs on daemon workers.  :meth:`TaskServer.close` cancels every task's token,
      drops work not yet started and returns without waiting: work that ignores its token is
      abandoned and never keeps the process alive (its ``finally`` blocks may not run at exit).
    * Every state change (status, status message, an answered input request) is sent whole as
      ``notifications/tasks`` to the listen streams whose filter names the task id
      (:meth:`Server.notify_task`); a stream needs the client's extension declaration.
"""

from __future__ import annotations

import copy
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from zigai._workers import WorkerPool
from zigai.control import CancellationToken
from zigai.mcp.errors import (
    InternalError,
    InvalidInputResponse,
    InvalidParams,
    McpErrorResponse,
    McpRequestCancelled,
)
from zigai.mcp.server.request import ServerRequest
from zigai.mcp.server.server import Server
from zigai.mcp.server.values import error_result, tool_value
from zigai.mcp.wire.input import InputRequest, InputResponse
from zigai.mcp.wire.primitives import ClientCapabilities
from zigai.mcp.wire.results import ToolInfo
from zigai.mcp.wire.tasks import (
    TASKS_EXTENSION,
    TaskCancelled,
    TaskCompleted,
    TaskFailed,
    TaskNeedsInput,
    TaskState,
    TaskWorking,
    check_task_id,
)
from zigai.tool import ModelRetry

__all__ = ["TaskServer", "TaskContext"]

_REQUIRES = ClientCapabilities(extensions={TASKS_EXTENSION: {}})


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class _Job:
    def __init__(self, task_id: str, ttl_ms: int | None, poll_interval_ms: int,
                 publish: Callable[[TaskState], None] | None = None) -> None:
        self.task_id = task_id
        self.publish = publish
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.created_at = self.updated_at = _now()
        self.status = "working"
        self.message: str | None = None
        self.requests: dict[str, InputRequest] = {}
        self.answers: dict[str, Any] = {}
        self.result: dict[str, Any] | None = None
        self.error: tuple[int, str, Any] | None = None
        self.finished_at: float | None = None
        self.token = CancellationToken()
        self.changed = threading.Condition()

    def state(self) -> TaskState:
        common: dict[str, Any] = {"task_id": self.task_id, "status_message": self.message,
                                  "created_at": self.created_at, "last_updated_at": self.updated_at,
                                  "ttl_ms": self.ttl_ms, "poll_interval_ms": self.poll_interval_ms}
        if self.status == "completed":
            return TaskCompleted(**common, result=copy.deepcopy(self.result or {}))
        if self.status == "failed":
            code, message, data = self.error or (-32603, "the task failed", None)
            return TaskFailed(**common, code=code, message=message, data=data)
        if self.status == "cancelled":
            return TaskCancelled(**common)
        open_requests = tuple(r for key, r in self.requests.items() if key not in self.answers)
        if self.status == "input_required" and open_requests:  # all answered: working again
            return TaskNeedsInput(**common, requests=open_requests)
        return TaskWorking(**common)

    def move(self, status: str) -> None:  # the caller holds self.changed
        if self.status in ("completed", "failed", "cancelled"):
            return
        self.status = status
        self.updated_at = _now()
        if status in ("completed", "failed", "cancelled"):
            self.finished_at = time.monotonic()
        self.announce()

    def announce(self) -> None:  # the caller holds self.changed
        """Wake the waiters and send the new state to the task's status streams."""
        self.changed.notify_all()
        if self.publish is not None:
            self.publish(self.state())


class TaskContext:
    """What a task tool's work may know and do: its id, cancellation, status text and input."""

    def __init__(self, job: _Job | None, request: ServerRequest) -> None:
        self._job = job
        self.request = request

    @property
    def task_id(self) -> str | None:
        """None when the tool runs inline (the client did not declare the extension)."""
        return self._job.task_id if self._job is not None else None

    @property
    def cancelled(self) -> bool:
        return self._job.token.cancelled if self._job is not None else self.request.control.cancelled

    def status(self, message: str) -> None:
        if self._job is not None:
            with self._job.changed:
                self._job.message = message
                self._job.updated_at = _now()
                self._job.announce()

    def ask(self, *requests: InputRequest, timeout_s: float | None = None) -> dict[str, Any]:
        """Park the task in ``input_required`` until every request is answered; the answers by key."""
        job = self._job
        if job is None:
            raise InvalidParams(f"this tool needs input; call it with the {TASKS_EXTENSION} extension declared")
        if not requests or not all(isinstance(request, InputRequest) for request in requests):
            raise InvalidParams("TaskContext.ask needs InputRequest values")
        keys = [request.key for request in requests]
        end = None if timeout_s is None else time.monotonic() + timeout_s
        with job.changed:
            for request in requests:
                if request.key in job.requests:
                    raise InvalidParams(f"input key {request.key!r} was already asked in this task")
                job.requests[request.key] = request
            job.move("input_required")
            while not all(key in job.answers for key in keys):
                if job.token.cancelled or job.status == "cancelled":
                    raise McpRequestCancelled(f"task {job.task_id!r} was cancelled while waiting for input")
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    raise InternalError(f"task {job.task_id!r} got no input within {timeout_s} s")
                job.changed.wait(0.05 if left is None else min(left, 0.05))
            job.move("working")
            return {key: copy.deepcopy(job.answers[key]) for key in keys}


class TaskServer:
    """The Tasks extension on one :class:`Server` (see module docstring).  Close it to stop workers."""

    def __init__(self, server: Server, *, ttl_ms: int | None = 60_000, poll_interval_ms: int = 100,
                 max_tasks: int = 100, max_workers: int = 4) -> None:
        self.server = server
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.max_tasks = max_tasks
        self._jobs: dict[str, _Job] = {}
        self._lock = threading.Lock()
        self._pool = WorkerPool(max_workers, "zigai-mcp-task")  # daemon: a stuck task never holds exit
        server.declare_extension(TASKS_EXTENSION)
        server.add_method("tasks/get", self._get, requires=_REQUIRES)
        server.add_method("tasks/update", self._update, requires=_REQUIRES)
        server.add_method("tasks/cancel", self._cancel, requires=_REQUIRES)

    def close(self) -> None:
        with self._lock:
            jobs = list(self._jobs.values())
        for job in jobs:
            job.token.cancel("the task server was closed")
        self._pool.shutdown()  # queued work never starts; running work is told and never waited for

    def __enter__(self) -> TaskServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add_tool(self, tool: ToolInfo, work: Callable[[dict[str, Any], TaskContext], Any], *,
                 required: bool = False) -> None:
        """A tool whose ``work(arguments, context)`` runs as a task for extension-declaring clients.

        Other clients get the work run inline, or, with ``required=True``, -32021 naming the
        extension before anything runs.
        """

        def handler(arguments: dict[str, Any], request: ServerRequest) -> Any:
            if TASKS_EXTENSION not in (request.client_capabilities.extensions or {}):
                return work(arguments, TaskContext(None, request))
            return self.start(work, arguments, request)

        self.server.add_tool(tool, handler, requires=_REQUIRES if required else None)

    def start(self, work: Callable[[dict[str, Any], TaskContext], Any], arguments: dict[str, Any],
              request: ServerRequest) -> TaskState:
        """Run ``work`` as a new task; its first state (a handler returns it as the task handle).

        For a tool that first gathers input in multi round-trip rounds (``request.ask``) and
        then goes on in the background.  The task exists (``tasks/get`` finds it) on return.
        """
        self.server._require(_REQUIRES, request)
        job = self._new_job()
        self._pool.submit(self._run, job, work, copy.deepcopy(arguments), request)
        with job.changed:
            return job.state()

    # -- workers ---------------------------------------------------------------------------

    def _new_job(self) -> _Job:
        with self._lock:
            self._expire()
            if len(self._jobs) >= self.max_tasks:
                raise InternalError(f"the server already holds {self.max_tasks} tasks; try again later")
            job = _Job(secrets.token_urlsafe(16), self.ttl_ms, self.poll_interval_ms, self.server.notify_task)
            self._jobs[job.task_id] = job
            return job

    def _expire(self) -> None:  # the caller holds self._lock
        if self.ttl_ms is None:
            return
        now = time.monotonic()
        for task_id, job in list(self._jobs.items()):
            if job.finished_at is not None and now - job.finished_at >= self.ttl_ms / 1000.0:
                del self._jobs[task_id]

    def _run(self, job: _Job, work: Callable[[dict[str, Any], TaskContext], Any], arguments: dict[str, Any],
             request: ServerRequest) -> None:
        context = TaskContext(job, request)
        try:
            value = work(arguments, context)
            result = tool_value(value).to_json()
        except ModelRetry as exc:
            result = error_result(str(exc)).to_json()
        except McpRequestCancelled:
            with job.changed:
                job.move("cancelled")
            return
        except McpErrorResponse as exc:
            with job.changed:
                job.error = (exc.code, str(exc), exc.data)
                job.move("failed")
            return
        except Exception:
            with job.changed:
                job.error = (-32603, "the task failed on the server", None)
                job.move("failed")
            return
        with job.changed:
            result.setdefault("resultType", "complete")
            job.result = result
            job.move("completed")

    # -- the three methods -------------------------------------------------------------------

    def _job(self, params: Mapping[str, Any]) -> _Job:
        try:
            task_id = check_task_id(params.get("taskId"))
        except Exception:
            raise InvalidParams("tasks requests need a string 'taskId'") from None
        with self._lock:
            job = self._jobs.get(task_id)
        if job is None:
            raise InvalidParams(f"Unknown task: {task_id}", data={"taskId": task_id})
        return job

    def _get(self, params: dict[str, Any], request: ServerRequest) -> Mapping[str, Any]:
        job = self._job(params)
        with job.changed:
            return job.state().to_json()

    def _update(self, params: dict[str, Any], request: ServerRequest) -> Mapping[str, Any]:
        job = self._job(params)
        responses = params.get("inputResponses")
        if not isinstance(responses, dict):
            raise InvalidParams("tasks/update needs an 'inputResponses' object")
        with job.changed:
            fresh = 0
            for key, payload in responses.items():
                asked = job.requests.get(key)
                if asked is None or key in job.answers:
                    continue  # never asked, or already satisfied: ignored (safe replays)
                if not isinstance(payload, dict):
                    raise InvalidParams(f"input response {key!r} must be an object")
                try:
                    job.answers[key] = InputResponse(asked.kind, payload).check_answers(asked)
                except InvalidInputResponse as exc:
                    raise InvalidParams(str(exc)) from None
                fresh += 1
            if fresh:  # the open requests shrank (or the task is working again): say so
                job.announce()
        return {}

    def _cancel(self, params: dict[str, Any], request: ServerRequest) -> Mapping[str, Any]:
        job = self._job(params)
        job.token.cancel("cancelled by the client")
        with job.changed:
            job.move("cancelled")
        return {}  # an empty ack: the cancelled state is read with tasks/get (finished tasks stay as they are)
