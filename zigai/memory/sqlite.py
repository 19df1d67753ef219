"""``SqliteStore``: the memory contract on one SQLite database file (stdlib ``sqlite3``).

Invariants: one row per record (``records``: insertion sequence, id, tenant, kind, session,
JSON document); every statement filters by tenant; ``put`` counts the tenant's records and
inserts in one ``BEGIN IMMEDIATE`` transaction, so several stores (threads or processes) on one
file cannot together pass ``max_records_per_tenant``; ``replace`` inserts and deletes in one
transaction and rolls back unless every source was still there to delete; the connection runs with ``secure_delete`` on, so a deleted record's bytes are
overwritten in the database file rather than left in free pages (honest deletion).  Search
scores candidates in Python -- fine for the bounded per-tenant record counts this store
targets; a vector database fits behind the same contract when it is not.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Sequence

from zigai.memory.errors import MemoryRecordNotFound
from zigai.memory.records import MemoryLimits
from zigai.memory.store import StoreBase, StoredRow

__all__ = ["SqliteStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    record_id TEXT NOT NULL UNIQUE,
    tenant_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    session_id TEXT,
    document TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_by_tenant ON records (tenant_id, seq);
"""


class SqliteStore(StoreBase):
    """A memory store in one SQLite file (``":memory:"`` for a private in-memory database)."""

    def __init__(self, path: str | os.PathLike[str], limits: MemoryLimits | None = None) -> None:
        super().__init__(limits)
        self._db = sqlite3.connect(os.fspath(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA secure_delete = ON")
        self._db.executescript(_SCHEMA)

    def _insert(self, tenant_id: str, row: StoredRow) -> None:
        self._db.execute(
            "INSERT INTO records (record_id, tenant_id, kind, session_id, document) VALUES (?, ?, ?, ?, ?)",
            (row.record_id, tenant_id, row.kind, row.session_id, row.document),
        )

    def _insert_within(self, tenant_id: str, row: StoredRow, limit: int) -> None:
        with self._transaction():
            super()._insert_within(tenant_id, row, limit)

    def _load(self, tenant_id: str, record_id: str) -> StoredRow | None:
        found = self._db.execute(
            "SELECT record_id, kind, session_id, document FROM records WHERE tenant_id = ? AND record_id = ?",
            (tenant_id, record_id),
        ).fetchone()
        return None if found is None else StoredRow(*found)

    def _remove(self, tenant_id: str, record_ids: Sequence[str]) -> int:
        removed = 0
        with self._transaction():
            for record_id in record_ids:
                removed += self._db.execute(
                    "DELETE FROM records WHERE tenant_id = ? AND record_id = ?", (tenant_id, record_id)
                ).rowcount
        return removed

    def _scan(self, tenant_id: str) -> Iterable[StoredRow]:
        rows = self._db.execute(
            "SELECT record_id, kind, session_id, document FROM records WHERE tenant_id = ? ORDER BY seq",
            (tenant_id,),
        ).fetchall()
        return [StoredRow(*row) for row in rows]

    def _size(self, tenant_id: str) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM records WHERE tenant_id = ?", (tenant_id,)).fetchone()[0])

    def _swap(self, tenant_id: str, row: StoredRow, remove: Sequence[str]) -> None:
        with self._transaction():
            self._insert(tenant_id, row)
            for record_id in dict.fromkeys(remove):
                deleted = self._db.execute("DELETE FROM records WHERE tenant_id = ? AND record_id = ?",
                                           (tenant_id, record_id)).rowcount
                if not deleted:  # another store on this file removed it since the check
                    raise MemoryRecordNotFound(f"compaction source {record_id!r} does not exist for this tenant",
                                               record_id=record_id)

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    def _shutdown(self) -> None:
        self._db.close()


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK when the block raises."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self._db.execute("COMMIT" if exc_type is None else "ROLLBACK")
