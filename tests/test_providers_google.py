"""zigai.providers.google / vertex_ai: exact wire JSON, schema stripping, decoding, streams, replay."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.cassettes import ReplayTransport
from support.katan_model import error_sequence_checks, katan_cases
from support.mock_transport import MockResponse, MockTransport
from support.replays import (
    Replay,
    assert_structured_answer,
    assert_text_answer,
    assert_tool_loop,
    corpus_file,
    replay_params,
)
from support.sse_replay import feed_chunks

from zigai.messages import (
    BytesSource,
    FinishReason,
    ImageContent,
    NativeToolCallPart,
    NativeToolReturnPart,
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
from zigai.provider import ProviderResponseDecodeError, ProviderServerError, RateLimited
from zigai.providers import google as G
from zigai.providers import vertex_ai as V
from zigai.security import UrlPolicy
from zigai.settings import ExtraBodyRejected, ModelSettings, ProviderExtraBody

WEATHER = ToolDefinition("weather", "Get weather.", {"type": "object"})
SIG = ProviderPart("gcp.gen_ai", details=ProviderDetails({"thought_signature": "S1"}))


def _user(text: str) -> RequestMessage:
    return RequestMessage.user(text)


def test_history_tools_and_signatures_encode_exactly() -> None:
    messages = (
        RequestMessage(parts=(SystemPromptPart("Be brief."), UserPromptPart("Weather?"))),
        ResponseMessage(parts=(
            ThinkingPart("plan", signature="T", provider=ProviderPart("gcp.gen_ai")),
            ThinkingPart("foreign", signature="x", provider=ProviderPart("anthropic")),
            TextPart("ok", provider=SIG),
            ToolCallPart("weather", '{"city":"Madrid"}', "c1", provider=SIG),
        )),
        RequestMessage(parts=(
            ToolReturnPart("weather", "c1", {"t": 31}),
            ToolReturnPart("weather", "c2", "boom", outcome=ToolOutcome.error),
            RetryPromptPart("fix", tool_name="weather", tool_call_id="c3"),
            RetryPromptPart("plain"),
        )),
    )
    body = G.encode_request(ModelRequest(messages=messages, instructions=("Use tools.",), tools=(WEATHER,)))
    assert body == {
        "systemInstruction": {"parts": [{"text": "Be brief."}, {"text": "Use tools."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "Weather?"}]},
            {"role": "model", "parts": [
                {"text": "plan", "thought": True, "thoughtSignature": "T"},
                {"text": "ok", "thoughtSignature": "S1"},
                {"functionCall": {"name": "weather", "args": {"city": "Madrid"}, "id": "c1"},
                 "thoughtSignature": "S1"},
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "weather", "response": {"result": {"t": 31}}, "id": "c1"}},
                {"functionResponse": {"name": "weather", "response": {"error": "boom"}, "id": "c2"}},
                {"functionResponse": {"name": "weather", "response": {"error": "fix"}, "id": "c3"}},
                {"text": "plain"},
            ]},
        ],
        "tools": [{"functionDeclarations": [
            {"name": "weather", "description": "Get weather.", "parameters": {"type": "object"}}]}],
    }
    # another provider identity (Vertex) does not receive AI Studio signatures
    vertex = G.encode_contents(messages, "gcp.vertex_ai")[1][1]["parts"]
    assert vertex == [{"text": "ok"}, {"functionCall": {"name": "weather", "args": {"city": "Madrid"}, "id": "c1"}}]


def test_every_settings_field_and_output_format_has_its_wire_name() -> None:
    settings = ModelSettings(
        max_tokens=9, temperature=0.2, top_p=0.8, top_k=4, seed=7, stop_sequences=("X",),
        presence_penalty=0.1, frequency_penalty=0.3, logprobs=True, top_logprobs=2,
        tool_choice="required", allowed_tools=("weather",), thinking_budget_tokens=512,
    )
    request = ModelRequest(
        messages=(_user("hi"),), tools=(WEATHER,), settings=settings,
        output_format=OutputFormat("json_schema", name="o", schema={"type": "object", "additionalProperties": False}),
        managed_tools=(ManagedTool("web_search"),),
    )
    body = G.encode_request(request, include_thoughts=True)
    assert body["generationConfig"] == {
        "responseMimeType": "application/json",
        "responseJsonSchema": {"type": "object", "additionalProperties": False},
        "maxOutputTokens": 9, "temperature": 0.2, "topP": 0.8, "topK": 4, "seed": 7,
        "presencePenalty": 0.1, "frequencyPenalty": 0.3, "responseLogprobs": True, "logprobs": 2,
        "stopSequences": ["X"], "thinkingConfig": {"thinkingBudget": 512, "includeThoughts": True},
    }
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["weather"]}}
    assert body["tools"][1] == {"googleSearch": {}}
    level = G.encode_request(ModelRequest(messages=(_user("x"),), settings=ModelSettings(thinking="high")))
    assert level["generationConfig"] == {"thinkingConfig": {"thinkingLevel": "HIGH"}}
    json_mode = G.encode_request(ModelRequest(messages=(_user("x"),), output_format=OutputFormat("json_object")))
    assert json_mode["generationConfig"] == {"responseMimeType": "application/json"}


def test_unsupported_schema_keywords_are_stripped_recursively() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object", "additionalProperties": False,
        "properties": {
            "additionalProperties": {"type": "string", "exclusiveMinimum": 1},
            "tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}},
            "mode": {"const": "x"},
            "maybe": {"type": ["integer", "null"], "oneOf": [{"minimum": 1, "multipleOf": 2}]},
        },
        "$defs": {"Tag": {"type": "object", "properties": {"n": {"type": "string"}},
                          "additionalProperties": False, "required": ["n"]}},
    }
    assert G.gemini_schema(schema) == {
        "type": "object",
        "properties": {
            "additionalProperties": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "string"}},
                                                "required": ["n"]}},
            "mode": {"enum": ["x"]},
            "maybe": {"type": "integer", "nullable": True, "anyOf": [{"minimum": 1}]},
        },
    }
    with pytest.raises(G.GoogleEncodeError):
        G.gemini_schema({"$defs": {"N": {"properties": {"next": {"$ref": "#/$defs/N"}}}}, "$ref": "#/$defs/N"})


def test_images_inline_base64_and_extra_body() -> None:
    content = (ImageContent(BytesSource(b"\x89PNG", "image/png")),)
    body = G.encode_request(ModelRequest(messages=(RequestMessage(parts=(UserPromptPart(content),)),),
                                         settings=ModelSettings(extra_body=ProviderExtraBody("google", {"cachedContent": "c/1"}))))
    assert body["contents"][0]["parts"] == [{"inlineData": {"mimeType": "image/png", "data": "iVBORw=="}}]
    assert body["cachedContent"] == "c/1"
    for extra in (ProviderExtraBody("google", {"contents": []}), ProviderExtraBody("anthropic", {"a": 1})):
        with pytest.raises(ExtraBodyRejected):
            G.encode_request(ModelRequest(messages=(_user("x"),), settings=ModelSettings(extra_body=extra)))


def test_unsupported_features_fail_before_io() -> None:
    transport = MockTransport(lambda r: pytest.fail("transport must not be called"))
    client = G.Client("gemini-2.5-flash", G.Provider("k", transport))
    for request in (
        ModelRequest(messages=(_user("x"),), settings=ModelSettings(parallel_tool_calls=False)),
        ModelRequest(messages=(_user("x"),), settings=ModelSettings(thinking="high")),  # 2.5: budgets only
        ModelRequest(messages=(_user("x"),), settings=ModelSettings(service_tier="flex")),
    ):
        with pytest.raises(Exception) as info:
            client.request(request)
        assert "Unsupported" in type(info.value).__name__
    with pytest.raises(G.GoogleEncodeError):
        G.Client("../etc", G.Provider("k", transport))
    assert transport.requests == []
    assert isinstance(UnsupportedModelFeature("x"), Exception)


def test_decode_parts_usage_and_finish() -> None:
    response = G.decode_response({
        "candidates": [{"content": {"role": "model", "parts": [
            {"text": "think", "thought": True, "thoughtSignature": "T"},
            {"text": "Hel"}, {"text": "lo", "thoughtSignature": "S"},
            {"functionCall": {"name": "f", "args": {"a": 1}}},
            {"functionCall": {"name": "g"}},
        ]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 10, "cachedContentTokenCount": 4, "candidatesTokenCount": 5,
                          "thoughtsTokenCount": 7, "toolUsePromptTokenCount": 2},
        "responseId": "r1", "modelVersion": "gemini-x",
    })
    assert response.parts == (
        ThinkingPart("think", signature="T", provider=ProviderPart("gcp.gen_ai")),
        TextPart("Hello", provider=ProviderPart("gcp.gen_ai", details=ProviderDetails({"thought_signature": "S"}))),
        ToolCallPart("f", '{"a":1}', "google-call-0"),
        ToolCallPart("g", "{}", "google-call-1"),
    )
    assert response.finish_reason is FinishReason.tool_call and response.raw_finish_reason == "STOP"
    u = response.usage
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens) == (12, 4, 12, 7)
    blocked = G.decode_response({"promptFeedback": {"blockReason": "SAFETY"}})
    assert blocked.parts == () and blocked.finish_reason is FinishReason.content_filter
    assert G.finish_reason("MAX_TOKENS") is FinishReason.length
    assert G.finish_reason("RECITATION") is FinishReason.content_filter


@pytest.mark.parametrize(
    ("body", "path"),
    [({}, "$.candidates"), ([], "$"), ({"candidates": [{"content": {"parts": [{"functionCall": {"args": {}}}]}}]},
                                       "$.candidates[0].content.parts[0].functionCall.name"),
     ({"candidates": [{"content": {"parts": "x"}}]}, "$.candidates[0].content.parts"),
     ({"candidates": [], "promptFeedback": {}, "usageMetadata": {"promptTokenCount": "1"}},
      "$.usageMetadata.promptTokenCount")],
)
def test_malformed_responses_raise_named_decode_errors(body: object, path: str) -> None:
    with pytest.raises(G.GoogleDecodeError) as info:
        G.decode_response(body)
    assert info.value.path == path and isinstance(info.value, ProviderResponseDecodeError)


CODE_PARTS = [
    {"text": "Let me compute."},
    {"executableCode": {"language": "PYTHON", "code": "print(6 * 7)"}},
    {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "42\n"}},
    {"executableCode": {"id": "x9", "language": "PYTHON", "code": "1/0"}, "thoughtSignature": "S2"},
    {"codeExecutionResult": {"id": "x9", "outcome": "OUTCOME_FAILED", "output": "ZeroDivisionError"}},
    {"text": "It is 42."},
]
OURS = ProviderPart("gcp.gen_ai", details=ProviderDetails({"synthesized_id": True}))
GIVEN = ProviderPart("gcp.gen_ai", details=ProviderDetails({"thought_signature": "S2"}))
CODE_DECODED = (
    TextPart("Let me compute."),
    NativeToolCallPart("code_execution", "google-code-0", OURS,
                       args='{"language":"PYTHON","code":"print(6 * 7)"}'),
    NativeToolReturnPart("code_execution", "google-code-0", OURS,
                         content={"outcome": "OUTCOME_OK", "output": "42\n"}),
    NativeToolCallPart("code_execution", "x9", GIVEN, args='{"language":"PYTHON","code":"1/0"}'),
    NativeToolReturnPart("code_execution", "x9", ProviderPart("gcp.gen_ai"),
                         content={"outcome": "OUTCOME_FAILED", "output": "ZeroDivisionError"},
                         outcome=ToolOutcome.error),
    TextPart("It is 42."),
)


def test_code_execution_parts_are_kept_buffered_and_streamed() -> None:
    candidate = {"content": {"role": "model", "parts": CODE_PARTS}, "finishReason": "STOP"}
    assert G.decode_response({"candidates": [candidate]}).parts == CODE_DECODED
    stream = "".join(
        "data: " + json.dumps({"candidates": [{"content": {"parts": [part]}}]}) + "\n\n"
        for part in CODE_PARTS
    ).encode()
    events, _ = _decode_chunks([stream])
    assert tuple(e.part for e in events if isinstance(e, PartEndEvent)) == CODE_DECODED
    for cut in range(1, len(stream), 7):
        assert _decode_chunks([stream[:cut], stream[cut:]])[0] == events, cut


def test_code_execution_replays_to_its_own_provider_only() -> None:
    history = (_user("6*7?"), ResponseMessage(parts=CODE_DECODED), _user("thanks"))
    body = G.encode_request(ModelRequest(messages=history))
    assert body["contents"][1] == {"role": "model", "parts": [
        {"text": "Let me compute."},
        {"executableCode": {"language": "PYTHON", "code": "print(6 * 7)"}},  # our id stays ours
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "42\n"}},
        {"executableCode": {"language": "PYTHON", "code": "1/0", "id": "x9"}, "thoughtSignature": "S2"},
        {"codeExecutionResult": {"outcome": "OUTCOME_FAILED", "output": "ZeroDivisionError", "id": "x9"}},
        {"text": "It is 42."},
    ]}
    vertex_body = G.encode_request(ModelRequest(messages=history), provider_name="gcp.vertex_ai")
    assert vertex_body["contents"][1]["parts"] == [{"text": "Let me compute."}, {"text": "It is 42."}]


@pytest.mark.parametrize(
    ("parts", "path"),
    [([{"codeExecutionResult": {"outcome": "OUTCOME_OK"}}], "$.candidates[0].content.parts[0].codeExecutionResult"),
     ([{"executableCode": {"language": "PYTHON"}}], "$.candidates[0].content.parts[0].executableCode.code"),
     ([{"executableCode": {"code": "x"}}, {"codeExecutionResult": {"output": "1"}}],
      "$.candidates[0].content.parts[1].codeExecutionResult.outcome")],
)
def test_malformed_code_execution_parts_raise_named_decode_errors(parts: list, path: str) -> None:
    with pytest.raises(G.GoogleDecodeError) as info:
        G.decode_response({"candidates": [{"content": {"parts": parts}}]})
    assert info.value.path == path


STREAM = (
    'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"pl","thought":true}]}}]}\n\n'
    'data: {"candidates":[{"content":{"parts":[{"text":"an","thought":true,"thoughtSignature":"T"}]}}]}\n\r\n'
    'data: {"candidates":[{"content":{"parts":[{"text":"Hi é"}]}}]}\r\n\r\n'
    'data: {"candidates":[{"content":{"parts":[{"text":"","thoughtSignature":"S"}]}}]}\n\n'
    'data: {"candidates":[{"content":{"parts":[{"functionCall":{"id":"c","name":"f","args":{"x":[1]}}}]},'
    '"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"thoughtsTokenCount":1},'
    '"responseId":"r"}\n\n'
)


def _decode_chunks(chunks: list[bytes]) -> tuple[list, G.StreamDecoder]:
    decoder = G.StreamDecoder()
    return feed_chunks(decoder, chunks), decoder


def test_stream_split_at_every_byte_boundary_yields_the_same_events() -> None:
    data = STREAM.encode()
    whole, decoder = _decode_chunks([data])
    ends = [e.part for e in whole if isinstance(e, PartEndEvent)]
    assert ends == [
        ThinkingPart("plan", signature="T", provider=ProviderPart("gcp.gen_ai")),
        TextPart("Hi é", provider=ProviderPart("gcp.gen_ai", details=ProviderDetails({"thought_signature": "S"}))),
        ToolCallPart("f", '{"x":[1]}', "c"),
    ]
    assert decoder.finish_reason is FinishReason.tool_call and decoder.usage.output_tokens == 3
    for cut in range(1, len(data)):
        assert _decode_chunks([data[:cut], data[cut:]])[0] == whole, cut


def test_stream_through_client_and_error_statuses() -> None:
    transport = MockTransport(lambda r: MockResponse.of_text(STREAM))
    client = G.Client("gemini-3-flash", G.Provider("key-1", transport))
    with client.stream(ModelRequest(messages=(_user("x"),))) as stream:
        list(stream)
    assert stream.response().text == "Hi é"
    request = transport.requests[0]
    assert request.url == ("https://generativelanguage.googleapis.com/v1beta/models/gemini-3-flash"
                           ":streamGenerateContent?alt=sse")
    assert ("x-goog-api-key", "key-1") in request.headers
    for status, cls in ((429, RateLimited), (503, ProviderServerError)):
        t = MockTransport(lambda r, s=status: MockResponse.of_json({"error": {"code": s, "message": "m"}}, status=s))
        with pytest.raises(cls):
            G.Client("gemini-3-flash", G.Provider("k", t)).request(ModelRequest(messages=(_user("x"),)))


def test_vertex_maps_resource_paths_with_bearer_auth_and_validates_segments() -> None:
    seen = []
    transport = MockTransport(lambda r: seen.append(r) or MockResponse.of_json(
        {"candidates": [{"content": {"parts": [{"text": "ok"}]}, "finishReason": "STOP"}]}))
    provider = V.Provider("tok", "my-project", "europe-west1", transport,
                          base_url=V.regional_api_base("europe-west1"))
    client = V.Client("gemini-2.5-flash", provider)
    assert client.request(ModelRequest(messages=(_user("x"),))).text == "ok"
    assert client.provider_name == "gcp.vertex_ai"
    assert seen[0].url == ("https://europe-west1-aiplatform.googleapis.com/v1/projects/my-project/locations/"
                           "europe-west1/publishers/google/models/gemini-2.5-flash:generateContent")
    names = {k.lower(): v for k, v in seen[0].headers}
    assert names["authorization"] == "Bearer tok" and "x-goog-api-key" not in names
    assert V.regional_api_base("global") == "https://aiplatform.googleapis.com/v1"
    for bad in (("tok", "Bad_Project", "us-central1"), ("tok", "p-1", "us/central")):
        with pytest.raises(V.InvalidVertexResource):
            V.Provider(*bad, transport)
    with pytest.raises(V.InvalidVertexResource):
        provider.resource_path("files/x:upload")


# ------------------------------------------------------------------------------ recorded replays
# Our own llm-katan recordings (cassettes/katan/google/) always; the shared corpus's Gemini
# recordings as extra cases when it is present.

SIMPLE = ["gemini_2_5_flash", "gemini_2_5_flash_lite", "gemini_2_5_pro", "gemini_3_1_flash_lite",
          "gemini_3_1_pro_preview", "gemini_3_5_flash", "gemini_3_7_flash", "gemini_3_flash_preview"]


def _first_body(path: Path) -> tuple[dict, str]:
    first = ReplayTransport.load(path).interactions[0]
    model = first.uri.split("/models/")[1].split(":")[0]
    return first.request_body.content, model  # type: ignore[union-attr, return-value]


def _corpus_client(model: str, base_url: str | None = None) -> Any:
    def client(transport: Any) -> G.Client:
        if base_url is None:
            return G.Client(model, G.Provider("k", transport))
        return G.Client(model, G.Provider("k", transport, base_url=base_url,
                                          url_policy=UrlPolicy(allow_local_network=True)))
    return client


def _corpus_case(relative: str, build: Callable[[Path, dict, str], dict[str, Any]]) -> list[Replay]:
    """The corpus recording ``relative`` as a replay (fields from ``build``), or nothing."""
    path = corpus_file(relative)
    if path is None:
        return []
    body, model = _first_body(path)
    fields = {"client": _corpus_client(model), **build(path, body, model)}
    return [Replay(id="corpus-" + relative.removesuffix(".yaml"), path=path, **fields)]


def _pong(responses: tuple[ResponseMessage, ...]) -> None:
    (response,) = responses
    assert response.text.strip().lower().startswith("pong")
    assert response.usage.output_tokens >= response.usage.reasoning_tokens


def _pong_case(folder: str, name: str) -> list[Replay]:
    return _corpus_case(f"{folder}/google_{name}.yaml", lambda path, body, model: {
        "messages": (_user(body["contents"][0]["parts"][0]["text"]),),
        "settings": ModelSettings(max_tokens=body["generationConfig"]["maxOutputTokens"]),
        "streamed": folder != "buffered", "extra_check": _pong})


def _thought_signed_done(responses: tuple[ResponseMessage, ...]) -> None:
    (response,) = responses
    assert response.text == "done" and response.usage.reasoning_tokens == 1849
    assert response.parts[0].provider is not None  # the thought signature rides on the text part


def _madrid_or_31(responses: tuple[ResponseMessage, ...]) -> None:
    assert "Madrid" in responses[-1].text or "31" in responses[-1].text


def _model_tool_loop(path: Path, body: dict, model: str) -> dict[str, Any]:
    declaration = body["tools"][0]["functionDeclarations"][0]
    recorded = ReplayTransport.load(path).interactions[1].request_body.content["contents"][-1]  # type: ignore[union-attr]
    return {"messages": (_user(body["contents"][0]["parts"][0]["text"]),),
            "instructions": (body["systemInstruction"]["parts"][0]["text"],),
            "tools": (ToolDefinition(declaration["name"], declaration["description"],
                                     {**declaration["parameters"], "additionalProperties": False}),),
            "tool_result": recorded["parts"][0]["functionResponse"]["response"]["result"],
            "extra_check": _madrid_or_31}


def _sunny_in_madrid(responses: tuple[ResponseMessage, ...]) -> None:
    assert responses[0].parts == (ToolCallPart("weather", '{"city":"Madrid"}', "call_1"),)
    assert responses[-1].text == "It is sunny in Madrid."


def _agent_style(streamed: bool) -> list[Replay]:
    relative = "google_stream_tool_loop.yaml" if streamed else "google_tool_loop.yaml"
    path = corpus_file(relative)
    if path is None:
        return []
    return [Replay(
        id="corpus-" + relative.removesuffix(".yaml"), path=path,
        client=_corpus_client("gemini-test", "https://google.test/v1beta"),
        messages=(_user("What is the weather?"),), instructions=("You are concise.",),
        tools=(WEATHER,), streamed=streamed, tool_result={"temperature_c": 31},
        extra_check=_sunny_in_madrid, reports_finish=False)]


def _value_42(responses: tuple[ResponseMessage, ...]) -> None:
    assert json.loads(responses[-1].text) == {"value": 42}


def _structured(path: Path, body: dict, model: str) -> dict[str, Any]:
    gen = body["generationConfig"]
    return {"messages": (_user(body["contents"][0]["parts"][0]["text"]),),
            "settings": ModelSettings(max_tokens=gen["maxOutputTokens"]),
            "output_format": OutputFormat("json_schema", name="out", schema=gen["responseJsonSchema"]),
            "extra_check": _value_42}


_TEXT_REPLAYS = katan_cases("google", ["buffered_text", "streamed_text"]) + [
    case for folder in ("buffered", "streamed/text") for name in SIMPLE
    for case in _pong_case(folder, name)] + _corpus_case(
    "thinking/google_gemini_3_7_flash.yaml", lambda path, body, model: {
        "messages": (_user(body["contents"][0]["parts"][0]["text"]),), "streamed": True,
        "settings": ModelSettings(max_tokens=2048, thinking="high"),
        "extra_check": _thought_signed_done})
_TOOL_REPLAYS = katan_cases("google", ["tool_loop"]) + [
    case for name in SIMPLE for case in _corpus_case(f"models/google_{name}.yaml", _model_tool_loop)
] + _agent_style(False) + _agent_style(True)
_STRUCTURED_REPLAYS = katan_cases("google", ["structured_output"]) + _corpus_case(
    "structured/google_gemini_3_7_flash.yaml", _structured)


@pytest.mark.parametrize("case", replay_params(_TEXT_REPLAYS))
def test_recorded_text_answers_replay_strictly(case: Replay) -> None:
    assert_text_answer(case.run())


@pytest.mark.parametrize("case", replay_params(_TOOL_REPLAYS))
def test_recorded_tool_loops_replay_strictly(case: Replay) -> None:
    assert_tool_loop(case.run(), "weather", case.reports_finish)


@pytest.mark.parametrize("case", replay_params(_STRUCTURED_REPLAYS))
def test_recorded_structured_output_replays_strictly(case: Replay) -> None:
    assert_structured_answer(case.run())


def _corpus_error_sequence(path: Path) -> None:
    transport = ReplayTransport.load(path)
    model = transport.interactions[0].uri.split("/models/")[1].split(":")[0]
    client = G.Client(model, G.Provider("k", transport), ModelSettings(max_tokens=64))
    request = ModelRequest(messages=(_user("Reply with exactly: pong"),))
    with pytest.raises(RateLimited) as rate:
        client.request(request)
    assert rate.value.retry_after_s == 3
    assert client.request(request).text == "pong"
    for _ in range(2):
        with pytest.raises(ProviderServerError):
            client.request(request)
    with pytest.raises(G.GoogleDecodeError) as decode:
        client.request(request)
    assert decode.value.path == "$.candidates"
    with pytest.raises(Exception) as bad:
        client.request(request)
    assert getattr(bad.value, "code", None) == "bad_request_code"
    transport.assert_all_consumed()


@pytest.mark.parametrize("check", error_sequence_checks("google", "errors/google.yaml", _corpus_error_sequence))
def test_recorded_error_sequence_maps_each_status(check: Callable[[], None]) -> None:
    check()


def test_grounding_citations_and_unknown_parts_are_kept_alike_buffered_and_streamed() -> None:
    grounding = {"webSearchQueries": ["weather madrid"],
                 "groundingChunks": [{"web": {"uri": "https://example.com/w", "title": "W"}}]}
    first = {"candidates": [{"content": {"role": "model", "parts": [{"text": "Sunny"}]},
                             "citationMetadata": {"citationSources": [{"startIndex": 0, "uri": "u1"}]}}]}
    second = {"candidates": [{"content": {"parts": [
        {"text": " today."}, {"fileData": {"mimeType": "text/plain", "fileUri": "gs://b/f"}}]},
        "citationMetadata": {"citationSources": [{"startIndex": 6, "uri": "u2"}]},
        "groundingMetadata": grounding, "urlContextMetadata": {"urlMetadata": []},
        "finishReason": "STOP"}]}
    expected = ProviderDetails.from_value({
        "grounding_metadata": grounding,
        "citation_metadata": {"citationSources": [{"startIndex": 0, "uri": "u1"},
                                                  {"startIndex": 6, "uri": "u2"}]},
        "url_context_metadata": {"urlMetadata": []},
        "parts": [{"fileData": {"mimeType": "text/plain", "fileUri": "gs://b/f"}}],
    })
    stream = "".join("data: " + json.dumps(chunk) + "\n\n" for chunk in (first, second))
    transport = MockTransport(lambda r: MockResponse.of_text(stream))
    with G.Client("gemini-3-flash", G.Provider("k", transport)).stream(
        ModelRequest(messages=(_user("x"),))
    ) as streamed:
        list(streamed)
    assert streamed.response().provider_details == expected
    whole = {"candidates": [{
        "content": {"role": "model", "parts": [
            {"text": "Sunny today."}, {"fileData": {"mimeType": "text/plain", "fileUri": "gs://b/f"}}]},
        "citationMetadata": {"citationSources": [{"startIndex": 0, "uri": "u1"},
                                                 {"startIndex": 6, "uri": "u2"}]},
        "groundingMetadata": grounding, "urlContextMetadata": {"urlMetadata": []},
        "finishReason": "STOP"}]}
    buffered = G.decode_response(whole)
    assert buffered.provider_details == expected
    assert buffered.parts == streamed.response().parts == (TextPart("Sunny today."),)
