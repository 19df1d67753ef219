"""Agent.provider_error_policy (through a real loopback HTTP provider), Agent.price_table and
RunOptions.request_id (sent by the OpenAI Responses and Chat Completions adapters over a socket)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import pytest
from support.loopback import LoopbackServer, Received, Reply

from zigai.agent import Agent, InvalidAgentConfiguration, ProviderErrorPolicy
from zigai.messages import ResponseMessage, TextPart
from zigai.pricing import ModelPrice, PriceTable, UsageCost
from zigai.provider import ProviderBadRequest
from zigai.providers import openai_compatible as oc
from zigai.security import UrlPolicy
from zigai.testing import FunctionModel
from zigai.transport import HttpTransport
from zigai.usage import RequestUsage

POLICY = UrlPolicy.local_development()
ERROR = {"error": {"message": "unsupported parameter", "code": "bad_param"}}
ERROR_BODY = json.dumps(ERROR).encode()


@contextmanager
def _http_agent(**agent_options: Any) -> Iterator[tuple[Agent, LoopbackServer]]:
    def handler(request: Received) -> Reply:
        return Reply.of_json(ERROR, status=400)

    with LoopbackServer(handler) as server, HttpTransport(url_policy=POLICY, default_timeout_s=10.0) as transport:
        provider = oc.Provider("key", transport, url_policy=POLICY, base_url=f"{server.url}/v1")
        model = oc.Client("m", provider, fallback_profile="full")
        yield Agent(model, url_policy=POLICY, **agent_options), server


def test_the_error_observer_and_bounded_body_reach_agent_runs() -> None:
    views: list[Any] = []
    for cap, complete in ((len(ERROR_BODY), True), (len(ERROR_BODY) - 1, False)):
        views.clear()
        policy = ProviderErrorPolicy(observer=views.append, capture_body=True, max_body_bytes=cap)
        with _http_agent(provider_error_policy=policy) as (agent, server):
            with pytest.raises(ProviderBadRequest):
                agent.run("hi")
            assert len(server.requests) == 1
        (view,) = views
        assert (view.status, view.code, view.message) == (400, "bad_param", "unsupported parameter")
        assert view.body == ERROR_BODY[:cap] and view.body_truncated is not complete


def test_without_capture_the_observer_sees_no_body_and_without_policy_nothing_is_observed() -> None:
    views: list[Any] = []
    with _http_agent(provider_error_policy=ProviderErrorPolicy(observer=views.append)) as (agent, _):
        with pytest.raises(ProviderBadRequest):
            agent.run("hi")
    assert views[0].body is None and views[0].status == 400
    with _http_agent() as (agent, _):
        with pytest.raises(ProviderBadRequest) as info:
            agent.run("hi")
    assert info.value.status == 400


@pytest.mark.parametrize("bad", [{"observer": 3}, {"max_body_bytes": -1}, {"max_body_bytes": True}])
def test_bad_error_policies_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(InvalidAgentConfiguration):
        ProviderErrorPolicy(**bad)


# -- price_table --------------------------------------------------------------------------------


def _priced_model(*usages: RequestUsage) -> FunctionModel:
    remaining = list(usages)

    def model(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        return ResponseMessage((TextPart("ok"),), usage=remaining.pop(0))

    return FunctionModel(model)


# $2 per million input tokens, $8 per million output tokens (nano-USD per million).
TABLE = PriceTable("test-1", {("function", "function"): ModelPrice(2_000_000_000, 8_000_000_000)})


def test_results_carry_the_exact_cost_when_rates_are_known() -> None:
    agent = Agent(_priced_model(RequestUsage(input_tokens=1000, output_tokens=500)), price_table=TABLE)
    with agent.run("hi") as result:
        assert result.cost == UsageCost(1000 * 2000 + 500 * 8000)
        assert result.cost.usd == Decimal("0.006")


def test_cost_is_unknown_without_a_table_a_known_model_or_a_rate() -> None:
    usage = RequestUsage(input_tokens=10, output_tokens=10)
    with Agent(_priced_model(usage)).run("hi") as result:
        assert result.cost is None
    other = PriceTable("test-1", {("openai", "gpt"): ModelPrice(1, 1)})
    with Agent(_priced_model(usage), price_table=other).run("hi") as result:
        assert result.cost is None
    cached = RequestUsage(input_tokens=10, output_tokens=10, cache_read_tokens=5)
    with Agent(_priced_model(cached), price_table=TABLE).run("hi") as result:
        assert result.cost is None  # a used bucket without a rate stays unknown, never zero


def test_price_table_must_be_a_price_table() -> None:
    with pytest.raises(InvalidAgentConfiguration, match="PriceTable"):
        Agent(_priced_model(), price_table={"function": 1})


# -- request_id ---------------------------------------------------------------------------------

RESPONSES_OK = {
    "id": "resp_1", "object": "response", "status": "completed", "model": "m",
    "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": "ok", "annotations": []}]}],
    "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2},
}
CHAT_OK = {
    "id": "chatcmpl-1", "object": "chat.completion", "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


@contextmanager
def _ok_agent(kind: str) -> Iterator[tuple[Agent, LoopbackServer]]:
    from zigai.providers import openai

    body = RESPONSES_OK if kind == "responses" else CHAT_OK
    with LoopbackServer(lambda request: Reply.of_json(body)) as server, \
            HttpTransport(url_policy=POLICY, default_timeout_s=10.0) as transport:
        if kind == "responses":
            model: Any = openai.Client("m", openai.Provider("sk-test", transport=transport,
                                                            base_url=f"{server.url}/v1", url_policy=POLICY))
        else:
            provider = oc.Provider("key", transport, url_policy=POLICY, base_url=f"{server.url}/v1")
            model = oc.Client("m", provider, fallback_profile="full")
        yield Agent(model, url_policy=POLICY), server


@pytest.mark.parametrize("kind", ["responses", "chat"])
def test_request_id_is_sent_as_the_client_request_id_header(kind: str) -> None:
    from zigai.agent import RunOptions

    with _ok_agent(kind) as (agent, server):
        with agent.run("hi", options=RunOptions(request_id="req-42")) as result:
            assert result.output == "ok"
        with agent.run("hi"):
            pass
    first, second = server.requests
    assert first.headers["x-client-request-id"] == "req-42"
    assert "x-client-request-id" not in second.headers


@pytest.mark.parametrize("bad", ["", "a b", "line\r\nX-Evil: 1", "x" * 513, 7])
def test_request_ids_that_are_not_safe_header_values_are_refused(bad: Any) -> None:
    from zigai.agent import RunOptions

    with pytest.raises(InvalidAgentConfiguration, match="request_id"):
        RunOptions(request_id=bad)
    assert RunOptions(request_id="x" * 512).request_id == "x" * 512
