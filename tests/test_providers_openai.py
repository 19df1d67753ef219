"""zigai.providers.openai: exact wire JSON, decoding, streaming, errors and corpus replays."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.cassettes import ReplayTransport
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
    AudioContent,
    BinaryContent,
    BytesSource,
    CachePoint,
    DocumentContent,
    FinishReason,
    ImageContent,
    NativeToolCallPart,
    NativeToolReturnPart,
    ProviderDetails,
    ProviderPart,
    RequestMessage,
    ResponseMessage,
    RetryPromptPart,
    TaggedText,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UploadedFile,
    UploadedFileContent,
    UrlSource,
    system_prompt,
    user_prompt,
)
from zigai.model import (
    ManagedTool,
    ModelProfile,
    ModelRequest,
    OutputFormat,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    ToolDefinition,
    UnsupportedModelFeature,
)
from zigai.provider import (
    ProviderAuthError,
    ProviderBadRequest,
    ProviderServerError,
    RateLimited,
)
from zigai.providers.openai import (
    UNKNOWN_PROFILE,
    Client,
    EncodeOptions,
    OpenAIDecodeError,
    OpenAIEncodeError,
    Provider,
    StreamDecoder,
    decode_response,
    encode_request,
    profile_for_model,
)
from zigai.retry import classify
from zigai.security import UrlPolicy
from zigai.settings import (
    ExtraBodyRejected,
    ModelSettings,
    ProviderExtraBody,
    UnsupportedModelSetting,
)

URL = "https://api.openai.com/v1/responses"
WEATHER = ToolDefinition(
    "weather", "Get weather.", {"type": "object", "properties": {"city": {"type": "string"}}}
)


def _request(*messages: Any, **fields: Any) -> ModelRequest:
    return ModelRequest(messages=messages or (RequestMessage.user("hi"),), **fields)


def _mock(*responses: MockResponse) -> MockTransport:
    queue = list(responses)
    return MockTransport(lambda request: queue.pop(0))


def _client(transport: Any, model: str = "gpt-4.1-mini", **options: Any) -> Client:
    return Client(model, Provider("sk-test", transport=transport), **options)


def _never_called(request: Any) -> MockResponse:
    raise AssertionError("the transport must not be called")


# ------------------------------------------------------------------------------ encoding


def test_system_user_and_instructions_encode_as_messages_and_joined_instructions() -> None:
    request = _request(
        RequestMessage(parts=(system_prompt("Be brief."), user_prompt("Hello"))),
        instructions=("First rule.", "Second rule."),
    )
    assert encode_request(request, "gpt-4o") == {
        "model": "gpt-4o",
        "instructions": "First rule.\n\nSecond rule.",
        "input": [
            {"type": "message", "role": "system", "content": "Be brief."},
            {"type": "message", "role": "user", "content": "Hello"},
        ],
    }


def test_tool_loop_history_encodes_calls_returns_and_retries() -> None:
    call = ToolCallPart("weather", '{"city":"Madrid"}', "call_1", id="fc_1",
                        provider=ProviderPart("openai", id="fc_1"))
    history = (
        RequestMessage.user("weather?"),
        ResponseMessage(parts=(
            ThinkingPart("", id="rs_1", signature="enc", provider=ProviderPart("openai", id="rs_1")),
            TextPart("Checking."),
            call,
        )),
        RequestMessage(parts=(
            ToolReturnPart("weather", "call_1", {"temperature_c": 31, "sky": ["sunny"]}),
            RetryPromptPart("bad args", tool_name="weather", tool_call_id="call_2"),
            RetryPromptPart("answer in JSON"),
        )),
    )
    body = encode_request(_request(*history, tools=(WEATHER,)), "gpt-5-mini")
    assert body["input"] == [
        {"type": "message", "role": "user", "content": "weather?"},
        {"type": "message", "role": "assistant", "content": "Checking."},
        {"type": "function_call", "call_id": "call_1", "name": "weather",
         "arguments": '{"city":"Madrid"}'},
        {"type": "function_call_output", "call_id": "call_1",
         "output": '{"temperature_c":31,"sky":["sunny"]}'},
        {"type": "function_call_output", "call_id": "call_2", "output": "bad args"},
        {"type": "message", "role": "user", "content": "answer in JSON"},
    ]
    assert body["tools"] == [{
        "type": "function", "name": "weather", "description": "Get weather.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }]


def test_replay_reasoning_sends_reasoning_items_and_item_ids_unchanged() -> None:
    details = ProviderDetails.from_value({"summary": ["one", "two"]})
    history = (
        RequestMessage.user("q"),
        ResponseMessage(parts=(
            ThinkingPart("one\n\ntwo", id="rs_1", signature="enc==",
                         provider=ProviderPart("openai", id="rs_1", details=details)),
            ThinkingPart("foreign", signature="sig", provider=ProviderPart("anthropic")),
            ToolCallPart("weather", "{}", "call_1", id="fc_1",
                         provider=ProviderPart("openai", id="fc_1")),
        )),
    )
    body = encode_request(_request(*history), "gpt-5", options=EncodeOptions(replay_reasoning=True))
    assert body["input"][1:] == [
        {"type": "reasoning", "id": "rs_1", "encrypted_content": "enc==",
         "summary": [{"type": "summary_text", "text": "one"},
                     {"type": "summary_text", "text": "two"}]},
        {"type": "function_call", "call_id": "call_1", "name": "weather", "arguments": "{}",
         "id": "fc_1"},
    ]


def test_native_tool_parts_and_foreign_thinking_are_not_replayed() -> None:
    provider = ProviderPart("openai", id="ws_1")
    history = (
        RequestMessage.user("q"),
        ResponseMessage(parts=(
            NativeToolCallPart("web_search", "ws_1", provider),
            NativeToolReturnPart("web_search", "ws_1", provider),
            ThinkingPart("hmm", signature="s", provider=ProviderPart("anthropic")),
            TextPart("answer"),
        )),
    )
    assert encode_request(_request(*history), "gpt-4o")["input"][1:] == [
        {"type": "message", "role": "assistant", "content": "answer"},
    ]


def test_rich_user_content_encodes_images_files_and_tagged_text() -> None:
    content = (
        TextContent("look"),
        TaggedText("doc", "x"),
        ImageContent(BytesSource(b"\x89PNG", "image/png"), detail="low"),
        ImageContent(UrlSource("https://example.com/a.jpg")),
        DocumentContent(BytesSource(b"%PDF", "application/pdf"), title="a.pdf"),
        DocumentContent(UrlSource("https://example.com/b.pdf")),
        BinaryContent(b"hi", "text/plain"),
        UploadedFileContent(UploadedFile("openai", "file-img", "image/png")),
        UploadedFileContent(UploadedFile("openai", "file-doc")),
        CachePoint(),
    )
    body = encode_request(_request(RequestMessage.user(content)), "gpt-4o")
    assert body["input"][0]["content"] == [
        {"type": "input_text", "text": "look"},
        {"type": "input_text", "text": "<doc>x</doc>"},
        {"type": "input_image", "image_url": "data:image/png;base64,iVBORw==", "detail": "low"},
        {"type": "input_image", "image_url": "https://example.com/a.jpg"},
        {"type": "input_file", "filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERg=="},
        {"type": "input_file", "file_url": "https://example.com/b.pdf"},
        {"type": "input_file", "filename": "file", "file_data": "data:text/plain;base64,aGk="},
        {"type": "input_image", "file_id": "file-img"},
        {"type": "input_file", "file_id": "file-doc"},
    ]


@pytest.mark.parametrize(
    "content",
    [
        AudioContent(BytesSource(b"RIFF", "audio/wav")),
        UploadedFileContent(UploadedFile("anthropic", "file_1")),
    ],
)
def test_content_openai_cannot_accept_is_an_encode_error(content: Any) -> None:
    with pytest.raises(OpenAIEncodeError):
        encode_request(_request(RequestMessage.user((content,))), "gpt-4o")


def test_every_settings_field_has_its_wire_name() -> None:
    settings = ModelSettings(
        max_tokens=100, temperature=0.5, top_p=0.9, parallel_tool_calls=False,
        tool_choice="required", allowed_tools=("weather",), thinking="high",
        service_tier="flex", truncation="auto", top_logprobs=3,
        extra_headers=(("X-Trace-Tag", "t1"),),
    )
    body = encode_request(_request(tools=(WEATHER,), settings=settings), "gpt-5",
                          options=EncodeOptions(reasoning_summary="auto", store=False,
                                                include_encrypted_reasoning=True))
    del body["input"], body["tools"]
    assert body == {
        "model": "gpt-5",
        "max_output_tokens": 100,
        "temperature": 0.5,
        "top_p": 0.9,
        "parallel_tool_calls": False,
        "tool_choice": {"type": "allowed_tools", "mode": "required",
                        "tools": [{"type": "function", "name": "weather"}]},
        "reasoning": {"effort": "high", "summary": "auto"},
        "service_tier": "flex",
        "truncation": "auto",
        "top_logprobs": 3,
        "include": ["reasoning.encrypted_content", "message.output_text.logprobs"],
        "store": False,
    }


def test_plain_tool_choice_and_logprobs_flag() -> None:
    settings = ModelSettings(tool_choice="none", logprobs=True)
    body = encode_request(_request(settings=settings), "gpt-4o")
    assert body["tool_choice"] == "none"
    assert body["include"] == ["message.output_text.logprobs"]


@pytest.mark.parametrize(("model", "expected"), [("gpt-5.2", {"effort": "none"}), ("gpt-5", None)])
def test_thinking_off_is_sent_as_none_only_where_the_profile_allows_it(
    model: str, expected: Any
) -> None:
    request = _request(settings=ModelSettings(thinking="off"))
    body = encode_request(request, model, profile=profile_for_model(model))
    assert body.get("reasoning") == expected


@pytest.mark.parametrize(
    "settings",
    [ModelSettings(seed=1), ModelSettings(stop_sequences=("x",)), ModelSettings(top_k=3),
     ModelSettings(presence_penalty=0.1), ModelSettings(frequency_penalty=0.1),
     ModelSettings(thinking_budget_tokens=100)],
)
def test_settings_the_responses_api_lacks_are_refused_by_the_encoder(
    settings: ModelSettings,
) -> None:
    with pytest.raises(UnsupportedModelSetting):
        encode_request(_request(settings=settings), "gpt-4o")


def test_allowed_tools_must_name_declared_tools() -> None:
    with pytest.raises(OpenAIEncodeError):
        encode_request(_request(settings=ModelSettings(allowed_tools=("nope",))), "gpt-4o")


def test_output_formats_encode_as_text_format() -> None:
    schema = {"type": "object", "properties": {"value": {"type": "integer"}}}
    body = encode_request(_request(output_format=OutputFormat("json_schema", "answer", schema,
                                                              description="d")), "gpt-4o")
    assert body["text"] == {"format": {"type": "json_schema", "name": "answer",
                                       "description": "d", "strict": True, "schema": schema}}
    loose = encode_request(_request(output_format=OutputFormat("json_schema", "a", schema,
                                                               strict=False)), "gpt-4o")
    assert loose["text"]["format"]["strict"] is False
    body = encode_request(_request(output_format=OutputFormat("json_object")), "gpt-4o")
    assert body["text"] == {"format": {"type": "json_object"}}


def test_web_search_is_a_provider_managed_tool_and_strict_is_sent_when_set() -> None:
    strict = ToolDefinition("lookup", "", {"type": "object"}, strict=True)
    request = _request(tools=(strict,),
                       managed_tools=(ManagedTool("web_search", {"search_context_size": "low"}),))
    assert encode_request(request, "gpt-4o", stream=True)["tools"] == [
        {"type": "web_search", "search_context_size": "low"},
        {"type": "function", "name": "lookup", "description": "", "parameters": {"type": "object"},
         "strict": True},
    ]
    assert encode_request(request, "gpt-4o", stream=True)["stream"] is True


def test_extra_body_is_merged_for_the_openai_tag_only_and_never_over_reserved_keys() -> None:
    ok = _request(settings=ModelSettings(extra_body=ProviderExtraBody("openai", {"user": "u1"})))
    assert encode_request(ok, "gpt-4o")["user"] == "u1"
    foreign = _request(settings=ModelSettings(extra_body=ProviderExtraBody("anthropic", {"a": 1})))
    with pytest.raises(ExtraBodyRejected):
        encode_request(foreign, "gpt-4o")
    for key in ("input", "model", "stream", "reasoning", "text", "tools"):
        reserved = _request(settings=ModelSettings(extra_body=ProviderExtraBody("openai", {key: 1})))
        with pytest.raises(ExtraBodyRejected):
            encode_request(reserved, "gpt-4o")


# ------------------------------------------------------------------------------ decoding


def test_buffered_response_decodes_parts_usage_and_finish() -> None:
    body = {
        "id": "resp_1", "model": "gpt-5-2025", "status": "completed",
        "output": [
            {"id": "rs_1", "type": "reasoning", "encrypted_content": "enc",
             "summary": [{"type": "summary_text", "text": "a"},
                         {"type": "summary_text", "text": "b"}]},
            {"id": "msg_1", "type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "hi", "annotations": []}]},
            {"id": "fc_1", "type": "function_call", "call_id": "c1", "name": "weather",
             "arguments": "{}", "status": "completed"},
        ],
        "usage": {"input_tokens": 20, "output_tokens": 9, "total_tokens": 29,
                  "input_tokens_details": {"cached_tokens": 5, "image_tokens": 2},
                  "output_tokens_details": {"reasoning_tokens": 4}},
    }
    response = decode_response(body)
    assert response.parts == (
        ThinkingPart("a\n\nb", id="rs_1", signature="enc",
                     provider=ProviderPart("openai", id="rs_1", details=ProviderDetails(
                         {"summary": ["a", "b"]}))),
        TextPart("hi", id="msg_1", provider=ProviderPart("openai", id="msg_1")),
        ToolCallPart("weather", "{}", "c1", id="fc_1", provider=ProviderPart("openai", id="fc_1")),
    )
    assert response.finish_reason is FinishReason.tool_call
    assert response.raw_finish_reason == "completed"
    assert response.provider_response_id == "resp_1"
    assert response.model_name == "gpt-5-2025"
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens,
            usage.reasoning_tokens) == (20, 9, 5, 4)
    assert dict(usage.details) == {"input_tokens_details.image_tokens": 2}


def test_null_usage_detail_counters_read_as_absent_but_a_wrong_type_is_refused() -> None:
    # LiteLLM's proxy (cassettes/litellm/responses) sends null for the counters it lacks
    usage = {"input_tokens": 15, "output_tokens": 16, "total_tokens": 31,
             "input_tokens_details": {"audio_tokens": None, "cached_tokens": 0, "text_tokens": None},
             "output_tokens_details": {"reasoning_tokens": None}}
    body = {"status": "completed", "output": [], "usage": usage}
    decoded = decode_response(body).usage
    assert (decoded.input_tokens, decoded.output_tokens, decoded.cache_read_tokens,
            decoded.input_audio_tokens, decoded.reasoning_tokens) == (15, 16, 0, 0, 0)
    assert dict(decoded.details) == {}
    usage["input_tokens_details"] = {"audio_tokens": "3"}
    with pytest.raises(OpenAIDecodeError) as wrong:
        decode_response(body)
    assert wrong.value.path == "$.usage.input_tokens_details.audio_tokens"


@pytest.mark.parametrize(
    ("status", "details", "finish", "raw"),
    [
        ("completed", None, FinishReason.stop, "completed"),
        ("incomplete", {"reason": "max_output_tokens"}, FinishReason.length, "max_output_tokens"),
        ("incomplete", {"reason": "content_filter"}, FinishReason.content_filter, "content_filter"),
        ("incomplete", None, FinishReason.other, "incomplete"),
        ("failed", None, FinishReason.error, "failed"),
        ("cancelled", None, FinishReason.other, "cancelled"),
        (None, None, FinishReason.stop, None),
    ],
)
def test_status_and_incomplete_details_map_to_finish_reasons(
    status: Any, details: Any, finish: FinishReason, raw: Any
) -> None:
    response = decode_response({"status": status, "incomplete_details": details, "output": []})
    assert (response.finish_reason, response.raw_finish_reason) == (finish, raw)


def test_refusal_is_kept_as_marked_text_and_finishes_as_content_filter() -> None:
    response = decode_response({"status": "completed", "output": [
        {"type": "message", "id": "m", "content": [{"type": "refusal", "refusal": "no"}]}]})
    assert response.finish_reason is FinishReason.content_filter
    assert response.parts[0].provider.details.to_value() == {"refusal": True}  # type: ignore[union-attr]


def test_web_search_call_and_unknown_items_are_kept() -> None:
    item = {"type": "web_search_call", "id": "ws_1", "status": "completed",
            "action": {"type": "search", "query": "q"}}
    response = decode_response({"output": [item, {"type": "mystery", "x": 1}]})
    call, result = response.parts
    assert isinstance(call, NativeToolCallPart) and call.tool_name == "web_search"
    assert call.args_as_dict() == {"type": "search", "query": "q"}
    assert isinstance(result, NativeToolReturnPart) and result.tool_call_id == "ws_1"
    assert response.provider_details is not None
    assert response.provider_details.to_value() == {"output": [{"type": "mystery", "x": 1}]}


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ([], "$"),
        ({}, "$.output"),
        ({"output": [1]}, "$.output[0]"),
        ({"output": [{"type": "message", "content": [{"type": "output_text"}]}]},
         "$.output[0].content[0].text"),
        ({"output": [{"type": "function_call", "name": "f", "arguments": "{}"}]},
         "$.output[0].call_id"),
        ({"output": [], "usage": {"input_tokens": "1", "output_tokens": 1}}, "$.usage.input_tokens"),
        ({"output": [], "usage": {"input_tokens": 1, "output_tokens": 1,
                                  "input_tokens_details": {"cached_tokens": 2}}}, "$.usage"),
    ],
)
def test_malformed_responses_raise_named_decode_errors_with_a_path(body: Any, path: str) -> None:
    with pytest.raises(OpenAIDecodeError) as info:
        decode_response(body)
    assert info.value.path == path
    assert classify(info.value) == "decode"


# ------------------------------------------------------------------------------ streaming

_STREAM_EVENTS = [
    {"type": "response.created", "response": {"id": "resp_9", "model": "gpt-5", "output": []}},
    {"type": "response.output_item.added", "output_index": 0,
     "item": {"id": "rs_9", "type": "reasoning", "summary": []}},
    {"type": "response.reasoning_summary_text.delta", "item_id": "rs_9", "summary_index": 0,
     "delta": "Think"},
    {"type": "response.reasoning_summary_text.delta", "item_id": "rs_9", "summary_index": 1,
     "delta": "ing"},
    {"type": "response.output_item.done", "output_index": 0,
     "item": {"id": "rs_9", "type": "reasoning", "encrypted_content": "E",
              "summary": [{"type": "summary_text", "text": "Think"},
                          {"type": "summary_text", "text": "ing"}]}},
    {"type": "response.output_item.added", "output_index": 1,
     "item": {"id": "msg_9", "type": "message", "role": "assistant", "content": []}},
    {"type": "response.content_part.added", "item_id": "msg_9", "content_index": 0,
     "part": {"type": "output_text", "text": ""}},
    {"type": "response.output_text.delta", "item_id": "msg_9", "content_index": 0, "delta": "Héllo"},
    {"type": "response.output_text.delta", "item_id": "msg_9", "content_index": 0, "delta": " 🌍"},
    {"type": "response.output_item.done", "output_index": 1,
     "item": {"id": "msg_9", "type": "message", "role": "assistant",
              "content": [{"type": "output_text", "text": "Héllo 🌍", "annotations": []}]}},
    {"type": "response.output_item.added", "output_index": 2,
     "item": {"id": "fc_9", "type": "function_call", "call_id": "call_9", "name": "weather",
              "arguments": ""}},
    {"type": "response.function_call_arguments.delta", "item_id": "fc_9", "delta": "{\"city\":"},
    {"type": "response.function_call_arguments.delta", "item_id": "fc_9", "delta": "\"Oslo\"}"},
    {"type": "response.output_item.done", "output_index": 2,
     "item": {"id": "fc_9", "type": "function_call", "call_id": "call_9", "name": "weather",
              "arguments": "{\"city\":\"Oslo\"}", "status": "completed"}},
]
_COMPLETED = {"id": "resp_9", "model": "gpt-5", "status": "completed",
              "output": [e["item"] for e in _STREAM_EVENTS if e["type"] == "response.output_item.done"],
              "usage": {"input_tokens": 7, "output_tokens": 5,
                        "output_tokens_details": {"reasoning_tokens": 2}}}


def _stream_bytes() -> bytes:
    events = [*_STREAM_EVENTS, {"type": "response.completed", "response": _COMPLETED}]
    chunks = [f"event: {e['type']}\ndata: {json.dumps(e, ensure_ascii=False)}\n\n" for e in events]
    return ("".join(chunks) + "data: [DONE]\n\n").encode()


def _decode_chunks(chunks: list[bytes]) -> tuple[list[Any], StreamDecoder]:
    decoder = StreamDecoder()
    return feed_chunks(decoder, chunks), decoder


def test_stream_events_have_stable_indexes_and_accumulate_to_the_buffered_decode() -> None:
    from zigai.model import PartAccumulator

    events, decoder = _decode_chunks([_stream_bytes()])
    accumulator = PartAccumulator()
    for event in events:
        accumulator.apply(event)
    assert accumulator.parts() == decode_response(_COMPLETED).parts
    starts = [e.index for e in events if isinstance(e, PartStartEvent)]
    ends = [e.index for e in events if isinstance(e, PartEndEvent)]
    assert starts == ends == [0, 1, 2]
    deltas = [(e.index, e.delta) for e in events if isinstance(e, PartDeltaEvent)]
    assert [d[0] for d in deltas] == [0, 0, 0, 1, 1, 2, 2]
    assert decoder.finish_reason is FinishReason.tool_call
    assert decoder.usage.reasoning_tokens == 2 and decoder.response_id == "resp_9"


def test_stream_split_at_every_byte_boundary_yields_the_same_events() -> None:
    data = _stream_bytes()
    expected, _ = _decode_chunks([data])
    for cut in range(1, len(data)):
        events, _ = _decode_chunks([data[:cut], data[cut:]])
        assert events == expected, cut


def test_stream_keeps_unknown_items_like_the_buffered_decode() -> None:
    mystery = {"id": "mx_1", "type": "mystery_output", "payload": {"k": [1, 2]}}
    events = [*_STREAM_EVENTS, {"type": "response.output_item.done", "output_index": 3, "item": mystery}]
    completed = {**_COMPLETED, "output": [*_COMPLETED["output"], mystery]}
    body = "".join(
        f"data: {json.dumps(e)}\n\n"
        for e in [*events, {"type": "response.completed", "response": completed}]
    )
    with _client(_mock(MockResponse.of_text(body))).stream(_request()) as streamed:
        list(streamed)
    buffered = decode_response(completed)
    assert buffered.provider_details == ProviderDetails.from_value({"output": [mystery]})
    assert streamed.response().provider_details == buffered.provider_details
    assert streamed.response().parts == buffered.parts


def test_stream_without_a_terminal_event_is_a_decode_error() -> None:
    with pytest.raises(OpenAIDecodeError):
        _decode_chunks([b'data: {"type":"response.output_text.delta","delta":"x"}\n\n'])


def test_stream_error_event_raises_a_server_error() -> None:
    with pytest.raises(ProviderServerError) as info:
        _decode_chunks([b'data: {"type":"error","code":"server_error","message":"boom"}\n\n'])
    assert info.value.code == "server_error"


def test_stream_with_malformed_event_json_is_a_decode_error() -> None:
    with pytest.raises(Exception) as info:
        _decode_chunks([b"data: {nope\n\n"])
    assert classify(info.value) == "decode"


# ------------------------------------------------------------------------------ client


def test_client_posts_to_responses_with_bearer_auth_and_decodes() -> None:
    transport = _mock(MockResponse.of_json({"status": "completed", "output": [
        {"type": "message", "content": [{"type": "output_text", "text": "pong"}]}]}))
    client = _client(transport)
    assert client.model() is client
    assert (client.provider_name, client.model_name) == ("openai", "gpt-4.1-mini")
    response = client.request(_request(settings=ModelSettings(
        extra_headers=(("X-Trace-Tag", "t"),))))
    assert response.text == "pong" and response.provider_name == "openai"
    sent = transport.requests[0]
    assert sent.url == URL
    headers = {k.lower(): v for k, v in sent.headers}
    assert headers["authorization"] == "Bearer sk-test"
    assert headers["x-trace-tag"] == "t"
    assert json.loads(sent.body or b"") == {
        "model": "gpt-4.1-mini",
        "input": [{"type": "message", "role": "user", "content": "hi"}],
    }


def test_client_settings_are_merged_below_request_settings() -> None:
    transport = _mock(MockResponse.of_json({"output": []}))
    client = Client("gpt-4o", Provider("sk-test", transport=transport),
                    ModelSettings(max_tokens=10, temperature=0.1))
    client.request(_request(settings=ModelSettings(temperature=0.7)))
    body = json.loads(transport.requests[0].body or b"")
    assert (body["max_output_tokens"], body["temperature"]) == (10, 0.7)


@pytest.mark.parametrize(
    ("status", "error"),
    [(429, RateLimited), (500, ProviderServerError), (503, ProviderServerError),
     (401, ProviderAuthError), (400, ProviderBadRequest)],
)
def test_error_statuses_map_to_normalized_provider_errors(status: int, error: type) -> None:
    body = {"error": {"code": "c", "message": "m"}}
    with pytest.raises(error) as info:
        _client(_mock(MockResponse.of_json(body, status=status))).request(_request())
    assert (info.value.status, info.value.code, info.value.provider_name) == (status, "c", "openai")
    with pytest.raises(error):
        _client(_mock(MockResponse.of_json(body, status=status))).stream(_request())


def test_successful_status_with_an_undecodable_body_is_a_decode_error() -> None:
    with pytest.raises(OpenAIDecodeError) as info:
        _client(_mock(MockResponse.of_json({}))).request(_request())
    assert info.value.status == 200 and info.value.path == "$.output"


@pytest.mark.parametrize(
    "request_",
    [
        _request(output_format=OutputFormat("json_schema", "x", {"type": "object"})),
        _request(settings=ModelSettings(thinking="high")),
        _request(settings=ModelSettings(temperature=0.2)),
        _request(settings=ModelSettings(seed=3)),
        _request(managed_tools=(ManagedTool("web_search"),)),
        _request(RequestMessage.user((AudioContent(BytesSource(b"a", "audio/wav")),))),
    ],
)
def test_unsupported_features_fail_before_the_transport_is_called(request_: ModelRequest) -> None:
    profile = ModelProfile(json_schema_output=False, settings=frozenset({"max_tokens"}))
    client = _client(MockTransport(_never_called), profile=profile)
    with pytest.raises((UnsupportedModelFeature, UnsupportedModelSetting)):
        client.request(request_)
    with pytest.raises((UnsupportedModelFeature, UnsupportedModelSetting)):
        client.stream(request_)


def test_encode_errors_also_precede_io() -> None:
    client = _client(MockTransport(_never_called), model="gpt-4o")
    foreign = RequestMessage.user((UploadedFileContent(UploadedFile("google", "f")),))
    with pytest.raises(OpenAIEncodeError):
        client.request(_request(foreign))


def test_profile_resolution_order_and_unknown_default() -> None:
    custom = ModelProfile(supports_tools=False)
    provider = Provider("sk-test", transport=MockTransport(_never_called),
                        profile_lookup=lambda name: custom if name == "mine" else None)
    assert Client("mine", provider).profile is custom
    assert Client("gpt-4o", provider).profile == profile_for_model("gpt-4o")
    assert Client("mystery-model", provider).profile is UNKNOWN_PROFILE
    explicit = ModelProfile()
    assert Client("mine", provider, profile=explicit).profile is explicit


def test_profiles_declare_family_capabilities() -> None:
    assert profile_for_model("gpt-5-mini").reasoning_efforts == {"minimal", "low", "medium", "high"}
    assert "xhigh" in profile_for_model("gpt-5.6-sol").reasoning_efforts
    assert profile_for_model("o3-mini").content_kinds == {"text", "tagged-text", "cache-point"}
    assert "temperature" in profile_for_model("gpt-4o-mini").settings
    assert "temperature" not in profile_for_model("gpt-5").settings
    hosted = {"code_execution", "image_generation", "file_search", "mcp_server"}
    assert profile_for_model("gpt-4.1-nano").provider_managed_tools == hosted  # no web search
    assert profile_for_model("gpt-5").provider_managed_tools == hosted | {"web_search"}
    for legacy in ("o1-mini", "o1", "o3-mini", "gpt-4o-search-preview", "gpt-4o-2024-05-13"):
        assert not profile_for_model(legacy).provider_managed_tools & hosted, legacy
    assert not UNKNOWN_PROFILE.supports_thinking


def test_default_transport_is_created_lazily() -> None:
    provider = Provider("sk-test")
    assert type(provider.transport).__name__ == "_LazyHttpTransport"
    assert provider.transport._transport is None  # type: ignore[attr-defined]
    assert "sk-test" not in repr(provider)


# ------------------------------------------------------------------------------ corpus replays


def _cassette(root: Path, name: str) -> Path:
    return root / "zigai-cassettes" / name


def _policy_for(path: Path) -> UrlPolicy | None:
    text = path.read_text()
    if "openai.test" in text:
        return UrlPolicy(allow_local_network=True, allowed_hosts=frozenset({"openai.test"}))
    return None


def _corpus_client(path: Path, model: str) -> Any:
    """A factory of the Responses client a corpus recording was made with."""
    policy = _policy_for(path)
    base = "https://openai.test/v1" if policy is not None else "https://api.openai.com/v1"

    def client(transport: Any) -> Client:
        return Client(model, Provider("sk-test", transport=transport, base_url=base, url_policy=policy))

    return client


def _replay_client(path: Path, model: str) -> tuple[Client, ReplayTransport]:
    transport = ReplayTransport.load(path)
    return _corpus_client(path, model)(transport), transport


def _first_request(path: Path) -> dict[str, Any]:
    import yaml

    return yaml.safe_load(path.read_text())["interactions"][0]["request"]["body"]["content"]


_PONG_MODELS = ["gpt_4_1_mini", "gpt_4o_mini", "gpt_5_4_mini", "gpt_5_5", "gpt_5_6_luna",
                "gpt_5_6_sol", "gpt_5_mini", "gpt_5_nano"]
_WEATHER = ToolDefinition(
    "weather", "Get the current weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
     "additionalProperties": False},
)


def _corpus_case(relative: str, model: str | None = None, **fields: Any) -> list[Replay]:
    """The corpus recording ``relative`` as a replay, or nothing when the corpus is absent."""
    path = corpus_file(relative)
    if path is None:
        return []
    client = _corpus_client(path, model or _first_request(path)["model"])
    return [Replay(id="corpus-" + relative.removesuffix(".yaml"), path=path, client=client, **fields)]


def _says_pong(responses: tuple[ResponseMessage, ...]) -> None:
    assert responses[-1].text.strip().lower().startswith("pong")


def _pong(folder: str, slug: str) -> list[Replay]:
    path = corpus_file(f"{folder}/openai_{slug}.yaml")
    if path is None:
        return []
    return _corpus_case(f"{folder}/openai_{slug}.yaml",
                        messages=(RequestMessage.user("Reply with exactly: pong"),),
                        settings=ModelSettings(max_tokens=_first_request(path)["max_output_tokens"]),
                        streamed=folder != "buffered",
                        extra_check=_says_pong)


def _madrid_in_one_call(responses: tuple[ResponseMessage, ...]) -> None:
    call = next(p for p in responses[0].parts if isinstance(p, ToolCallPart))
    assert call.args_as_dict() == {"city": "Madrid"}
    assert "Madrid" in responses[-1].text


def _synthetic_loop(responses: tuple[ResponseMessage, ...]) -> None:
    call = responses[0].parts[0]
    assert isinstance(call, ToolCallPart) and call.tool_call_id == "call-weather"
    final = responses[-1]
    assert final.text == "It is sunny in Madrid."
    assert (final.usage.input_tokens, final.usage.output_tokens) == (18, 6)


def _synthetic(streamed: bool) -> list[Replay]:
    name = "openai_stream_tool_loop.yaml" if streamed else "openai_tool_loop.yaml"
    return _corpus_case(
        name, "gpt-test", streamed=streamed, extra_check=_synthetic_loop,
        messages=(RequestMessage(parts=(system_prompt("You are concise."),
                                        user_prompt("What is the weather?"))),),
        tools=(ToolDefinition("weather", "Get weather.", {"type": "object"}),),
        tool_result={"temperature_c": 31})


def _model_tool_loop(slug: str) -> list[Replay]:
    return _corpus_case(
        f"models/openai_{slug}.yaml", tools=(_WEATHER,), extra_check=_madrid_in_one_call,
        messages=(RequestMessage(parts=(
            system_prompt("Always use the weather tool before answering."),
            user_prompt("Call the weather tool exactly once with city Madrid. "
                        "Then reply with one short sentence."))),),
        tool_result={"temperature_c": 31, "condition": "sunny"})


def _value_42(responses: tuple[ResponseMessage, ...]) -> None:
    assert json.loads(responses[-1].text) == {"value": 42}


_TEXT_REPLAYS = local_cases("responses", ["buffered_text", "streamed_text"]) + [
    case for folder in ("buffered", "streamed/text") for slug in _PONG_MODELS
    for case in _pong(folder, slug)]
_TOOL_REPLAYS = local_cases("responses", ["tool_loop", "stream_tool_loop"]) + [
    case for slug in _PONG_MODELS for case in _model_tool_loop(slug)] + _synthetic(False) + _synthetic(True)
_STRUCTURED_REPLAYS = local_cases("responses", ["structured_output"]) + _corpus_case(
    "structured/openai_gpt_5_6_sol.yaml", "gpt-5.6-sol", extra_check=_value_42,
    messages=(RequestMessage.user("Return a JSON object whose value field is the integer 42."),),
    output_format=OutputFormat("json_schema", "response", {
        "type": "object", "properties": {"value": {"type": "integer"}}, "required": ["value"],
        "additionalProperties": False}),
    settings=ModelSettings(max_tokens=256))


@pytest.mark.parametrize("case", replay_params(_TEXT_REPLAYS))
def test_recorded_text_answers_replay_strictly(case: Replay) -> None:
    assert_text_answer(case.run())


@pytest.mark.parametrize("case", replay_params(_TOOL_REPLAYS))
def test_recorded_tool_loops_replay_strictly(case: Replay) -> None:
    assert_tool_loop(case.run(), "weather", case.reports_finish)


@pytest.mark.parametrize("case", replay_params(local_cases("responses", ["context_overflow"])))
def test_a_recorded_refusal_maps_to_a_bad_request(case: Replay) -> None:
    assert_refused(case)


@pytest.mark.parametrize("case", replay_params(_STRUCTURED_REPLAYS))
def test_recorded_structured_output_replays_strictly(case: Replay) -> None:
    assert_structured_answer(case.run())


def _signed_done(responses: tuple[ResponseMessage, ...]) -> None:
    (response,) = responses
    assert response.text == "done"
    assert response.parts[0].signature  # type: ignore[union-attr]
    assert response.usage.reasoning_tokens > 0


_THINKING_REPLAYS = local_cases("responses", ["thinking_stream"]) + _corpus_case(
    "thinking/openai_gpt_5_6_sol.yaml", "gpt-5.6-sol", streamed=True, extra_check=_signed_done,
    messages=(RequestMessage.user("Calculate 982451653 multiplied by 57885161 privately. "
                                  "After calculating, reply with exactly: done"),),
    settings=ModelSettings(max_tokens=2048, thinking="high"))


@pytest.mark.parametrize("case", replay_params(_THINKING_REPLAYS))
def test_recorded_thinking_streams_replay_strictly(case: Replay) -> None:
    events: list[Any] = []
    assert_thinking_answer(case.run(events=events), events)


def test_a_follow_up_leaves_reasoning_out_unless_replay_is_asked_for() -> None:
    """By the replay rule reasoning items are not sent back by default: the follow-up after a
    recorded reasoning answer carries the answer's text as an assistant message and no
    reasoning item."""
    (case,) = local_cases("responses", ["thinking_stream"])
    answer, follow_up = case.run()
    # llama-server sends an empty encrypted_content: no signature, streamed or buffered.
    assert answer.parts[0].signature is None and follow_up.parts[0].signature is None  # type: ignore[union-attr]
    sent = ReplayTransport.load(case.path).interactions[1].request_body.content
    assert isinstance(sent, dict) and sent["reasoning"] == {"effort": "high"}
    assert [item["type"] for item in sent["input"]] == ["message"] * 5
    assert sent["input"][3] == {"type": "message", "role": "assistant", "content": answer.text}


def _corpus_error_sequence(path: Path) -> None:
    client, transport = _replay_client(path, "gpt-5.6-sol")
    request = _request(RequestMessage.user("Reply with exactly: pong"),
                       settings=ModelSettings(max_tokens=64))
    with pytest.raises(RateLimited) as limited:
        client.request(request)
    assert limited.value.retry_after_s == 3
    assert client.request(request).text == "pong"
    for _ in range(2):
        with pytest.raises(ProviderServerError) as failed:
            client.request(request)
        assert failed.value.request_id == "req_server_openai"
    # corpus-only: no real server of ours answers 200 with a body that is not a response
    with pytest.raises(OpenAIDecodeError):
        client.request(request)
    with pytest.raises(ProviderBadRequest) as info:
        client.request(request)
    assert info.value.code == "bad_request_code"
    transport.assert_all_consumed()


def _error_sequence_checks() -> list[Any]:
    checks = [litellm_check("responses")]
    path = corpus_file("errors/openai.yaml")
    if path is not None:
        checks.append(pytest.param(lambda: _corpus_error_sequence(path), id="corpus-errors/openai"))
    return checks


@pytest.mark.parametrize("check", _error_sequence_checks())
def test_recorded_error_sequence_maps_each_status(check: Callable[[], None]) -> None:
    check()


def test_the_responses_client_runs_over_an_azure_provider_with_its_identity() -> None:
    from zigai.providers import azure_openai

    transport = _mock(MockResponse.of_json({"status": "completed", "output": [
        {"type": "message", "id": "m1", "content": [{"type": "output_text", "text": "ok"}]}]}))
    provider = azure_openai.Provider("az-key", transport, resource="myres")
    client = Client("gpt-4o", provider, profile=profile_for_model("gpt-4o"))
    response = client.request(_request())
    sent = transport.requests[0]
    assert sent.url == "https://myres.openai.azure.com/openai/v1/responses"
    assert ("api-key", "az-key") in sent.headers
    assert response.provider_name == "azure_openai"
    assert response.parts[0].provider == ProviderPart("azure_openai", id="m1")  # type: ignore[union-attr]


def _sse(*events: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)


def test_stream_refusal_failure_details_and_late_named_arguments() -> None:
    events, decoder = _decode_chunks([_sse(
        {"type": "response.created", "response": {"id": "r1", "model": "gpt-x"}},
        {"type": "response.refusal.delta", "item_id": "m1", "content_index": 0, "delta": "No."},
        {"type": "response.function_call_arguments.done", "item_id": "fc1", "name": "f",
         "arguments": '{"a":1}'},
        {"type": "response.failed", "response": {"id": "r1", "error": {"code": "server_error"},
                                                 "incomplete_details": {"reason": "x"}}},
    )])
    ends = [e.part for e in events if isinstance(e, PartEndEvent)]
    assert ToolCallPart("f", '{"a":1}', "fc1") in [
        ToolCallPart(p.tool_name, p.args, p.tool_call_id) for p in ends if isinstance(p, ToolCallPart)
    ]
    assert decoder.response_id == "r1" and decoder.model_name == "gpt-x"
    assert decoder.provider_details is not None
    assert decoder.provider_details["error"] == {"code": "server_error"}
    assert decoder._parts[0].content == "No."


@pytest.mark.parametrize(
    ("event", "path"),
    [
        ({"type": "response.output_item.added", "item": {"type": "function_call", "id": "i1",
                                                          "name": "", "call_id": "c1"}},
         "$event[1].item"),
        ({"type": "response.output_text.delta", "item_id": "m", "content_index": -1, "delta": "x"},
         "$event[1].content_index"),
        ({"type": "response.function_call_arguments.done", "item_id": "x", "arguments": "{}"},
         "$event[1].name"),
    ],
    ids=["call without a name", "negative content index", "unknown arguments without a name"],
)
def test_stream_events_that_cannot_be_placed_name_their_path(event: dict[str, Any], path: str) -> None:
    with pytest.raises(OpenAIDecodeError) as caught:
        _decode_chunks([_sse(event)])
    assert caught.value.path == path
