"""The named errors of the memory subsystem.

Invariant: constructors pass only the message positionally; extra data are keyword-only
attributes with defaults, so every error pickles with its attributes.  Messages never contain
record content, only ids, kinds and sizes.
"""

from __future__ import annotations

from zigai.errors import MemoryStoreError

__all__ = [
    "InvalidMemoryRecord",
    "InvalidTenant",
    "MemoryRecordNotFound",
    "MemoryCapacityExceeded",
    "MemoryClosed",
    "CompactionFailed",
]


class InvalidMemoryRecord(MemoryStoreError):
    """A record, query or stored document was malformed (kind, text, vector, metadata)."""


class InvalidTenant(MemoryStoreError):
    """A tenant id was empty, too long or not ``[A-Za-z0-9_.:@-]``."""


class MemoryRecordNotFound(MemoryStoreError):
    """No record with this id exists *for this tenant* (another tenant's id is not found too)."""

    def __init__(self, message: str, *, record_id: str = "") -> None:
        super().__init__(message)
        self.record_id = record_id


class MemoryCapacityExceeded(MemoryStoreError):
    """A write would exceed the store's limits; nothing was changed."""

    def __init__(self, message: str, *, limit: int = 0) -> None:
        super().__init__(message)
        self.limit = limit


class MemoryClosed(MemoryStoreError):
    """A store or a search result was used after ``close()``."""


class CompactionFailed(MemoryStoreError):
    """The summarizer failed or returned no summary; no source record was deleted."""
