"""zigai.providers.cohere native v2 Chat: exact wire JSON, decoding, streaming splits, errors."""

from __future__ import annotations

import json

import pytest
from support.mock_transport import MockResponse, MockTransport
from support.sse_replay import feed_chunks

from zigai.messages import (
    AudioContent,
    BytesSource,
    CachePoint,
    DocumentContent,
    FinishReason,
    ImageContent,
    NativeToolCallPart,
    ProviderDetails,
    ProviderFileSource,
    ProviderPart,
    RequestMessage,
    ResponseMessage,
    RetryPromptPart,
    SystemPromptPart,
    TaggedText,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolOutcome,
    ToolReturnPart,
    UrlSource,
    UserPromptPart,
)
from zigai.model import (
    ManagedTool,
    ModelRequest,
    OutputFormat,
    PartEndEvent,
    ToolDefinition,
    UnsupportedModelFeature,
)
from zigai.provider import ProviderServerError, RateLimited
from zigai.providers import cohere as C
from zigai.providers.sse import SseEvent
from zigai.settings import (
    ExtraBodyRejected,
    ModelSettings,
    ProviderExtraBody,
    UnsupportedModelSetting,
)

WEATHER = ToolDefinition("weather", "Get weather.", {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
})
PROFILE = C.chat_profile("command-a-03-2025")
REASONING = C.chat_profile("command-a-reasoning-08-2025")


def _encode(request: ModelRequest, *, stream: bool = False) -> dict:
    return C.encode_request(request, model_name="command-a-03-2025", stream=stream)


def _mock(body: object, status: int = 200) -> tuple[MockTransport, C.ChatClient]:
    transport = MockTransport(lambda request: MockResponse.of_json(body, status))
    client = C.ChatClient("command-a-03-2025", C.ChatProvider("co-test", transport))
    return transport, client


