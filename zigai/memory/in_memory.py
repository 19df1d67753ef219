"""``InMemoryStore``: the memory contract in process memory (deterministic, for tests and small apps).

Each record is held as its own encoded document, keyed by tenant then id, so a deletion drops
the only copy and every read decodes a fresh one; insertion order is kept per tenant.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from zigai.memory.records import MemoryLimits
from zigai.memory.store import StoreBase, StoredRow

__all__ = ["InMemoryStore"]


class InMemoryStore(StoreBase):
    """A thread-safe in-process memory store."""

    def __init__(self, limits: MemoryLimits | None = None) -> None:
        super().__init__(limits)
        self._tenants: dict[str, dict[str, StoredRow]] = {}

    def _insert(self, tenant_id: str, row: StoredRow) -> None:
        self._tenants.setdefault(tenant_id, {})[row.record_id] = row

    def _load(self, tenant_id: str, record_id: str) -> StoredRow | None:
        return self._tenants.get(tenant_id, {}).get(record_id)

    def _remove(self, tenant_id: str, record_ids: Sequence[str]) -> int:
        rows = self._tenants.get(tenant_id)
        if rows is None:
            return 0
        removed = sum(1 for record_id in record_ids if rows.pop(record_id, None) is not None)
        if not rows:
            del self._tenants[tenant_id]
        return removed

    def _scan(self, tenant_id: str) -> Iterable[StoredRow]:
        return list(self._tenants.get(tenant_id, {}).values())

    def _size(self, tenant_id: str) -> int:
        return len(self._tenants.get(tenant_id, {}))

    def _swap(self, tenant_id: str, row: StoredRow, remove: Sequence[str]) -> None:
        self._insert(tenant_id, row)
        self._remove(tenant_id, remove)

    def _shutdown(self) -> None:
        self._tenants.clear()
