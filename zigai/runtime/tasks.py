"""The task service: submitted work with an explicit state machine and optimistic revisions.

States and their transitions (anything else is :class:`InvalidTaskTransition`)::

    queued  --claim-->    running
    queued  --cancel-->   cancelled
    running --complete--> succeeded
    running --fail-->     failed
    running --cancel-->   cancelled
    succeeded, failed, cancelled: terminal

Every transition increments the task's revision and may name the revision the caller saw
(``expected_revision``; :class:`RevisionConflict` when it is stale).  ``claim`` hands out the
oldest queued task (optionally of one kind), so two workers never claim the same task.

Invariants: inputs and outputs are bounded JSON (:class:`TaskLimits`) checked before any
change; the in-memory service keeps each task as its own record and returns fresh copies;
it is thread-safe.  Remote queues and hosted workers fit behind the same contract.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from zigai import json as zjson
from zigai.json import defaults as json_defaults
from zigai.runtime._keys import check_key, decode_payload, encode_payload
from zigai.runtime._service import LockedService
from zigai.runtime.errors import (
    InvalidRuntimeRecord,
    InvalidTaskTransition,
    RevisionConflict,
    TaskPayloadTooLarge,
    UnknownRecord,
)

__all__ = ["TaskState", "TaskLimits", "TaskRecord", "TaskService", "InMemoryTaskService"]


class TaskState(enum.Enum):
    queued = "queued"
    running = "running"
    succeeded = "succeeded"
    failed = "failed"
    cancelled = "cancelled"

    @property
    def terminal(self) -> bool:
        return self in (TaskState.succeeded, TaskState.failed, TaskState.cancelled)


_TRANSITIONS: dict[TaskState, frozenset[TaskState]] = {
    TaskState.queued: frozenset({TaskState.running, TaskState.cancelled}),
    TaskState.running: frozenset({TaskState.succeeded, TaskState.failed, TaskState.cancelled}),
    TaskState.succeeded: frozenset(),
    TaskState.failed: frozenset(),
    TaskState.cancelled: frozenset(),
}


@dataclass(frozen=True, slots=True)
class TaskLimits:
    """Bounds of a task service.  Exactly-at-limit is accepted; one more fails."""

    payload: zjson.Limits = json_defaults.tool_payload
    max_tasks: int = 65_536
    max_error_chars: int = 4096
    max_kind_chars: int = 128

    def __post_init__(self) -> None:
        if not isinstance(self.payload, zjson.Limits):
            raise ValueError("TaskLimits.payload must be a zigai.json.Limits")
        for name in ("max_tasks", "max_error_chars", "max_kind_chars"):
            value = getattr(self, name)
            if type(value) is not int or value <= 0:
                raise ValueError(f"TaskLimits.{name} must be an int > 0, got {value!r}")


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """One task at one revision; ``input`` and ``output`` are the caller's own copies."""

    task_id: str
    kind: str
    state: TaskState
    revision: int
    input: Any
    output: Any = None
    error: str = ""


@runtime_checkable
class TaskService(Protocol):
    """The task service contract."""

    def submit(self, kind: str, input: Any = None) -> TaskRecord: ...

    def get(self, task_id: str) -> TaskRecord: ...

    def claim(self, kind: str | None = None) -> TaskRecord | None: ...

    def complete(self, task_id: str, output: Any = None, *, expected_revision: int | None = None) -> TaskRecord: ...

    def fail(self, task_id: str, error: str, *, expected_revision: int | None = None) -> TaskRecord: ...

    def cancel(self, task_id: str, *, expected_revision: int | None = None) -> TaskRecord: ...

    def tasks(self, state: TaskState | None = None) -> tuple[TaskRecord, ...]: ...


@dataclass(slots=True)
class _Stored:
    kind: str
    state: TaskState
    revision: int
    input_text: str
    output_text: str = "null"
    error: str = ""


