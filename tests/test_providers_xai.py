"""zigai.providers.xai: the native Responses client with xAI's typed server-side tools, native
tool items decoded and replayed, the ``xai`` extension tag, and the Chat compatibility route."""

from __future__ import annotations

import json
import pickle
from datetime import date
from typing import Any

import pytest
from support.mock_transport import MockResponse, MockTransport
from support.sse_replay import feed_chunks

from zigai.messages import (
    NativeToolCallPart,
    NativeToolReturnPart,
    ProviderPart,
    RequestMessage,
    TextPart,
)
from zigai.model import (
    ManagedTool,
    ModelRequest,
    PartEndEvent,
    ToolDefinition,
    UnsupportedModelFeature,
)
from zigai.providers import openai, xai
from zigai.settings import (
    ExtraBodyRejected,
    ModelSettings,
    ProviderExtraBody,
    UnsupportedModelSetting,
)

WEATHER = ToolDefinition("weather", "Get weather.", {"type": "object"})
ANSWER = {
    "id": "resp_1", "model": "grok-4", "status": "completed",
    "output": [
        {"type": "x_search_call", "id": "xs_1", "status": "completed",
         "action": {"type": "search", "query": "xai news"}},
        {"type": "message", "id": "msg_1", "role": "assistant",
         "content": [{"type": "output_text", "text": "Here is the news.",
                      "annotations": [{"type": "url_citation", "url": "https://x.com/xai/status/1"}]}]},
    ],
    "usage": {"input_tokens": 10, "output_tokens": 5, "num_sources_used": 3},
}


def _client(body: Any = ANSWER, model: str = "grok-4", **options: Any) -> tuple[MockTransport, xai.Client]:
    transport = MockTransport(lambda request: MockResponse.of_json(body))
    return transport, xai.Client(model, xai.Provider("xai-key", transport=transport), **options)


def _sent(transport: MockTransport) -> dict:
    return json.loads(transport.requests[-1].body)


def test_typed_tools_and_portable_tools_reach_the_wire() -> None:
    tools = (
        xai.WebSearch(allowed_domains=("grokipedia.com", "x.ai"), enable_image_understanding=True),
        xai.XSearch(allowed_x_handles=("xai", "@elonmusk"), from_date=date(2026, 1, 1), to_date="2026-01-31",
                    enable_video_understanding=False),
        xai.CodeExecution(),
        xai.CollectionSearch(("collection_1",), max_num_results=5),
        xai.McpServer("deepwiki", "https://mcp.deepwiki.com/mcp", server_description="Docs",
                      allowed_tools=("ask",), authorization="Bearer sk-mcp", headers={"X-Team": "a"}),
        xai.McpServer("github", "https://api.githubcopilot.com/mcp/"),
    )
    transport, client = _client(tools=tools)
    request = ModelRequest(messages=(RequestMessage.user("news?"),), tools=(WEATHER,),
                           managed_tools=(ManagedTool("web_search"), ManagedTool("code_execution")))
    client.request(request)
    sent = _sent(transport)
    assert transport.requests[0].url == "https://api.x.ai/v1/responses"
    assert dict(transport.requests[0].headers)["Authorization"] == "Bearer xai-key"
    assert sent["tools"] == [
        {"type": "web_search", "allowed_domains": ["grokipedia.com", "x.ai"], "enable_image_understanding": True},
        {"type": "x_search", "allowed_x_handles": ["xai", "@elonmusk"], "from_date": "2026-01-01",
         "to_date": "2026-01-31", "enable_video_understanding": False},
        {"type": "code_interpreter"},
        {"type": "file_search", "vector_store_ids": ["collection_1"], "max_num_results": 5},
        {"type": "mcp", "server_label": "deepwiki", "server_url": "https://mcp.deepwiki.com/mcp",
         "server_description": "Docs", "allowed_tools": ["ask"], "authorization": "Bearer sk-mcp",
         "headers": {"X-Team": "a"}},
        {"type": "mcp", "server_label": "github", "server_url": "https://api.githubcopilot.com/mcp/"},
        {"type": "function", "name": "weather", "description": "Get weather.", "parameters": {"type": "object"}},
    ]
    # without typed configuration the portable tools are sent bare
    transport, client = _client()
    client.request(request)
    assert [tool["type"] for tool in _sent(transport)["tools"]] == ["web_search", "code_interpreter", "function"]
    assert "sk-mcp" not in repr(tools[4])
    with pytest.raises(TypeError):
        pickle.dumps(tools[4])


