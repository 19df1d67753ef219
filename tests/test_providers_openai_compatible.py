"""Chat Completions codec, stream state machine and generic Provider/Client."""

from __future__ import annotations

import json
import pickle
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

from zigai.errors import ProviderError
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
    TaggedText,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UrlSource,
    UserPromptPart,
)
from zigai.model import (
    ModelRequest,
    OutputFormat,
    PartAccumulator,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    TextPartDelta,
    ThinkingPartDelta,
    ToolCallPartDelta,
    ToolDefinition,
    UnsupportedModelFeature,
)
from zigai.provider import (
    ProviderAuthError,
    ProviderBadRequest,
    ProviderResponseDecodeError,
    ProviderServerError,
    RateLimited,
)
from zigai.providers import openai_compatible as oc
from zigai.providers import profiles
from zigai.security import UrlPolicy
from zigai.settings import (
    ExtraBodyRejected,
    ModelSettings,
    ProviderExtraBody,
    UnsupportedModelSetting,
)

ROOT = "https://gateway.example.com/v1"
WEATHER = ToolDefinition(
    "weather", "Get weather.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def _user(text: str) -> RequestMessage:
    return RequestMessage(parts=(UserPromptPart(text),))


def _request(*messages: Any, **fields: Any) -> ModelRequest:
    return ModelRequest(messages=messages or (_user("hi"),), **fields)


def _encode(request: ModelRequest, **kwargs: Any) -> dict[str, Any]:
    return oc.encode_request(request, "m", **kwargs)


def _reply(text: str = "ok") -> MockResponse:
    return MockResponse.of_json({
        "id": "r1", "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1},
    })


def _client(handler: Any, model: str = "m", **kwargs: Any) -> tuple[oc.Client, MockTransport]:
    transport = MockTransport(handler)
    provider = oc.Provider("sk-test", transport, base_url=ROOT)
    return oc.Client(model, provider, **kwargs), transport


# ------------------------------------------------------------------------------ encoding


def test_encode_history_with_instructions_system_images_tool_calls_and_returns() -> None:
    history = (
        RequestMessage(parts=(
            SystemPromptPart("Be brief."),
            UserPromptPart((
                TextContent("look"),
                ImageContent(UrlSource("https://img.example.com/a.png"), detail="low"),
                ImageContent(BytesSource(b"\x89PNG", "image/png")),
                TaggedText("ctx", "data"),
                CachePoint(),
            )),
        )),
        ResponseMessage(parts=(
            ThinkingPart("hmm", provider=ProviderPart("openai_compatible")),
            TextPart("Checking."),
            ToolCallPart("weather", '{"city": "Madrid"}', "call_1"),
        )),
        RequestMessage(parts=(
            ToolReturnPart("weather", "call_1", {"temperature_c": 31, "sky": ["sunny"]}),
            RetryPromptPart("bad args", tool_name="weather", tool_call_id="call_2"),
            RetryPromptPart("answer in JSON"),
        )),
    )
    body = _encode(_request(*history, instructions=("First rule.", "Second rule."),
                            tools=(WEATHER,)))
    assert body == {
        "model": "m",
        "messages": [
            {"role": "system", "content": "First rule.\n\nSecond rule."},
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url",
                 "image_url": {"url": "https://img.example.com/a.png", "detail": "low"}},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw=="}},
                {"type": "text", "text": "<ctx>data</ctx>"},
            ]},
            {"role": "assistant", "content": "Checking.", "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "weather", "arguments": '{"city": "Madrid"}'}}]},
            {"role": "tool", "tool_call_id": "call_1",
             "content": '{"temperature_c":31,"sky":["sunny"]}'},
            {"role": "tool", "tool_call_id": "call_2", "content": "bad args"},
            {"role": "user", "content": "answer in JSON"},
        ],
        "tools": [{"type": "function", "function": {
            "name": "weather", "description": "Get weather.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                           "required": ["city"]}}}],
    }


def test_assistant_tool_call_without_text_sends_null_content() -> None:
    history = (_user("q"), ResponseMessage(parts=(ToolCallPart("weather", "", "c1"),)))
    assert _encode(_request(*history))["messages"][1] == {
        "role": "assistant", "content": None,
        "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": "weather", "arguments": "{}"}}],
    }


