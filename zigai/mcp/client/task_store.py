"""Durable task records for the MCP Tasks extension: the store interface and :class:`FileStore`.

Job
    Remember, across client restarts, which remote tasks this client is waiting for and the
    input it already gave them.  A :class:`TaskRecord` holds a task id, what created it, the
    validated input responses not yet acknowledged by the server (``pending``) and the keys
    the server has acknowledged (``answered``).  Transports and task contracts know nothing of
    files: the client talks to any :class:`TaskStore` (``load`` / ``save`` / ``remove``).

Invariants
    * Two-phase input: a response is saved in ``pending`` before ``tasks/update`` is sent; only
      the server's acknowledgement moves its key to ``answered``.  A restarted client resends
      ``pending`` and never asks its input handler again for a pending or answered key.
    * :class:`FileStore` writes one versioned JSON snapshot (``{"version": 1, "tasks": [...]}``)
      by atomic replacement (temporary file in the same folder, fsync, ``os.replace``) with
      owner-only permissions (0600); the snapshot is bounded in bytes and in tasks, checked on
      both save and load, and any violation is :class:`TaskStoreError` with the file untouched
      (a snapshot nested too deeply to decode included); a record's ``pending`` input nests at
      most :data:`MAX_PENDING_DEPTH` levels, checked on save and load.
    * Every load, save and remove holds an exclusive ``flock`` on ``<file>.lock`` (next to the
      snapshot, never deleted), so processes sharing one file never lose each other's records.
      Where ``fcntl`` is missing (Windows) only threads are serialised.
    * Temporary files an interrupted writer left behind are removed by the next load or write
      (under the exclusive lock no other writer is active, so any of them is an orphan).
    * Records keep insertion order; ``load`` returns copies.  The store is thread-safe.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import tempfile
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from zigai.mcp.errors import TaskStoreError

__all__ = ["TaskRecord", "TaskStore", "MemoryStore", "FileStore", "SNAPSHOT_VERSION",
           "DEFAULT_MAX_SNAPSHOT_BYTES", "DEFAULT_MAX_TASKS", "MAX_PENDING_DEPTH"]

SNAPSHOT_VERSION = 1
DEFAULT_MAX_SNAPSHOT_BYTES = 1 << 20
DEFAULT_MAX_TASKS = 1000
MAX_PENDING_DEPTH = 64
"""How deeply a record's pending input may nest (arrays and objects), checked without recursion."""


def _check_depth(value: object) -> None:
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if not isinstance(item, (Mapping, list, tuple)):
            continue
        if depth > MAX_PENDING_DEPTH:
            raise TaskStoreError(f"a task record's pending input nests deeper than {MAX_PENDING_DEPTH} levels")
        stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, Mapping) else item))


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """One tracked task: its id, origin (``method``, ``name``) and two-phase input state."""

    task_id: str
    method: str = "tools/call"
    name: str | None = None
    pending: Mapping[str, Any] = field(default_factory=dict)
    answered: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"taskId": self.task_id, "method": self.method, "name": self.name,
                "pending": copy.deepcopy(dict(self.pending)), "answered": list(self.answered)}

    @classmethod
    def from_json(cls, value: object) -> TaskRecord:
        if not isinstance(value, dict):
            raise TaskStoreError("a task record must be a JSON object")
        task_id, method, name = value.get("taskId"), value.get("method"), value.get("name")
        pending, answered = value.get("pending", {}), value.get("answered", [])
        if (not isinstance(task_id, str) or not task_id or not isinstance(method, str)
                or not (name is None or isinstance(name, str)) or not isinstance(pending, dict)
                or not isinstance(answered, list) or not all(isinstance(key, str) for key in answered)):
            raise TaskStoreError("a task record has the wrong shape (taskId, method, name, pending, answered)")
        _check_depth(pending)
        return cls(task_id, method, name, copy.deepcopy(pending), tuple(answered))


@runtime_checkable
class TaskStore(Protocol):
    """Where a client keeps its :class:`TaskRecord` values."""

    def load(self) -> list[TaskRecord]:
        """Every record, oldest first."""
        ...

    def save(self, record: TaskRecord) -> None:
        """Insert or replace the record of ``record.task_id`` (durably, before returning)."""
        ...

    def remove(self, task_id: str) -> None:
        """Forget a task; unknown ids are ignored."""
        ...


