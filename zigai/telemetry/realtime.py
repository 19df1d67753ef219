"""The realtime telemetry adapter: a session observer in, one session span and metrics out.

Job
    :class:`RealtimeTelemetry` is a :class:`~zigai.realtime.RealtimeObserver`
    (``RealtimeSession(..., observer=telemetry.realtime())``).  It turns the session's
    metadata stream into one ``realtime {model}`` client span per session — parented like an
    agent run — with correlated lifecycle events, cumulative token usage, sizes and errors,
    plus ``gen_ai.client.token.usage`` and ``gen_ai.client.operation.duration`` points, all
    handed to the owning :class:`~zigai.telemetry.Telemetry`'s exporter.

Invariants
    * Same bridge, same policies: spans and points go through the owning ``Telemetry`` (its
      exporter, fail-open/fail-closed handling, ``export_failures`` and default parent).
    * Content: the session observer never sees text, audio, instructions or tool arguments,
      so nothing here can record them, whatever the ``ContentPolicy`` says; only kinds, ids,
      sizes, statuses, error codes and usage are recorded.
    * One span per session: it starts at the first event and ends at ``closed``; per-delta
      events are counted, not recorded one by one.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from zigai.telemetry.records import (
    AttributeValue,
    OpenSpan,
    SpanEvent,
    TraceParent,
    new_span_id,
    new_trace_id,
    semconv_provider_name,
)

__all__ = ["RealtimeTelemetry"]

_LIFECYCLE = {"connected", "reconnected", "closed"}
_USAGE = (("input_tokens", "gen_ai.usage.input_tokens"), ("output_tokens", "gen_ai.usage.output_tokens"),
          ("cache_read_tokens", "gen_ai.usage.cache_read.input_tokens"),
          ("cache_write_tokens", "gen_ai.usage.cache_creation.input_tokens"),
          ("reasoning_tokens", "gen_ai.usage.reasoning.output_tokens"),
          ("input_audio_tokens", "zigai.usage.input_audio_tokens"),
          ("output_audio_tokens", "zigai.usage.output_audio_tokens"))


class RealtimeTelemetry:
    """Observer of one realtime session (see module docs); make one per session."""

    def __init__(self, telemetry: Any, *, model: str | None = None, conversation_id: str | None = None,
                 parent: TraceParent | str | None = None) -> None:
        self._telemetry = telemetry
        self.model = model
        self.conversation_id = conversation_id
        chosen = TraceParent.parse(parent) if isinstance(parent, str) else parent
        self.parent = chosen if chosen is not None else telemetry.parent
        self._lock = threading.Lock()
        self._span: Any = None
        self._provider = ""
        self._started = 0.0
        self._totals: dict[str, int] = {}
        self._errors: list[str] = []

    def on_realtime_event(self, info: Any) -> None:
        with self._lock:
            span = self._span if self._span is not None else self._start(info)
            self._count(info)
            if info.usage is not None:
                self._usage(info.usage)
            event = self._event(info)
            if event is not None:
                span.events.append(event)
            if info.kind == "closed":
                self._finish(span)

    # -- internals -------------------------------------------------------------------------

    def _base(self, provider: str) -> dict[str, AttributeValue]:
        base: dict[str, AttributeValue] = {"gen_ai.operation.name": "realtime",
                                           "gen_ai.provider.name": semconv_provider_name(provider)}
        if self.model:
            base["gen_ai.request.model"] = self.model
        return base

    def _start(self, info: Any) -> Any:
        self._provider = info.provider
        attributes = self._base(info.provider)
        if semconv_provider_name(info.provider) != info.provider:
            attributes["zigai.provider.name"] = info.provider
        if self.conversation_id:
            attributes["gen_ai.conversation.id"] = self.conversation_id
        parent = self.parent
        name = f"realtime {self.model}" if self.model else "realtime"
        self._span = OpenSpan(
            name, "client", parent.trace_id if parent else new_trace_id(), new_span_id(),
            parent.span_id if parent else None, parent is not None, parent.trace_flags if parent else 1,
            time.time_ns(), attributes)
        self._started = time.monotonic()
        self._telemetry._start(self._span)
        return self._span

    def _add(self, key: str, value: int) -> None:
        if value:
            self._totals[key] = self._totals.get(key, 0) + value

    def _count(self, info: Any) -> None:
        side = "sent" if info.direction == "sent" else "received"
        self._add(f"zigai.realtime.audio_bytes.{side}", info.audio_bytes)
        self._add(f"zigai.realtime.text_chars.{side}", info.text_chars)
        if info.kind == "ResponseDone":
            self._add("zigai.realtime.responses", 1)
        elif info.kind == "ToolCallRequested":
            self._add("zigai.realtime.tool_calls", 1)
        elif info.kind == "reconnected":
            self._add("zigai.realtime.reconnects", 1)
        elif info.kind == "ServerError":
            self._errors.append(info.error_code or "ServerError")

    def _usage(self, usage: Any) -> None:
        for source, name in _USAGE:
            self._add(name, getattr(usage, source))
        metric = self._base(self._provider)
        for token_type, count in (("input", usage.input_tokens), ("output", usage.output_tokens)):
            self._telemetry._metric("gen_ai.client.token.usage", "histogram", "{token}", count,
                                    {**metric, "gen_ai.token.type": token_type},
                                    "Number of input and output tokens used")

    def _event(self, info: Any) -> SpanEvent | None:
        attributes: dict[str, AttributeValue] = {}
        for name in ("response_id", "call_id", "tool_name", "status", "error_code"):
            value = getattr(info, name)
            if value is not None:
                attributes[f"zigai.realtime.{name}"] = value
        if info.server_state_survived is not None:
            attributes["zigai.realtime.server_state_survived"] = info.server_state_survived
        if info.kind in _LIFECYCLE:
            name = f"zigai.realtime.{info.kind}"
        elif info.kind in ("ResponseDone", "ToolCallRequested", "ServerError", "SendToolResults"):
            name = "zigai.realtime." + {"ResponseDone": "response_done", "ToolCallRequested": "tool_call",
                                        "ServerError": "error", "SendToolResults": "tool_results"}[info.kind]
        else:
            return None
        return SpanEvent(name, time.time_ns(), attributes)

    def _finish(self, span: Any) -> None:
        span.attributes.update(self._totals)
        metric = self._base(self._provider)
        if self._errors:
            span.status = "error"
            span.attributes["error.type"] = metric["error.type"] = self._errors[-1]
            span.status_description = self._errors[-1]
        self._telemetry._metric("gen_ai.client.operation.duration", "histogram", "s",
                                time.monotonic() - self._started, metric, "GenAI operation duration")
        self._telemetry._end(span)
        self._span, self._totals, self._errors = None, {}, []
