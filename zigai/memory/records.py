"""Memory record values, the query, the owned search results and the stored JSON form.

Three record kinds share one union and one discriminator (``kind``):

* :class:`ConversationRecord` -- canonical zigai messages of one session;
* :class:`SemanticRecord` -- a text fact with an optional embedding vector and citation;
* :class:`CompactionRecord` -- a summary that replaced older conversation records, naming
  the ids it replaced, so it is never mistaken for an original turn.

Records carry no tenant: the tenant is an argument of every store operation, so the caller's
authority, not data inside the record, decides where it lives.

Invariants: records are immutable (tuples, read-only metadata copies) and validated at
construction; :func:`encode_record` / :func:`decode_record` are the one stored form (JSON,
messages as zigai history) used by every store, so each stored record is an independent
document and every read produces a fresh copy.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from zigai import history
from zigai import json as zjson
from zigai._owner import Owner
from zigai.memory.errors import InvalidMemoryRecord, InvalidTenant, MemoryClosed
from zigai.messages import Message, ResponseMessage, TextPart, UserPromptPart

__all__ = [
    "RecordKind",
    "Citation",
    "ConversationRecord",
    "SemanticRecord",
    "CompactionRecord",
    "MemoryRecord",
    "MemoryQuery",
    "SearchHit",
    "SearchResults",
    "MemoryLimits",
    "check_tenant",
    "record_text",
    "encode_record",
    "decode_record",
]

RecordKind = Literal["conversation", "semantic", "compaction"]
_KINDS: frozenset[str] = frozenset({"conversation", "semantic", "compaction"})
_TENANT = re.compile(r"[A-Za-z0-9_.:@-]{1,128}")
_STORED_VERSION = 1


def check_tenant(tenant_id: object) -> str:
    """The tenant id itself, or :class:`InvalidTenant`."""
    if not isinstance(tenant_id, str) or not _TENANT.fullmatch(tenant_id):
        raise InvalidTenant("a tenant id must be 1-128 characters of [A-Za-z0-9_.:@-]")
    return tenant_id


def _metadata(value: object, owner: str) -> Mapping[str, Any]:
    if value is None:
        return MappingProxyType({})
    if not isinstance(value, Mapping):
        raise InvalidMemoryRecord(f"{owner}.metadata must be a JSON object")
    try:
        checked = zjson.parse(zjson.dumps(dict(value)), zjson.defaults.tool_payload)
    except Exception as exc:
        raise InvalidMemoryRecord(f"{owner}.metadata is not bounded plain JSON: {exc}") from None
    return MappingProxyType(checked)


def _text(value: object, name: str, *, allow_empty: bool = False) -> None:
    if not isinstance(value, str) or (not value and not allow_empty):
        raise InvalidMemoryRecord(f"{name} must be a{'' if allow_empty else ' non-empty'} string")


@dataclass(frozen=True, slots=True)
class Citation:
    """Where a semantic fact came from: a source name and an optional locator and quote."""

    source: str
    locator: str | None = None
    quote: str | None = None

    def __post_init__(self) -> None:
        _text(self.source, "Citation.source")
        for name in ("locator", "quote"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise InvalidMemoryRecord(f"Citation.{name} must be a string or None")


@dataclass(frozen=True, slots=True)
class ConversationRecord:
    """Canonical messages of one session (one or more turns)."""

    session_id: str
    messages: tuple[Message, ...]
    metadata: Mapping[str, Any] = field(default_factory=dict)
    kind: Literal["conversation"] = "conversation"

    def __post_init__(self) -> None:
        _text(self.session_id, "ConversationRecord.session_id")
        messages = tuple(self.messages)
        if not messages:
            raise InvalidMemoryRecord("a ConversationRecord needs at least one message")
        try:
            history.stringify(messages)  # validates every part
        except Exception as exc:
            raise InvalidMemoryRecord(f"ConversationRecord.messages: {exc}") from None
        object.__setattr__(self, "messages", messages)
        object.__setattr__(self, "metadata", _metadata(self.metadata, "ConversationRecord"))


@dataclass(frozen=True, slots=True)
class SemanticRecord:
    """A fact with optional vector (finite floats) and citation."""

    text: str
    vector: tuple[float, ...] | None = None
    citation: Citation | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    kind: Literal["semantic"] = "semantic"

    def __post_init__(self) -> None:
        _text(self.text, "SemanticRecord.text")
        if self.vector is not None:
            object.__setattr__(self, "vector", _vector(self.vector, "SemanticRecord.vector"))
        if self.citation is not None and not isinstance(self.citation, Citation):
            raise InvalidMemoryRecord("SemanticRecord.citation must be a Citation")
        object.__setattr__(self, "metadata", _metadata(self.metadata, "SemanticRecord"))


@dataclass(frozen=True, slots=True)
class CompactionRecord:
    """A summary standing in for the conversation records named by ``source_ids``."""

    session_id: str
    summary: str
    source_ids: tuple[str, ...]
    metadata: Mapping[str, Any] = field(default_factory=dict)
    kind: Literal["compaction"] = "compaction"

    def __post_init__(self) -> None:
        _text(self.session_id, "CompactionRecord.session_id")
        _text(self.summary, "CompactionRecord.summary")
        ids = tuple(self.source_ids)
        if not ids or not all(isinstance(i, str) and i for i in ids):
            raise InvalidMemoryRecord("CompactionRecord.source_ids must name the replaced records")
        object.__setattr__(self, "source_ids", ids)
        object.__setattr__(self, "metadata", _metadata(self.metadata, "CompactionRecord"))


MemoryRecord = ConversationRecord | SemanticRecord | CompactionRecord


def _vector(value: object, name: str) -> tuple[float, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise InvalidMemoryRecord(f"{name} must be a sequence of numbers")
    items = tuple(value)
    if not items:
        raise InvalidMemoryRecord(f"{name} must not be empty")
    for item in items:
        if isinstance(item, bool) or not isinstance(item, int | float) or not math.isfinite(item):
            raise InvalidMemoryRecord(f"{name} must hold finite numbers")
    return tuple(float(x) for x in items)


@dataclass(frozen=True, slots=True)
class MemoryQuery:
    """A search: text terms and/or a vector, optional kind and session filters, a limit.

    Text scoring is the fraction of distinct query words found in the record; vector scoring
    is cosine similarity against records whose vectors have the same dimension.  With both,
    the score is their mean.  Records scoring 0 are not returned.
    """

    text: str | None = None
    vector: tuple[float, ...] | None = None
    kinds: frozenset[RecordKind] = frozenset(_KINDS)  # type: ignore[arg-type]
    session_id: str | None = None
    limit: int = 10

    def __post_init__(self) -> None:
        if self.text is None and self.vector is None:
            raise InvalidMemoryRecord("a MemoryQuery needs text, a vector, or both")
        if self.text is not None:
            _text(self.text, "MemoryQuery.text")
            if not words(self.text):
                raise InvalidMemoryRecord("MemoryQuery.text has no words to match")
        if self.vector is not None:
            object.__setattr__(self, "vector", _vector(self.vector, "MemoryQuery.vector"))
        kinds = frozenset(self.kinds)
        if not kinds or not kinds <= _KINDS:
            raise InvalidMemoryRecord(f"MemoryQuery.kinds must be a non-empty subset of {sorted(_KINDS)}")
        object.__setattr__(self, "kinds", kinds)
        if self.session_id is not None:
            _text(self.session_id, "MemoryQuery.session_id")
        if isinstance(self.limit, bool) or not isinstance(self.limit, int) or self.limit < 1:
            raise InvalidMemoryRecord("MemoryQuery.limit must be an int >= 1")


@dataclass(frozen=True, slots=True)
class MemoryLimits:
    """Store ceilings: records per tenant, encoded bytes per record, results per search."""

    max_records_per_tenant: int = 100_000
    max_record_bytes: int = 1024 * 1024
    max_results: int = 100

    def __post_init__(self) -> None:
        for name in ("max_records_per_tenant", "max_record_bytes", "max_results"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidMemoryRecord(f"MemoryLimits.{name} must be an int >= 1")


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One result: the record id, its score and an independent copy of the record."""

    record_id: str
    score: float
    record: MemoryRecord


