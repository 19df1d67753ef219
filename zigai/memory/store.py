"""The memory store contract and the logic every store shares.

:class:`MemoryStore` is the protocol applications and agents program against.
:class:`StoreBase` implements it once -- validation, tenant checks, limits, scoring, result
ownership, compaction replacement -- over six small storage primitives that each concrete
store (``InMemoryStore``, ``SqliteStore``) provides.

Invariants of every store:

* every operation takes the tenant id and touches only that tenant's records; an id that
  belongs to another tenant behaves exactly like an id that does not exist;
* a read (``get``, ``session``, ``search``) decodes a fresh copy of each stored document, so
  results own their records, citations and messages independently of the store;
* deletion is honest: the stored document is removed, not flagged;
* a write that would exceed :class:`MemoryLimits` fails with :class:`MemoryCapacityExceeded`
  before anything changes; :meth:`StoreBase.replace` checks the replacement's capacity and
  every source before it inserts the compaction and deletes the sources in one atomic step.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, Self, runtime_checkable

from zigai.memory.errors import (
    InvalidMemoryRecord,
    MemoryCapacityExceeded,
    MemoryClosed,
    MemoryRecordNotFound,
)
from zigai.memory.records import (
    CompactionRecord,
    MemoryLimits,
    MemoryQuery,
    MemoryRecord,
    SearchHit,
    SearchResults,
    SemanticRecord,
    check_tenant,
    decode_record,
    encode_record,
    score,
)

__all__ = ["MemoryStore", "StoreBase", "StoredRecord", "StoredRow"]


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """A record read back with its store-assigned id."""

    record_id: str
    record: MemoryRecord


@dataclass(frozen=True, slots=True)
class StoredRow:
    """What a storage primitive returns: id, kind, session and the stored document."""

    record_id: str
    kind: str
    session_id: str | None
    document: str


@runtime_checkable
class MemoryStore(Protocol):
    """What agents and applications need from a memory store."""

    def put(self, tenant_id: str, record: MemoryRecord) -> str: ...

    def get(self, tenant_id: str, record_id: str) -> MemoryRecord: ...

    def delete(self, tenant_id: str, record_ids: Sequence[str]) -> int: ...

    def purge(self, tenant_id: str) -> int: ...

    def count(self, tenant_id: str) -> int: ...

    def session(self, tenant_id: str, session_id: str) -> tuple[StoredRecord, ...]: ...

    def search(self, tenant_id: str, query: MemoryQuery) -> SearchResults: ...

    def replace(self, tenant_id: str, compaction: CompactionRecord) -> str: ...

    def close(self) -> None: ...


def _session_of(record: MemoryRecord) -> str | None:
    return None if isinstance(record, SemanticRecord) else record.session_id


class StoreBase:
    """The shared implementation; subclasses provide the ``_`` storage primitives."""

    def __init__(self, limits: MemoryLimits | None = None) -> None:
        if limits is not None and not isinstance(limits, MemoryLimits):
            raise InvalidMemoryRecord("limits must be a MemoryLimits")
        self._limits = limits or MemoryLimits()
        self._lock = threading.RLock()
        self._closed = False

    # -- primitives (called with the lock held) ----------------------------------------------------

    def _insert(self, tenant_id: str, row: StoredRow) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _load(self, tenant_id: str, record_id: str) -> StoredRow | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _remove(self, tenant_id: str, record_ids: Sequence[str]) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def _scan(self, tenant_id: str) -> Iterable[StoredRow]:  # pragma: no cover - abstract
        """Every row of the tenant in insertion order."""
        raise NotImplementedError

    def _size(self, tenant_id: str) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def _swap(self, tenant_id: str, row: StoredRow, remove: Sequence[str]) -> None:  # pragma: no cover
        """Insert ``row`` and remove ``remove`` atomically."""
        raise NotImplementedError

    def _insert_within(self, tenant_id: str, row: StoredRow, limit: int) -> None:
        """Insert ``row`` unless the tenant already holds ``limit`` records.

        A store whose storage other processes share overrides this to count and insert in one
        write transaction, so concurrent writers cannot both pass the check."""
        if self._size(tenant_id) + 1 > limit:
            raise MemoryCapacityExceeded(f"the tenant already holds max_records_per_tenant={limit}",
                                         limit=limit)
        self._insert(tenant_id, row)

    def _shutdown(self) -> None:
        """Release storage resources (subclasses)."""

    # -- helpers -------------------------------------------------------------------------------

    @property
    def limits(self) -> MemoryLimits:
        return self._limits

    def _check(self) -> None:
        if self._closed:
            raise MemoryClosed(f"{type(self).__name__} was used after close()")

    def _row(self, record: MemoryRecord) -> StoredRow:
        document = encode_record(record)
        size = len(document.encode("utf-8"))
        if size > self._limits.max_record_bytes:
            raise MemoryCapacityExceeded(
                f"the encoded record is {size} bytes, over max_record_bytes={self._limits.max_record_bytes}",
                limit=self._limits.max_record_bytes)
        return StoredRow("mem_" + secrets.token_hex(10), record.kind, _session_of(record), document)

    # -- the contract ------------------------------------------------------------------------------

    def put(self, tenant_id: str, record: MemoryRecord) -> str:
        """Store a record for the tenant and return its new id."""
        check_tenant(tenant_id)
        if isinstance(record, CompactionRecord):
            raise InvalidMemoryRecord("store a CompactionRecord with replace(), which removes its sources")
        row = self._row(record)
        with self._lock:
            self._check()
            self._insert_within(tenant_id, row, self._limits.max_records_per_tenant)
        return row.record_id

    def get(self, tenant_id: str, record_id: str) -> MemoryRecord:
        """A fresh copy of one of the tenant's records."""
        check_tenant(tenant_id)
        with self._lock:
            self._check()
            row = self._load(tenant_id, record_id) if isinstance(record_id, str) else None
        if row is None:
            raise MemoryRecordNotFound(f"no memory record {record_id!r} for this tenant", record_id=str(record_id))
        return decode_record(row.document)

    def delete(self, tenant_id: str, record_ids: Sequence[str]) -> int:
        """Remove the tenant's records with these ids; returns how many were removed."""
        check_tenant(tenant_id)
        ids = [i for i in dict.fromkeys(record_ids) if isinstance(i, str)]
        with self._lock:
            self._check()
            return self._remove(tenant_id, ids) if ids else 0

    def purge(self, tenant_id: str) -> int:
        """Remove every record of the tenant (retention end); returns how many."""
        check_tenant(tenant_id)
        with self._lock:
            self._check()
            ids = [row.record_id for row in self._scan(tenant_id)]
            return self._remove(tenant_id, ids) if ids else 0

    def count(self, tenant_id: str) -> int:
        check_tenant(tenant_id)
        with self._lock:
            self._check()
            return self._size(tenant_id)

    def session(self, tenant_id: str, session_id: str) -> tuple[StoredRecord, ...]:
        """The tenant's conversation and compaction records of one session, oldest first."""
        check_tenant(tenant_id)
        with self._lock:
            self._check()
            rows = [r for r in self._scan(tenant_id) if r.session_id == session_id]
        return tuple(StoredRecord(r.record_id, decode_record(r.document)) for r in rows)

    def search(self, tenant_id: str, query: MemoryQuery) -> SearchResults:
        """The tenant's best matches, highest score first (ties: older first)."""
        check_tenant(tenant_id)
        if not isinstance(query, MemoryQuery):
            raise InvalidMemoryRecord("search needs a MemoryQuery")
        with self._lock:
            self._check()
            rows = [r for r in self._scan(tenant_id)
                    if r.kind in query.kinds and (query.session_id is None or r.session_id == query.session_id)]
        scored: list[tuple[float, int, StoredRow, MemoryRecord]] = []
        for order, row in enumerate(rows):
            record = decode_record(row.document)
            value = score(query, record)
            if value > 0.0:
                scored.append((value, order, row, record))
        scored.sort(key=lambda item: (-item[0], item[1]))
        limit = min(query.limit, self._limits.max_results)
        return SearchResults(tuple(SearchHit(row.record_id, value, record)
                                   for value, _order, row, record in scored[:limit]))

    def replace(self, tenant_id: str, compaction: CompactionRecord) -> str:
        """Insert ``compaction`` and delete its sources atomically; returns the compaction's id.

        Every source must be one of the tenant's conversation or compaction records of the same
        session; otherwise nothing changes.
        """
        check_tenant(tenant_id)
        if not isinstance(compaction, CompactionRecord):
            raise InvalidMemoryRecord("replace() takes a CompactionRecord")
        row = self._row(compaction)
        with self._lock:
            self._check()
            for source in compaction.source_ids:
                found = self._load(tenant_id, source)
                if found is None:
                    raise MemoryRecordNotFound(f"compaction source {source!r} does not exist for this tenant",
                                               record_id=source)
                if found.kind == "semantic" or found.session_id != compaction.session_id:
                    raise InvalidMemoryRecord(
                        f"compaction source {source!r} is not a conversation record of session "
                        f"{compaction.session_id!r}")
            # The replacement was encoded and size-checked above and removes at least one record,
            # so it always fits: capacity is settled before anything is mutated.
            self._swap(tenant_id, row, compaction.source_ids)
        return row.record_id

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._shutdown()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> Self:
        self._check()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