def test_thinking_only_response_is_not_replayed() -> None:
    history = (_user("q"), ResponseMessage(parts=(ThinkingPart("x"),)), _user("again"))
    assert [m["role"] for m in _encode(_request(*history))["messages"]] == ["user", "user"]


@pytest.mark.parametrize(
    ("settings", "wire"),
    [
        (ModelSettings(max_tokens=5), {"max_tokens": 5}),
        (ModelSettings(temperature=0.5), {"temperature": 0.5}),
        (ModelSettings(top_p=0.9), {"top_p": 0.9}),
        (ModelSettings(seed=7), {"seed": 7}),
        (ModelSettings(stop_sequences=("END", "STOP")), {"stop": ["END", "STOP"]}),
        (ModelSettings(presence_penalty=0.1), {"presence_penalty": 0.1}),
        (ModelSettings(frequency_penalty=-0.1), {"frequency_penalty": -0.1}),
        (ModelSettings(logprobs=True), {"logprobs": True}),
        (ModelSettings(top_logprobs=3), {"top_logprobs": 3}),
        (ModelSettings(thinking="high"), {"reasoning_effort": "high"}),
        (ModelSettings(thinking="off"), {}),
        (ModelSettings(service_tier="flex"), {"service_tier": "flex"}),
    ],
)
def test_each_setting_has_its_chat_completions_wire_name(
    settings: ModelSettings, wire: dict[str, Any]
) -> None:
    body = _encode(_request(settings=settings))
    assert {k: v for k, v in body.items() if k not in ("model", "messages")} == wire


def test_tool_settings_are_sent_only_with_tools_and_allowed_tools_narrow_the_list() -> None:
    other = ToolDefinition("clock", strict=True)
    settings = ModelSettings(tool_choice="required", parallel_tool_calls=False,
                             allowed_tools=("clock",))
    body = _encode(_request(tools=(WEATHER, other), settings=settings))
    assert body["tools"] == [{"type": "function", "function": {
        "name": "clock", "parameters": {"type": "object", "properties": {}}, "strict": True}}]
    assert body["tool_choice"] == "required" and body["parallel_tool_calls"] is False
    assert "tool_choice" not in _encode(_request(settings=ModelSettings(tool_choice="none")))
    with pytest.raises(UnsupportedModelSetting):
        _encode(_request(tools=(WEATHER,), settings=ModelSettings(allowed_tools=("nope",))))


def test_output_formats_encode_as_response_format() -> None:
    assert _encode(_request(output_format=OutputFormat("json_object")))["response_format"] == {
        "type": "json_object"}
    schema_format = OutputFormat("json_schema", name="answer", schema={"type": "object"},
                                 description="The answer.", strict=True)
    assert _encode(_request(output_format=schema_format))["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": {"type": "object"},
                        "description": "The answer.", "strict": True},
    }


def test_streaming_adds_stream_and_usage_options_and_dialect_switches() -> None:
    body = _encode(_request(settings=ModelSettings(max_tokens=9)), stream=True)
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    openai = _encode(_request(RequestMessage(parts=(SystemPromptPart("s"),)),
                              settings=ModelSettings(max_tokens=9)),
                     options=oc.ChatOptions.openai(), stream=True)
    assert openai["max_completion_tokens"] == 9 and "max_tokens" not in openai
    assert openai["messages"][0] == {"role": "developer", "content": "s"}
    quiet = _encode(_request(), options=oc.ChatOptions(stream_usage=False), stream=True)
    assert "stream_options" not in quiet


def test_extra_body_requires_its_tag_and_cannot_set_reserved_keys() -> None:
    ok = ModelSettings(extra_body=ProviderExtraBody("openai_compatible", {"top_k": 4}))
    assert _encode(_request(settings=ok))["top_k"] == 4
    foreign = ModelSettings(extra_body=ProviderExtraBody("openai", {"top_k": 4}))
    with pytest.raises(ExtraBodyRejected):
        _encode(_request(settings=foreign))
    for key in sorted(oc.RESERVED_KEYS):
        reserved = ModelSettings(extra_body=ProviderExtraBody("openai_compatible", {key: 1}))
        with pytest.raises(ExtraBodyRejected):
            _encode(_request(settings=reserved))