class MemoryStore:
    """A :class:`TaskStore` in this process only (for tests and short-lived clients)."""

    def __init__(self) -> None:
        self._records: dict[str, TaskRecord] = {}
        self._lock = threading.Lock()

    def load(self) -> list[TaskRecord]:
        with self._lock:
            return list(self._records.values())

    def save(self, record: TaskRecord) -> None:
        with self._lock:
            self._records[record.task_id] = record

    def remove(self, task_id: str) -> None:
        with self._lock:
            self._records.pop(task_id, None)


class FileStore:
    """A :class:`TaskStore` in one JSON snapshot file (see module docstring)."""

    def __init__(self, path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_SNAPSHOT_BYTES,
                 max_tasks: int = DEFAULT_MAX_TASKS) -> None:
        for name, value in (("max_bytes", max_bytes), ("max_tasks", max_tasks)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise TaskStoreError(f"FileStore {name} must be a positive integer")
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.max_tasks = max_tasks
        self._lock = threading.Lock()

    def load(self) -> list[TaskRecord]:
        with self._lock, self._file_lock():
            self._remove_orphans(self.path.parent)
            return list(self._read().values())

    def save(self, record: TaskRecord) -> None:
        if not isinstance(record, TaskRecord):
            raise TaskStoreError("FileStore.save needs a TaskRecord")
        _check_depth(record.pending)
        with self._lock, self._file_lock():
            records = self._read()
            records[record.task_id] = record
            self._write(records)

    def remove(self, task_id: str) -> None:
        with self._lock, self._file_lock():
            records = self._read()
            if records.pop(task_id, None) is not None:
                self._write(records)

    @contextlib.contextmanager
    def _file_lock(self) -> Iterator[None]:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: the thread lock is all there is
            yield
            return
        lock_path = self.path.with_name(self.path.name + ".lock")
        try:
            descriptor = os.open(lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        except FileNotFoundError:  # no folder yet: nothing to read, and _write reports it
            yield
            return
        except OSError as exc:
            raise TaskStoreError(f"cannot open the task store lock {lock_path}: {exc.strerror}") from None
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)  # closing releases the lock

    def _read(self) -> dict[str, TaskRecord]:
        try:
            with open(self.path, "rb") as handle:
                data = handle.read(self.max_bytes + 1)
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise TaskStoreError(f"cannot read the task snapshot {self.path}: {exc.strerror}") from None
        if len(data) > self.max_bytes:
            raise TaskStoreError(f"the task snapshot {self.path} is larger than {self.max_bytes} bytes")
        try:
            snapshot = json.loads(data)
        except ValueError:
            raise TaskStoreError(f"the task snapshot {self.path} is not JSON; move it aside to start afresh") from None
        except RecursionError:
            raise TaskStoreError(f"the task snapshot {self.path} is nested too deeply to read; "
                                 "move it aside to start afresh") from None
        if not isinstance(snapshot, dict) or snapshot.get("version") != SNAPSHOT_VERSION:
            raise TaskStoreError(f"the task snapshot {self.path} is not version {SNAPSHOT_VERSION}")
        tasks = snapshot.get("tasks")
        if not isinstance(tasks, list) or len(tasks) > self.max_tasks:
            raise TaskStoreError(f"the task snapshot {self.path} needs a list of at most {self.max_tasks} tasks")
        records = [TaskRecord.from_json(item) for item in tasks]
        return {record.task_id: record for record in records}

    def _write(self, records: dict[str, TaskRecord]) -> None:
        if len(records) > self.max_tasks:
            raise TaskStoreError(f"the task store holds at most {self.max_tasks} tasks; "
                                 "wait for or cancel some before starting more")
        body = json.dumps({"version": SNAPSHOT_VERSION, "tasks": [record.to_json() for record in records.values()]},
                          separators=(",", ":"), ensure_ascii=False).encode()
        if len(body) > self.max_bytes:
            raise TaskStoreError(f"the task snapshot would exceed {self.max_bytes} bytes")
        folder = self.path.parent
        self._remove_orphans(folder)
        try:
            descriptor, temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=folder)
        except OSError as exc:
            raise TaskStoreError(f"cannot write the task snapshot in {folder}: {exc.strerror}") from None
        try:
            os.fchmod(descriptor, 0o600)
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(body)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
        except OSError as exc:  # pragma: no cover - a disk failing mid-write
            Path(temporary).unlink(missing_ok=True)
            raise TaskStoreError(f"cannot write the task snapshot {self.path}: {exc.strerror}") from None

    def _remove_orphans(self, folder: Path) -> None:
        prefix = f".{self.path.name}."
        try:
            names = os.listdir(folder)
        except OSError:  # the write below reports a missing or unreadable folder
            return
        for name in names:
            if name.startswith(prefix) and name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    os.unlink(folder / name)