def test_history_encodes_chronologically_with_tool_plans_and_document_results() -> None:
    png = BytesSource(b"\x89PNG", "image/png")
    messages = (
        RequestMessage(parts=(
            SystemPromptPart("Be brief."),
            UserPromptPart((TextContent("look"), TaggedText("doc", "a"), ImageContent(png, detail="low"),
                            ImageContent(UrlSource("https://x.test/i.png")), CachePoint(),
                            DocumentContent(BytesSource(b"notes", "text/plain"), title="n1"))),
        )),
        ResponseMessage(parts=(
            ThinkingPart("hmm", provider=ProviderPart("cohere")),
            ThinkingPart("foreign", provider=ProviderPart("anthropic")),
            ThinkingPart("Plan: call weather.", provider=ProviderPart(
                "cohere", details=ProviderDetails({"tool_plan": True}))),
            TextPart("checking"),
            TextPart(""),
            ToolCallPart("weather", '{"city":"Madrid"}', "c1"),
            ToolCallPart("weather", '{"city":"Oslo"}', "c2"),
            NativeToolCallPart("web_search", "n1", ProviderPart("openai")),
        )),
        RequestMessage(parts=(
            ToolReturnPart("weather", "c1", {"temperature_c": 31}),
            ToolReturnPart("weather", "c2", "rain", outcome=ToolOutcome.error),
            RetryPromptPart("bad args", tool_name="weather", tool_call_id="c3"),
            RetryPromptPart("answer in French"),
        )),
        ResponseMessage(parts=(ThinkingPart("foreign only", provider=ProviderPart("x")),)),
    )
    body = _encode(ModelRequest(messages=messages, instructions=("Use metric.",), tools=(WEATHER,)))
    assert body == {
        "model": "command-a-03-2025",
        "stream": False,
        "messages": [
            {"role": "system", "content": "Use metric."},
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [
                {"type": "text", "text": "look"},
                {"type": "text", "text": "<doc>a</doc>"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw==", "detail": "low"}},
                {"type": "image_url", "image_url": {"url": "https://x.test/i.png"}},
                {"type": "document", "document": {"data": "notes", "id": "n1"}},
            ]},
            {"role": "assistant",
             "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "checking"}],
             "tool_plan": "Plan: call weather.",
             "tool_calls": [
                 {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city":"Madrid"}'}},
                 {"id": "c2", "type": "function", "function": {"name": "weather", "arguments": '{"city":"Oslo"}'}},
             ]},
            {"role": "tool", "tool_call_id": "c1",
             "content": [{"type": "document", "document": {"data": '{"temperature_c":31}'}}]},
            {"role": "tool", "tool_call_id": "c2",
             "content": [{"type": "document", "document": {"data": "rain"}}]},
            {"role": "tool", "tool_call_id": "c3", "content": [{"type": "text", "text": "bad args"}]},
            {"role": "user", "content": "answer in French"},
        ],
        "tools": [{"type": "function", "function": {
            "name": "weather", "description": "Get weather.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        }}],
    }


@pytest.mark.parametrize(
    ("settings", "wire"),
    [
        (ModelSettings(max_tokens=9), {"max_tokens": 9}),
        (ModelSettings(temperature=0.5), {"temperature": 0.5}),
        (ModelSettings(top_p=0.9), {"p": 0.9}),
        (ModelSettings(top_k=40), {"k": 40}),
        (ModelSettings(seed=7), {"seed": 7}),
        (ModelSettings(stop_sequences=("END",)), {"stop_sequences": ["END"]}),
        (ModelSettings(presence_penalty=0.1), {"presence_penalty": 0.1}),
        (ModelSettings(frequency_penalty=0.2), {"frequency_penalty": 0.2}),
        (ModelSettings(logprobs=True), {"logprobs": True}),
        (ModelSettings(tool_choice="required"), {"tool_choice": "REQUIRED"}),
        (ModelSettings(tool_choice="none"), {"tool_choice": "NONE"}),
        (ModelSettings(tool_choice="auto"), {}),
        (ModelSettings(thinking="off"), {"thinking": {"type": "disabled"}}),
        (ModelSettings(thinking="high"), {"thinking": {"type": "enabled"}}),
        (ModelSettings(thinking_budget_tokens=512), {"thinking": {"type": "enabled", "token_budget": 512}}),
        (ModelSettings(thinking_budget_tokens=0), {"thinking": {"type": "disabled"}}),
        (ModelSettings(thinking="off", thinking_budget_tokens=512), {"thinking": {"type": "disabled"}}),
    ],
)
def test_every_setting_has_its_wire_name(settings: ModelSettings, wire: dict) -> None:
    body = _encode(ModelRequest(messages=(RequestMessage.user("hi"),), tools=(WEATHER,), settings=settings))
    extra = {k: v for k, v in body.items() if k not in ("model", "stream", "messages", "tools")}
    assert extra == wire


def test_structured_output_formats() -> None:
    schema = {"type": "object", "properties": {"value": {"type": "integer"}}}
    body = _encode(ModelRequest(messages=(RequestMessage.user("x"),),
                                output_format=OutputFormat("json_schema", name="out", schema=schema)))
    assert body["response_format"] == {"type": "json_object", "json_schema": schema}
    body = _encode(ModelRequest(messages=(RequestMessage.user("x"),), output_format=OutputFormat("json_object")))
    assert body["response_format"] == {"type": "json_object"}


def test_cohere_extension_fields_are_sent_and_checked_before_io() -> None:
    extension = {"strict_tools": True, "documents": ["a", {"title": "t", "text": "b"}],
                 "citation_options": {"mode": "ACCURATE"}, "safety_mode": "STRICT", "priority": 999}
    body = _encode(ModelRequest(messages=(RequestMessage.user("x"),),
                                settings=ModelSettings(extra_body=ProviderExtraBody("cohere", extension))))
    for key, value in extension.items():
        assert body[key] == value
    bad = [
        {"strict_tools": "yes"}, {"documents": "a"}, {"documents": [1]},
        {"citation_options": {"mode": "LOUD"}}, {"citation_options": []}, {"safety_mode": "NONE"},
        {"priority": 1000}, {"priority": -1}, {"priority": True},
    ]
    for fields in bad:
        transport, client = _mock({})
        settings = ModelSettings(extra_body=ProviderExtraBody("cohere", fields))
        with pytest.raises(C.CohereEncodeError) as caught:
            client.request(ModelRequest(messages=(RequestMessage.user("x"),), settings=settings))
        assert caught.value.path.startswith("extra_body."), fields
        assert transport.requests == []


def test_extension_tag_isolation_and_reserved_keys() -> None:
    transport, client = _mock({})
    for extra in (ProviderExtraBody("openai", {"strict_tools": True}),
                  ProviderExtraBody("mistral", {"x": 1}),
                  ProviderExtraBody("cohere", {"messages": []}),
                  ProviderExtraBody("cohere", {"p": 0.1})):
        with pytest.raises(ExtraBodyRejected):
            client.request(ModelRequest(messages=(RequestMessage.user("x"),),
                                        settings=ModelSettings(extra_body=extra)))
    assert transport.requests == []


def test_unsupported_requests_fail_before_io() -> None:
    transport, client = _mock({})
    unknown = C.ChatClient("mystery-model", C.ChatProvider("co-test", transport))
    cases = [
        (client, ModelRequest(messages=(RequestMessage.user("x"),), managed_tools=(ManagedTool("web_search"),)),
         UnsupportedModelFeature),
        (client, ModelRequest(messages=(RequestMessage.user("x"),), settings=ModelSettings(parallel_tool_calls=False)),
         UnsupportedModelSetting),
        (client, ModelRequest(messages=(RequestMessage.user("x"),), settings=ModelSettings(thinking="high")),
         UnsupportedModelSetting),
        (client, ModelRequest(messages=(RequestMessage.user((AudioContent(BytesSource(b"a", "audio/wav")),)),)),
         UnsupportedModelFeature),
        (unknown, ModelRequest(messages=(RequestMessage.user("x"),), tools=(WEATHER,)), UnsupportedModelFeature),
    ]
    for model, request, error in cases:
        with pytest.raises(error):
            model.request(request)
    assert transport.requests == []
    with pytest.raises(C.CohereEncodeError):
        _encode(ModelRequest(messages=(RequestMessage.user("x"),), managed_tools=(ManagedTool("web_search"),)))
    with pytest.raises(C.CohereEncodeError):
        _encode(ModelRequest(messages=(RequestMessage.user((ImageContent(BytesSource(b"x", "image/png")), DocumentContent(BytesSource(b"%PDF", "application/pdf")))),)))
    with pytest.raises(C.CohereEncodeError, match="provider file ids"):
        _encode(ModelRequest(messages=(RequestMessage.user((ImageContent(ProviderFileSource("file-1", "image/png")),)),)))


def test_profiles_by_family() -> None:
    assert PROFILE is not None and PROFILE.supports_tools and PROFILE.json_schema_output
    assert "parallel_tool_calls" not in PROFILE.settings and "top_k" in PROFILE.settings
    assert REASONING is not None and REASONING.supports_thinking and REASONING.reasoning_efforts == {"high"}
    vision = C.chat_profile("command-a-vision-07-2025")
    assert vision is not None and "image" in vision.content_kinds and not vision.supports_tools
    translate = C.chat_profile("c4ai-aya-expanse-32b")
    assert translate is not None and not translate.supports_tools
    assert C.chat_profile("gpt-5") is None
    client = C.ChatClient("weird", C.ChatProvider("k"), profile_override=lambda name, p: PROFILE)
    assert client.profile is PROFILE
    looked = C.ChatClient("weird", C.ChatProvider("k", profile_lookup=lambda name: REASONING))
    assert looked.profile is REASONING


RESPONSE = {
    "id": "r1",
    "finish_reason": "TOOL_CALL",
    "message": {
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": "think"}, {"type": "text", "text": "Sure."},
                    {"type": "future", "x": 1}],
        "tool_plan": "I will call weather twice.",
        "tool_calls": [
            {"id": "t1", "type": "function", "function": {"name": "weather", "arguments": '{"city":"Madrid"}'}},
            {"id": "t2", "type": "function", "function": {"name": "weather", "arguments": ""}},
        ],
        "citations": [{"start": 0, "end": 4, "text": "Sure", "sources": [{"type": "tool", "id": "t1:0"}]}],
    },
    "usage": {"billed_units": {"input_tokens": 5, "output_tokens": 2.0, "search_units": 1},
              "tokens": {"input_tokens": 500, "output_tokens": 4}, "cached_tokens": 448},
    "logprobs": [{"token_ids": [1], "text": "Sure", "logprobs": [-0.1]}],
}


def test_buffered_response_decodes_every_field() -> None:
    message = C.decode_response(RESPONSE, model_name="command-a-03-2025")
    assert message.parts == (
        ThinkingPart("think", provider=ProviderPart("cohere")),
        TextPart("Sure.", provider=ProviderPart("cohere")),
        ThinkingPart("I will call weather twice.", provider=ProviderPart(
            "cohere", details=ProviderDetails({"tool_plan": True}))),
        ToolCallPart("weather", '{"city":"Madrid"}', "t1", provider=ProviderPart("cohere", id="t1")),
        ToolCallPart("weather", "{}", "t2", provider=ProviderPart("cohere", id="t2")),
    )
    assert message.finish_reason is FinishReason.tool_call and message.raw_finish_reason == "TOOL_CALL"
    assert message.provider_response_id == "r1"
    usage = message.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (500, 4, 448)
    assert dict(usage.details) == {"billed_units.input_tokens": 5, "billed_units.output_tokens": 2,
                                   "billed_units.search_units": 1}
    details = message.provider_details
    assert details is not None
    assert details["citations"][0]["sources"][0]["id"] == "t1:0"
    assert details["logprobs"][0]["text"] == "Sure"
    assert details["content"] == ({"type": "future", "x": 1},)
    # the decoded answer replays as the same assistant message
    replay = _encode(ModelRequest(messages=(RequestMessage.user("x"), message)))["messages"][1]
    assert replay["tool_plan"] == "I will call weather twice." and len(replay["tool_calls"]) == 2


@pytest.mark.parametrize(("raw", "reason"), [
    ("COMPLETE", FinishReason.stop), ("STOP_SEQUENCE", FinishReason.stop),
    ("MAX_TOKENS", FinishReason.length), ("TOOL_CALL", FinishReason.tool_call),
    ("ERROR", FinishReason.error), ("TIMEOUT", FinishReason.error), ("NEW", FinishReason.other),
])
def test_finish_reasons(raw: str, reason: FinishReason) -> None:
    assert C.finish_reason(raw) is reason
    assert C.finish_reason(None) is None


def test_plain_string_content_and_billed_units_only_usage() -> None:
    message = C.decode_response({"message": {"content": "hi"}, "usage": {"billed_units": {"input_tokens": 3.0,
                                                                                          "output_tokens": 1}}})
    assert message.text == "hi" and message.usage.input_tokens == 3 and message.finish_reason is None
    assert type(message.usage.input_tokens) is int


@pytest.mark.parametrize(("body", "path"), [
    ({}, "$.message"),
    ([], "$"),
    ({"message": {"content": [{"type": "text"}]}}, "$.message.content[0].text"),
    ({"message": {"content": [1]}}, "$.message.content[0]"),
    ({"message": {"tool_calls": [{"id": "t", "function": {}}]}}, "$.message.tool_calls[0].function.name"),
    ({"message": {"tool_calls": [{"id": "", "function": {"name": "f"}}]}}, "$.message.tool_calls[0]"),
    ({"message": {}, "usage": {"tokens": {"input_tokens": -1}}}, "$.usage.tokens.input_tokens"),
    ({"message": {}, "usage": {"tokens": {"input_tokens": 1}, "cached_tokens": 5}}, "$.usage"),
    ({"message": {}, "finish_reason": 3}, "$.finish_reason"),
])
def test_malformed_answers_raise_named_errors_with_paths(body: object, path: str) -> None:
    with pytest.raises(C.CohereDecodeError) as caught:
        C.decode_response(body)
    assert caught.value.path == path


def test_client_request_sends_bearer_json_and_annotates_decode_errors() -> None:
    transport, client = _mock({"message": {"content": [{"type": "text", "text": "pong"}]}, "finish_reason": "COMPLETE"})
    response = client.request(ModelRequest(messages=(RequestMessage.user("ping"),), idempotency_key="k1"))
    assert response.text == "pong" and response.provider_name == "cohere"
    (sent,) = transport.requests
    assert sent.url == "https://api.cohere.com/v2/chat" and sent.method == "POST"
    headers = dict(sent.headers)
    assert headers["Authorization"] == "Bearer co-test"
    assert json.loads(sent.body) == {"model": "command-a-03-2025", "stream": False,
                                     "messages": [{"role": "user", "content": "ping"}]}
    bad = MockTransport(lambda request: MockResponse(200, (("request-id", "rq-9"),), b"{not json"))
    client = C.ChatClient("command-a-03-2025", C.ChatProvider("co-test", bad))
    with pytest.raises(C.CohereDecodeError) as caught:
        client.request(ModelRequest(messages=(RequestMessage.user("x"),)))
    assert caught.value.status == 200
    transport, client = _mock({})
    with pytest.raises(C.CohereDecodeError) as caught:
        client.request(ModelRequest(messages=(RequestMessage.user("x"),)))
    assert caught.value.path == "$.message" and caught.value.status == 200
    limited, client = _mock({"message": "slow down"}, status=429)
    with pytest.raises(RateLimited):
        client.request(ModelRequest(messages=(RequestMessage.user("x"),)))


STREAM = "".join(f"event: {kind}\ndata: {json.dumps(data)}\n\n" for kind, data in [
    ("message-start", {"id": "s1", "type": "message-start", "delta": {"message": {"role": "assistant"}}}),
    ("content-start", {"type": "content-start", "index": 0,
                       "delta": {"message": {"content": {"type": "thinking", "thinking": "hm"}}}}),
    ("content-delta", {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"thinking": "m é"}}}}),
    ("content-end", {"type": "content-end", "index": 0}),
    ("tool-plan-delta", {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "I will "}}}),
    ("tool-plan-delta", {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "call."}}}),
    ("tool-call-start", {"type": "tool-call-start", "index": 0, "delta": {"message": {"tool_calls": {
        "id": "t1", "type": "function", "function": {"name": "weather", "arguments": ""}}}}}),
    ("tool-call-delta", {"type": "tool-call-delta", "index": 0,
                         "delta": {"message": {"tool_calls": {"function": {"arguments": '{"city":'}}}}}),
    ("tool-call-delta", {"type": "tool-call-delta", "index": 0,
                         "delta": {"message": {"tool_calls": {"function": {"arguments": '"Madrid"}'}}}}}),
    ("tool-call-end", {"type": "tool-call-end", "index": 0}),
    ("tool-call-start", {"type": "tool-call-start", "index": 1, "delta": {"message": {"tool_calls": {
        "id": "t2", "type": "function", "function": {"name": "weather", "arguments": "{}"}}}}}),
    ("tool-call-end", {"type": "tool-call-end", "index": 1}),
    ("tool-call-start", {"type": "tool-call-start", "index": 2, "delta": {"message": {"tool_calls": {
        "id": "t3", "type": "function", "function": {"name": "noargs"}}}}}),
    ("tool-call-end", {"type": "tool-call-end", "index": 2}),
    ("content-start", {"type": "content-start", "index": 1,
                       "delta": {"message": {"content": {"type": "text", "text": ""}}}}),
    ("content-delta", {"type": "content-delta", "index": 1, "delta": {"message": {"content": {"text": "Done"}}},
                       "logprobs": {"text": "Done", "logprobs": [-0.2]}}),
    ("citation-start", {"type": "citation-start", "index": 0, "delta": {"message": {"citations": {
        "start": 0, "end": 4, "text": "Done", "sources": []}}}}),
    ("citation-end", {"type": "citation-end", "index": 0}),
    ("content-end", {"type": "content-end", "index": 1}),
    ("debug", {"type": "debug", "prompt": "..."}),
    ("message-end", {"type": "message-end", "delta": {"finish_reason": "TOOL_CALL", "usage": {
        "tokens": {"input_tokens": 10, "output_tokens": 5}}}}),
]) + "data: [DONE]\n\n"


