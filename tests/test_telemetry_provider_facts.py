"""Telemetry facts that come from the provider and the scheduler, not from the agent loop.

* a provider-reported cost (OpenRouter's ``usage.cost``) decoded by the adapter, buffered and
  streamed, priced on the chat span and the run, winning over a price table;
* ``gen_ai.provider.name`` spelled with the semantic conventions' well-known values while
  price tables keep zigai's own provider name;
* tool spans that start when their thread really started the call (sequential tools do not
  overlap), and a timed-out call that ends when it timed out, not at its hand-off.
"""

from __future__ import annotations

import json
import time
from decimal import Decimal
from typing import Any

import pytest
from support.agent_script import Script, call, reply
from support.loopback import LoopbackServer, Reply

from zigai.agent import Agent
from zigai.messages import ProviderDetails, ResponseMessage, TextPart
from zigai.pricing import REPORTED_COST_KEY, ModelPrice, PriceTable, UsageCost, reported_cost
from zigai.providers import openai_compatible as oc
from zigai.providers.openai_compatible.decode import (
    OpenAICompatibleDecodeError,
    decode_response,
    decode_usage,
    reported_cost_usd,
)
from zigai.reflect import tool
from zigai.security import UrlPolicy
from zigai.telemetry import InMemoryExporter, Telemetry
from zigai.telemetry.records import semconv_provider_name
from zigai.testing import FunctionModel
from zigai.tool import ToolLimits
from zigai.transport import HttpTransport
from zigai.usage import RequestUsage

POLICY = UrlPolicy.local_development()


def _completion(usage: dict[str, Any]) -> dict[str, Any]:
    return {"id": "gen-1", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"},
                         "finish_reason": "stop"}],
            "usage": usage}


def _http_run(handler: Any, telemetry: Telemetry, *, stream: bool = False,
              price_table: PriceTable | None = None) -> Any:
    with LoopbackServer(handler) as server, HttpTransport(url_policy=POLICY, default_timeout_s=10.0) as transport:
        provider = oc.Provider("sk-test", transport, url_policy=POLICY, base_url=f"{server.url}/v1")
        agent = Agent(oc.Client("m", provider, fallback_profile="full"), url_policy=POLICY,
                      hooks=[telemetry], price_table=price_table)
        if stream:
            with agent.run_stream("x") as streamed:
                list(streamed)
                return streamed.result().response
        with agent.run("x") as result:
            return result.response


# ------------------------------------------------------------------ provider-reported cost


def test_reported_cost_is_decoded_exactly_and_never_counted_as_tokens() -> None:
    usage = {"prompt_tokens": 194, "completion_tokens": 2, "total_tokens": 196, "cost": 0.95,
             "cost_details": {"upstream_inference_cost": 19}, "is_byok": False}
    assert reported_cost_usd(usage) == "0.95"
    assert reported_cost_usd({**usage, "cost": 0}) == "0"
    assert reported_cost_usd({"prompt_tokens": 1}) is None
    assert reported_cost_usd({"cost": None}) is None
    assert reported_cost_usd(None) is None
    # an integer cost is money, not an unknown token counter
    assert "cost" not in decode_usage({**usage, "cost": 3}).details
    response = decode_response(_completion(usage))
    assert response.provider_details is not None
    assert response.provider_details[REPORTED_COST_KEY] == "0.95"
    assert reported_cost(response) == UsageCost(950_000_000)


@pytest.mark.parametrize("bad", [-0.01, "0.5", True, float("inf"), [1]])
def test_a_malformed_reported_cost_is_a_decode_error_naming_its_path(bad: Any) -> None:
    with pytest.raises(OpenAICompatibleDecodeError) as caught:
        decode_response(_completion({"prompt_tokens": 1, "completion_tokens": 1, "cost": bad}))
    assert caught.value.path == "$.usage.cost"


def test_reported_cost_rounds_half_even_to_whole_nano_usd_and_ignores_junk() -> None:
    def response(value: Any) -> ResponseMessage:
        return ResponseMessage((TextPart("x"),), provider_details=ProviderDetails.from_value({REPORTED_COST_KEY: value}))

    assert reported_cost(response("0.0000000015")) == UsageCost(2)
    assert reported_cost(response("0.0000000025")) == UsageCost(2)
    assert reported_cost(response("0.000000002500001")) == UsageCost(3)
    assert reported_cost(response("1.25e-05")) == UsageCost(12_500)
    assert reported_cost(response("0")) == UsageCost(0)
    for junk in ("abc", "-1", "NaN", "Infinity"):
        assert reported_cost(response(junk)) is None
    assert reported_cost(ResponseMessage((TextPart("x"),))) is None
    assert reported_cost(object()) is None
    assert UsageCost(12_500).usd == Decimal("0.0000125")


