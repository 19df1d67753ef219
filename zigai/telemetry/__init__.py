"""OpenTelemetry-shaped GenAI traces and metrics for agent runs, as a lifecycle observer.

Job
    Turn the agent's lifecycle hooks (``zigai.hooks``) into one trace per run — an
    ``invoke_agent`` span with a ``chat {model}`` span per provider attempt and an
    ``execute_tool {name}`` span per executed tool call — and into GenAI metric points
    (``gen_ai.client.token.usage``, ``gen_ai.client.operation.duration``, request / retry /
    tool-call / token-detail / cost counters), handed synchronously to an exporter.

Invariants
    * No import-time dependency: this package imports only zigai and the standard library;
      ``zigai.telemetry.otel`` imports OpenTelemetry lazily, when an adapter is built.
    * Content is off by default, bounded and redacted when on; credentials never appear.
    * Exporter failures are fail-open unless ``fail_closed=True``.
    * Names follow the OpenTelemetry GenAI semantic conventions ``SEMCONV_VERSION``.

Submodules
    records     Span, SpanEvent, MetricPoint, TraceParent, ContentPolicy and the errors
    observer    Telemetry (the hook), Exporter protocol, InMemoryExporter
    content     recorded content in the conventions' JSON shapes, bounded without breaking JSON
    realtime    RealtimeTelemetry: a realtime session observer through the same Telemetry
    otel        OtelExporter: the bridge to a user's TracerProvider / MeterProvider
"""

from __future__ import annotations

from typing import Any

from zigai.telemetry.observer import Exporter, InMemoryExporter, Telemetry
from zigai.telemetry.realtime import RealtimeTelemetry
from zigai.telemetry.records import (
    SEMCONV_VERSION,
    AttributeValue,
    ContentPolicy,
    InvalidTelemetryConfig,
    InvalidTraceParent,
    MetricPoint,
    Span,
    SpanEvent,
    TelemetryExportFailed,
    TraceParent,
)

__all__ = [
    "SEMCONV_VERSION",
    "AttributeValue",
    "ContentPolicy",
    "Exporter",
    "InMemoryExporter",
    "InvalidTelemetryConfig",
    "InvalidTraceParent",
    "MetricPoint",
    "OtelExporter",
    "OtelNotInstalled",
    "RealtimeTelemetry",
    "Span",
    "SpanEvent",
    "Telemetry",
    "TelemetryExportFailed",
    "TraceParent",
]


def __getattr__(name: str) -> Any:
    # the OpenTelemetry bridge loads only when asked for (it imports opentelemetry lazily too)
    if name in ("OtelExporter", "OtelNotInstalled"):
        from zigai.telemetry import otel

        return getattr(otel, name)
    raise AttributeError(f"module 'zigai.telemetry' has no attribute {name!r}")
