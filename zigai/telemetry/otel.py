"""The OpenTelemetry bridge: zigai spans and metric points through a user's SDK providers.

Job
    :class:`OtelExporter` is an :class:`~zigai.telemetry.Exporter` that re-emits every span
    through a ``TracerProvider`` and every metric point through a ``MeterProvider`` (the
    ``otel`` extra: ``pip install 'zigai[otel]'``).  Processors, samplers and exporters
    (OTLP, console, in-memory) are the application's own configuration.

Invariants
    * Imported only when used: ``import zigai`` and ``import zigai.telemetry`` never import
      ``opentelemetry``; this module imports it lazily and raises :class:`OtelNotInstalled`
      naming the extra when it is missing.
    * Parentage is preserved: a zigai child span starts in the context of its zigai parent's
      OpenTelemetry span; a remote trace parent becomes a non-recording remote parent, so the
      SDK trace joins the caller's trace id.  Span ids inside the SDK are the SDK's own.
    * Start and end times, kinds, attributes, events and status are copied unchanged;
      instruments are created once per name (histograms with the GenAI bucket advice).
"""

from __future__ import annotations

import threading
from typing import Any

from zigai.errors import TelemetryError
from zigai.telemetry.records import MetricPoint, Span

__all__ = ["OtelExporter", "OtelNotInstalled"]

_INSTRUMENTATION = "zigai"

# GenAI semantic-convention bucket advice for the two client histograms
_BUCKETS = {
    "gen_ai.client.token.usage": (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576,
                                  4194304, 16777216, 67108864),
    "gen_ai.client.operation.duration": (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56,
                                         5.12, 10.24, 20.48, 40.96, 81.92),
}


class OtelNotInstalled(TelemetryError):
    """The OpenTelemetry API/SDK is not installed; install the ``otel`` extra."""


def _import_otel() -> Any:
    try:
        from opentelemetry import trace
    except ImportError as exc:
        raise OtelNotInstalled(
            "OtelExporter needs the OpenTelemetry API and SDK: pip install 'zigai[otel]'") from exc
    return trace


class OtelExporter:
    """Emit zigai telemetry through ``tracer_provider`` and/or ``meter_provider``.

    Either may be None (spans or metrics are then dropped by this exporter).  The global
    providers are never consulted implicitly: pass ``opentelemetry.trace.get_tracer_provider()``
    yourself if that is what you want.
    """

    def __init__(self, tracer_provider: Any = None, meter_provider: Any = None) -> None:
        self._trace = _import_otel()
        self._tracer = (tracer_provider.get_tracer(_INSTRUMENTATION)
                        if tracer_provider is not None else None)
        self._meter = meter_provider.get_meter(_INSTRUMENTATION) if meter_provider is not None else None
        self._lock = threading.Lock()
        self._open: dict[str, Any] = {}
        self._instruments: dict[str, Any] = {}

    def _parent_context(self, span: Span) -> Any:
        trace = self._trace
        if span.parent_span_id is None:
            return trace.set_span_in_context(trace.INVALID_SPAN)
        with self._lock:
            parent = self._open.get(span.parent_span_id)
        if parent is None:
            remote = trace.SpanContext(int(span.trace_id, 16), int(span.parent_span_id, 16),
                                       is_remote=True, trace_flags=trace.TraceFlags(span.trace_flags))
            parent = trace.NonRecordingSpan(remote)
        return trace.set_span_in_context(parent)

    def on_start(self, span: Span) -> None:
        if self._tracer is None:
            return
        kind = self._trace.SpanKind.CLIENT if span.kind == "client" else self._trace.SpanKind.INTERNAL
        otel_span = self._tracer.start_span(span.name, context=self._parent_context(span), kind=kind,
                                            attributes=dict(span.attributes), start_time=span.start_ns)
        with self._lock:
            self._open[span.span_id] = otel_span

    def on_end(self, span: Span) -> None:
        with self._lock:
            otel_span = self._open.pop(span.span_id, None)
        if otel_span is None:
            return
        trace = self._trace
        otel_span.set_attributes(dict(span.attributes))
        for event in span.events:
            otel_span.add_event(event.name, dict(event.attributes), timestamp=event.time_ns)
        if span.status == "error":
            otel_span.set_status(trace.Status(trace.StatusCode.ERROR, span.status_description))
        elif span.status == "ok":
            otel_span.set_status(trace.Status(trace.StatusCode.OK))
        otel_span.end(end_time=span.end_ns)

    def on_metric(self, point: MetricPoint) -> None:
        if self._meter is None:
            return
        with self._lock:
            instrument = self._instruments.get(point.name)
            if instrument is None:
                if point.kind == "histogram":
                    instrument = self._meter.create_histogram(
                        point.name, unit=point.unit, description=point.description,
                        explicit_bucket_boundaries_advisory=_BUCKETS.get(point.name))
                else:
                    instrument = self._meter.create_counter(
                        point.name, unit=point.unit, description=point.description)
                self._instruments[point.name] = instrument
        if point.kind == "histogram":
            instrument.record(point.value, dict(point.attributes))
        else:
            instrument.add(point.value, dict(point.attributes))