def test_thinking_budget_has_no_wire_field() -> None:
    with pytest.raises(UnsupportedModelSetting):
        _encode(_request(settings=ModelSettings(thinking_budget_tokens=100)))


# ------------------------------------------------------------------------------ decoding


def test_decode_buffered_response_with_reasoning_tool_calls_usage_and_details() -> None:
    response = oc.decode_response({
        "id": "chatcmpl-1", "model": "served-model", "system_fingerprint": "fp",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": None, "message": {
            "role": "assistant", "content": "Let me check.", "reasoning_content": "think",
            "tool_calls": [{"id": "c1", "type": "function",
                            "function": {"name": "weather", "arguments": '{"city":"Paris"}'}}]}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 40, "total_tokens": 140,
                  "queue_time": 0.5, "prompt_cache_hit_tokens": 60,
                  "prompt_tokens_details": {"cached_tokens": 60, "audio_tokens": 5},
                  "completion_tokens_details": {"reasoning_tokens": 30,
                                                "accepted_prediction_tokens": 2,
                                                "rejected_prediction_tokens": None}},
    }, provider_name="gw", model_name="requested")
    assert response.parts == (
        ThinkingPart("think", provider=ProviderPart(
            "gw", details=ProviderDetails({"field": "reasoning_content"}))),
        TextPart("Let me check."),
        ToolCallPart("weather", '{"city":"Paris"}', "c1"),
    )
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens,
            usage.input_audio_tokens, usage.reasoning_tokens) == (100, 40, 60, 5, 30)
    assert dict(usage.details) == {"prompt_cache_hit_tokens": 60, "accepted_prediction_tokens": 2}
    assert response.finish_reason is FinishReason.tool_call
    assert response.raw_finish_reason == "tool_calls"
    assert response.model_name == "served-model" and response.provider_response_id == "chatcmpl-1"
    assert response.provider_details == ProviderDetails({"system_fingerprint": "fp"})


@pytest.mark.parametrize(
    ("raw", "reason"),
    [("stop", FinishReason.stop), ("length", FinishReason.length),
     ("tool_calls", FinishReason.tool_call), ("function_call", FinishReason.tool_call),
     ("content_filter", FinishReason.content_filter), ("eos", FinishReason.other),
     (None, None)],
)
def test_finish_reasons_are_normalized(raw: str | None, reason: FinishReason | None) -> None:
    assert oc.finish_reason(raw) is reason


@pytest.mark.parametrize(
    ("document", "path"),
    [
        ([], "$"),
        ({}, "$.choices"),
        ({"choices": []}, "$.choices"),
        ({"choices": ["x"]}, "$.choices[0]"),
        ({"choices": [{}]}, "$.choices[0].message"),
        ({"choices": [{"message": {"content": 5}}]}, "$.choices[0].message.content"),
        ({"choices": [{"message": {"tool_calls": {}}}]}, "$.choices[0].message.tool_calls"),
        ({"choices": [{"message": {"tool_calls": [{"function": {"name": "f"}}]}}]},
         "$.choices[0].message.tool_calls[0].id"),
        ({"choices": [{"message": {"tool_calls": [{"id": "c", "function": {"name": ""}}]}}]},
         "$.choices[0].message.tool_calls[0].function.name"),
        ({"choices": [{"message": {"tool_calls": [
            {"id": "c", "function": {"name": "f", "arguments": 3}}]}}]},
         "$.choices[0].message.tool_calls[0].function.arguments"),
        ({"choices": [{"message": {}, "finish_reason": 1}]}, "$.choices[0].finish_reason"),
        ({"choices": [{"message": {}}], "usage": []}, "$.usage"),
        ({"choices": [{"message": {}}],
          "usage": {"prompt_tokens": 1, "prompt_tokens_details": {"cached_tokens": 2}}}, "$.usage"),
    ],
)
def test_malformed_responses_raise_the_named_decode_error_with_a_path(
    document: Any, path: str
) -> None:
    with pytest.raises(oc.OpenAICompatibleDecodeError) as caught:
        oc.decode_response(document, provider_name="gw")
    assert caught.value.path == path
    assert isinstance(caught.value, ProviderResponseDecodeError)
    assert isinstance(caught.value, ProviderError)
    assert caught.value.provider_name == "gw"


