"""zigai.memory: durable memory as a tenant-scoped store contract (layer 6).

Job
    Keep conversations, facts and summaries outside the agent, behind one store contract
    (:class:`MemoryStore`) where every operation carries a tenant id.  Agents consume results
    as ordinary context or through :func:`search_tool`.

Invariants
    * Tenant isolation: an operation sees only its tenant's records; another tenant's id is
      indistinguishable from a missing one.
    * Conversation records hold canonical zigai messages; semantic records hold optional
      vectors and citations; compaction records name what they replaced.
    * Search results own independent copies of their records (:class:`SearchResults`).
    * Deletion is honest (the stored document is gone); :class:`Compactor` builds its summary
      before any source is deleted, and the replacement is atomic.
    * :class:`InMemoryStore` and :class:`SqliteStore` implement the same contract and pass the
      same test suite.

Submodules: ``errors``, ``records`` (record values, query, results, stored form), ``store``
(contract and shared logic), ``in_memory``, ``sqlite``, ``compactor``, ``tool``.
"""

from __future__ import annotations

from zigai.memory.compactor import Compactor, Summarizer
from zigai.memory.errors import (
    CompactionFailed,
    InvalidMemoryRecord,
    InvalidTenant,
    MemoryCapacityExceeded,
    MemoryClosed,
    MemoryRecordNotFound,
)
from zigai.memory.in_memory import InMemoryStore
from zigai.memory.records import (
    Citation,
    CompactionRecord,
    ConversationRecord,
    MemoryLimits,
    MemoryQuery,
    MemoryRecord,
    RecordKind,
    SearchHit,
    SearchResults,
    SemanticRecord,
    record_text,
)
from zigai.memory.sqlite import SqliteStore
from zigai.memory.store import MemoryStore, StoredRecord
from zigai.memory.tool import search_tool

__all__ = [
    "MemoryStore",
    "InMemoryStore",
    "SqliteStore",
    "StoredRecord",
    "Compactor",
    "Summarizer",
    "search_tool",
    "Citation",
    "ConversationRecord",
    "SemanticRecord",
    "CompactionRecord",
    "MemoryRecord",
    "RecordKind",
    "MemoryQuery",
    "MemoryLimits",
    "SearchHit",
    "SearchResults",
    "record_text",
    "InvalidMemoryRecord",
    "InvalidTenant",
    "MemoryRecordNotFound",
    "MemoryCapacityExceeded",
    "MemoryClosed",
    "CompactionFailed",
]
