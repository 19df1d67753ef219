"""The step service: durable step state with optimistic monotonic revisions.

A step record is keyed by ``(run_id, step_id)`` and holds a bounded JSON state.  Every write
names the revision the writer saw (``0`` for "absent"); a stale revision raises
:class:`RevisionConflict` and changes nothing.  Revisions only grow: a key's next revision is
one more than the highest it ever had, so a writer holding a revision from before a delete
can never overwrite the record created after it.

Invariants: states are checked against :class:`StepLimits` before any change; the in-memory
store keeps each record as its own JSON text (honest replacement and deletion), and each read
returns a fresh copy; the store is thread-safe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from zigai import json as zjson
from zigai.json import defaults as json_defaults
from zigai.runtime._keys import check_key, decode_payload, encode_payload
from zigai.runtime._service import LockedService
from zigai.runtime.errors import RevisionConflict, StepStateTooLarge, UnknownRecord

__all__ = ["StepLimits", "StepRecord", "StepStore", "InMemoryStepStore"]


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


class InMemoryStepStore(LockedService):
    """A thread-safe in-process :class:`StepStore`."""

    _service_name = "step store"

    def __init__(self, limits: StepLimits | None = None) -> None:
        self._limits = limits if limits is not None else StepLimits()
        super().__init__()
        self._records: dict[tuple[str, str], tuple[int, str]] = {}
        self._high_water: dict[tuple[str, str], int] = {}

    @property
    def limits(self) -> StepLimits:
        return self._limits

    def _clear(self) -> None:
        self._records.clear()
        self._high_water.clear()

    def _key(self, run_id: str, step_id: str) -> tuple[str, str]:
        return (check_key(run_id, "run id", self._limits.max_key_chars),
                check_key(step_id, "step id", self._limits.max_key_chars))

    def get(self, run_id: str, step_id: str) -> StepRecord | None:
        key = self._key(run_id, step_id)
        with self._lock:
            self._check_open()
            found = self._records.get(key)
        return None if found is None else StepRecord(run_id, step_id, found[0], decode_payload(found[1]))

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
            current = self._records.get(key)
            actual = 0 if current is None else current[0]
            if actual != expected_revision:
                raise RevisionConflict(f"step {step_id!r} of run {run_id!r} is at revision {actual}, not "
                                       f"{expected_revision}; load it again and retry",
                                       expected=expected_revision, actual=actual)
            if current is None and len(self._records) >= self._limits.max_records:
                raise StepStateTooLarge(f"the step store holds {self._limits.max_records} records, its limit",
                                        limit=self._limits.max_records)
            revision = self._high_water.get(key, 0) + 1
            self._records[key] = (revision, text)
            self._high_water[key] = revision
        return StepRecord(run_id, step_id, revision, decode_payload(text))

    def delete(self, run_id: str, step_id: str, *, expected_revision: int) -> None:
        key = self._key(run_id, step_id)
        _check_revision(expected_revision)
        with self._lock:
            self._check_open()
            current = self._records.get(key)
            if current is None:
                raise UnknownRecord(f"no state for step {step_id!r} of run {run_id!r}", key=f"{run_id}/{step_id}")
            if current[0] != expected_revision:
                raise RevisionConflict(f"step {step_id!r} of run {run_id!r} is at revision {current[0]}, not "
                                       f"{expected_revision}; load it again and retry",
                                       expected=expected_revision, actual=current[0])
            del self._records[key]

    def steps(self, run_id: str) -> tuple[StepRecord, ...]:
        """Every current step record of ``run_id``, oldest created first."""
        check_key(run_id, "run id", self._limits.max_key_chars)
        with self._lock:
            self._check_open()
            found = [(key[1], value) for key, value in self._records.items() if key[0] == run_id]
        return tuple(StepRecord(run_id, step_id, revision, decode_payload(text)) for step_id, (revision, text) in found)


def _check_revision(value: Any) -> None:
    if type(value) is not int or value < 0:
        raise ValueError(f"expected_revision must be an int >= 0, got {value!r}")