def test_decode_error_pickles_with_its_path() -> None:
    with pytest.raises(oc.OpenAICompatibleDecodeError) as caught:
        oc.decode_response({}, provider_name="gw")
    clone = pickle.loads(pickle.dumps(caught.value))
    assert (str(clone), clone.path, clone.provider_name) == (
        str(caught.value), "$.choices", "gw")


# ------------------------------------------------------------------------------ streaming

STREAM = (
    'data: {"id":"s1","model":"m","choices":[{"index":0,"delta":{"role":"assistant",'
    '"reasoning_content":"Hm"},"finish_reason":null}]}\n\n'
    ': keep-alive\n\n'
    'data: {"choices":[{"index":0,"delta":{"reasoning_content":"m."}}]}\n\n'
    'data: {"choices":[{"index":0,"delta":{"content":"Héllo"}}]}\r\n\r\n'
    'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function",'
    '"function":{"name":"weather","arguments":"{\\"ci"}},{"index":1,"id":"c2",'
    '"function":{"name":"clock","arguments":""}}]}}]}\n\n'
    'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":'
    '{"arguments":"ty\\":\\"Rome\\"}"}}]}}]}\n\n'
    'data: {"choices":[{"index":0,"delta":{"content":" world"},"finish_reason":"tool_calls"}]}\n\n'
    'data: {"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":7,'
    '"completion_tokens_details":{"reasoning_tokens":2}}}\n\n'
    'data: [DONE]\n\n'
).encode()

EXPECTED_EVENTS = [
    PartStartEvent(0, ThinkingPart("Hm", provider=ProviderPart(
        "gw", details=ProviderDetails({"field": "reasoning_content"})))),
    PartDeltaEvent(0, ThinkingPartDelta("m.")),
    PartStartEvent(1, TextPart("Héllo")),
    PartStartEvent(2, ToolCallPart("weather", '{"ci', "c1")),
    PartStartEvent(3, ToolCallPart("clock", "", "c2")),
    PartDeltaEvent(2, ToolCallPartDelta(args_delta='ty":"Rome"}')),
    PartDeltaEvent(1, TextPartDelta(" world")),
    PartEndEvent(0, ThinkingPart("Hmm.", provider=ProviderPart(
        "gw", details=ProviderDetails({"field": "reasoning_content"})))),
    PartEndEvent(1, TextPart("Héllo world")),
    PartEndEvent(2, ToolCallPart("weather", '{"city":"Rome"}', "c1")),
    PartEndEvent(3, ToolCallPart("clock", "", "c2")),
]


def _decode_chunks(chunks: list[bytes]) -> tuple[list[Any], oc.StreamDecoder]:
    decoder = oc.StreamDecoder("gw")
    return feed_chunks(decoder, chunks), decoder


def test_stream_decoder_yields_the_same_events_at_every_byte_boundary() -> None:
    whole, decoder = _decode_chunks([STREAM])
    assert whole == EXPECTED_EVENTS
    assert decoder.usage.reasoning_tokens == 2 and decoder.usage.total_tokens == 16
    assert decoder.finish_reason is FinishReason.tool_call and decoder.response_id == "s1"
    for cut in range(1, len(STREAM)):
        events, _ = _decode_chunks([STREAM[:cut], STREAM[cut:]])
        assert events == whole, cut
    accumulator = PartAccumulator()
    for event in whole:
        accumulator.apply(event)
    assert accumulator.parts()[2] == ToolCallPart("weather", '{"city":"Rome"}', "c1")


def test_stream_reports_malformed_chunks_and_in_stream_errors() -> None:
    with pytest.raises(oc.OpenAICompatibleDecodeError) as caught:
        _decode_chunks([b'data: {"choices":[{"delta":{"tool_calls":[{"index":0}]}}]}\n\n'])
    assert caught.value.path == "$[chunk 0].choices[0].delta.tool_calls[0].id"
    with pytest.raises(ProviderServerError):
        _decode_chunks([b'data: {"error":{"message":"upstream died"}}\n\n'])
    with pytest.raises(ProviderResponseDecodeError):
        _decode_chunks([b"data: {not json\n\n"])