def test_a_loopback_provider_reported_cost_reaches_spans_and_metrics_and_wins_over_the_table() -> None:
    table = PriceTable(version="t", entries={("openai_compatible", "m"): ModelPrice.from_usd("1000", "1000")})
    body = _completion({"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12, "cost": 0.000125})
    memory = InMemoryExporter()
    response = _http_run(lambda r: Reply.of_json(body), Telemetry(memory), price_table=table)
    assert reported_cost(response) == UsageCost(125_000)
    assert memory.span("chat m").attributes["zigai.cost.usd"] == pytest.approx(0.000125)
    assert memory.span("invoke_agent").attributes["zigai.cost.usd"] == pytest.approx(0.000125)
    assert memory.metric_total("zigai.client.cost") == pytest.approx(0.000125)


def test_a_streamed_provider_reported_cost_is_kept_from_the_usage_chunk() -> None:
    def chunk(delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> str:
        body: dict[str, Any] = {"id": "s-1", "object": "chat.completion.chunk", "model": "m",
                                "choices": [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}]}
        if usage is not None:
            body["usage"] = usage
        return json.dumps(body)

    events = [chunk({"role": "assistant", "content": "hi"}), chunk({}, "stop"),
              chunk({}, None, {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4, "cost": 2e-06}),
              "[DONE]"]
    memory = InMemoryExporter()
    response = _http_run(lambda r: Reply.sse(events), Telemetry(memory), stream=True)
    assert response.provider_details[REPORTED_COST_KEY] == "2e-06"
    assert memory.span("chat m").attributes["zigai.cost.usd"] == pytest.approx(2e-06)
    assert memory.metric_total("zigai.client.cost") == pytest.approx(2e-06)


def test_without_a_reported_cost_or_a_rate_there_is_no_cost() -> None:
    memory = InMemoryExporter()
    body = _completion({"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12})
    _http_run(lambda r: Reply.of_json(body), Telemetry(memory))
    assert "zigai.cost.usd" not in memory.span("chat m").attributes
    assert [p for p in memory.metrics if p.name == "zigai.client.cost"] == []


# ------------------------------------------------------------------ provider names


@pytest.mark.parametrize(("ours", "semconv"), [
    ("xai", "x_ai"), ("mistral", "mistral_ai"), ("bedrock", "aws.bedrock"),
    ("azure_openai", "azure.ai.openai"), ("openai", "openai"), ("anthropic", "anthropic"),
    ("gcp.gen_ai", "gcp.gen_ai"), ("gcp.vertex_ai", "gcp.vertex_ai"), ("groq", "groq"),
    ("openrouter", "openrouter"),
])
def test_provider_names_use_the_well_known_values(ours: str, semconv: str) -> None:
    assert semconv_provider_name(ours) == semconv


def test_a_mapped_provider_name_keeps_zigai_name_for_prices_and_as_its_own_attribute() -> None:
    usage = RequestUsage(input_tokens=1000, output_tokens=0)
    table = PriceTable(version="t", entries={("xai", "grok"): ModelPrice.from_usd("2", "0")})
    model = FunctionModel(lambda m, i: reply("a", usage=usage), model_name="grok", provider_name="xai")
    memory = InMemoryExporter()
    Agent(model, hooks=[Telemetry(memory, price_table=table)]).run("x").close()
    for span in memory.spans:
        assert span.attributes["gen_ai.provider.name"] == "x_ai"
        assert span.attributes["zigai.provider.name"] == "xai"
    assert memory.span("chat grok").attributes["zigai.cost.usd"] == pytest.approx(0.002)
    durations = [p for p in memory.metrics if p.name == "gen_ai.client.operation.duration"]
    assert durations and all(p.attributes["gen_ai.provider.name"] == "x_ai" for p in durations)
    # an unmapped name carries no duplicate attribute
    plain = InMemoryExporter()
    Agent(FunctionModel(lambda m, i: reply("a")), hooks=[Telemetry(plain)]).run("x").close()
    assert all("zigai.provider.name" not in s.attributes for s in plain.spans)


# ------------------------------------------------------------------ tool span timing


def _napping(name: str, nap_s: float, **options: Any) -> Any:
    def nap() -> str:
        time.sleep(nap_s)
        return name

    return tool(name, "Nap.", nap, **options)


class _StartsToo(InMemoryExporter):
    def __init__(self) -> None:
        super().__init__()
        self.started: dict[str, Any] = {}

    def on_start(self, span: Any) -> None:
        self.started[span.span_id] = span


def test_sequential_tool_spans_start_when_their_call_starts_and_do_not_overlap() -> None:
    script = Script([reply(call("first", {}, "c1"), call("second", {}, "c2")), reply("done")])
    memory = _StartsToo()
    tools = [_napping("first", 0.05, sequential=True), _napping("second", 0.05, sequential=True)]
    Agent(script.model, tools=tools, hooks=[Telemetry(memory)]).run("x").close()
    first, second = memory.span("execute_tool first"), memory.span("execute_tool second")
    assert first.end_ns is not None and second.end_ns is not None
    assert second.start_ns >= first.end_ns  # one after the other, as they ran
    for span in (first, second):
        assert span.end_ns - span.start_ns >= 50_000_000
    root = memory.span("invoke_agent")
    assert root.start_ns <= first.start_ns and second.end_ns <= (root.end_ns or 0)
    # every exported start precedes its end and carries the corrected start time
    assert memory.started[second.span_id].start_ns == second.start_ns
    assert memory.started[second.span_id].end_ns is None


def test_parallel_tool_spans_overlap() -> None:
    script = Script([reply(call("a", {}, "c1"), call("b", {}, "c2")), reply("done")])
    memory = InMemoryExporter()
    Agent(script.model, tools=[_napping("a", 0.1), _napping("b", 0.1)], hooks=[Telemetry(memory)]).run("x").close()
    a, b = memory.span("execute_tool a"), memory.span("execute_tool b")
    assert a.end_ns is not None and b.end_ns is not None
    assert b.start_ns < a.end_ns and a.start_ns < b.end_ns


def test_a_timed_out_tool_span_ends_at_the_time_out_not_at_its_hand_off() -> None:
    script = Script([reply(call("slow", {}, "c1")), reply("done")])
    memory = InMemoryExporter()
    slow = _napping("slow", 0.5, limits=ToolLimits(timeout_ms=100))
    Agent(script.model, tools=[slow], hooks=[Telemetry(memory)]).run("x").close()
    span = memory.span("execute_tool slow")
    assert span.status == "error" and span.attributes["error.type"] == "ToolTimedOut"
    assert span.end_ns is not None and span.end_ns - span.start_ns >= 100_000_000
