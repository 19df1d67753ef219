"""The step service: durable step state with optimistic monotonic revisions.

A step record is keyed by ``(run_id, step_id)`` and holds a bounded JSON state.  Every write
names the revision the writer saw (``0`` for "absent"); a stale revision raises
:class:`RevisionConflict` and changes nothing.  Revisions only grow: a key's next revision is
one more than the highest it ever had, so a writer holding a revision from before a delete
can never overwrite the record created after it.

Invariants: states are checked against :class:`StepLimits` before any change; each record is
stored as its own JSON text (honest replacement and deletion) and each read returns a fresh
copy; both stores are thread-safe, and :class:`SqliteStepStore` makes each check-and-write one
SQLite transaction, so the revision rule also holds between processes sharing the file.
:class:`StepStoreBase` holds the rules once; a backend supplies its rows.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from zigai import json as zjson
from zigai.json import defaults as json_defaults
from zigai.runtime._keys import check_key, decode_payload, encode_payload
from zigai.runtime._service import LockedService
from zigai.runtime.errors import RevisionConflict, StepStateTooLarge, UnknownRecord

__all__ = ["StepLimits", "StepRecord", "StepStore", "StepStoreBase", "InMemoryStepStore", "SqliteStepStore"]


@dataclass(frozen=True, slots=True)
class StepLimits:
    """Bounds of a step store.  Exactly-at-limit is accepted; one more fails."""

    state: zjson.Limits = json_defaults.tool_payload
    max_records: int = 65_536
    max_key_chars: int = 128

    def __post_init__(self) -> None:
        if not isinstance(self.state, zjson.Limits):
            raise ValueError("StepLimits.state must be a zigai.json.Limits")
        for name in ("max_records", "max_key_chars"):
            value = getattr(self, name)
            if type(value) is not int or value <= 0:
                raise ValueError(f"StepLimits.{name} must be an int > 0, got {value!r}")


@dataclass(frozen=True, slots=True)
class StepRecord:
    """One step's state at one revision; ``state`` is the caller's own copy."""

    run_id: str
    step_id: str
    revision: int
    state: Any


@runtime_checkable
class StepStore(Protocol):
    """The step service contract."""

    def get(self, run_id: str, step_id: str) -> StepRecord | None: ...

    def load(self, run_id: str, step_id: str) -> StepRecord: ...

    def save(self, run_id: str, step_id: str, state: Any, *, expected_revision: int) -> StepRecord: ...

    def delete(self, run_id: str, step_id: str, *, expected_revision: int) -> None: ...

    def steps(self, run_id: str) -> tuple[StepRecord, ...]: ...


class StepStoreBase(LockedService):
    """The contract's checks, written once; a backend supplies five primitives.

    Primitives run under the store's lock and inside ``_atomic()``.  A key's row is
    ``(revision, text)`` where ``text`` is ``None`` once deleted: the row keeps the key's
    highest revision so revisions keep growing after a delete.
    """

    _service_name = "step store"

    def __init__(self, limits: StepLimits | None) -> None:
        super().__init__()
        self._limits = limits if limits is not None else StepLimits()

    @property
    def limits(self) -> StepLimits:
        return self._limits

    def _atomic(self) -> AbstractContextManager[None]:
        return nullcontext()

    def _fetch(self, key: tuple[str, str]) -> tuple[int, str | None] | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _store(self, key: tuple[str, str], revision: int, text: str | None, *, created: bool) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _live_count(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def _live(self, run_id: str) -> list[tuple[str, int, str]]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _key(self, run_id: str, step_id: str) -> tuple[str, str]:
        return (check_key(run_id, "run id", self._limits.max_key_chars),
                check_key(step_id, "step id", self._limits.max_key_chars))

    def get(self, run_id: str, step_id: str) -> StepRecord | None:
        key = self._key(run_id, step_id)
        with self._lock:
            self._check_open()
            found = self._fetch(key)
        if found is None or found[1] is None:
            return None
        return StepRecord(run_id, step_id, found[0], decode_payload(found[1]))

    def load(self, run_id: str, step_id: str) -> StepRecord:
        record = self.get(run_id, step_id)
        if record is None:
            raise UnknownRecord(f"no state for step {step_id!r} of run {run_id!r}", key=f"{run_id}/{step_id}")
        return record

    def save(self, run_id: str, step_id: str, state: Any, *, expected_revision: int) -> StepRecord:
        """Write ``state`` when ``expected_revision`` is current (``0``: the step has no state yet)."""
        key = self._key(run_id, step_id)
        _check_revision(expected_revision)
        text = encode_payload(state, self._limits.state, f"state of step {step_id!r}", StepStateTooLarge)
        with self._lock:
            self._check_open()
            with self._atomic():
                revision = self._save(key, text, expected_revision)
        return StepRecord(run_id, step_id, revision, decode_payload(text))

    def _save(self, key: tuple[str, str], text: str, expected_revision: int) -> int:
        run_id, step_id = key
        found = self._fetch(key)
        live = found is not None and found[1] is not None
        actual = found[0] if found is not None and live else 0
        if actual != expected_revision:
            raise _conflict(run_id, step_id, expected_revision, actual)
        if not live and self._live_count() >= self._limits.max_records:
            raise StepStateTooLarge(f"the step store holds {self._limits.max_records} records, its limit",
                                    limit=self._limits.max_records)
        revision = (0 if found is None else found[0]) + 1
        self._store(key, revision, text, created=not live)
        return revision

    def delete(self, run_id: str, step_id: str, *, expected_revision: int) -> None:
        key = self._key(run_id, step_id)
        _check_revision(expected_revision)
        with self._lock:
            self._check_open()
            with self._atomic():
                found = self._fetch(key)
                if found is None or found[1] is None:
                    raise UnknownRecord(f"no state for step {step_id!r} of run {run_id!r}",
                                        key=f"{run_id}/{step_id}")
                if found[0] != expected_revision:
                    raise _conflict(run_id, step_id, expected_revision, found[0])
                self._store(key, found[0], None, created=False)

    def steps(self, run_id: str) -> tuple[StepRecord, ...]:
        """Every current step record of ``run_id``, oldest created first."""
        check_key(run_id, "run id", self._limits.max_key_chars)
        with self._lock:
            self._check_open()
            found = self._live(run_id)
        return tuple(StepRecord(run_id, step_id, revision, decode_payload(text)) for step_id, revision, text in found)


class InMemoryStepStore(StepStoreBase):
    """A thread-safe in-process :class:`StepStore`."""

    def __init__(self, limits: StepLimits | None = None) -> None:
        super().__init__(limits)
        self._rows: dict[tuple[str, str], tuple[int, str | None]] = {}

    def _clear(self) -> None:
        self._rows.clear()

    def _fetch(self, key: tuple[str, str]) -> tuple[int, str | None] | None:
        return self._rows.get(key)

    def _store(self, key: tuple[str, str], revision: int, text: str | None, *, created: bool) -> None:
        if created:
            self._rows.pop(key, None)  # a re-created step counts as the newest
        self._rows[key] = (revision, text)

    def _live_count(self) -> int:
        return sum(text is not None for _, text in self._rows.values())

    def _live(self, run_id: str) -> list[tuple[str, int, str]]:
        return [(key[1], revision, text) for key, (revision, text) in self._rows.items()
                if key[0] == run_id and text is not None]


_SCHEMA = """
CREATE TABLE IF NOT EXISTS steps (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    step_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    state TEXT,
    UNIQUE (run_id, step_id)
);
"""


class SqliteStepStore(StepStoreBase):
    """A :class:`StepStore` in one SQLite file, shared safely by threads and processes.

    Each write is one ``BEGIN IMMEDIATE`` transaction, so the revision check and the write are
    atomic across every connection to the file; ``secure_delete`` overwrites deleted states.
    """

    def __init__(self, path: str | os.PathLike[str], limits: StepLimits | None = None) -> None:
        super().__init__(limits)
        self._db = sqlite3.connect(os.fspath(path), check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA secure_delete = ON")
        self._db.executescript(_SCHEMA)

    def _clear(self) -> None:
        self._db.close()

    @contextmanager
    def _atomic(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _fetch(self, key: tuple[str, str]) -> tuple[int, str | None] | None:
        row = self._db.execute("SELECT revision, state FROM steps WHERE run_id = ? AND step_id = ?", key).fetchone()
        return None if row is None else (int(row[0]), row[1])

    def _store(self, key: tuple[str, str], revision: int, text: str | None, *, created: bool) -> None:
        if created:
            self._db.execute("DELETE FROM steps WHERE run_id = ? AND step_id = ?", key)
            self._db.execute("INSERT INTO steps (run_id, step_id, revision, state) VALUES (?, ?, ?, ?)",
                             (*key, revision, text))
        else:
            self._db.execute("UPDATE steps SET revision = ?, state = ? WHERE run_id = ? AND step_id = ?",
                             (revision, text, *key))

    def _live_count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM steps WHERE state IS NOT NULL").fetchone()[0])

    def _live(self, run_id: str) -> list[tuple[str, int, str]]:
        rows = self._db.execute("SELECT step_id, revision, state FROM steps WHERE run_id = ? AND state IS NOT NULL "
                                "ORDER BY seq", (run_id,)).fetchall()
        return [(row[0], int(row[1]), row[2]) for row in rows]


def _conflict(run_id: str, step_id: str, expected: int, actual: int) -> RevisionConflict:
    return RevisionConflict(f"step {step_id!r} of run {run_id!r} is at revision {actual}, not {expected}; load "
                            "it again and retry", expected=expected, actual=actual)


def _check_revision(value: Any) -> None:
    if type(value) is not int or value < 0:
        raise ValueError(f"expected_revision must be an int >= 0, got {value!r}")
