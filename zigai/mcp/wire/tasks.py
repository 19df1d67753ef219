"""The MCP Tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663): values and wire checks.

Job
    Build the params of ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` and parse every
    task the server reports (a ``resultType: "task"`` handle, a ``tasks/get`` result, a
    ``notifications/tasks`` event) into one member of a tagged union: :class:`TaskWorking`,
    :class:`TaskNeedsInput`, :class:`TaskCompleted`, :class:`TaskFailed` or
    :class:`TaskCancelled`.  The client calls live in ``client.tasks``, durability in
    ``client.task_store``, the server side in ``server.tasks``.

Invariants
    * Each status carries exactly its own payload: ``completed`` a ``result`` object,
      ``failed`` a JSON-RPC ``error`` object (integer code, string message), ``input_required``
      a non-empty ``inputRequests`` map of validated :class:`InputRequest` values; any other
      payload on a status is refused as an invalid message, so the states cannot be confused.
    * A task id is a non-empty string; it travels as the ``taskId`` body parameter and as the
      HTTP routing name (``Mcp-Name``) of every tasks request.
    * Parsed states are deep copies of the wire; ``raw`` keeps the object exactly as received.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from zigai import json as zjson
from zigai.mcp.errors import InvalidMcpMessage, InvalidMcpRequest
from zigai.mcp.wire.input import InputRequest

__all__ = [
    "TASKS_EXTENSION",
    "TASK_STATUSES",
    "TaskWorking",
    "TaskNeedsInput",
    "TaskCompleted",
    "TaskFailed",
    "TaskCancelled",
    "TaskState",
    "TASK_STATE_TYPES",
    "parse_task",
    "check_task_id",
    "get_params",
    "update_params",
    "cancel_params",
]

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
TASK_STATUSES = ("working", "input_required", "completed", "failed", "cancelled")
_PAYLOADS = {"input_required": "inputRequests", "completed": "result", "failed": "error"}


def check_task_id(task_id: object) -> str:
    if not isinstance(task_id, str) or not task_id:
        raise InvalidMcpRequest("a task id must be a non-empty string")
    return task_id


@dataclass(frozen=True, slots=True)
class _Task:
    task_id: str
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    status = ""

    @property
    def terminal(self) -> bool:
        return self.status in ("completed", "failed", "cancelled")

    def to_json(self) -> dict[str, Any]:
        """The task object on the wire (as a server reports it)."""
        value: dict[str, Any] = {"taskId": self.task_id, "status": self.status}
        for key, attribute in (("statusMessage", "status_message"), ("createdAt", "created_at"),
                               ("lastUpdatedAt", "last_updated_at"), ("ttlMs", "ttl_ms"),
                               ("pollIntervalMs", "poll_interval_ms")):
            if getattr(self, attribute) is not None:
                value[key] = getattr(self, attribute)
        value.update(self._payload())
        return value

    def _payload(self) -> dict[str, Any]:
        return {}


@dataclass(frozen=True, slots=True)
class TaskWorking(_Task):
    """The server is still working on the task."""

    status = "working"


@dataclass(frozen=True, slots=True)
class TaskNeedsInput(_Task):
    """The task waits for the client's answers to ``requests`` (send them with ``tasks/update``)."""

    requests: tuple[InputRequest, ...] = ()
    status = "input_required"

    def _payload(self) -> dict[str, Any]:
        return {"inputRequests": {request.key: request.to_json() for request in self.requests}}


@dataclass(frozen=True, slots=True)
class TaskCompleted(_Task):
    """The task finished; ``result`` is what the original request would have returned."""

    result: Mapping[str, Any] = field(default_factory=dict)
    status = "completed"

    def _payload(self) -> dict[str, Any]:
        return {"result": copy.deepcopy(dict(self.result))}