def test_a_stream_cut_off_before_finish_reason_and_done_is_a_decode_error() -> None:
    events = STREAM.split(b"\n\n")
    finish_chunk = next(i for i, e in enumerate(events) if b"\"finish_reason\":\"" in e)
    for keep in range(1, finish_chunk + 1):  # every cut before the finish_reason chunk
        cut = b"\n\n".join(events[:keep]) + b"\n\n"
        with pytest.raises(oc.OpenAICompatibleDecodeError, match="cut off") as caught:
            _decode_chunks([cut])
        assert caught.value.path == "$stream"
    # the finish_reason chunk arrived: a server that omits [DONE] is still complete
    whole = b"\n\n".join(events[:finish_chunk + 1]) + b"\n\n"
    assert [type(e) for e in _decode_chunks([whole])[0]][-1] is PartEndEvent
    # [DONE] without any finish_reason is an explicit, complete end too
    done_only = b'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\ndata: [DONE]\n\n'
    assert _decode_chunks([done_only])[0][-1] == PartEndEvent(0, TextPart("x"))


def test_the_client_rejects_a_truncated_stream() -> None:
    truncated = STREAM[:STREAM.index(b'data: {"choices":[{"index":0,"delta":{"content":" world"}')]
    client, _ = _client(lambda request: MockResponse(200, (), truncated), "m")
    with pytest.raises(oc.OpenAICompatibleDecodeError, match="cut off"):
        with client.stream(_request()) as streamed:
            list(streamed)


def test_client_stream_over_http_builds_the_buffered_equivalent() -> None:
    client, transport = _client(lambda request: MockResponse(200, (), STREAM), "m")
    with client.stream(_request()) as streamed:
        events = list(streamed)
    assert len(events) == len(EXPECTED_EVENTS)
    response = streamed.response()
    assert response.text == "Héllo world" and response.usage.input_tokens == 9
    assert response.provider_response_id == "s1"
    assert json.loads(transport.requests[0].body)["stream_options"] == {"include_usage": True}


# ------------------------------------------------------------------------------ client


def test_client_sends_relative_endpoint_with_bearer_auth_and_merged_settings() -> None:
    client, transport = _client(lambda request: _reply("pong"), "m",
                                settings=ModelSettings(max_tokens=10, temperature=0.1))
    request = _request(settings=ModelSettings(temperature=0.7,
                                              extra_headers=(("X-Trace", "t1"),)))
    response = client.request(request)
    sent = transport.requests[0]
    assert sent.url == ROOT + "/chat/completions"
    assert dict(sent.headers)["Authorization"] == "Bearer sk-test"
    assert dict(sent.headers)["X-Trace"] == "t1"
    assert json.loads(sent.body) == {"model": "m", "messages": [{"role": "user", "content": "hi"}],
                                     "max_tokens": 10, "temperature": 0.7}
    assert response.text == "pong" and response.provider_name == "openai_compatible"
    assert client.model() is client and client.profile == profiles.COMPATIBLE_FULL


def test_unsupported_features_fail_before_any_io() -> None:
    def never(request: Any) -> MockResponse:
        raise AssertionError("transport must not be called")

    client, transport = _client(never, fallback_profile="unknown")
    for request in (
        _request(tools=(WEATHER,)),
        _request(settings=ModelSettings(temperature=0.2)),
        _request(output_format=OutputFormat("json_object")),
        _request(RequestMessage(parts=(UserPromptPart(
            (ImageContent(UrlSource("https://x.example.com/a.png")),)),))),
    ):
        with pytest.raises((UnsupportedModelFeature, UnsupportedModelSetting)):
            client.request(request)
        with pytest.raises((UnsupportedModelFeature, UnsupportedModelSetting)):
            client.stream(request)
    assert transport.requests == []


@pytest.mark.parametrize(
    ("status", "error"),
    [(429, RateLimited), (500, ProviderServerError), (503, ProviderServerError),
     (400, ProviderBadRequest), (401, ProviderAuthError)],
)
def test_error_statuses_map_to_normalized_provider_errors(status: int, error: type) -> None:
    body = MockResponse.of_json({"error": {"code": "c", "message": "nope sk-test"}}, status,
                                (("retry-after", "2"),))
    client, _ = _client(lambda request: body)
    with pytest.raises(error) as caught:
        client.request(_request())
    assert caught.value.status == status and caught.value.code == "c"
    assert "sk-test" not in str(caught.value)
    with pytest.raises(error):
        client.stream(_request())


