"""zigai.providers.azure_openai ResponsesClient: the v1 Responses route of an Azure resource —
resource and deployment rules, api-key authentication, profiles, buffered and streamed calls."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.mock_transport import MockResponse, MockTransport
from support.sse_replay import feed_chunks

from zigai.messages import RequestMessage
from zigai.model import (
    ManagedTool,
    ModelProfile,
    ModelRequest,
    ToolDefinition,
    UnsupportedModelFeature,
)
from zigai.providers import azure_openai as AZ
from zigai.providers import openai
from zigai.settings import (
    ExtraBodyRejected,
    ModelSettings,
    ProviderExtraBody,
    UnsupportedModelSetting,
)

ANSWER = {"id": "resp_1", "status": "completed", "model": "gpt-4o",
          "output": [{"type": "message", "id": "m1", "content": [{"type": "output_text", "text": "pong"}]}],
          "usage": {"input_tokens": 3, "output_tokens": 1}}
STREAM = (
    'event: response.created\ndata: {"type":"response.created","response":{"id":"resp_2","model":"gpt-4o"}}\n\n'
    'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"m1",'
    '"content_index":0,"delta":"po"}\n\n'
    'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"m1",'
    '"content_index":0,"delta":"ng"}\n\n'
    'event: response.completed\ndata: {"type":"response.completed","response":{"id":"resp_2",'
    '"status":"completed","usage":{"input_tokens":3,"output_tokens":1}}}\n\n'
)


def _client(handler: Any = None, deployment: str = "gpt-4o", **provider: Any
            ) -> tuple[MockTransport, AZ.ResponsesClient]:
    transport = MockTransport(handler or (lambda request: MockResponse.of_json(ANSWER)))
    options = provider or {"resource": "contoso-eastus"}
    return transport, AZ.ResponsesClient(deployment, AZ.Provider("az-key", transport, **options))


def test_resource_root_and_api_key_header() -> None:
    transport, client = _client()
    response = client.request(ModelRequest(messages=(RequestMessage.user("ping"),)))
    assert response.text == "pong" and response.provider_name == "azure_openai"
    (sent,) = transport.requests
    assert sent.url == "https://contoso-eastus.openai.azure.com/openai/v1/responses"
    headers = dict(sent.headers)
    assert headers["api-key"] == "az-key" and "Authorization" not in headers
    assert json.loads(sent.body) == {"model": "gpt-4o", "input": [
        {"type": "message", "role": "user", "content": "ping"}]}
    transport, client = _client(base_url="https://contoso.cognitiveservices.azure.com/openai/v1")
    client.request(ModelRequest(messages=(RequestMessage.user("ping"),)))
    assert transport.requests[0].url == "https://contoso.cognitiveservices.azure.com/openai/v1/responses"


def test_resource_names_at_and_past_the_limit() -> None:
    assert AZ.api_base("a" * 64) == f"https://{'a' * 64}.openai.azure.com/openai/v1"
    for bad in ("a" * 65, "Contoso", "contoso.evil.com", "-contoso", "contoso-", "", "con/toso"):
        with pytest.raises(AZ.InvalidAzureResource):
            AZ.api_base(bad)
    with pytest.raises(ValueError):
        AZ.Provider("k", resource="a", base_url="https://x.test")


def test_deployment_names_are_checked_before_io() -> None:
    for good in ("ab", "a" * 64, "gpt-4o.prod_2"):
        assert AZ.check_deployment(good) == good
    for bad in ("a", "a" * 65, "-gpt", "gpt 4o", "gpt/4o", "gpt%2F4o", 7):
        with pytest.raises(AZ.InvalidAzureDeployment):
            AZ.ResponsesClient(bad, AZ.Provider("k", resource="r"))  # type: ignore[arg-type]


def test_profiles_follow_the_openai_family_or_fail_closed() -> None:
    _, named = _client(deployment="gpt-4o")
    assert "web_search" in named.profile.provider_managed_tools
    transport, custom = _client(deployment="prod-chat")
    assert not custom.profile.supports_tools
    with pytest.raises(UnsupportedModelFeature):
        custom.request(ModelRequest(messages=(RequestMessage.user("x"),),
                                    tools=(ToolDefinition("f", "", {"type": "object"}),)))
    assert transport.requests == []
    chosen = ModelProfile(json_schema_output=True)
    looked = AZ.ResponsesClient("prod-chat", AZ.Provider("k", resource="r", profile_lookup=lambda name: chosen))
    assert looked.profile is chosen
    overridden = AZ.ResponsesClient("gpt-4o", AZ.Provider(
        "k", resource="r", profile_override=lambda name, p: p.with_changes(provider_managed_tools=frozenset())))
    assert overridden.profile.provider_managed_tools == frozenset()
    assert AZ.ResponsesClient("prod-chat", AZ.Provider("k", resource="r"), profile=chosen).profile is chosen
    assert AZ.responses_profile("mystery") is None


def test_managed_web_search_and_the_openai_extension_tag() -> None:
    transport, client = _client()
    client.request(ModelRequest(messages=(RequestMessage.user("x"),), managed_tools=(ManagedTool("web_search"),),
                                settings=ModelSettings(extra_body=ProviderExtraBody("openai", {"user": "u1"}))))
    sent = json.loads(transport.requests[0].body)
    assert sent["tools"] == [{"type": "web_search"}] and sent["user"] == "u1"
    with pytest.raises(ExtraBodyRejected):
        client.request(ModelRequest(messages=(RequestMessage.user("x"),), settings=ModelSettings(
            extra_body=ProviderExtraBody("openai_compatible", {"user": "u1"}))))
    assert len(transport.requests) == 1


def test_streamed_responses() -> None:
    transport, client = _client(lambda request: MockResponse.of_text(STREAM))
    with client.stream(ModelRequest(messages=(RequestMessage.user("ping"),))) as stream:
        list(stream)
    response = stream.response()
    assert response.text == "pong" and response.provider_response_id == "resp_2"
    assert json.loads(transport.requests[0].body)["stream"] is True


def test_every_accepted_setting_has_its_wire_name_and_the_rest_fail_before_io() -> None:
    weather = ToolDefinition("weather", "Get weather.", {"type": "object"})
    transport, client = _client()
    client.request(ModelRequest(messages=(RequestMessage.user("x"),), tools=(weather,), settings=ModelSettings(
        max_tokens=64, temperature=0.25, top_p=0.5, parallel_tool_calls=False, tool_choice="required",
        allowed_tools=("weather",), truncation="auto", top_logprobs=2, extra_headers=(("X-Trace", "t"),))))
    sent = json.loads(transport.requests[0].body)
    del sent["input"], sent["tools"]
    assert sent == {"model": "gpt-4o", "max_output_tokens": 64, "temperature": 0.25, "top_p": 0.5,
                    "parallel_tool_calls": False, "truncation": "auto", "top_logprobs": 2,
                    "include": ["message.output_text.logprobs"],
                    "tool_choice": {"type": "allowed_tools", "mode": "required",
                                    "tools": [{"type": "function", "name": "weather"}]}}
    assert dict(transport.requests[0].headers)["X-Trace"] == "t"
    for settings in (ModelSettings(thinking="high"), ModelSettings(seed=1), ModelSettings(top_k=2)):
        with pytest.raises(UnsupportedModelSetting):
            client.request(ModelRequest(messages=(RequestMessage.user("x"),), settings=settings))
    assert len(transport.requests) == 1


@pytest.mark.parametrize(("body", "path"), [
    ([], "$"),
    ({"output": [{"type": "message", "content": [{"type": "output_text"}]}]}, "$.output[0].content[0].text"),
    ({"output": [{"type": "function_call", "name": "f", "arguments": "{}"}]}, "$.output[0].call_id"),
])
def test_malformed_answers_raise_named_decode_errors_with_a_path(body: Any, path: str) -> None:
    _, client = _client(lambda request: MockResponse.of_json(body))
    with pytest.raises(openai.OpenAIDecodeError) as info:
        client.request(ModelRequest(messages=(RequestMessage.user("x"),)))
    assert info.value.path == path and info.value.status == 200


def test_stream_split_at_every_byte_boundary_yields_the_same_events() -> None:
    data = STREAM.encode()
    whole = feed_chunks(openai.StreamDecoder("azure_openai"), [data])
    assert [e.part.content for e in whole if type(e).__name__ == "PartEndEvent"] == ["pong"]
    for cut in range(1, len(data)):
        assert feed_chunks(openai.StreamDecoder("azure_openai"), [data[:cut], data[cut:]]) == whole, cut
