"""zigai.telemetry: GenAI spans and metrics of real runs, checked through the real OpenTelemetry SDK.

Every run kind of the issue (text, a tool loop with two parallel tools and a retried request
over a loopback HTTP provider, a stream, a failure, structured output) is exported through
``OtelExporter`` into the SDK's ``InMemorySpanExporter`` / ``InMemoryMetricReader``, and the
spans (names, kinds, parentage, status, attributes) and metric points are pinned.  A canary
credential and a canary prompt must appear nowhere in what was exported.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from support.agent_script import Script, call, reply
from support.loopback import LoopbackServer, Reply

from zigai.agent import Agent
from zigai.hooks import Correlation
from zigai.messages import ResponseMessage, TextPart
from zigai.output import OutputChoice, OutputSpec
from zigai.pricing import ModelPrice, PriceTable, UsageCost
from zigai.provider import ProviderBadRequest
from zigai.providers import openai_compatible as oc
from zigai.reflect import tool
from zigai.retry import RetryPolicy
from zigai.security import Redactor, UrlPolicy
from zigai.settings import ModelSettings
from zigai.telemetry import (
    SEMCONV_VERSION,
    ContentPolicy,
    InMemoryExporter,
    InvalidTelemetryConfig,
    InvalidTraceParent,
    OtelExporter,
    Telemetry,
    TelemetryExportFailed,
    TraceParent,
)
from zigai.telemetry.otel import OtelNotInstalled
from zigai.transport import HttpTransport
from zigai.usage import RequestUsage

CANARY_KEY = "sk-canary-7f3a9d1e5b"
CANARY_PROMPT = "canary-prompt-4471-do-not-export"
POLICY = UrlPolicy.local_development()
NO_WAIT = RetryPolicy(max_attempts=3, initial_delay_ms=0, jitter=False)


class Sdk:
    """The real OpenTelemetry SDK with in-memory span exporter and metric reader."""

    def __init__(self) -> None:
        self.spans_out = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans_out))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.telemetry_exporter = OtelExporter(self.tracer_provider, self.meter_provider)

    def spans(self) -> dict[str, ReadableSpan]:
        found = self.spans_out.get_finished_spans()
        return {s.name: s for s in found}

    def finished(self) -> tuple[ReadableSpan, ...]:
        return tuple(self.spans_out.get_finished_spans())

    def points(self) -> dict[str, list[tuple[dict[str, Any], Any]]]:
        data = self.reader.get_metrics_data()
        out: dict[str, list[tuple[dict[str, Any], Any]]] = {}
        assert data is not None
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    for point in metric.data.data_points:
                        value = point.sum if hasattr(point, "sum") else point.value
                        count = getattr(point, "count", None)
                        out.setdefault(metric.name, []).append((dict(point.attributes), (value, count)))
        return out

    def dump(self) -> str:
        data = self.reader.get_metrics_data()
        assert data is not None
        return "".join(s.to_json() for s in self.finished()) + data.to_json()


def _parent(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def _add_tool(nap_s: float = 0.0) -> Any:
    def add(a: int, b: int) -> int:
        time.sleep(nap_s)
        return a + b

    return tool("add", "Add.", add)


def _completion(message: dict[str, Any], finish: str, rid: str, usage: dict[str, Any]) -> Reply:
    return Reply.of_json({
        "id": rid, "object": "chat.completion", "model": "m-2026",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
        "usage": usage,
    })


@contextmanager
def _http_agent(handler: Any, **agent_options: Any) -> Iterator[tuple[Agent, LoopbackServer]]:
    with LoopbackServer(handler) as server, HttpTransport(url_policy=POLICY, default_timeout_s=10.0) as transport:
        provider = oc.Provider(CANARY_KEY, transport, url_policy=POLICY, base_url=f"{server.url}/v1")
        model = oc.Client("m", provider, fallback_profile="full")
        yield Agent(model, url_policy=POLICY, **agent_options), server


# ------------------------------------------------------------------ the real SDK, every run kind


def test_http_tool_loop_with_parallel_tools_and_a_retry_exports_through_the_sdk() -> None:
    calls = [{"id": i, "type": "function", "function": {"name": "add", "arguments": '{"a":1,"b":2}'}}
             for i in ("call_a", "call_b")]
    replies = [
        _completion({"content": None, "tool_calls": calls}, "tool_calls", "chatcmpl-first",
                    {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18,
                     "prompt_tokens_details": {"cached_tokens": 4},
                     "completion_tokens_details": {"reasoning_tokens": 2}}),
        Reply.of_json({"error": {"message": "busy"}}, status=503),
        _completion({"content": "3 and 3"}, "stop", "chatcmpl-second",
                    {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}),
    ]
    sdk = Sdk()
    telemetry = Telemetry(sdk.telemetry_exporter)
    with _http_agent(lambda r: replies.pop(0), tools=[_add_tool(nap_s=0.05)], retry_policy=NO_WAIT,
                     hooks=[telemetry], name="adder",
                     model_settings=ModelSettings(max_tokens=64, temperature=0.5)) as (agent, server):
        with agent.run(CANARY_PROMPT) as result:
            assert result.output == "3 and 3"
        assert CANARY_KEY in server.requests[0].headers.get("authorization", "")

    spans = sdk.finished()
    assert [s.name for s in spans] == [
        "chat m", "execute_tool add", "execute_tool add", "chat m", "chat m", "invoke_agent adder"]
    agent_span = spans[-1]
    first, tool_a, tool_b, failed, second = spans[:5]
    assert agent_span.parent is None and agent_span.kind is SpanKind.INTERNAL
    assert {s.context.trace_id for s in spans} == {agent_span.context.trace_id}
    assert all(_parent(s) == agent_span.context.span_id for s in spans[:5])
    assert [s.kind for s in spans[:5]] == [SpanKind.CLIENT, SpanKind.INTERNAL, SpanKind.INTERNAL,
                                           SpanKind.CLIENT, SpanKind.CLIENT]
    # the two tool calls ran in parallel: sibling spans whose intervals overlap, each as long
    # as its own 50 ms call
    assert tool_a.start_time < tool_b.end_time and tool_b.start_time < tool_a.end_time  # type: ignore[operator]
    assert all(s.end_time - s.start_time >= 50_000_000 for s in (tool_a, tool_b))  # type: ignore[operator]
    assert dict(first.attributes) == {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai_compatible",
        "gen_ai.request.model": "m", "gen_ai.response.model": "m-2026",
        "gen_ai.response.id": "chatcmpl-first", "gen_ai.response.finish_reasons": ("tool_calls",),
        "gen_ai.usage.input_tokens": 11, "gen_ai.usage.output_tokens": 7,
        "gen_ai.usage.cache_read.input_tokens": 4, "gen_ai.usage.reasoning.output_tokens": 2,
        "gen_ai.request.max_tokens": 64, "gen_ai.request.temperature": 0.5,
        "zigai.request.number": 1, "zigai.request.attempt": 1, "gen_ai.request.stream": False,
        "zigai.request.tools": ("add",), "gen_ai.agent.name": "adder",
    }
    assert first.status.status_code is StatusCode.UNSET
    assert {tool_a.attributes["gen_ai.tool.call.id"], tool_b.attributes["gen_ai.tool.call.id"]} == {
        "call_a", "call_b"}
    assert tool_a.attributes["gen_ai.tool.name"] == "add"
    assert tool_a.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool_a.attributes["zigai.tool.status"] == "success"
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.attributes["error.type"] == "ProviderServerError"
    assert failed.attributes["zigai.retry.category"] == "server_error"
    assert failed.attributes["zigai.request.attempt"] == 1
    assert [e.name for e in failed.events] == ["zigai.retry"]
    assert second.attributes["zigai.request.attempt"] == 2
    assert second.attributes["gen_ai.response.id"] == "chatcmpl-second"
    assert "error.type" not in second.attributes
    assert agent_span.attributes["gen_ai.usage.input_tokens"] == 31
    assert agent_span.attributes["gen_ai.usage.output_tokens"] == 12
    assert agent_span.attributes["gen_ai.agent.name"] == "adder"
    assert agent_span.attributes["zigai.usage.tool_calls"] == 2
    assert "zigai.cost.usd" not in agent_span.attributes  # no price table: cost unknown, not zero

    points = sdk.points()
    usage = {(a["gen_ai.token.type"], a["gen_ai.response.model"]): v for a, v in points["gen_ai.client.token.usage"]}
    assert usage == {("input", "m-2026"): (31, 2), ("output", "m-2026"): (12, 2)}
    durations = {(a["gen_ai.operation.name"], a.get("error.type")): v[1]
                 for a, v in points["gen_ai.client.operation.duration"]}
    assert durations == {("chat", None): 2, ("chat", "ProviderServerError"): 1, ("invoke_agent", None): 1}
    assert [(a["zigai.retry.category"], v[0]) for a, v in points["zigai.client.retries"]] == [("server_error", 1)]
    assert [(a["gen_ai.tool.name"], v[0]) for a, v in points["zigai.tool.calls"]] == [("add", 2)]
    requests = {a["zigai.outcome"]: v[0] for a, v in points["zigai.client.requests"]}
    assert requests == {"success": 2, "error": 1}
    assert "zigai.client.cost" not in points
    dumped = sdk.dump()
    assert CANARY_KEY not in dumped and CANARY_PROMPT not in dumped
    assert "3 and 3" not in dumped and '"a":1' not in dumped  # outputs and arguments too


def test_http_streamed_run_has_the_same_shape_and_counts_usage() -> None:
    def chunk(delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> str:
        body: dict[str, Any] = {"id": "stream-1", "object": "chat.completion.chunk", "model": "m",
                                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        if usage is not None:
            body["usage"] = usage
        return json.dumps(body)

    events = [chunk({"role": "assistant", "content": "He"}), chunk({"content": "llo"}, "stop"),
              chunk({}, None, {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}), "[DONE]"]
    sdk = Sdk()
    with _http_agent(lambda r: Reply.sse(events), hooks=[Telemetry(sdk.telemetry_exporter)]) as (agent, _s):
        with agent.run_stream(CANARY_PROMPT) as stream:
            list(stream)
            assert stream.result().output == "Hello"
    chat, root = sdk.finished()
    assert (chat.name, root.name) == ("chat m", "invoke_agent")
    assert _parent(chat) == root.context.span_id
    assert chat.attributes["gen_ai.request.stream"] is True and root.attributes["zigai.run.streaming"] is True
    assert chat.attributes["gen_ai.response.id"] == "stream-1"
    assert chat.attributes["gen_ai.usage.input_tokens"] == 3
    assert chat.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert CANARY_PROMPT not in sdk.dump() and CANARY_KEY not in sdk.dump()


def test_failed_run_marks_the_chat_and_agent_spans_as_errors() -> None:
    sdk = Sdk()
    with _http_agent(lambda r: Reply.of_json({"error": {"message": f"bad {CANARY_PROMPT}"}}, status=400),
                     hooks=[Telemetry(sdk.telemetry_exporter)]) as (agent, _s):
        with pytest.raises(ProviderBadRequest):
            agent.run(CANARY_PROMPT)
    chat, root = sdk.finished()
    for span in (chat, root):
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description == "ProviderBadRequest"  # the type, never the message
        assert span.attributes["error.type"] == "ProviderBadRequest"
    assert "zigai.retry.category" not in chat.attributes
    assert chat.attributes["zigai.retry.will_retry"] is False
    assert root.attributes["zigai.run.error_state"]
    durations = {a["gen_ai.operation.name"]: a["error.type"] for a, _ in sdk.points()["gen_ai.client.operation.duration"]}
    assert durations == {"chat": "ProviderBadRequest", "invoke_agent": "ProviderBadRequest"}
    assert CANARY_PROMPT not in sdk.dump() and CANARY_KEY not in sdk.dump()


def test_text_and_structured_output_runs() -> None:
    sdk = Sdk()
    telemetry = Telemetry(sdk.telemetry_exporter)
    Agent(Script([reply("hi", usage=RequestUsage(input_tokens=2, output_tokens=1))]).model,
          hooks=[telemetry]).run(CANARY_PROMPT).close()
    spec = OutputSpec.tool([OutputChoice("answer", {"type": "object", "properties": {"v": {"type": "integer"}}})])
    script = Script([reply(call("answer", {"v": 7}, "o1"))])
    with Agent(script.model, output=spec, hooks=[telemetry]).run(CANARY_PROMPT) as result:
        assert result.output == {"v": 7}
    names = [s.name for s in sdk.finished()]
    # the output tool call is the agent's own finalization, not an executed tool: no tool span
    assert names == ["chat function", "invoke_agent", "chat function", "invoke_agent"]
    text_chat, text_root, typed_chat, typed_root = sdk.finished()
    assert text_root.context.trace_id != typed_root.context.trace_id  # one trace per run
    assert text_chat.attributes["gen_ai.usage.input_tokens"] == 2
    assert text_chat.attributes["gen_ai.provider.name"] == "function"
    assert typed_root.attributes["zigai.run.outcome"] == "complete"
    assert "gen_ai.output.messages" not in typed_root.attributes
    assert CANARY_PROMPT not in sdk.dump()


# ------------------------------------------------------------------ in-process records


def test_trace_parent_from_correlation_or_observer_nests_the_agent_span() -> None:
    outer = TraceParent("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331")
    sdk = Sdk()
    memory = InMemoryExporter()
    for exporter in (sdk.telemetry_exporter, memory):
        telemetry = Telemetry(exporter)
        Agent(Script([reply("x")]).model, hooks=[telemetry]).run(
            "x", correlation=Correlation(run_id="run-42", trace_parent=outer.header(), node_name="n1",
                                         node_index=3)).close()
    root = sdk.spans()["invoke_agent"]
    assert f"{root.context.trace_id:032x}" == outer.trace_id
    assert root.parent is not None and f"{root.parent.span_id:016x}" == outer.span_id and root.parent.is_remote
    span = memory.span("invoke_agent")
    assert (span.trace_id, span.parent_span_id, span.parent_is_remote) == (outer.trace_id, outer.span_id, True)
    assert span.attributes["zigai.run.id"] == "run-42"
    assert (span.attributes["zigai.node.name"], span.attributes["zigai.node.index"]) == ("n1", 3)
    assert memory.span("chat function").parent_span_id == span.span_id
    # the observer's own parent applies when the run names none
    default = InMemoryExporter()
    Agent(Script([reply("x")]).model, hooks=[Telemetry(default, parent=outer.header())]).run("x").close()
    assert default.span("invoke_agent").parent_span_id == outer.span_id


def test_trace_parent_parsing_is_strict() -> None:
    parsed = TraceParent.parse(" 00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-00 ")
    assert parsed.header() == "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
    for bad in ("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "00-0af7-b7ad-01", 42,
                "00-00000000000000000000000000000000-b7ad6b7169203331-01",
                "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01"):
        with pytest.raises(InvalidTraceParent):
            TraceParent.parse(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidTraceParent, match="trace_flags"):
        TraceParent("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", 256)
    with pytest.raises(InvalidTraceParent, match="trace_flags"):
        TraceParent("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", True)


def test_content_capture_is_bounded_and_redacted_when_enabled() -> None:
    secret = "tok-abcdef123"
    policy = ContentPolicy(capture=True, max_chars=200, redactor=Redactor(secrets=(secret,)))
    memory = InMemoryExporter()
    script = Script([reply(call("add", {"a": 1, "b": 2}, "c1")), reply(f"done {secret}")])
    Agent(script.model, tools=[_add_tool()], instructions="be brief",
          hooks=[Telemetry(memory, content=policy)]).run(f"please {secret} " + "y" * 500).close()
    first = [s for s in memory.spans if s.name == "chat function"][0]
    messages = first.attributes["gen_ai.input.messages"]
    assert isinstance(messages, str) and len(messages) <= 200  # within the bound, still one JSON document
    assert json.loads(messages)[0]["parts"][0]["content"].startswith("please [REDACTED] yyy")
    assert "[REDACTED]" in messages and secret not in messages
    assert json.loads(str(first.attributes["gen_ai.system_instructions"])) == [{"type": "text", "content": "be brief"}]
    tool_span = memory.span("execute_tool add")
    assert json.loads(str(tool_span.attributes["gen_ai.tool.call.arguments"])) == {"a": 1, "b": 2}
    assert tool_span.attributes["gen_ai.tool.call.result"] == "3"
    root = memory.span("invoke_agent")
    assert json.loads(str(root.attributes["gen_ai.output.messages"])) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "done [REDACTED]"}], "finish_reason": "stop"}]
    assert all(secret not in str(v) for s in memory.spans for v in s.attributes.values())
    assert ContentPolicy(capture=True, max_chars=7).render("x" * 8) == "x" * 7
    assert ContentPolicy(capture=True, max_chars=8).render("x" * 8) == "x" * 8
    for bad in (dict(capture=1), dict(max_chars=0), dict(max_chars=1_000_001), dict(max_chars=True),
                dict(redactor="r")):
        with pytest.raises(InvalidTelemetryConfig):
            ContentPolicy(**bad)  # type: ignore[arg-type]


def test_content_capture_records_error_messages_redacted() -> None:
    memory = InMemoryExporter()
    policy = ContentPolicy(capture=True, redactor=Redactor(secrets=("s3cret",)))

    def boom(messages: Any, info: Any) -> ResponseMessage:
        raise ValueError("model broke s3cret")

    from zigai.testing import FunctionModel

    with pytest.raises(ValueError):
        Agent(FunctionModel(boom), hooks=[Telemetry(memory, content=policy)]).run("x")
    root = memory.span("invoke_agent")
    assert root.status == "error" and root.status_description == "model broke [REDACTED]"
    assert memory.span("chat function").status_description == "model broke [REDACTED]"


def test_cost_comes_from_the_price_table_or_the_provider_and_unknown_is_absent() -> None:
    table = PriceTable(version="t-1", entries={("function", "function"): ModelPrice.from_usd("1", "2")})
    usage = RequestUsage(input_tokens=1000, output_tokens=500)
    memory = InMemoryExporter()
    Agent(Script([reply("a", usage=usage)]).model, hooks=[Telemetry(memory, price_table=table)]).run("x").close()
    assert memory.span("chat function").attributes["zigai.cost.usd"] == pytest.approx(0.002)
    assert memory.span("invoke_agent").attributes["zigai.cost.usd"] == pytest.approx(0.002)
    assert memory.metric_total("zigai.client.cost") == pytest.approx(0.002)
    # without its own table the observer prices with the agent's, matching Result.cost
    inherited = InMemoryExporter()
    agent = Agent(Script([reply("a", usage=usage)]).model, price_table=table, hooks=[Telemetry(inherited)])
    with agent.run("x") as result:
        assert result.cost is not None and result.cost.nano_usd == 2_000_000
    assert inherited.span("invoke_agent").attributes["zigai.cost.usd"] == pytest.approx(0.002)
    assert inherited.metric_total("zigai.client.cost") == pytest.approx(0.002)
    # the observer's own table wins over the agent's
    own = InMemoryExporter()
    cheaper = PriceTable(version="t-3", entries={("function", "function"): ModelPrice.from_usd("0", "0")})
    Agent(Script([reply("a", usage=usage)]).model, price_table=table,
          hooks=[Telemetry(own, price_table=cheaper)]).run("x").close()
    assert own.span("invoke_agent").attributes["zigai.cost.usd"] == 0
    # a provider-reported cost wins over the table
    reported = InMemoryExporter()
    Agent(Script([reply("a", usage=usage)]).model,
          hooks=[Telemetry(reported, price_table=table, reported_cost=lambda r: UsageCost(5))]).run("x").close()
    assert reported.metric_total("zigai.client.cost") == pytest.approx(5e-9)
    # a model without a rate: no cost attribute and no cost point on the span or the run
    unknown = InMemoryExporter()
    empty = PriceTable(version="t-2", entries={})
    script = Script([reply(call("add", {"a": 1, "b": 1}, "c")), reply("b", usage=usage)])
    Agent(script.model, tools=[_add_tool()], hooks=[Telemetry(unknown, price_table=empty)]).run("x").close()
    assert all("zigai.cost.usd" not in s.attributes for s in unknown.spans)
    assert [p for p in unknown.metrics if p.name == "zigai.client.cost"] == []
    # one priced response and one unpriced: the run total is unknown, not a partial sum
    mixed = InMemoryExporter()
    costs = iter([UsageCost(10), None])
    script = Script([reply(call("add", {"a": 1, "b": 1}, "c")), reply("b")])
    Agent(script.model, tools=[_add_tool()],
          hooks=[Telemetry(mixed, reported_cost=lambda r: next(costs))]).run("x").close()
    assert "zigai.cost.usd" not in mixed.span("invoke_agent").attributes
    assert mixed.metric_total("zigai.client.cost") == pytest.approx(1e-8)


def test_cached_reasoning_and_audio_tokens_reach_spans_and_detail_counters() -> None:
    usage = RequestUsage(input_tokens=10, output_tokens=8, cache_read_tokens=3, cache_write_tokens=2,
                         reasoning_tokens=4, input_audio_tokens=1, output_audio_tokens=2)
    memory = InMemoryExporter()
    Agent(Script([reply("a", usage=usage)]).model, hooks=[Telemetry(memory)]).run("x").close()
    chat = memory.span("chat function")
    assert (chat.attributes["gen_ai.usage.cache_read.input_tokens"],
            chat.attributes["gen_ai.usage.cache_creation.input_tokens"],
            chat.attributes["gen_ai.usage.reasoning.output_tokens"], chat.attributes["zigai.usage.input_audio_tokens"],
            chat.attributes["zigai.usage.output_audio_tokens"]) == (3, 2, 4, 1, 2)
    details = {p.attributes["zigai.token.type"]: p.value for p in memory.metrics
               if p.name == "zigai.client.token.details"}
    assert details == {"cache_read": 3, "cache_write": 2, "reasoning": 4, "input_audio": 1, "output_audio": 2}
    assert memory.span("invoke_agent").attributes["gen_ai.usage.reasoning.output_tokens"] == 4


def test_tool_timeouts_and_failures_are_error_spans() -> None:
    import time as _time

    from zigai.tool import ToolLimits

    def slow() -> str:
        _time.sleep(0.3)
        return "late"

    def broken() -> str:
        raise KeyError("boom")

    memory = InMemoryExporter()
    slow_tool = tool("slow", "Slow.", slow, limits=ToolLimits(timeout_ms=20))
    script = Script([reply(call("slow", {}, "s1")), reply("ok")])
    Agent(script.model, tools=[slow_tool], hooks=[Telemetry(memory)]).run("x").close()
    span = memory.span("execute_tool slow")
    assert (span.status, span.attributes["error.type"], span.attributes["zigai.tool.status"]) == (
        "error", "ToolTimedOut", "timed_out")
    failing = InMemoryExporter()
    script = Script([reply(call("broken", {}, "b1"))])
    with pytest.raises(KeyError):
        Agent(script.model, tools=[tool("broken", "Broken.", broken)], hooks=[Telemetry(failing)]).run("x")
    span = failing.span("execute_tool broken")
    assert (span.status, span.attributes["error.type"], span.attributes["zigai.tool.origin"]) == (
        "error", "KeyError", True)
    assert failing.span("invoke_agent").attributes["error.type"] == "KeyError"
    assert failing.metric_total("zigai.tool.calls", **{"zigai.tool.status": "error"}) == 1


# ------------------------------------------------------------------ exporter failures


class Raising:
    def __init__(self, where: str) -> None:
        self.where = where

    def on_start(self, span: Any) -> None:
        if self.where == "start":
            raise RuntimeError("exporter down")

    def on_end(self, span: Any) -> None:
        if self.where == "end":
            raise RuntimeError("exporter down")

    def on_metric(self, point: Any) -> None:
        raise RuntimeError("exporter down")


def test_a_raising_exporter_does_not_fail_the_run_by_default(caplog: pytest.LogCaptureFixture) -> None:
    telemetry = Telemetry(Raising("end"))
    with caplog.at_level(logging.WARNING, logger="zigai.telemetry"):
        with Agent(Script([reply("fine")]).model, hooks=[telemetry]).run("x") as result:
            assert result.output == "fine"
    assert telemetry.export_failures >= 4
    assert "fail-open" in caplog.text


def test_fail_closed_stops_the_run_with_the_exporter_error_chained() -> None:
    telemetry = Telemetry(Raising("start"), fail_closed=True)
    with pytest.raises(TelemetryExportFailed, match="fail_closed") as info:
        Agent(Script([reply("fine")]).model, hooks=[telemetry]).run("x")
    assert isinstance(info.value.__cause__, RuntimeError)


def test_configuration_is_checked() -> None:
    for bad in (dict(exporter=object()), dict(content="on"), dict(price_table={}), dict(reported_cost=1),
                dict(fail_closed="yes"), dict(parent=5)):
        with pytest.raises(InvalidTelemetryConfig):
            Telemetry(**bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidTraceParent):
        Telemetry(parent="garbage")
    with pytest.raises(LookupError, match="expected one span"):
        InMemoryExporter().span("nope")


def _recorded_events() -> list[Any]:
    """The hook events of three real runs: a tool loop, a failing tool, a failing model."""
    recorded: list[Any] = []

    def broken() -> str:
        raise KeyError("boom")

    Agent(Script([reply(call("add", {"a": 1, "b": 1}, "c1")), reply("a")]).model, tools=[_add_tool()],
          hooks=[recorded.append]).run("x").close()
    with pytest.raises(KeyError):
        Agent(Script([reply(call("broken", {}, "b1"))]).model, tools=[tool("broken", "B.", broken)],
              hooks=[recorded.append]).run("x")
    with _http_agent(lambda r: Reply.of_json({"error": {"message": "no"}}, status=400),
                     hooks=[recorded.append]) as (agent, _s):
        with pytest.raises(ProviderBadRequest):
            agent.run("x")
    return recorded


def test_events_of_runs_the_observer_never_saw_start_are_ignored() -> None:
    events = _recorded_events()
    assert {"tool_execute_start", "tool_execute_end", "tool_execute_error", "request_error",
            "stream_event_before"} - {e.kind for e in events} == {"stream_event_before"}
    memory = InMemoryExporter()
    telemetry = Telemetry(memory)
    for event in events:
        if event.kind != "run_start":
            telemetry(event)
    assert memory.spans == [] and memory.metrics == []


def test_spans_a_failure_left_open_end_with_the_run_error_and_late_events_are_ignored() -> None:
    events = _recorded_events()
    memory = InMemoryExporter()
    telemetry = Telemetry(memory)
    for event in events:  # the ends of tools and requests never arrive (an abandoned run)
        if event.kind in ("tool_execute_end", "tool_execute_error", "request_error"):
            continue
        if event.kind == "request_end":  # a response without a finish reason
            event = event._replace(response=ResponseMessage(parts=(TextPart("x"),)))
        telemetry(event)
    for event in events:  # their ends arriving after the run ended change nothing
        if event.kind in ("tool_execute_end", "tool_execute_error", "request_error"):
            telemetry(event)
    assert len(memory.spans) == sum(1 for e in events if e.kind in (
        "run_start", "request_start", "tool_execute_start"))
    broken = memory.span("execute_tool broken")
    assert (broken.status, broken.attributes["error.type"]) == ("error", "KeyError")
    assert memory.span("execute_tool add").attributes["error.type"] == "_OTHER"  # the run itself succeeded
    failed_chat = [s for s in memory.spans if s.name == "chat m"][0]
    assert failed_chat.attributes["error.type"] == "ProviderBadRequest"
    assert all("gen_ai.response.finish_reasons" not in s.attributes for s in memory.spans)


def test_spans_left_open_by_a_failure_end_with_the_run_error() -> None:
    from zigai.control import CancellationToken, Cancelled
    token = CancellationToken()

    def waits() -> str:
        token.cancel()
        import time as _time
        _time.sleep(0.2)
        return "x"

    memory = InMemoryExporter()
    script = Script([reply(call("waits", {}, "w1")), reply("never")])
    with pytest.raises(Cancelled):
        Agent(script.model, tools=[tool("waits", "W.", waits)],
              hooks=[Telemetry(memory)]).run("x", cancellation=token)
    assert memory.span("invoke_agent").status == "error"
    assert memory.span("execute_tool waits").status == "error"


# ------------------------------------------------------------------ the OpenTelemetry bridge


def test_otel_exporter_without_providers_drops_and_without_the_sdk_names_the_extra(
        monkeypatch: pytest.MonkeyPatch) -> None:
    quiet = OtelExporter()
    Agent(Script([reply("a")]).model, hooks=[Telemetry(quiet)]).run("x").close()
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    with pytest.raises(OtelNotInstalled, match=r"zigai\[otel\]"):
        OtelExporter()


def test_importing_zigai_telemetry_does_not_import_opentelemetry() -> None:
    code = ("import sys, zigai, zigai.telemetry; from zigai.telemetry import Telemetry; "
            "print(any(m.split('.')[0] == 'opentelemetry' for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False"
    import zigai.telemetry as package

    with pytest.raises(AttributeError):
        package.Nope  # noqa: B018
    assert SEMCONV_VERSION.count(".") == 2


def test_otel_exporter_copies_ok_status_and_ignores_unknown_ends() -> None:
    from zigai.telemetry import Span

    sdk = Sdk()
    span = Span("custom", "internal", "0" * 31 + "1", "0" * 15 + "1", None, False, 1, 10, None, {"k": "v"})
    sdk.telemetry_exporter.on_end(span)  # never started: ignored
    sdk.telemetry_exporter.on_start(span)
    from dataclasses import replace

    sdk.telemetry_exporter.on_end(replace(span, end_ns=20, status="ok"))
    (exported,) = sdk.finished()
    assert exported.status.status_code is StatusCode.OK
    assert (exported.start_time, exported.end_time) == (10, 20)
    assert exported.duration if hasattr(exported, "duration") else True
    assert span.duration_ns is None and replace(span, end_ns=25).duration_ns == 15
    assert TextPart("x").content == "x"