def test_idempotency_header_is_opt_in_per_client() -> None:
    client, transport = _client(lambda request: _reply(), idempotency_header="Idempotency-Key")
    client.request(_request(idempotency_key="k-1"))
    plain, plain_transport = _client(lambda request: _reply())
    plain.request(_request(idempotency_key="k-1"))
    assert dict(transport.requests[0].headers)["Idempotency-Key"] == "k-1"
    assert "Idempotency-Key" not in dict(plain_transport.requests[0].headers)


def test_provider_requires_a_root_and_init_with_options_selects_identity() -> None:
    with pytest.raises(ValueError):
        oc.Provider("k", MockTransport(lambda r: _reply()))
    provider = oc.Provider.init_with_options("k", MockTransport(lambda r: _reply()),
                                             base_url=ROOT, name="my-gateway")
    assert provider.name == "my-gateway" and provider.api_root == ROOT + "/"
    assert "k" not in repr(provider)


# ------------------------------------------------------------------------------ corpus replay


def _generic(transport: Any) -> oc.Client:
    provider = oc.Provider("k", transport, base_url="https://compatible.test/v1",
                           url_policy=UrlPolicy(allow_local_network=True))
    return oc.Client("compat-test", provider)


def _synthetic_loop(responses: tuple[ResponseMessage, ...]) -> None:
    first, second = responses
    assert first.parts == (ToolCallPart("weather", '{"city":"Madrid"}', "call_compat"),)
    assert (first.usage.input_tokens, first.usage.output_tokens) == (10, 4)
    assert second.text == "It is sunny in Madrid."


def _synthetic(streaming: bool) -> list[Replay]:
    name = "openai_compatible_stream_tool_loop.yaml" if streaming else "openai_compatible_tool_loop.yaml"
    path = corpus_file(name)
    if path is None:
        return []
    return [Replay(id=f"corpus-{path.stem}", path=path, client=_generic, streamed=streaming,
                   messages=(RequestMessage(parts=(SystemPromptPart("You are concise."),
                                                   UserPromptPart("What is the weather?"))),),
                   tools=(ToolDefinition("weather", "Get weather.", {"type": "object"}),),
                   tool_result={"temperature_c": 31}, extra_check=_synthetic_loop,
                   reports_finish=streaming)]  # the buffered synthetic call states no finish_reason


@pytest.mark.parametrize("case", replay_params(local_cases("chat", ["buffered_text", "streamed_text"])))
def test_recorded_text_answers_replay_strictly(case: Replay) -> None:
    assert_text_answer(case.run())


@pytest.mark.parametrize("case", replay_params(
    local_cases("chat", ["tool_loop", "stream_tool_loop"]) + _synthetic(False) + _synthetic(True)))
def test_recorded_tool_loops_replay_strictly(case: Replay) -> None:
    assert_tool_loop(case.run(), "weather", case.reports_finish)


@pytest.mark.parametrize("case", replay_params(local_cases("chat", ["context_overflow"])))
def test_a_recorded_refusal_maps_to_a_bad_request(case: Replay) -> None:
    assert_refused(case)


@pytest.mark.parametrize("case", replay_params(local_cases("chat", ["structured_output"])))
def test_recorded_structured_output_replays_strictly(case: Replay) -> None:
    assert_structured_answer(case.run())


@pytest.mark.parametrize("case", replay_params(local_cases("chat", ["thinking_stream"])))
def test_recorded_thinking_streams_replay_strictly(case: Replay) -> None:
    events: list[Any] = []
    assert_thinking_answer(case.run(events=events), events)


def test_a_follow_up_replays_reasoning_in_the_named_field() -> None:
    """With ``replay_reasoning_field`` the follow-up sends the earlier answer's reasoning back
    in that assistant field, beside its text."""
    (case,) = local_cases("chat", ["thinking_stream"])
    answer, _ = case.run()
    sent = ReplayTransport.load(case.path).interactions[1].request_body.content
    assert isinstance(sent, dict) and sent["reasoning_effort"] == "high"
    assert sent["messages"][3] == {"role": "assistant", "content": answer.text,
                                   "reasoning_content": answer.parts[0].content}  # type: ignore[union-attr]


