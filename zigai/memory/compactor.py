"""``Compactor``: replace a session's older records with one summary, summary first.

Order is the invariant: the summarizer sees the source records while they all still exist;
only a non-empty summary leads to :meth:`MemoryStore.replace`, which inserts the
:class:`CompactionRecord` and deletes the sources in one atomic step.  A failing or empty
summarizer raises :class:`CompactionFailed` and leaves every source in place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zigai.memory.errors import CompactionFailed
from zigai.memory.records import CompactionRecord, ConversationRecord, check_tenant
from zigai.memory.store import MemoryStore

__all__ = ["Compactor", "Summarizer"]

Summarizer = Callable[[tuple[ConversationRecord | CompactionRecord, ...]], str]
"""Receives the records to replace, oldest first (earlier summaries included), returns the summary."""


class Compactor:
    """Compacts all but the newest ``keep_last`` records of a session once there are enough."""

    def __init__(self, store: MemoryStore, summarize: Summarizer, *, keep_last: int = 1,
                 min_sources: int = 2, metadata: dict[str, Any] | None = None) -> None:
        if not callable(summarize):
            raise TypeError("summarize must be callable")
        for name, value, low in (("keep_last", keep_last, 0), ("min_sources", min_sources, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an int >= {low}")
        self._store = store
        self._summarize = summarize
        self._keep_last = keep_last
        self._min_sources = min_sources
        self._metadata = dict(metadata or {})

    def compact(self, tenant_id: str, session_id: str) -> str | None:
        """The new compaction record's id, or None when fewer than ``min_sources`` qualify."""
        check_tenant(tenant_id)
        entries = self._store.session(tenant_id, session_id)
        sources = entries[: len(entries) - self._keep_last] if self._keep_last else entries
        if len(sources) < self._min_sources:
            return None
        records = tuple(e.record for e in sources)
        try:
            summary = self._summarize(records)  # type: ignore[arg-type]
        except Exception as exc:
            raise CompactionFailed(f"the summarizer failed ({type(exc).__name__}); no record was deleted") from exc
        if not isinstance(summary, str) or not summary.strip():
            raise CompactionFailed("the summarizer returned no summary; no record was deleted")
        compaction = CompactionRecord(session_id, summary, tuple(e.record_id for e in sources), self._metadata)
        return self._store.replace(tenant_id, compaction)