class SearchResults(Owner):
    """Owned search hits, best first (each record a copy decoded for this result)."""

    __slots__ = ("_hits",)

    _closed_error = MemoryClosed

    def __init__(self, hits: tuple[SearchHit, ...]) -> None:
        super().__init__()
        self._hits = hits

    def _release(self) -> None:
        self._hits = ()

    @property
    def hits(self) -> tuple[SearchHit, ...]:
        self._check()
        return self._hits

    def __len__(self) -> int:
        return len(self.hits)

    def __iter__(self) -> Iterator[SearchHit]:
        return iter(self.hits)


# -- scoring ---------------------------------------------------------------------------------------

_WORD = re.compile(r"\w+")


def words(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _WORD.findall(text))


def record_text(record: MemoryRecord) -> str:
    """The searchable text of a record (user prompts and text of a conversation)."""
    if isinstance(record, SemanticRecord):
        return record.text
    if isinstance(record, CompactionRecord):
        return record.summary
    pieces: list[str] = []
    for message in record.messages:
        for part in message.parts:
            if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                pieces.append(part.content)
            elif isinstance(message, ResponseMessage) and isinstance(part, TextPart):
                pieces.append(part.content)
    return "\n".join(pieces)


def _cosine(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return 0.0 if norm == 0.0 else dot / norm


def score(query: MemoryQuery, record: MemoryRecord) -> float:
    """The query's score for one record (0 means "not a hit")."""
    signals: list[float] = []
    if query.text is not None:
        wanted = words(query.text)
        signals.append(len(wanted & words(record_text(record))) / len(wanted))
    if query.vector is not None:
        vector = record.vector if isinstance(record, SemanticRecord) else None
        if vector is not None and len(vector) == len(query.vector):
            signals.append(max(0.0, _cosine(query.vector, vector)))
        else:
            signals.append(0.0)
    return sum(signals) / len(signals)


# -- stored form -----------------------------------------------------------------------------------


def encode_record(record: MemoryRecord) -> str:
    """The one stored JSON document of a record."""
    if not isinstance(record, ConversationRecord | SemanticRecord | CompactionRecord):
        raise InvalidMemoryRecord(f"not a memory record: {type(record).__name__}")
    body: dict[str, Any] = {"v": _STORED_VERSION, "kind": record.kind, "metadata": dict(record.metadata)}
    if isinstance(record, ConversationRecord):
        body.update(session_id=record.session_id, messages=history.stringify(record.messages))
    elif isinstance(record, SemanticRecord):
        citation = None if record.citation is None else {
            "source": record.citation.source, "locator": record.citation.locator, "quote": record.citation.quote}
        body.update(text=record.text, vector=None if record.vector is None else list(record.vector),
                    citation=citation)
    else:
        body.update(session_id=record.session_id, summary=record.summary, source_ids=list(record.source_ids))
    return zjson.dumps(body)


def decode_record(text: str) -> MemoryRecord:
    """A fresh record from its stored document (bounded by the history JSON profile)."""
    try:
        body = zjson.parse(text, zjson.defaults.history)
        kind = body["kind"]
        if body.get("v") != _STORED_VERSION:
            raise InvalidMemoryRecord("unsupported stored memory record version")
        metadata = copy.deepcopy(body["metadata"])
        if kind == "conversation":
            with history.parse(body["messages"]) as owned:
                messages = owned.messages
            return ConversationRecord(body["session_id"], messages, metadata)
        if kind == "semantic":
            cite = body["citation"]
            citation = None if cite is None else Citation(cite["source"], cite["locator"], cite["quote"])
            vector = None if body["vector"] is None else tuple(body["vector"])
            return SemanticRecord(body["text"], vector, citation, metadata)
        if kind == "compaction":
            return CompactionRecord(body["session_id"], body["summary"], tuple(body["source_ids"]), metadata)
    except InvalidMemoryRecord:
        raise
    except Exception as exc:
        raise InvalidMemoryRecord(f"a stored memory record is malformed: {type(exc).__name__}") from None
    raise InvalidMemoryRecord(f"a stored memory record has unknown kind {kind!r}")