@dataclass(frozen=True, slots=True)
class TaskFailed(_Task):
    """The task failed with a JSON-RPC error (``code``, ``message``, ``data``)."""

    code: int = 0
    message: str = ""
    data: Any = None
    status = "failed"

    def _payload(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = copy.deepcopy(self.data)
        return {"error": error}


@dataclass(frozen=True, slots=True)
class TaskCancelled(_Task):
    """The task was cancelled (by the client or the server)."""

    status = "cancelled"


TaskState = TaskWorking | TaskNeedsInput | TaskCompleted | TaskFailed | TaskCancelled
TASK_STATE_TYPES = (TaskWorking, TaskNeedsInput, TaskCompleted, TaskFailed, TaskCancelled)


def parse_task(value: object, what: str = "task") -> TaskState:
    """One validated task state from a wire task object (flat, or nested under ``task``)."""
    if isinstance(value, dict) and isinstance(value.get("task"), dict) and "taskId" not in value:
        value = value["task"]
    if not isinstance(value, dict):
        raise InvalidMcpMessage(f"{what} must be a JSON object")
    task_id = value.get("taskId")
    if not isinstance(task_id, str) or not task_id:
        raise InvalidMcpMessage(f"{what} needs a non-empty string taskId")
    status = value.get("status")
    if status not in TASK_STATUSES:
        raise InvalidMcpMessage(f"{what} {task_id!r} has unknown status {status!r}")
    for other_status, key in _PAYLOADS.items():
        if other_status != status and key in value:
            raise InvalidMcpMessage(f"{what} {task_id!r} is {status} but carries {key!r} "
                                    f"(only a {other_status} task does)")
    common: dict[str, Any] = {"task_id": task_id, "raw": copy.deepcopy(value)}
    for key, attribute, kind in (("statusMessage", "status_message", str), ("createdAt", "created_at", str),
                                 ("lastUpdatedAt", "last_updated_at", str), ("ttlMs", "ttl_ms", int),
                                 ("pollIntervalMs", "poll_interval_ms", int)):
        item = value.get(key)
        if item is None:
            continue
        if not isinstance(item, kind) or isinstance(item, bool) or (isinstance(item, int) and item < 0):
            wanted = "a non-negative integer" if kind is int else "a string"
            raise InvalidMcpMessage(f"{what} {task_id!r}: {key} has the wrong type: expected {wanted}, "
                                    f"got {zjson.type_name(item)}")
        common[attribute] = item
    if status == "working":
        return TaskWorking(**common)
    if status == "cancelled":
        return TaskCancelled(**common)
    if status == "completed":
        result = value.get("result")
        if not isinstance(result, dict):
            raise InvalidMcpMessage(f"{what} {task_id!r} is completed but has no result object")
        return TaskCompleted(**common, result=copy.deepcopy(result))
    if status == "failed":
        error = value.get("error")
        if not (isinstance(error, dict) and isinstance(error.get("code"), int) and not isinstance(error["code"], bool)
                and isinstance(error.get("message"), str)):
            raise InvalidMcpMessage(f"{what} {task_id!r} is failed but has no JSON-RPC error object")
        return TaskFailed(**common, code=error["code"], message=error["message"], data=copy.deepcopy(error.get("data")))
    requests = value.get("inputRequests")
    if not isinstance(requests, dict) or not requests:
        raise InvalidMcpMessage(f"{what} {task_id!r} is input_required but has no inputRequests")
    return TaskNeedsInput(**common, requests=tuple(InputRequest.from_json(key, item) for key, item in requests.items()))


def get_params(task_id: str) -> dict[str, Any]:
    return {"taskId": check_task_id(task_id)}


def update_params(task_id: str, responses: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(responses, Mapping) or not responses:
        raise InvalidMcpRequest("tasks/update needs a non-empty inputResponses object")
    return {"taskId": check_task_id(task_id), "inputResponses": copy.deepcopy(dict(responses))}


def cancel_params(task_id: str) -> dict[str, Any]:
    return {"taskId": check_task_id(task_id)}
