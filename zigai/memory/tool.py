"""``search_tool``: memory search as an ordinary tenant-bound function tool for an agent.

The tenant is bound when the tool is built (by the application), never taken from the
model's arguments, so a model cannot read another tenant's memory.  Results are bounded by
the query limit and returned as plain JSON (id, kind, score, text, citation).
"""

from __future__ import annotations

from typing import Any

from zigai.memory.records import MemoryQuery, RecordKind, SemanticRecord, check_tenant, record_text
from zigai.memory.store import MemoryStore
from zigai.tool import Tool

__all__ = ["search_tool"]


def search_tool(store: MemoryStore, tenant_id: str, *, name: str = "search_memory", limit: int = 5,
                kinds: frozenset[RecordKind] | None = None, max_text_chars: int = 2000) -> Tool:
    """A tool ``name(query: str)`` searching ``tenant_id``'s memory by text."""
    check_tenant(tenant_id)
    chosen = kinds

    def search(args: dict[str, Any]) -> list[dict[str, Any]]:
        options: dict[str, Any] = {"text": args["query"], "limit": limit}
        if chosen is not None:
            options["kinds"] = chosen
        with store.search(tenant_id, MemoryQuery(**options)) as results:
            found = []
            for hit in results.hits:
                item: dict[str, Any] = {"id": hit.record_id, "kind": hit.record.kind, "score": round(hit.score, 4),
                                        "text": record_text(hit.record)[:max_text_chars]}
                if isinstance(hit.record, SemanticRecord) and hit.record.citation is not None:
                    item["citation"] = hit.record.citation.source
                found.append(item)
            return found

    schema = {"type": "object", "properties": {"query": {"type": "string", "minLength": 1}},
              "required": ["query"], "additionalProperties": False}
    return Tool.manual(name, "Search long-term memory for facts and earlier conversations.", schema, search)