@pytest.mark.parametrize("make", [
    lambda: xai.WebSearch(allowed_domains=("a.com",), excluded_domains=("b.com",)),
    lambda: xai.WebSearch(allowed_domains=tuple(f"d{i}.com" for i in range(6))),
    lambda: xai.WebSearch(allowed_domains="x.ai"),
    lambda: xai.WebSearch(excluded_domains=("not a domain",)),
    lambda: xai.WebSearch(allowed_domains=()),
    lambda: xai.WebSearch(enable_image_understanding="yes"),
    lambda: xai.XSearch(allowed_x_handles=("a",), excluded_x_handles=("b",)),
    lambda: xai.XSearch(allowed_x_handles=tuple(f"h{i}" for i in range(11))),
    lambda: xai.XSearch(allowed_x_handles=("way_too_long_handle",)),
    lambda: xai.XSearch(from_date="2026-02-01", to_date="2026-01-01"),
    lambda: xai.XSearch(from_date="2026-2-1"),
    lambda: xai.XSearch(to_date="2026-13-01"),
    lambda: xai.XSearch(from_date=20260101),
    lambda: xai.XSearch(enable_video_understanding=1),
    lambda: xai.CollectionSearch(()),
    lambda: xai.CollectionSearch(("c", "c")),
    lambda: xai.CollectionSearch(("c",), max_num_results=0),
    lambda: xai.CollectionSearch(("c",), max_num_results=51),
    lambda: xai.McpServer("bad label", "https://x.test/mcp"),
    lambda: xai.McpServer("ok", "http://x.test/mcp"),
    lambda: xai.McpServer("ok", "https://x.test/mcp#frag"),
    lambda: xai.McpServer("ok", "https://x.test/mcp", server_description=3),
    lambda: xai.McpServer("ok", "https://x.test/mcp", allowed_tools="ask"),
    lambda: xai.McpServer("ok", "https://x.test/mcp", authorization=""),
    lambda: xai.McpServer("ok", "https://x.test/mcp", headers={"a": 1}),
    lambda: xai.Client("grok-4", xai.Provider("k"), tools=(xai.CodeExecution(), xai.CodeExecution())),
    lambda: xai.Client("grok-4", xai.Provider("k"), tools=(xai.McpServer("a", "https://x.test/1"),
                                                           xai.McpServer("a", "https://x.test/2"))),
    lambda: xai.Client("grok-4", xai.Provider("k"), tools=({"type": "web_search"},)),
])
def test_bad_tool_values_fail_on_construction(make: Any) -> None:
    with pytest.raises(xai.XaiToolError):
        make()


def test_limits_hold_at_the_exact_bound() -> None:
    assert len(xai.WebSearch(excluded_domains=tuple(f"d{i}.com" for i in range(5))).wire()["excluded_domains"]) == 5
    assert len(xai.XSearch(excluded_x_handles=tuple(f"h{i}" for i in range(10))).wire()["excluded_x_handles"]) == 10
    assert xai.CollectionSearch(("c",), max_num_results=50).wire()["max_num_results"] == 50


