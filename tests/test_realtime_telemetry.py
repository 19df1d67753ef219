"""Realtime sessions through the telemetry bridge: one parented session span, lifecycle events,
cumulative usage and metrics, no content — over the loopback OpenAI Realtime server."""

from __future__ import annotations

from typing import Any

import pytest
from test_realtime_session import OpenAIRealtimeServer, openai_session

from zigai.realtime import RealtimeEventInfo, RealtimeSessionClosed
from zigai.telemetry import (
    ContentPolicy,
    InMemoryExporter,
    RealtimeTelemetry,
    Telemetry,
    TraceParent,
)
from zigai.usage import RequestUsage

OUTER = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


@pytest.fixture
def server() -> Any:
    running = OpenAIRealtimeServer()
    yield running
    running.close()


def test_a_session_becomes_one_span_with_events_usage_and_metrics(server: OpenAIRealtimeServer) -> None:
    memory = InMemoryExporter()
    telemetry = Telemetry(memory, content=ContentPolicy(capture=True), parent=OUTER)
    observer = telemetry.realtime(model="gpt-realtime", conversation_id="call-9")
    with openai_session(server, observer=observer) as session:
        session.start()
        assert session.ask("hello").text == "echo: hello"
        assert session.ask("weather Oslo").text == "It is 20C in Oslo"
        session.ask("drop")  # lost mid-response, reconnected
        with pytest.raises(RealtimeSessionClosed):
            session.ask("bye")
    (span,) = memory.spans
    outer = TraceParent.parse(OUTER)
    assert (span.name, span.kind, span.trace_id, span.parent_span_id) == (
        "realtime gpt-realtime", "client", outer.trace_id, outer.span_id)
    attributes = span.attributes
    assert attributes["gen_ai.operation.name"] == "realtime" and attributes["gen_ai.provider.name"] == "openai"
    assert attributes["gen_ai.conversation.id"] == "call-9"
    assert attributes["gen_ai.usage.input_tokens"] == 30  # three completed responses
    assert attributes["gen_ai.usage.cache_read.input_tokens"] == 6
    assert (attributes["zigai.realtime.responses"], attributes["zigai.realtime.tool_calls"],
            attributes["zigai.realtime.reconnects"]) == (3, 1, 1)
    assert attributes["zigai.realtime.text_chars.sent"] > 0
    names = [e.name for e in span.events]
    assert names[0] == "zigai.realtime.connected" and names[-1] == "zigai.realtime.closed"
    assert "zigai.realtime.reconnected" in names and "zigai.realtime.tool_call" in names
    call = next(e for e in span.events if e.name == "zigai.realtime.tool_call")
    assert call.attributes == {"zigai.realtime.call_id": "call_1", "zigai.realtime.tool_name": "weather",
                               "zigai.realtime.response_id": "resp_5"}  # correlated with its response
    reconnected = next(e for e in span.events if e.name == "zigai.realtime.reconnected")
    assert reconnected.attributes == {"zigai.realtime.server_state_survived": False}
    for secret in ("hello", "echo", "Oslo", "be brief", "20C"):  # content capture is on: still none
        assert secret not in repr(span)
    assert memory.metric_total("gen_ai.client.token.usage", **{"gen_ai.token.type": "input"}) == 30
    (duration,) = [p for p in memory.metrics if p.name == "gen_ai.client.operation.duration"]
    assert duration.attributes == {"gen_ai.operation.name": "realtime", "gen_ai.provider.name": "openai",
                                   "gen_ai.request.model": "gpt-realtime"}


class Broken:
    def on_start(self, span: Any) -> None:
        raise RuntimeError("collector down")

    on_end = on_start

    def on_metric(self, point: Any) -> None:
        raise RuntimeError("collector down")


def test_errors_mark_the_span_and_exporter_failures_stay_fail_open() -> None:
    memory = InMemoryExporter()
    observer = RealtimeTelemetry(Telemetry(memory))
    for info in (RealtimeEventInfo("received", "ServerError", "xai", error_code="rate_limited"),
                 RealtimeEventInfo("received", "UsageReported", "xai", usage=RequestUsage(input_tokens=4)),
                 RealtimeEventInfo("received", "AudioDelta", "xai", audio_bytes=320),
                 RealtimeEventInfo("session", "closed", "xai")):
        observer.on_realtime_event(info)
    (span,) = memory.spans
    assert (span.name, span.trace_id != "", span.parent_span_id) == ("realtime", True, None)
    assert (span.status, span.attributes["error.type"]) == ("error", "rate_limited")
    assert span.attributes["gen_ai.provider.name"] == "x_ai" and span.attributes["zigai.provider.name"] == "xai"
    assert span.attributes["zigai.realtime.audio_bytes.received"] == 320
    assert [e.name for e in span.events] == ["zigai.realtime.error", "zigai.realtime.closed"]
    (duration,) = [p for p in memory.metrics if p.name == "gen_ai.client.operation.duration"]
    assert duration.attributes["error.type"] == "rate_limited"

    failing = Telemetry(Broken())
    broken = failing.realtime(parent=OUTER)
    broken.on_realtime_event(RealtimeEventInfo("session", "connected", "openai"))
    broken.on_realtime_event(RealtimeEventInfo("session", "closed", "openai"))
    assert failing.export_failures == 3  # start, duration point, end: logged and counted, not raised