def test_stream_split_at_every_byte_boundary_yields_the_same_events() -> None:
    data = STREAM.encode()
    decoder = C.StreamDecoder("command-a")
    whole = feed_chunks(decoder, [data])
    ends = [e.part for e in whole if isinstance(e, PartEndEvent)]
    assert ends == [
        ThinkingPart("hmm é", provider=ProviderPart("cohere")),
        ThinkingPart("I will call.", provider=ProviderPart("cohere", details=ProviderDetails({"tool_plan": True}))),
        ToolCallPart("weather", '{"city":"Madrid"}', "t1", provider=ProviderPart("cohere", id="t1")),
        ToolCallPart("weather", "{}", "t2", provider=ProviderPart("cohere", id="t2")),
        ToolCallPart("noargs", "{}", "t3", provider=ProviderPart("cohere", id="t3")),
        TextPart("Done", provider=ProviderPart("cohere")),
    ]
    assert decoder.response_id == "s1" and decoder.finish_reason is FinishReason.tool_call
    assert decoder.usage.input_tokens == 10
    details = decoder.provider_details
    assert details is not None and details["citations"][0]["text"] == "Done"
    assert details["logprobs"][0]["text"] == "Done"
    for cut in range(1, len(data)):
        assert feed_chunks(C.StreamDecoder("command-a"), [data[:cut], data[cut:]]) == whole, cut


