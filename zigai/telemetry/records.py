"""Telemetry values: finished spans, metric points, trace parents and the content policy.

Job
    The plain, dependency-free vocabulary the observer (``zigai.telemetry.observer``) emits
    and every exporter (in-memory, the OpenTelemetry adapter, an application's own) reads.

Invariants
    * Every value is immutable; attribute mappings are read-only views.
    * Attribute values are OpenTelemetry-compatible: ``str``, ``bool``, ``int``, ``float``
      or a tuple of one of them.
    * A :class:`TraceParent` only ever holds a valid W3C ``traceparent`` (non-zero ids).
    * Content never reaches a record unless :class:`ContentPolicy` enables it; when it does,
      every value is redacted (configured secrets) and bounded to ``max_chars``.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from zigai.errors import TelemetryError
from zigai.security import Redactor

__all__ = [
    "AttributeValue",
    "SpanEvent",
    "Span",
    "MetricPoint",
    "TraceParent",
    "ContentPolicy",
    "InvalidTraceParent",
    "InvalidTelemetryConfig",
    "TelemetryExportFailed",
    "SEMCONV_VERSION",
    "semconv_provider_name",
]

SEMCONV_VERSION = "1.41.0"
"""The OpenTelemetry semantic-conventions release whose GenAI names this package follows."""

#: zigai provider names whose ``gen_ai.provider.name`` well-known value is spelled differently.
#: Names that already are well-known values (openai, anthropic, cohere, deepseek, groq,
#: gcp.gen_ai, gcp.vertex_ai) and names with no well-known value pass through unchanged.
_WELL_KNOWN_PROVIDER_NAMES = {
    "xai": "x_ai",
    "mistral": "mistral_ai",
    "bedrock": "aws.bedrock",
    "azure_openai": "azure.ai.openai",
}


def semconv_provider_name(provider_name: str) -> str:
    """The ``gen_ai.provider.name`` value for a zigai provider name (well-known where one exists)."""
    return _WELL_KNOWN_PROVIDER_NAMES.get(provider_name, provider_name)


AttributeValue = str | bool | int | float | tuple[str, ...] | tuple[int, ...] | tuple[float, ...]

SpanKind = Literal["internal", "client"]
SpanStatus = Literal["unset", "ok", "error"]


class InvalidTraceParent(TelemetryError):
    """A trace parent is not a valid W3C ``traceparent`` (``00-<32 hex>-<16 hex>-<2 hex>``)."""


class InvalidTelemetryConfig(TelemetryError):
    """A telemetry option has the wrong type or is out of range."""


class TelemetryExportFailed(TelemetryError):
    """An exporter callback raised while ``fail_closed=True``; the cause is chained."""


def _frozen(attributes: Mapping[str, AttributeValue]) -> Mapping[str, AttributeValue]:
    return MappingProxyType(dict(attributes))


@dataclass(frozen=True, slots=True)
class SpanEvent:
    """A timestamped event inside a span (e.g. a planned retry)."""

    name: str
    time_ns: int
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "attributes", _frozen(self.attributes))


@dataclass(frozen=True, slots=True)
class Span:
    """One span as an exporter sees it.

    Ids are lowercase hex (``trace_id`` 32 digits, ``span_id`` 16).  ``parent_span_id`` is
    None for a root; ``parent_is_remote`` says the parent came from a :class:`TraceParent`
    rather than from this run.  Times are Unix epoch nanoseconds; ``end_ns`` is None while
    the span is open (the value handed to ``Exporter.on_start``).
    """

    name: str
    kind: SpanKind
    trace_id: str
    span_id: str
    parent_span_id: str | None
    parent_is_remote: bool
    trace_flags: int
    start_ns: int
    end_ns: int | None
    attributes: Mapping[str, AttributeValue]
    status: SpanStatus = "unset"
    status_description: str | None = None
    events: tuple[SpanEvent, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "attributes", _frozen(self.attributes))
        object.__setattr__(self, "events", tuple(self.events))

    @property
    def duration_ns(self) -> int | None:
        return None if self.end_ns is None else self.end_ns - self.start_ns


@dataclass
class OpenSpan:
    """A span being built (mutable until it is frozen into a :class:`Span`); shared by the observers."""

    name: str
    kind: str
    trace_id: str
    span_id: str
    parent_span_id: str | None
    parent_is_remote: bool
    trace_flags: int
    start_ns: int
    attributes: dict[str, AttributeValue]
    events: list[SpanEvent] = field(default_factory=list)
    status: str = "unset"
    status_description: str | None = None

    def freeze(self, end_ns: int | None) -> Span:
        return Span(self.name, self.kind, self.trace_id, self.span_id,  # type: ignore[arg-type]
                    self.parent_span_id, self.parent_is_remote, self.trace_flags, self.start_ns,
                    end_ns, self.attributes, self.status, self.status_description,  # type: ignore[arg-type]
                    tuple(self.events))


@dataclass(frozen=True, slots=True)
class MetricPoint:
    """One measurement: a histogram record or a counter increment (``kind``)."""

    name: str
    kind: Literal["histogram", "counter"]
    unit: str
    value: int | float
    attributes: Mapping[str, AttributeValue]
    description: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "attributes", _frozen(self.attributes))


_TRACEPARENT = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")


@dataclass(frozen=True, slots=True)
class TraceParent:
    """The span an agent trace nests under: a W3C trace context (ids as lowercase hex)."""

    trace_id: str
    span_id: str
    trace_flags: int = 1

    def __post_init__(self) -> None:
        if not (isinstance(self.trace_id, str) and re.fullmatch(r"[0-9a-f]{32}", self.trace_id)
                and self.trace_id != "0" * 32):
            raise InvalidTraceParent(
                f"trace_id must be 32 lowercase hex digits, not all zero; got {self.trace_id!r}")
        if not (isinstance(self.span_id, str) and re.fullmatch(r"[0-9a-f]{16}", self.span_id)
                and self.span_id != "0" * 16):
            raise InvalidTraceParent(
                f"span_id must be 16 lowercase hex digits, not all zero; got {self.span_id!r}")
        flags = self.trace_flags
        if isinstance(flags, bool) or not isinstance(flags, int) or not 0 <= flags <= 255:
            raise InvalidTraceParent(f"trace_flags must be an int in 0..255, got {flags!r}")

    @classmethod
    def parse(cls, header: str) -> TraceParent:
        """Parse a ``traceparent`` header value (version ``00``; surrounding spaces allowed)."""
        match = _TRACEPARENT.match(header.strip().lower()) if isinstance(header, str) else None
        if match is None or match.group(1) != "00":
            raise InvalidTraceParent(
                f"not a version-00 W3C traceparent ('00-<32 hex>-<16 hex>-<2 hex>'): {header!r}")
        return cls(match.group(2), match.group(3), int(match.group(4), 16))

    def header(self) -> str:
        """The ``traceparent`` header value for this context."""
        return f"00-{self.trace_id}-{self.span_id}-{self.trace_flags:02x}"


def new_trace_id() -> str:
    return secrets.token_hex(16)


def new_span_id() -> str:
    return secrets.token_hex(8)


def _plain(value: Any) -> Any:
    """JSON fallback: frozen mappings (tool arguments) as objects, anything else as text."""
    return dict(value) if isinstance(value, Mapping) else str(value)


@dataclass(frozen=True, slots=True)
class ContentPolicy:
    """Whether prompts, instructions, tool arguments/results and outputs are recorded.

    Off by default.  With ``capture=True`` each recorded value is serialized to JSON,
    passed through ``redactor`` (the same redaction diagnostics use: every configured
    secret, in any JSON spelling, becomes ``[REDACTED]``) and cut to ``max_chars``.
    """

    capture: bool = False
    max_chars: int = 4096
    redactor: Redactor = field(default_factory=Redactor)

    def __post_init__(self) -> None:
        if not isinstance(self.capture, bool):
            raise InvalidTelemetryConfig(f"ContentPolicy.capture must be a bool, got {self.capture!r}")
        limit = self.max_chars
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1_000_000:
            raise InvalidTelemetryConfig(f"ContentPolicy.max_chars must be an int in 1..1000000, got {limit!r}")
        if not isinstance(self.redactor, Redactor):
            raise InvalidTelemetryConfig("ContentPolicy.redactor must be a zigai.security.Redactor")

    def render(self, value: Any) -> str:
        """``value`` as bounded, redacted text (strings as they are, the rest as JSON)."""
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=_plain)
        return self.redactor.text(text, self.max_chars)