class InMemoryTaskService(LockedService):
    """A thread-safe in-process :class:`TaskService`."""

    _service_name = "task service"

    def __init__(self, limits: TaskLimits | None = None) -> None:
        self._limits = limits if limits is not None else TaskLimits()
        super().__init__()
        self._tasks: dict[str, _Stored] = {}
        self._next = 1

    @property
    def limits(self) -> TaskLimits:
        return self._limits

    def _clear(self) -> None:
        self._tasks.clear()

    def submit(self, kind: str, input: Any = None) -> TaskRecord:
        """Queue a task of ``kind`` with a bounded JSON ``input``."""
        check_key(kind, "task kind", self._limits.max_kind_chars)
        text = encode_payload(input, self._limits.payload, f"input of a {kind!r} task", TaskPayloadTooLarge)
        with self._lock:
            self._check_open()
            if len(self._tasks) >= self._limits.max_tasks:
                raise TaskPayloadTooLarge(f"the task service holds {self._limits.max_tasks} tasks, its limit",
                                          limit=self._limits.max_tasks)
            task_id = f"task-{self._next}"
            self._next += 1
            stored = self._tasks[task_id] = _Stored(kind, TaskState.queued, 1, text)
            return _record(task_id, stored)

    def get(self, task_id: str) -> TaskRecord:
        with self._lock:
            self._check_open()
            return _record(task_id, self._find(task_id))

    def _find(self, task_id: str) -> _Stored:
        stored = self._tasks.get(task_id) if isinstance(task_id, str) else None
        if stored is None:
            raise UnknownRecord(f"no task {task_id!r}", key=str(task_id))
        return stored

    def claim(self, kind: str | None = None) -> TaskRecord | None:
        """Move the oldest queued task (of ``kind``) to running and return it; ``None`` when none waits."""
        with self._lock:
            self._check_open()
            for task_id, stored in self._tasks.items():
                if stored.state is TaskState.queued and (kind is None or stored.kind == kind):
                    stored.state = TaskState.running
                    stored.revision += 1
                    return _record(task_id, stored)
        return None

    def complete(self, task_id: str, output: Any = None, *, expected_revision: int | None = None) -> TaskRecord:
        text = encode_payload(output, self._limits.payload, f"output of task {task_id!r}", TaskPayloadTooLarge)
        return self._move(task_id, TaskState.succeeded, expected_revision, output_text=text)

    def fail(self, task_id: str, error: str, *, expected_revision: int | None = None) -> TaskRecord:
        if not isinstance(error, str):
            raise InvalidRuntimeRecord(f"task {task_id!r}: error must be a string")
        if len(error) > self._limits.max_error_chars:
            raise TaskPayloadTooLarge(f"task {task_id!r}: error is {len(error)} characters; the limit is "
                                      f"{self._limits.max_error_chars}", limit=self._limits.max_error_chars)
        return self._move(task_id, TaskState.failed, expected_revision, error=error)

    def cancel(self, task_id: str, *, expected_revision: int | None = None) -> TaskRecord:
        return self._move(task_id, TaskState.cancelled, expected_revision)

    def _move(self, task_id: str, target: TaskState, expected_revision: int | None, *,
              output_text: str = "null", error: str = "") -> TaskRecord:
        with self._lock:
            self._check_open()
            stored = self._find(task_id)
            if expected_revision is not None and stored.revision != expected_revision:
                raise RevisionConflict(f"task {task_id!r} is at revision {stored.revision}, not "
                                       f"{expected_revision}; read it again", expected=expected_revision,
                                       actual=stored.revision)
            if target not in _TRANSITIONS[stored.state]:
                raise InvalidTaskTransition(f"task {task_id!r} is {stored.state.value}; it cannot become "
                                            f"{target.value}", task_id=task_id, state=stored.state.value,
                                            target=target.value)
            stored.state = target
            stored.revision += 1
            stored.output_text = output_text
            stored.error = error
            return _record(task_id, stored)

    def tasks(self, state: TaskState | None = None) -> tuple[TaskRecord, ...]:
        """Every task (in one ``state``), oldest submitted first."""
        with self._lock:
            self._check_open()
            return tuple(_record(task_id, stored) for task_id, stored in self._tasks.items()
                         if state is None or stored.state is state)


def _record(task_id: str, stored: _Stored) -> TaskRecord:
    return TaskRecord(task_id, stored.kind, stored.state, stored.revision, decode_payload(stored.input_text),
                      decode_payload(stored.output_text), stored.error)