def test_stream_contract_violations() -> None:
    decoder = C.StreamDecoder()
    with pytest.raises(C.CohereDecodeError):
        decoder.finish()
    with pytest.raises(C.CohereDecodeError) as caught:
        decoder.feed(SseEvent("tool-call-delta", '{"type":"tool-call-delta","index":4}'))
    assert caught.value.path == "$event[1].index"
    with pytest.raises(C.CohereDecodeError):
        decoder.feed(SseEvent("message", "{oops"))
    with pytest.raises(C.CohereDecodeError):
        decoder.feed(SseEvent("message", '{"type":"tool-call-start","delta":{"message":{"tool_calls":{"id":"",'
                                         '"function":{"name":"f"}}}}}'))
    with pytest.raises(C.CohereDecodeError):
        decoder.feed(SseEvent("message", '{"type":"content-start","delta":{"message":{"content":{"text":5}}}}'))
    with pytest.raises(C.CohereDecodeError):
        decoder.feed(SseEvent("message", '{"type":"content-delta","delta":{"message":{"content":{"text":5}}}}'))
    # a delta without a start opens its part; an unknown end is ignored
    events = decoder.feed(SseEvent("message", '{"type":"content-delta","index":7,'
                                              '"delta":{"message":{"content":{"text":"x"}}}}'))
    assert [type(e).__name__ for e in events] == ["PartStartEvent", "PartDeltaEvent"]
    assert decoder.feed(SseEvent("message", '{"type":"content-end","index":9}')) == []
    assert decoder.feed(SseEvent("message", '{"type":"tool-call-end","index":9}')) == []
    assert decoder.feed(SseEvent("message", '{"type":"citation-start"}')) == []
    decoder.feed(SseEvent("message", '{"type":"message-end"}'))
    assert [type(e).__name__ for e in decoder.finish()] == ["PartEndEvent"]


def test_client_stream_over_the_transport() -> None:
    transport = MockTransport(lambda request: MockResponse.of_text(STREAM))
    client = C.ChatClient("command-a-03-2025", C.ChatProvider("co-test", transport))
    with client.stream(ModelRequest(messages=(RequestMessage.user("x"),))) as stream:
        events = list(stream)
    response = stream.response()
    assert events and response.finish_reason is FinishReason.tool_call
    assert [p.part_kind for p in response.parts] == ["thinking", "thinking", "tool-call", "tool-call",
                                                     "tool-call", "text"]
    assert json.loads(transport.requests[0].body)["stream"] is True
    failing = MockTransport(lambda request: MockResponse.of_json({"message": "down"}, 503))
    client = C.ChatClient("command-a-03-2025", C.ChatProvider("co-test", failing))
    with pytest.raises(ProviderServerError):
        client.stream(ModelRequest(messages=(RequestMessage.user("x"),)))
