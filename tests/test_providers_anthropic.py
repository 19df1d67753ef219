"""zigai.providers.anthropic: exact wire JSON, decoding, streaming splits, errors, corpus replay."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.cassettes import ReplayTransport
from support.katan_model import error_sequence_checks
from support.litellm_proxy import litellm_check
from support.mock_transport import MockResponse, MockTransport
from support.replays import (
    Replay,
    assert_refused,
    assert_structured_answer,
    assert_text_answer,
    assert_thinking_answer,
    assert_tool_loop,
    corpus_file,
    local_cases,
    replay_params,
)
from support.sse_replay import feed_chunks

from zigai.messages import (
    BytesSource,
    CachePoint,
    FinishReason,
    ImageContent,
    ProviderDetails,
    ProviderPart,
    RequestMessage,
    ResponseMessage,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolOutcome,
    ToolReturnPart,
    UrlSource,
    UserPromptPart,
    VideoContent,
)
from zigai.model import (
    ManagedTool,
    ModelProfile,
    ModelRequest,
    OutputFormat,
    PartEndEvent,
    ToolDefinition,
    UnsupportedModelFeature,
)
from zigai.provider import ProviderResponseDecodeError, ProviderServerError, RateLimited
from zigai.providers import anthropic as A
from zigai.providers.sse import SseDecoder
from zigai.security import UrlPolicy
from zigai.settings import ExtraBodyRejected, ModelSettings, ProviderExtraBody

TEST_POLICY = UrlPolicy(allow_local_network=True)
WEATHER = ToolDefinition("weather", "Get weather.", {"type": "object"})


def _user(text: str) -> RequestMessage:
    return RequestMessage.user(text)


def _encode(request: ModelRequest, **kw: object) -> dict:
    return A.encode_request(request, model_name="claude-x", max_tokens=kw.pop("max_tokens", 100), **kw)  # type: ignore[arg-type]


def _mock(handler):  # type: ignore[no-untyped-def]
    transport = MockTransport(handler)
    return transport, A.Provider("sk-test", transport)


def test_system_instructions_and_history_with_tool_calls_encode_exactly() -> None:
    messages = (
        RequestMessage(parts=(SystemPromptPart("Be brief."), UserPromptPart("Weather?"))),
        ResponseMessage(parts=(
            ThinkingPart("hmm", signature="sig-1", provider=ProviderPart("anthropic")),
            ThinkingPart("foreign", signature="x", provider=ProviderPart("gcp.gen_ai")),
            ThinkingPart("", provider=ProviderPart("anthropic", details=ProviderDetails({"redacted_data": "opaque"}))),
            TextPart(""),
            ToolCallPart("weather", '{"city":"Madrid"}', "t1"),
            ToolCallPart("weather", "", "t2"),
        )),
        RequestMessage(parts=(
            ToolReturnPart("weather", "t1", {"temperature_c": 31}),
            ToolReturnPart("weather", "t2", "boom", outcome=ToolOutcome.error),
            RetryPromptPart("try again"),
        )),
    )
    body = _encode(ModelRequest(messages=messages, instructions=("Use tools.",), tools=(WEATHER,)))
    assert body == {
        "model": "claude-x",
        "max_tokens": 100,
        "system": [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Use tools."}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "sig-1"},
                {"type": "redacted_thinking", "data": "opaque"},
                {"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Madrid"}},
                {"type": "tool_use", "id": "t2", "name": "weather", "input": {}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": '{"temperature_c":31}'},
                {"type": "tool_result", "tool_use_id": "t2", "content": "boom", "is_error": True},
                {"type": "text", "text": "try again"},
            ]},
        ],
        "tools": [{"name": "weather", "description": "Get weather.", "input_schema": {"type": "object"}}],
    }


def test_tool_retry_prompt_is_an_erroring_tool_result() -> None:
    body = _encode(ModelRequest(messages=(RequestMessage(parts=(
        RetryPromptPart("bad args", tool_name="weather", tool_call_id="t9"),)),)))
    assert body["messages"][0]["content"] == [
        {"type": "tool_result", "tool_use_id": "t9", "content": "bad args", "is_error": True}
    ]


def test_images_and_cache_points_encode_as_sources() -> None:
    content = (
        ImageContent(BytesSource(b"\x89PNG", "image/png")),
        CachePoint(ttl="1h"),
        ImageContent(UrlSource("https://example.com/a.png")),
    )
    body = _encode(ModelRequest(messages=(RequestMessage(parts=(UserPromptPart(content),)),)))
    assert body["messages"][0]["content"] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw=="},
         "cache_control": {"type": "ephemeral", "ttl": "1h"}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
    ]


def test_every_settings_field_has_its_wire_name() -> None:
    settings = ModelSettings(
        max_tokens=7, temperature=0.5, top_p=0.9, top_k=3, stop_sequences=("END",),
        tool_choice="required", parallel_tool_calls=False, service_tier="auto",
        thinking_budget_tokens=1024,
    )
    body = _encode(ModelRequest(messages=(_user("hi"),), tools=(WEATHER,), settings=settings))
    assert {k: v for k, v in body.items() if k not in ("model", "messages", "tools")} == {
        "max_tokens": 7, "temperature": 0.5, "top_p": 0.9, "top_k": 3, "stop_sequences": ["END"],
        "tool_choice": {"type": "tool", "name": "weather", "disable_parallel_tool_use": True},
        "service_tier": "auto",
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    }


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (ModelSettings(tool_choice="auto"), {"type": "auto"}),
        (ModelSettings(tool_choice="none"), {"type": "none"}),
        (ModelSettings(parallel_tool_calls=False), {"type": "auto", "disable_parallel_tool_use": True}),
    ],
)
def test_tool_choice_forms(settings: ModelSettings, expected: dict) -> None:
    tools = (WEATHER, ToolDefinition("other"))
    body = _encode(ModelRequest(messages=(_user("hi"),), tools=tools, settings=settings))
    assert body["tool_choice"] == expected


def test_effort_thinking_structured_output_and_managed_tools() -> None:
    request = ModelRequest(
        messages=(_user("hi"),),
        settings=ModelSettings(thinking="high"),
        output_format=OutputFormat("json_schema", name="out", schema={"type": "object"}),
        managed_tools=(ManagedTool("web_search", {"max_uses": 2}), ManagedTool("web_fetch")),
    )
    body = _encode(request, stream=True)
    assert body["output_config"] == {
        "effort": "high", "format": {"type": "json_schema", "schema": {"type": "object"}}
    }
    assert body["tools"] == [
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 2},
        {"type": "web_fetch_20250910", "name": "web_fetch"},
    ]
    assert body["stream"] is True
    assert A.encode_request(ModelRequest(messages=(_user("x"),), settings=ModelSettings(thinking="off")),
                            model_name="m", max_tokens=1)["thinking"] == {"type": "disabled"}


def test_extra_body_is_merged_for_its_tag_and_rejects_reserved_or_foreign() -> None:
    ok = ModelSettings(extra_body=ProviderExtraBody("anthropic", {"metadata": {"user_id": "u"}}))
    assert _encode(ModelRequest(messages=(_user("x"),), settings=ok))["metadata"] == {"user_id": "u"}
    for extra in (ProviderExtraBody("anthropic", {"max_tokens": 1}), ProviderExtraBody("openai", {"a": 1})):
        with pytest.raises(ExtraBodyRejected):
            _encode(ModelRequest(messages=(_user("x"),), settings=ModelSettings(extra_body=extra)))


def test_unsupported_features_fail_before_io() -> None:
    transport, provider = _mock(lambda r: pytest.fail("transport must not be called"))
    client = A.Client("claude-sonnet-4-5", provider)
    cases = [
        ModelRequest(messages=(_user("x"),), settings=ModelSettings(seed=1)),
        ModelRequest(messages=(_user("x"),), output_format=OutputFormat("json_object")),
        ModelRequest(messages=(RequestMessage(parts=(UserPromptPart(
            (VideoContent(UrlSource("https://e.com/v.mp4")),)),)),)),
        ModelRequest(messages=(_user("x"),), settings=ModelSettings(thinking="high")),
    ]
    for request in cases:
        with pytest.raises(Exception) as info:
            client.request(request)
        assert isinstance(info.value, (UnsupportedModelFeature,)) or "Unsupported" in type(info.value).__name__
    # a permissive profile still cannot send a control the wire lacks
    loose = A.Client("claude-x", provider, profile=ModelProfile(settings=frozenset({"seed"})))
    with pytest.raises(UnsupportedModelFeature):
        loose.request(ModelRequest(messages=(_user("x"),), settings=ModelSettings(seed=3)))
    assert transport.requests == []


def test_headers_auth_and_client_settings_are_applied() -> None:
    seen = []

    def handler(request):  # type: ignore[no-untyped-def]
        seen.append(request)
        return MockResponse.of_json({"content": [{"type": "text", "text": "ok"}], "usage": {}})

    _, provider = _mock(handler)
    client = A.Client("claude-x", provider, ModelSettings(temperature=0.1), max_tokens=33)
    response = client.request(ModelRequest(messages=(_user("x"),),
                                           settings=ModelSettings(extra_headers=(("x-trace", "1"),))))
    assert response.text == "ok" and client.model() is client
    headers = {k.lower(): v for k, v in seen[0].headers}
    assert headers["x-api-key"] == "sk-test"
    assert headers["anthropic-version"] == "2023-06-01"
    assert headers["x-trace"] == "1"
    assert seen[0].url == "https://api.anthropic.com/v1/messages"
    assert json.loads(seen[0].body) == {
        "model": "claude-x", "max_tokens": 33, "messages": [
            {"role": "user", "content": [{"type": "text", "text": "x"}]}], "temperature": 0.1,
    }


def test_decode_blocks_usage_and_finish_reason() -> None:
    response = A.decode_response({
        "id": "msg_1", "model": "claude-x", "stop_reason": "tool_use",
        "content": [
            {"type": "thinking", "thinking": "t", "signature": "s"},
            {"type": "redacted_thinking", "data": "r"},
            {"type": "text", "text": "hi"},
            {"type": "tool_use", "id": "c1", "name": "f", "input": {"a": 1}},
            {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}},
            {"type": "web_search_tool_result", "tool_use_id": "s1", "content": [{"url": "u"}]},
            {"type": "mystery"},
        ],
        "usage": {"input_tokens": 10, "cache_creation_input_tokens": 5, "cache_read_input_tokens": 7,
                  "output_tokens": 20, "output_tokens_details": {"thinking_tokens": 8},
                  "server_tool_use": {"web_search_requests": 1}},
    })
    kinds = [p.part_kind for p in response.parts]
    assert kinds == ["thinking", "thinking", "text", "tool-call", "native-tool-call", "native-tool-return"]
    assert response.parts[0].signature == "s"
    assert response.parts[3].args == '{"a":1}'
    assert response.finish_reason is FinishReason.tool_call and response.raw_finish_reason == "tool_use"
    usage = response.usage
    assert (usage.input_tokens, usage.cache_write_tokens, usage.cache_read_tokens) == (22, 5, 7)
    assert (usage.output_tokens, usage.reasoning_tokens) == (20, 8)
    assert dict(usage.details) == {"server_tool_use.web_search_requests": 1}
    # decoded parts replay unchanged
    replay = A.encode_messages((response,))[1][0]["content"]
    assert replay[:2] == [{"type": "thinking", "thinking": "t", "signature": "s"},
                          {"type": "redacted_thinking", "data": "r"}]
    assert replay[4] == {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}}
    assert replay[5] == {"type": "web_search_tool_result", "tool_use_id": "s1", "content": [{"url": "u"}]}


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({}, "$.content"),
        ([], "$"),
        ({"content": [{"type": "text"}]}, "$.content[0].text"),
        ({"content": [{"type": "tool_use", "id": "a", "name": "f", "input": []}]}, "$.content[0].input"),
        ({"content": [], "usage": {"input_tokens": -1}}, "$.usage.input_tokens"),
    ],
)
def test_malformed_responses_raise_named_decode_errors(body: object, path: str) -> None:
    with pytest.raises(A.AnthropicDecodeError) as info:
        A.decode_response(body)
    assert info.value.path == path
    assert isinstance(info.value, ProviderResponseDecodeError)


def test_non_json_2xx_body_is_a_decode_error() -> None:
    _, provider = _mock(lambda r: MockResponse(200, (), b"not json"))
    with pytest.raises(A.AnthropicDecodeError):
        A.Client("claude-x", provider).request(ModelRequest(messages=(_user("x"),)))


def test_error_statuses_map_to_normalized_errors() -> None:
    for status, cls in ((429, RateLimited), (529, ProviderServerError)):
        _, provider = _mock(lambda r, s=status: MockResponse.of_json(
            {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}, status=s))
        with pytest.raises(cls) as info:
            A.Client("claude-x", provider).request(ModelRequest(messages=(_user("x"),)))
        assert info.value.message == "busy"


STREAM = (
    'event: message_start\ndata: {"type":"message_start","message":{"id":"m1","model":"claude-x",'
    '"usage":{"input_tokens":4,"cache_read_input_tokens":2,"output_tokens":1}}}\n\n'
    'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
    '"content_block":{"type":"thinking","thinking":"","signature":""}}\n\n'
    'data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"ponder é"}}\n\n'
    'data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG"}}\n\n'
    'data: {"type":"content_block_stop","index":0}\n\n'
    ': keep-alive comment\n\n'
    'event: ping\ndata: {"type":"ping"}\n\n'
    'data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}\n\n'
    'data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}\n\n'
    'data: {"type":"content_block_stop","index":1}\n\n'
    'data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"c1","name":"f","input":{}}}\n\n'
    'data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\\"a\\":"}}\n\n'
    'data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"1}"}}\n\n'
    'data: {"type":"content_block_stop","index":2}\n\n'
    'data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}\n\n'
    'data: {"type":"message_stop"}\n\n'
)


def _decode_chunks(chunks: list[bytes]) -> tuple[list, A.StreamDecoder]:
    decoder = A.StreamDecoder("claude-x")
    return feed_chunks(decoder, chunks), decoder


def test_stream_split_at_every_byte_boundary_yields_the_same_events() -> None:
    data = STREAM.encode()
    whole, decoder = _decode_chunks([data])
    assert [type(e).__name__ for e in whole][:4] == ["PartStartEvent", "PartDeltaEvent", "PartDeltaEvent", "PartEndEvent"]
    ends = [e.part for e in whole if isinstance(e, PartEndEvent)]
    assert ends[0] == ThinkingPart("ponder é", signature="SIG", provider=ProviderPart("anthropic"))
    assert ends[1] == TextPart("Hi")
    assert ends[2] == ToolCallPart("f", '{"a":1}', "c1")
    assert decoder.usage.input_tokens == 6 and decoder.usage.output_tokens == 9
    assert decoder.finish_reason is FinishReason.tool_call and decoder.response_id == "m1"
    for cut in range(1, len(data)):
        events, _ = _decode_chunks([data[:cut], data[cut:]])
        assert events == whole, cut


def test_stream_error_event_and_truncation() -> None:
    sse = SseDecoder()
    decoder = A.StreamDecoder()
    (event,) = sse.feed(b'data: {"type":"error","error":{"type":"overloaded_error","message":"x"}}\n\n')
    with pytest.raises(ProviderServerError):
        decoder.feed(event)
    (start,) = sse.feed(b'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n')
    decoder.feed(start)
    with pytest.raises(A.AnthropicDecodeError):
        decoder.finish()
    with pytest.raises(A.AnthropicDecodeError):
        decoder.feed(sse.feed(b"data: {nope\n\n")[0])


def test_streaming_through_the_client_builds_the_response() -> None:
    _, provider = _mock(lambda r: MockResponse.of_text(STREAM))
    with A.Client("claude-x", provider).stream(ModelRequest(messages=(_user("x"),))) as stream:
        events = list(stream)
    response = stream.response()
    assert len(events) == 11
    assert response.text == "Hi" and response.provider_response_id == "m1"
    assert response.finish_reason is FinishReason.tool_call


def test_a_matched_stop_sequence_is_kept_alike_buffered_and_streamed() -> None:
    stream = (
        'data: {"type":"message_start","message":{"id":"m2","model":"claude-x","usage":{}}}\n\n'
        'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
        'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"1, 2"}}\n\n'
        'data: {"type":"content_block_stop","index":0}\n\n'
        'data: {"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":", 3"}}\n\n'
        'data: {"type":"message_stop"}\n\n'
    )
    _, provider = _mock(lambda r: MockResponse.of_text(stream))
    with A.Client("claude-x", provider).stream(ModelRequest(messages=(_user("x"),))) as streamed:
        list(streamed)
    buffered = A.decode_response({
        "id": "m2", "model": "claude-x", "content": [{"type": "text", "text": "1, 2"}],
        "stop_reason": "stop_sequence", "stop_sequence": ", 3", "usage": {},
    })
    assert buffered.provider_details == ProviderDetails({"stop_sequence": ", 3"})
    assert streamed.response().provider_details == buffered.provider_details
    assert streamed.response().raw_finish_reason == buffered.raw_finish_reason == "stop_sequence"


CITATION_1 = {"type": "web_search_result_location", "url": "https://example.com/a",
              "title": "A", "encrypted_index": "e1", "cited_text": "sunny"}
CITATION_2 = {"type": "web_search_result_location", "url": "https://example.com/b",
              "title": "B", "encrypted_index": "e2", "cited_text": "warm"}
MYSTERY = {"type": "container_upload", "file_id": "file_1"}


def test_citations_and_unknown_blocks_are_kept_alike_buffered_and_streamed() -> None:
    buffered = A.decode_response({
        "id": "m3", "model": "claude-x", "stop_reason": "end_turn", "usage": {},
        "content": [{"type": "text", "text": "Sunny and warm.", "citations": [CITATION_1, CITATION_2]},
                    MYSTERY],
    })
    cited = TextPart("Sunny and warm.",
                     provider=ProviderPart("anthropic", details=ProviderDetails(
                         {"citations": [CITATION_1, CITATION_2]})))
    assert buffered.parts == (cited,)
    assert buffered.provider_details == ProviderDetails({"content": [MYSTERY]})
    events = [
        {"type": "message_start", "message": {"id": "m3", "model": "claude-x", "usage": {}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "citations_delta", "citation": CITATION_1}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Sunny and "}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "citations_delta", "citation": CITATION_2}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "warm."}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": MYSTERY},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
        {"type": "message_stop"},
    ]
    stream = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
    _, provider = _mock(lambda r: MockResponse.of_text(stream))
    with A.Client("claude-x", provider).stream(ModelRequest(messages=(_user("x"),))) as streamed:
        list(streamed)
    assert streamed.response().parts == buffered.parts
    assert streamed.response().provider_details == buffered.provider_details
    replayed = _encode(ModelRequest(messages=(_user("x"), buffered, _user("y"))))
    assert replayed["messages"][1]["content"] == [{"type": "text", "text": "Sunny and warm."}]


# ------------------------------------------------------------------------------ corpus replay


def _cassette(root: Path, name: str) -> ReplayTransport:
    return ReplayTransport.load(root / "zigai-cassettes" / name)


SIMPLE = ["claude_fable_5", "claude_haiku_4_5", "claude_opus_4_5", "claude_opus_4_6", "claude_opus_5",
          "claude_sonnet_4_5", "claude_sonnet_4_6", "claude_sonnet_5"]


def _recorded(transport: ReplayTransport) -> dict:
    return transport.interactions[0].request_body.content  # type: ignore[union-attr]


def _bodies(path: Path) -> list[dict]:
    import yaml

    return [i["request"]["body"]["content"] for i in yaml.safe_load(path.read_text())["interactions"]]


def _client_factory(model: str, max_tokens: int, **provider: Any) -> Any:
    def client(transport: Any) -> A.Client:
        return A.Client(model, A.Provider("k", transport, **provider), max_tokens=max_tokens)

    return client


def _says_pong(responses: tuple[ResponseMessage, ...]) -> None:
    assert responses[-1].text.strip().lower().startswith("pong")


def _pong(folder: str, name: str) -> list[Replay]:
    path = corpus_file(f"{folder}/anthropic_{name}.yaml")
    if path is None:
        return []
    body = _bodies(path)[0]
    return [Replay(id=f"corpus-{folder}-{name}", path=path,
                   client=_client_factory(body["model"], body["max_tokens"]),
                   messages=(_user(body["messages"][0]["content"][0]["text"]),),
                   streamed=folder != "buffered", extra_check=_says_pong)]


def _names_madrid(responses: tuple[ResponseMessage, ...]) -> None:
    assert "Madrid" in responses[-1].text


def _model_tool_loop(name: str) -> list[Replay]:
    path = corpus_file(f"models/anthropic_{name}.yaml")
    if path is None:
        return []
    first, second = _bodies(path)
    tool = first["tools"][0]
    return [Replay(id=f"corpus-models-{name}", path=path,
                   client=_client_factory(first["model"], first["max_tokens"]),
                   messages=(_user(first["messages"][0]["content"][0]["text"]),),
                   instructions=(first["system"][0]["text"],),
                   tools=(ToolDefinition(tool["name"], tool["description"], tool["input_schema"]),),
                   tool_result=json.loads(second["messages"][-1]["content"][0]["content"]),
                   extra_check=_names_madrid)]


def _synthetic_loop(responses: tuple[ResponseMessage, ...]) -> None:
    assert responses[0].parts == (ToolCallPart("weather", '{"city":"Madrid"}', "call-weather"),)
    final = responses[-1]
    assert final.text == "It is sunny in Madrid."
    assert (final.usage.input_tokens, final.usage.output_tokens) == (18, 6)


def _synthetic(streamed: bool) -> list[Replay]:
    path = corpus_file("anthropic_stream_tool_loop.yaml" if streamed else "anthropic_tool_loop.yaml")
    if path is None:
        return []
    return [Replay(id=f"corpus-{path.stem}", path=path, streamed=streamed,
                   client=_client_factory("claude-test", 256, base_url="https://anthropic.test/v1",
                                          url_policy=TEST_POLICY),
                   messages=(_user("What is the weather?"),), instructions=("You are concise.",),
                   tools=(WEATHER,), tool_result={"temperature_c": 31}, extra_check=_synthetic_loop,
                   reports_finish=False)]


def _value_42(responses: tuple[ResponseMessage, ...]) -> None:
    assert json.loads(responses[-1].text) == {"value": 42}


def _structured() -> list[Replay]:
    path = corpus_file("structured/anthropic_claude_sonnet_5.yaml")
    if path is None:
        return []
    body = _bodies(path)[0]
    fmt = OutputFormat("json_schema", name="out", schema=body["output_config"]["format"]["schema"])
    return [Replay(id="corpus-structured-claude_sonnet_5", path=path,
                   client=_client_factory("claude-sonnet-5", 256),
                   messages=(_user(body["messages"][0]["content"][0]["text"]),),
                   output_format=fmt, extra_check=_value_42)]


_TEXT_REPLAYS = local_cases("anthropic", ["buffered_text", "streamed_text"]) + [
    case for folder in ("buffered", "streamed/text") for name in SIMPLE for case in _pong(folder, name)]
_TOOL_REPLAYS = local_cases("anthropic", ["tool_loop", "stream_tool_loop"]) + [
    case for name in SIMPLE for case in _model_tool_loop(name)] + _synthetic(False) + _synthetic(True)
_STRUCTURED_REPLAYS = local_cases("anthropic", ["structured_output"]) + _structured()


@pytest.mark.parametrize("case", replay_params(_TEXT_REPLAYS))
def test_recorded_text_answers_replay_strictly(case: Replay) -> None:
    assert_text_answer(case.run())


@pytest.mark.parametrize("case", replay_params(_TOOL_REPLAYS))
def test_recorded_tool_loops_replay_strictly(case: Replay) -> None:
    assert_tool_loop(case.run(), "weather", case.reports_finish)


@pytest.mark.parametrize("case", replay_params(local_cases("anthropic", ["context_overflow"])))
def test_a_recorded_refusal_maps_to_a_bad_request(case: Replay) -> None:
    assert_refused(case)


@pytest.mark.parametrize("case", replay_params(_STRUCTURED_REPLAYS))
def test_recorded_structured_output_replays_strictly(case: Replay) -> None:
    assert_structured_answer(case.run())


def _signed_done(responses: tuple[ResponseMessage, ...]) -> None:
    (response,) = responses
    thinking = response.parts[0]
    assert isinstance(thinking, ThinkingPart) and thinking.signature and thinking.signature.startswith("Epw")
    assert response.text == "done" and response.usage.reasoning_tokens == 100


def _corpus_thinking() -> list[Replay]:
    path = corpus_file("thinking/anthropic_claude_sonnet_5.yaml")
    if path is None:
        return []
    body = _bodies(path)[0]
    return [Replay(id="corpus-thinking-claude_sonnet_5", path=path, streamed=True,
                   client=_client_factory("claude-sonnet-5", 2048),
                   messages=(_user(body["messages"][0]["content"][0]["text"]),),
                   settings=ModelSettings(thinking="high"), extra_check=_signed_done)]


@pytest.mark.parametrize("case", replay_params(local_cases("anthropic", ["thinking_stream"]) + _corpus_thinking()))
def test_recorded_thinking_streams_replay_strictly(case: Replay) -> None:
    events: list[Any] = []
    assert_thinking_answer(case.run(events=events), events)


def test_a_follow_up_drops_unsigned_thinking() -> None:
    """llama-server signs its thinking with an empty signature; the API rejects unsigned
    thinking, so the follow-up sends the earlier answer's text only, no thinking block."""
    (case,) = local_cases("anthropic", ["thinking_stream"])
    answer, _ = case.run()
    assert answer.parts[0].signature is None  # type: ignore[union-attr]
    sent = _bodies(case.path)[1]
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert sent["messages"][3] == {"role": "assistant", "content": [{"type": "text", "text": answer.text}]}


def _corpus_error_sequence(path: Path) -> None:
    transport = ReplayTransport.load(path)
    client = A.Client("claude-sonnet-5", A.Provider("k", transport), max_tokens=64)
    request = ModelRequest(messages=(_user("Reply with exactly: pong"),))
    with pytest.raises(RateLimited) as rate:
        client.request(request)
    assert rate.value.retry_after_s == 3 and rate.value.request_id == "req_rate_anthropic"
    assert client.request(request).text == "pong"
    for _ in range(2):
        with pytest.raises(ProviderServerError):
            client.request(request)
    with pytest.raises(A.AnthropicDecodeError) as decode:
        client.request(request)
    assert decode.value.path == "$.content" and decode.value.status == 200
    with pytest.raises(Exception) as bad:
        client.request(request)
    assert getattr(bad.value, "code", None) == "bad_request_code"
    transport.assert_all_consumed()


@pytest.mark.parametrize("check", [
    litellm_check("anthropic"),
    *error_sequence_checks("anthropic", "errors/anthropic.yaml", _corpus_error_sequence)])
def test_recorded_error_sequence_maps_each_status(check: Callable[[], None]) -> None:
    check()