def _corpus_error_sequence(path: Path) -> None:
    transport = ReplayTransport.load(path)
    provider = oc.Provider("k", transport, base_url="https://compatible.test/v1",
                           url_policy=UrlPolicy(allow_local_network=True))
    client = oc.Client("contract-model", provider)
    request = _request(RequestMessage(parts=(UserPromptPart("Reply with exactly: pong"),)),
                       settings=ModelSettings(max_tokens=64))
    with pytest.raises(RateLimited) as limited:
        client.request(request)
    assert (limited.value.retry_after_s, limited.value.request_id) == (3.0, "req_rate_compatible")
    assert client.request(request).text == "pong"
    for _ in range(2):
        with pytest.raises(ProviderServerError):
            client.request(request)
    with pytest.raises(oc.OpenAICompatibleDecodeError) as decode:
        client.request(request)
    assert decode.value.status == 200
    with pytest.raises(ProviderBadRequest) as bad:
        client.request(request)
    assert bad.value.code == "bad_request_code"
    transport.assert_all_consumed()


@pytest.mark.parametrize("check", [litellm_check("chat"), *error_sequence_checks(
    "chat", "errors/openai_compatible.yaml", _corpus_error_sequence)])
def test_recorded_error_sequence_maps_statuses_and_decode_failures(check: Callable[[], None]) -> None:
    check()



def test_provider_level_idempotency_header_reaches_the_profile_and_the_wire() -> None:
    transport = MockTransport(lambda request: _reply())
    provider = oc.Provider("k", transport, base_url=ROOT, idempotency_header="X-Gateway-Key")
    client = oc.Client("compat-test", provider)
    assert client.profile.idempotency_header == "X-Gateway-Key"  # so the agent mints keys
    client.request(_request(idempotency_key="k-2"))
    assert dict(transport.requests[0].headers)["X-Gateway-Key"] == "k-2"
    own = oc.Client("compat-test", provider, idempotency_header="Idempotency-Key")
    assert own.profile.idempotency_header == "Idempotency-Key"


def test_annotations_and_refusals_are_kept_alike_buffered_and_streamed() -> None:
    citation = {"type": "url_citation",
                "url_citation": {"url": "https://example.com", "title": "E", "start_index": 0,
                                 "end_index": 5}}
    buffered = oc.decode_response({
        "id": "c9", "model": "m", "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": "Sunny", "refusal": "partly",
            "annotations": [citation, citation]}}],
    })
    assert buffered.provider_details == ProviderDetails(
        {"refusal": "partly", "annotations": [citation, citation]})

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return "data: " + json.dumps({"id": "c9", "model": "m", "choices": [choice]}) + "\n\n"

    stream = (chunk({"role": "assistant", "content": "Sun", "annotations": [citation]})
              + chunk({"refusal": "part"}) + chunk({"content": "ny", "refusal": "ly"})
              + chunk({"annotations": [citation]}, "stop") + "data: [DONE]\n\n")
    client, _ = _client(lambda r: MockResponse.of_text(stream))
    with client.stream(ModelRequest(messages=(RequestMessage.user("x"),))) as streamed:
        list(streamed)
    assert streamed.response().provider_details == buffered.provider_details
    assert streamed.response().parts == buffered.parts


# ------------------------------------------------------------------ real transport, live stream