def test_native_tool_items_decode_and_replay_as_they_came() -> None:
    transport, client = _client()
    message = client.request(ModelRequest(messages=(RequestMessage.user("news?"),)))
    call, result = message.parts[0], message.parts[1]
    assert isinstance(call, NativeToolCallPart) and call.tool_name == "x_search"
    assert isinstance(result, NativeToolReturnPart) and call.provider.provider_name == "xai"
    assert message.text == "Here is the news." and message.provider_name == "xai"
    assert message.usage.details["num_sources_used"] == 3
    client.request(ModelRequest(messages=(RequestMessage.user("news?"), message, RequestMessage.user("more"))))
    replayed = _sent(transport)["input"]
    assert replayed[1] == ANSWER["output"][0]
    assert sum(1 for item in replayed if item.get("type") == "x_search_call") == 1
    # another provider's native items are not sent to xAI
    foreign = message.__class__(parts=(NativeToolCallPart("web_search", "w1", ProviderPart("openai", details=None)),))
    client.request(ModelRequest(messages=(RequestMessage.user("x"), foreign)))
    assert all(item.get("type") != "web_search_call" for item in _sent(transport)["input"])
    # OpenAI itself keeps its documented behaviour: native items are not replayed
    body = openai.encode_request(ModelRequest(messages=(RequestMessage.user("news?"), message)), "gpt-5",
                                 options=openai.EncodeOptions(provider_name="xai"))
    assert all(item.get("type") != "x_search_call" for item in body["input"])


def test_extension_tag_isolation_and_rejection_before_io() -> None:
    transport, client = _client()
    client.request(ModelRequest(messages=(RequestMessage.user("x"),), settings=ModelSettings(
        extra_body=ProviderExtraBody("xai", {"search_parameters": {"mode": "auto"}}))))
    assert _sent(transport)["search_parameters"] == {"mode": "auto"}
    transport, client = _client()
    failures = [
        (ModelRequest(messages=(RequestMessage.user("x"),), settings=ModelSettings(
            extra_body=ProviderExtraBody("openai", {"x": 1}))), ExtraBodyRejected),
        (ModelRequest(messages=(RequestMessage.user("x"),), settings=ModelSettings(
            extra_body=ProviderExtraBody("xai", {"tools": []}))), ExtraBodyRejected),
        (ModelRequest(messages=(RequestMessage.user("x"),), managed_tools=(ManagedTool("web_fetch"),)),
         UnsupportedModelFeature),
        (ModelRequest(messages=(RequestMessage.user("x"),), managed_tools=(ManagedTool("web_search", {"a": 1}),)),
         xai.XaiToolError),
        (ModelRequest(messages=(RequestMessage.user("x"),), settings=ModelSettings(thinking="high")),
         UnsupportedModelSetting),
    ]
    for request, error in failures:
        with pytest.raises(error):
            client.request(request)
    assert transport.requests == []
    with pytest.raises(xai.XaiToolError):
        xai.encode_tools((ManagedTool("tool_search"),), ())


def test_profiles_and_fail_closed_unknown_families() -> None:
    mini = xai.xai_profile("grok-3-mini")
    assert mini is not None and mini.reasoning_efforts == {"low", "high"}
    transport, client = _client(model="grok-3-mini")
    client.request(ModelRequest(messages=(RequestMessage.user("x"),), settings=ModelSettings(thinking="low")))
    assert _sent(transport)["reasoning"] == {"effort": "low"}
    grok4 = xai.xai_profile("grok-4-1-fast-reasoning")
    assert grok4 is not None and not grok4.supports_thinking and "image" in grok4.content_kinds
    assert "image" not in xai.xai_profile("grok-code-fast-1").content_kinds  # type: ignore[union-attr]
    assert xai.xai_profile("gpt-5") is None
    _, unknown = _client(model="mystery-1")
    assert not unknown.profile.supports_tools
    looked = xai.Client("mystery-1", xai.Provider("k", profile_lookup=lambda name: grok4))
    assert looked.profile is grok4
    assert xai.Client("grok-4", xai.Provider("k"), profile=mini).profile is mini


def test_chat_compatibility_route() -> None:
    transport = MockTransport(lambda request: MockResponse.of_json({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "pong"}, "finish_reason": "stop"}]}))
    client = xai.ChatClient("grok-3", xai.ChatProvider("xai-key", transport))
    assert client.request(ModelRequest(messages=(RequestMessage.user("ping"),))).text == "pong"
    assert transport.requests[0].url == "https://api.x.ai/v1/chat/completions"
    assert client.profile.supports_tools
    assert not xai.ChatClient("mystery", xai.ChatProvider("k")).profile.supports_tools