def test_a_streamed_delta_reaches_the_agent_before_the_server_sends_the_rest() -> None:
    """Through the real HttpTransport on loopback: the first text delta must be visible to
    the caller while the server is still holding back the rest of the answer."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from zigai.agent import Agent, PartialOutputEvent
    from zigai.transport import HttpTransport

    first_seen = threading.Event()
    waited: list[bool] = []

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        body = {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}
        return b"data: " + json.dumps(body).encode() + b"\n\n"

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(chunk({"role": "assistant", "content": "Hel"}))
            self.wfile.flush()
            waited.append(first_seen.wait(timeout=5.0))  # bounded: never hangs the suite
            self.wfile.write(chunk({"content": "lo"}, "stop") + b"data: [DONE]\n\n")
            self.wfile.flush()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        policy = UrlPolicy.local_development()
        with HttpTransport(url_policy=policy, default_timeout_s=10.0) as transport:
            provider = oc.Provider("key", transport, url_policy=policy,
                                   base_url=f"http://127.0.0.1:{server.server_address[1]}/v1")
            agent = Agent(oc.Client("m", provider, fallback_profile="full"))
            with agent.run_stream("hi") as stream:
                partials = []
                for event in stream:
                    if isinstance(event, PartialOutputEvent):
                        partials.append(event.output)
                        first_seen.set()
                with stream.result() as result:
                    assert result.output == "Hello"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5.0)
    assert partials == ["Hel", "Hello"]
    assert waited == [True]


@pytest.mark.parametrize(
    ("chunk", "path"),
    [
        ('[1]', "$[chunk 0]"),
        ('{"choices":{}}', "$[chunk 0].choices"),
        ('{"choices":[1]}', "$[chunk 0].choices[0]"),
        ('{"choices":[{"delta":[]}]}', "$[chunk 0].choices[0].delta"),
        ('{"choices":[{"delta":{"reasoning_content":1}}]}',
         "$[chunk 0].choices[0].delta.reasoning_content"),
        ('{"choices":[{"delta":{"content":1}}]}', "$[chunk 0].choices[0].delta.content"),
        ('{"choices":[{"delta":{"refusal":1}}]}', "$[chunk 0].choices[0].delta.refusal"),
        ('{"choices":[{"delta":{"annotations":{"a":1}}}]}', "$[chunk 0].choices[0].delta.annotations"),
        ('{"choices":[{"delta":{"tool_calls":{}}}]}', "$[chunk 0].choices[0].delta.tool_calls"),
        ('{"choices":[{"delta":{"tool_calls":[1]}}]}', "$[chunk 0].choices[0].delta.tool_calls[0]"),
        ('{"choices":[{"delta":{"tool_calls":[{"index":"0"}]}}]}',
         "$[chunk 0].choices[0].delta.tool_calls[0].index"),
        ('{"choices":[{"delta":{"tool_calls":[{"function":[1]}]}}]}',
         "$[chunk 0].choices[0].delta.tool_calls[0].function"),
        ('{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":1}}]}}]}',
         "$[chunk 0].choices[0].delta.tool_calls[0].function.arguments"),
        ('{"choices":[{"delta":{"tool_calls":[{"id":"c1","function":{}}]}}]}',
         "$[chunk 0].choices[0].delta.tool_calls[0].function.name"),
    ],
)
def test_every_malformed_stream_chunk_names_its_path(chunk: str, path: str) -> None:
    with pytest.raises(oc.OpenAICompatibleDecodeError) as caught:
        _decode_chunks([f"data: {chunk}\n\n".encode()])
    assert caught.value.path == path
    assert caught.value.provider_name == "gw"


def test_stream_details_other_choices_and_events_after_done() -> None:
    stream = (
        b'data: {"choices":null}\n\n'
        b'data: \n\n'
        b'data: {"choices":[{"index":1,"delta":{"content":"other choice"}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{"content":"a","refusal":"no","annotations":[{"u":1}],'
        b'"tool_calls":[{"index":0,"id":"c1","function":{"name":"f"}}]},'
        b'"logprobs":{"content":[{"t":"a"}]}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{"refusal":"!","tool_calls":[{"index":0,'
        b'"function":{}}]},"logprobs":{"content":[{"t":"b"}]},"finish_reason":"stop"}]}\n\n'
        b'data: [DONE]\n\n'
        b'data: {"choices":[{"index":0,"delta":{"content":"late"}}]}\n\n'
    )
    events, decoder = _decode_chunks([stream])
    assert [e for e in events if isinstance(e, PartEndEvent)] == [
        PartEndEvent(0, TextPart("a")), PartEndEvent(1, ToolCallPart("f", "", "c1")),
    ]
    assert decoder.details["refusal"] == "no!"
    assert decoder.details["annotations"] == [{"u": 1}]
    assert decoder.details["logprobs"] == {"content": [{"t": "a"}, {"t": "b"}]}
    assert decoder.finish() == []  # finished once; later chunks and finishes add nothing