def test_every_accepted_setting_has_its_wire_name_and_the_rest_fail_before_io() -> None:
    transport, client = _client(model="grok-3-mini")
    client.request(ModelRequest(messages=(RequestMessage.user("x"),), tools=(WEATHER,), settings=ModelSettings(
        max_tokens=64, temperature=0.25, top_p=0.5, parallel_tool_calls=False, tool_choice="required",
        thinking="high")))
    sent = _sent(transport)
    del sent["input"], sent["tools"]
    assert sent == {"model": "grok-3-mini", "max_output_tokens": 64, "temperature": 0.25, "top_p": 0.5,
                    "parallel_tool_calls": False, "tool_choice": "required", "reasoning": {"effort": "high"}}
    refused = [ModelSettings(allowed_tools=("weather",)), ModelSettings(truncation="auto"),
               ModelSettings(service_tier="flex"), ModelSettings(seed=1), ModelSettings(top_logprobs=2),
               ModelSettings(thinking="medium")]
    for settings in refused:
        with pytest.raises(UnsupportedModelSetting):
            client.request(ModelRequest(messages=(RequestMessage.user("x"),), tools=(WEATHER,), settings=settings))
    assert len(transport.requests) == 1


@pytest.mark.parametrize(("body", "path"), [
    ({}, "$.output"),
    ({"output": [{"type": "x_search_call"}]}, "$.output[0].id"),
    ({"output": [{"type": "message", "content": [{"type": "output_text"}]}]}, "$.output[0].content[0].text"),
    ({"output": [], "usage": {"input_tokens": -1, "output_tokens": 1}}, "$.usage.input_tokens"),
])
def test_malformed_answers_raise_named_decode_errors_with_a_path(body: Any, path: str) -> None:
    _, client = _client(body)
    with pytest.raises(openai.OpenAIDecodeError) as info:
        client.request(ModelRequest(messages=(RequestMessage.user("x"),)))
    assert info.value.path == path and info.value.status == 200


def _stream_bytes() -> bytes:
    search, message = ANSWER["output"]
    events = [
        {"type": "response.created", "response": {"id": "resp_1", "model": "grok-4"}},
        {"type": "response.output_item.added", "output_index": 0, "item": {**search, "status": "in_progress"}},
        {"type": "response.output_item.done", "output_index": 0, "item": search},
        {"type": "response.output_item.added", "output_index": 1,
         "item": {"id": "msg_1", "type": "message", "role": "assistant", "content": []}},
        {"type": "response.output_text.delta", "item_id": "msg_1", "content_index": 0, "delta": "Here is "},
        {"type": "response.output_text.delta", "item_id": "msg_1", "content_index": 0, "delta": "the news."},
        {"type": "response.output_item.done", "output_index": 1, "item": message},
        {"type": "response.completed", "response": {**ANSWER, "status": "completed"}},
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def test_stream_split_at_every_byte_boundary_yields_the_same_native_parts() -> None:
    data = _stream_bytes()
    whole = feed_chunks(openai.StreamDecoder("xai"), [data])
    ends = [e.part for e in whole if isinstance(e, PartEndEvent)]
    assert [type(p) for p in ends] == [NativeToolCallPart, NativeToolReturnPart, TextPart]
    assert ends[0].provider.provider_name == "xai" and ends[2].content == "Here is the news."
    for cut in range(1, len(data)):
        assert feed_chunks(openai.StreamDecoder("xai"), [data[:cut], data[cut:]]) == whole, cut
    transport = MockTransport(lambda request: MockResponse.of_text(data.decode())
                              if json.loads(request.body).get("stream") else MockResponse.of_json(ANSWER))
    client = xai.Client("grok-4", xai.Provider("xai-key", transport=transport))
    with client.stream(ModelRequest(messages=(RequestMessage.user("news?"),))) as stream:
        list(stream)
    streamed = stream.response()
    buffered = client.request(ModelRequest(messages=(RequestMessage.user("news?"),)))
    assert streamed.parts == buffered.parts and streamed.provider_name == "xai"
