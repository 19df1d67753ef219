"""zigai.providers.bedrock Converse: regional provider, model paths, exact wire JSON, decoding,
ConverseStream over binary EventStream (split at every byte), errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from support.mock_transport import MockResponse, MockTransport

from zigai.messages import (
    BytesSource,
    CachePoint,
    DocumentContent,
    FinishReason,
    ImageContent,
    NativeToolCallPart,
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
from zigai.provider import ProviderBadRequest, ProviderServerError, RateLimited
from zigai.providers import bedrock as B
from zigai.providers.eventstream import MalformedEventStream, encode_message, iter_messages
from zigai.providers.http import InvalidProviderRequest
from zigai.providers.sse import SseEvent
from zigai.settings import (
    ExtraBodyRejected,
    ModelSettings,
    ProviderExtraBody,
    UnsupportedModelSetting,
)
from zigai.transport import Headers, TransportRequest

CLAUDE = "us.anthropic.claude-sonnet-4-6"
WEATHER = ToolDefinition("weather", "Get weather.", {"type": "object", "properties": {"city": {"type": "string"}}})


def _encode(request: ModelRequest, model_id: str = CLAUDE) -> dict:
    return B.encode_request(request, model_id=model_id)


def _client(handler: Any, model: str = CLAUDE, **options: Any) -> tuple[MockTransport, B.Client]:
    transport = MockTransport(handler)
    return transport, B.Client(model, B.Provider("bedrock-key", "eu-west-1", transport), **options)


def _json(body: Any, status: int = 200) -> Any:
    return lambda request: MockResponse.of_json(body, status)


def test_provider_builds_the_regional_root_and_bearer_auth() -> None:
    transport, client = _client(_json({"output": {"message": {"content": [{"text": "pong"}]}}}))
    assert client.request(ModelRequest(messages=(RequestMessage.user("ping"),))).text == "pong"
    (sent,) = transport.requests
    assert sent.url == "https://bedrock-runtime.eu-west-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-6/converse"
    assert dict(sent.headers)["Authorization"] == "Bearer bedrock-key"
    assert B.runtime_api_base("us-east-1") == "https://bedrock-runtime.us-east-1.amazonaws.com"
    assert B.Provider("k", "us-east-1").region == "us-east-1"
    custom = B.Provider("k", base_url="https://vpce-1.bedrock-runtime.us-east-1.vpce.amazonaws.com")
    assert custom.api_root.startswith("https://vpce-1.") and custom.region is None
    for bad in ("", "US-EAST-1", "us-east-1.evil.com", "a/b"):
        with pytest.raises(B.InvalidBedrockRegion):
            B.Provider("k", bad)
    with pytest.raises(B.InvalidBedrockRegion):
        B.Provider("k")
    with pytest.raises(B.InvalidBedrockRegion):
        B.Provider("k", "us-east-1", base_url="https://x.test")


def test_model_ids_are_percent_encoded_single_segments() -> None:
    assert B.model_path("anthropic.claude-3-5-haiku-20241022-v1:0") == (
        "model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse")
    arn = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123"
    assert B.model_path(arn, stream=True) == (
        "model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Aapplication-inference-profile%2Fabc123"
        "/converse-stream")
    transport, client = _client(_json({"output": {"message": {"content": []}}}), model=arn,
                                profile=B.converse_profile(CLAUDE))
    client.request(ModelRequest(messages=(RequestMessage.user("x"),)))
    assert transport.requests[0].url.endswith("application-inference-profile%2Fabc123/converse")
    for bad in ("", "a b", "anthropic/claude", "arn:aws:x/../y", "arn:aws:x//y", "é", "x" * 2049):
        with pytest.raises(B.InvalidBedrockModelId):
            B.check_model_id(bad)
    assert B.check_model_id("x" * 2048)
    with pytest.raises(B.InvalidBedrockModelId):
        B.Client("bad id", B.Provider("k", "us-east-1"))
    # other providers still refuse encoded separators in their paths
    from zigai.providers.http import join_endpoint

    with pytest.raises(InvalidProviderRequest):
        join_endpoint("https://api.test/", "model/a%2Fb/converse")
    with pytest.raises(InvalidProviderRequest):
        join_endpoint("https://api.test/", "model/a%5Cb/converse", allow_encoded_slash=True)


def test_history_encodes_exactly() -> None:
    png = BytesSource(b"\x89PNG", "image/png")
    messages = (
        RequestMessage(parts=(
            SystemPromptPart("Be brief."),
            UserPromptPart((TextContent("look"), TaggedText("doc", "a"), ImageContent(png), CachePoint(),
                            ImageContent(UrlSource("s3://bucket/i.jpg", media_type="image/jpeg")),
                            DocumentContent(BytesSource(b"%PDF", "application/pdf"), title="Report (1)"),
                            DocumentContent(BytesSource(b"a,b", "text/csv")))),
        )),
        RequestMessage(parts=(UserPromptPart("and this"),)),
        ResponseMessage(parts=(
            ThinkingPart("mine", signature="sig", provider=ProviderPart("bedrock")),
            ThinkingPart("", provider=ProviderPart("bedrock", details=ProviderDetails({"redacted_content": "b64"}))),
            ThinkingPart("foreign", signature="x", provider=ProviderPart("anthropic")),
            ThinkingPart("unsigned", provider=ProviderPart("bedrock")),
            TextPart("Checking."),
            TextPart(""),
            ToolCallPart("weather", '{"city":"Madrid"}', "t1"),
            ToolCallPart("weather", "", "t2"),
            NativeToolCallPart("web_search", "n1", ProviderPart("openai")),
        )),
        RequestMessage(parts=(
            ToolReturnPart("weather", "t1", {"temperature_c": 31}),
            ToolReturnPart("weather", "t2", "it failed", outcome=ToolOutcome.error),
            ToolReturnPart("weather", "t3", None),
            ToolReturnPart("weather", "t4", [1, 2]),
            RetryPromptPart("bad args", tool_call_id="t5"),
            RetryPromptPart("try harder"),
        )),
    )
    body = _encode(ModelRequest(messages=messages, instructions=("Use metric.",), tools=(WEATHER,)))
    assert body == {
        "messages": [
            {"role": "user", "content": [
                {"text": "look"}, {"text": "<doc>a</doc>"},
                {"image": {"format": "png", "source": {"bytes": "iVBORw=="}}},
                {"cachePoint": {"type": "default"}},
                {"image": {"format": "jpeg", "source": {"s3Location": {"uri": "s3://bucket/i.jpg"}}}},
                {"document": {"format": "pdf", "name": "Report (1)", "source": {"bytes": "JVBERg=="}}},
                {"document": {"format": "csv", "name": "document", "source": {"bytes": "YSxi"}}},
                {"text": "and this"},
            ]},
            {"role": "assistant", "content": [
                {"reasoningContent": {"reasoningText": {"text": "mine", "signature": "sig"}}},
                {"reasoningContent": {"redactedContent": "b64"}},
                {"reasoningContent": {"reasoningText": {"text": "unsigned"}}},
                {"text": "Checking."},
                {"toolUse": {"toolUseId": "t1", "name": "weather", "input": {"city": "Madrid"}}},
                {"toolUse": {"toolUseId": "t2", "name": "weather", "input": {}}},
            ]},
            {"role": "user", "content": [
                {"toolResult": {"toolUseId": "t1", "content": [{"json": {"temperature_c": 31}}]}},
                {"toolResult": {"toolUseId": "t2", "content": [{"text": "it failed"}], "status": "error"}},
                {"toolResult": {"toolUseId": "t3", "content": [{"text": ""}]}},
                {"toolResult": {"toolUseId": "t4", "content": [{"json": [1, 2]}]}},
                {"toolResult": {"toolUseId": "t5", "content": [{"text": "bad args"}], "status": "error"}},
                {"text": "try harder"},
            ]},
        ],
        "system": [{"text": "Be brief."}, {"text": "Use metric."}],
        "toolConfig": {"tools": [{"toolSpec": {
            "name": "weather", "description": "Get weather.",
            "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}}},
        }}]},
    }
    strict = ToolDefinition("f", "", {"type": "object"}, strict=True)
    assert _encode(ModelRequest(messages=(RequestMessage.user("x"),), tools=(strict,)))["toolConfig"] == {
        "tools": [{"toolSpec": {"name": "f", "inputSchema": {"json": {"type": "object"}}, "strict": True}}]}


@pytest.mark.parametrize(("settings", "key", "wire"), [
    (ModelSettings(max_tokens=64), "inferenceConfig", {"maxTokens": 64}),
    (ModelSettings(temperature=0.2), "inferenceConfig", {"temperature": 0.2}),
    (ModelSettings(top_p=0.9), "inferenceConfig", {"topP": 0.9}),
    (ModelSettings(stop_sequences=("END",)), "inferenceConfig", {"stopSequences": ["END"]}),
    (ModelSettings(service_tier="priority"), "serviceTier", {"type": "priority"}),
    (ModelSettings(tool_choice="auto"), "toolConfig", {"auto": {}}),
    (ModelSettings(tool_choice="required"), "toolConfig", {"any": {}}),
    (ModelSettings(thinking_budget_tokens=2048), "additionalModelRequestFields",
     {"thinking": {"type": "enabled", "budget_tokens": 2048}}),
    (ModelSettings(thinking="off"), "additionalModelRequestFields", {"thinking": {"type": "disabled"}}),
    (ModelSettings(thinking_budget_tokens=0), "additionalModelRequestFields", {"thinking": {"type": "disabled"}}),
])
def test_every_setting_has_its_wire_name(settings: ModelSettings, key: str, wire: dict) -> None:
    body = _encode(ModelRequest(messages=(RequestMessage.user("x"),), tools=(WEATHER,), settings=settings))
    value = body[key]["toolChoice"] if key == "toolConfig" else body[key]
    assert value == wire


def test_thinking_per_family() -> None:
    nova = "us.amazon.nova-2-lite-v1:0"
    request = ModelRequest(messages=(RequestMessage.user("x"),), settings=ModelSettings(thinking="medium"))
    assert _encode(request, nova)["additionalModelRequestFields"] == {
        "reasoningConfig": {"type": "enabled", "maxReasoningEffort": "medium"}}
    off = ModelRequest(messages=(RequestMessage.user("x"),), settings=ModelSettings(thinking="off"))
    assert _encode(off, nova)["additionalModelRequestFields"] == {"reasoningConfig": {"type": "disabled"}}
    assert _encode(request, "openai.gpt-oss-120b-1:0")["additionalModelRequestFields"] == {
        "reasoning_effort": "medium"}
    assert "additionalModelRequestFields" not in _encode(off, "meta.llama3-3-70b-instruct-v1:0")
    budget = ModelRequest(messages=(RequestMessage.user("x"),), settings=ModelSettings(thinking_budget_tokens=9))
    refused = [(request, CLAUDE), (budget, nova), (off, "openai.gpt-oss-20b-1:0"),
               (request, "meta.llama3-3-70b-instruct-v1:0")]
    for case, model in refused:
        with pytest.raises(B.BedrockEncodeError):
            _encode(case, model)


def test_structured_output_on_recognized_profiles() -> None:
    schema = {"type": "object", "properties": {"value": {"type": "integer"}}}
    fmt = OutputFormat("json_schema", name="answer", schema=schema, description="The answer.")
    body = _encode(ModelRequest(messages=(RequestMessage.user("x"),), output_format=fmt))
    assert body["outputConfig"] == {"textFormat": {"type": "json_schema", "structure": {"jsonSchema": {
        "schema": json.dumps(schema, separators=(",", ":")), "name": "answer", "description": "The answer."}}}}
    with pytest.raises(B.BedrockEncodeError):
        _encode(ModelRequest(messages=(RequestMessage.user("x"),), output_format=OutputFormat("json_object")))
    transport, old = _client(_json({}), model="anthropic.claude-3-5-sonnet-20240620-v1:0")
    with pytest.raises(UnsupportedModelFeature):
        old.request(ModelRequest(messages=(RequestMessage.user("x"),), output_format=fmt))
    assert transport.requests == []


def test_bedrock_extension_fields_and_isolation() -> None:
    extra = ProviderExtraBody("bedrock", {
        "additionalModelRequestFields": {"top_k": 40},
        "guardrailConfig": {"guardrailIdentifier": "g1", "guardrailVersion": "1"},
        "performanceConfig": {"latency": "optimized"},
        "requestMetadata": {"team": "a"},
    })
    body = _encode(ModelRequest(messages=(RequestMessage.user("x"),),
                                settings=ModelSettings(thinking_budget_tokens=1024, extra_body=extra)))
    assert body["additionalModelRequestFields"] == {"top_k": 40,
                                                    "thinking": {"type": "enabled", "budget_tokens": 1024}}
    assert body["guardrailConfig"]["guardrailIdentifier"] == "g1"
    assert body["performanceConfig"] == {"latency": "optimized"} and body["requestMetadata"] == {"team": "a"}
    transport, client = _client(_json({}))
    failures = [
        (ProviderExtraBody("anthropic", {"x": 1}), ExtraBodyRejected),
        (ProviderExtraBody("bedrock", {"messages": []}), ExtraBodyRejected),
        (ProviderExtraBody("bedrock", {"serviceTier": {"type": "flex"}}), ExtraBodyRejected),
        (ProviderExtraBody("bedrock", {"additionalModelRequestFields": []}), B.BedrockEncodeError),
    ]
    for body_extra, error in failures:
        with pytest.raises(error):
            client.request(ModelRequest(messages=(RequestMessage.user("x"),),
                                        settings=ModelSettings(extra_body=body_extra)))
    clash = ProviderExtraBody("bedrock", {"additionalModelRequestFields": {"thinking": {"type": "enabled"}}})
    with pytest.raises(B.BedrockEncodeError) as caught:
        client.request(ModelRequest(messages=(RequestMessage.user("x"),),
                                    settings=ModelSettings(thinking="off", extra_body=clash)))
    assert caught.value.path == "extra_body.additionalModelRequestFields"
    assert transport.requests == []


def test_unsupported_requests_fail_before_io() -> None:
    transport, client = _client(_json({}))
    unknown = B.Client("acme.mystery-v1", B.Provider("k", "us-east-1", transport))
    cases = [
        (client, ModelRequest(messages=(RequestMessage.user("x"),), managed_tools=(ManagedTool("web_search"),)),
         UnsupportedModelFeature),
        (client, ModelRequest(messages=(RequestMessage.user("x"),), settings=ModelSettings(seed=1)),
         UnsupportedModelSetting),
        (client, ModelRequest(messages=(RequestMessage.user("x"),), settings=ModelSettings(service_tier="scale")),
         UnsupportedModelSetting),
        (client, ModelRequest(messages=(RequestMessage.user("x"),), tools=(WEATHER,),
                              settings=ModelSettings(tool_choice="none")), B.BedrockEncodeError),
        (unknown, ModelRequest(messages=(RequestMessage.user("x"),), tools=(WEATHER,)), UnsupportedModelFeature),
        (client, ModelRequest(messages=(ResponseMessage(parts=(ToolCallPart("f", "{no", "c1"),)),)),
         B.BedrockEncodeError),
    ]
    for model, request, error in cases:
        with pytest.raises(error):
            model.request(request)
    assert transport.requests == []
    with pytest.raises(B.BedrockEncodeError):
        _encode(ModelRequest(messages=(RequestMessage.user("x"),), managed_tools=(ManagedTool("web_search"),)))
    bad_content = [
        ImageContent(BytesSource(b"x", "image/bmp")),
        ImageContent(UrlSource("https://x.test/i.png")),
        DocumentContent(BytesSource(b"x", "application/zip")),
        DocumentContent(BytesSource(b"x", "text/plain"), title="bad/name"),
    ]
    for item in bad_content:
        with pytest.raises(B.BedrockEncodeError):
            _encode(ModelRequest(messages=(RequestMessage.user((item,)),)))
    assert _encode(ModelRequest(messages=(RequestMessage.user(""), RequestMessage.user("x"))))["messages"] == [
        {"role": "user", "content": [{"text": "x"}]}]


def test_profiles_by_family_and_layers() -> None:
    claude = B.converse_profile(CLAUDE)
    assert claude is not None and claude.json_schema_output and claude.supports_thinking
    assert "tool_choice" in claude.settings and claude.service_tiers == {"default", "priority", "flex", "reserved"}
    old = B.converse_profile("anthropic.claude-3-haiku-20240307-v1:0")
    assert old is not None and not old.json_schema_output and not old.supports_thinking
    nova = B.converse_profile("amazon.nova-micro-v1:0")
    assert nova is not None and nova.content_kinds == {"text", "tagged-text", "cache-point"}
    assert B.converse_profile("us.amazon.nova-2-lite-v1:0").reasoning_efforts == {"low", "medium", "high"}  # type: ignore[union-attr]
    llama = B.converse_profile("meta.llama3-2-90b-instruct-v1:0")
    assert llama is not None and "image" in llama.content_kinds and "tool_choice" not in llama.settings
    assert "image" in B.converse_profile("mistral.pixtral-large-2502-v1:0").content_kinds  # type: ignore[union-attr]
    assert B.converse_profile("cohere.command-r-plus-v1:0") is not None
    assert not B.converse_profile("deepseek.r1-v1:0").supports_tools  # type: ignore[union-attr]
    assert B.converse_profile("deepseek.v3-v1:0").supports_tools  # type: ignore[union-attr]
    assert B.converse_profile("qwen.qwen3-32b-v1:0") is not None
    for unknown in ("acme.model", "meta.llama2-13b", "cohere.embed", "nodot",
                    "arn:aws:bedrock:us-east-1:1:application-inference-profile/x",
                    "arn:aws:bedrock:us-east-1::foundation-model/"):
        assert B.converse_profile(unknown) is None, unknown
    assert B.model_family("arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-v2") == (
        "anthropic", "claude-v2")
    looked = B.Client("acme.model", B.Provider("k", "us-east-1", profile_lookup=lambda name: claude))
    assert looked.profile is claude
    overridden = B.Client(CLAUDE, B.Provider("k", "us-east-1"),
                          profile_override=lambda name, p: p.with_changes(json_schema_output=False))
    assert not overridden.profile.json_schema_output
    with pytest.raises(ValueError):
        B.Client(CLAUDE, B.Provider("k", "us-east-1"), max_event_bytes=8)


RESPONSE = {
    "output": {"message": {"role": "assistant", "content": [
        {"reasoningContent": {"reasoningText": {"text": "think", "signature": "sig"}}},
        {"reasoningContent": {"redactedContent": "b64data"}},
        {"text": "Let me check."},
        {"citationsContent": {"content": [{"text": "Cited."}], "citations": [{"title": "doc"}]}},
        {"citationsContent": {}},
        {"toolUse": {"toolUseId": "t1", "name": "weather", "input": {"city": "Madrid"}}},
        {"toolUse": {"toolUseId": "t2", "name": "weather", "input": "{}"}},
        {"guardContent": {"text": "x"}},
    ]}},
    "stopReason": "tool_use",
    "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 33, "cacheReadInputTokens": 12,
              "cacheWriteInputTokens": 6, "serverToolUsage": {"webSearch": 1, "bad": -1}},
    "metrics": {"latencyMs": 965},
    "serviceTier": {"type": "priority"},
}


def test_buffered_response_decodes_every_field() -> None:
    message = B.decode_response(RESPONSE, model_name=CLAUDE)
    assert message.parts == (
        ThinkingPart("think", signature="sig", provider=ProviderPart("bedrock")),
        ThinkingPart("", provider=ProviderPart("bedrock", details=ProviderDetails({"redacted_content": "b64data"}))),
        TextPart("Let me check.", provider=ProviderPart("bedrock")),
        TextPart("Cited.", provider=ProviderPart("bedrock", details=ProviderDetails({"citations": [{"title": "doc"}]}))),
        TextPart("", provider=ProviderPart("bedrock")),
        ToolCallPart("weather", '{"city":"Madrid"}', "t1", provider=ProviderPart("bedrock", id="t1")),
        ToolCallPart("weather", "{}", "t2", provider=ProviderPart("bedrock", id="t2")),
    )
    assert message.finish_reason is FinishReason.tool_call and message.raw_finish_reason == "tool_use"
    usage = message.usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens, usage.output_tokens) == (
        28, 12, 6, 5)
    assert dict(usage.details) == {"serverToolUsage.webSearch": 1}
    assert message.provider_details is not None
    assert message.provider_details["metrics"] == {"latencyMs": 965}
    assert message.provider_details["serviceTier"] == {"type": "priority"}
    assert message.provider_details["content"] == ({"guardContent": {"text": "x"}},)
    # reasoning, text and calls replay as they came
    replay = _encode(ModelRequest(messages=(RequestMessage.user("x"), message)))["messages"][1]["content"]
    assert replay[0] == {"reasoningContent": {"reasoningText": {"text": "think", "signature": "sig"}}}
    assert replay[1] == {"reasoningContent": {"redactedContent": "b64data"}}


@pytest.mark.parametrize(("raw", "reason"), [
    ("end_turn", FinishReason.stop), ("stop_sequence", FinishReason.stop), ("tool_use", FinishReason.tool_call),
    ("max_tokens", FinishReason.length), ("model_context_window_exceeded", FinishReason.length),
    ("guardrail_intervened", FinishReason.content_filter), ("content_filtered", FinishReason.content_filter),
    ("malformed_model_output", FinishReason.error), ("malformed_tool_use", FinishReason.error),
    ("something_new", FinishReason.other),
])
def test_finish_reasons(raw: str, reason: FinishReason) -> None:
    assert B.finish_reason(raw) is reason
    assert B.finish_reason(None) is None


@pytest.mark.parametrize(("body", "path"), [
    ({}, "$.output"),
    ({"output": {}}, "$.output.message"),
    ({"output": {"message": {}}}, "$.output.message.content"),
    ({"output": {"message": {"content": [5]}}}, "$.output.message.content[0]"),
    ({"output": {"message": {"content": [{"text": 5}]}}}, "$.output.message.content[0].text"),
    ({"output": {"message": {"content": [{"toolUse": {"toolUseId": "t"}}]}}},
     "$.output.message.content[0].toolUse.name"),
    ({"output": {"message": {"content": [{"toolUse": {"toolUseId": "", "name": "f"}}]}}},
     "$.output.message.content[0].toolUse"),
    ({"output": {"message": {"content": [{"reasoningContent": {}}]}}},
     "$.output.message.content[0].reasoningContent"),
    ({"output": {"message": {"content": []}}, "usage": {"inputTokens": "3"}}, "$.usage.inputTokens"),
])
def test_malformed_answers_raise_named_errors_with_paths(body: Any, path: str) -> None:
    with pytest.raises(B.BedrockDecodeError) as caught:
        B.decode_response(body)
    assert caught.value.path == path


def test_buffered_decode_errors_carry_status_and_request_id() -> None:
    _, client = _client(lambda request: MockResponse.of_json({}, headers=(("x-amzn-requestid", "req-1"),)))
    with pytest.raises(B.BedrockDecodeError) as caught:
        client.request(ModelRequest(messages=(RequestMessage.user("x"),)))
    assert caught.value.status == 200 and caught.value.path == "$.output"


# -- ConverseStream -------------------------------------------------------------------------


def _event(kind: str, payload: dict[str, Any]) -> bytes:
    headers = {":event-type": kind, ":content-type": "application/json", ":message-type": "event"}
    return encode_message(headers, json.dumps({**payload, "p": "abcd"}).encode())


STREAM = b"".join([
    _event("messageStart", {"role": "assistant"}),
    _event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "th"}}}),
    _event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "ink"}}}),
    _event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "si"}}}),
    _event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "g"}}}),
    _event("contentBlockStop", {"contentBlockIndex": 0}),
    _event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"reasoningContent": {"redactedContent": "r"}}}),
    _event("contentBlockStop", {"contentBlockIndex": 1}),
    _event("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"text": "Sunny "}}),
    _event("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"citation": {"title": "doc"}}}),
    _event("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"text": "é."}}),
    _event("contentBlockStop", {"contentBlockIndex": 2}),
    _event("contentBlockStart", {"contentBlockIndex": 3, "start": {"toolUse": {"toolUseId": "t1", "name": "weather"}}}),
    _event("contentBlockDelta", {"contentBlockIndex": 3, "delta": {"toolUse": {"input": '{"city":'}}}),
    _event("contentBlockDelta", {"contentBlockIndex": 3, "delta": {"toolUse": {"input": '"Madrid"}'}}}),
    _event("contentBlockStop", {"contentBlockIndex": 3}),
    _event("contentBlockStart", {"contentBlockIndex": 4, "start": {"toolUse": {"toolUseId": "t2", "name": "noargs"}}}),
    _event("contentBlockStop", {"contentBlockIndex": 4}),
    _event("contentBlockStart", {"contentBlockIndex": 5, "start": {}}),
    _event("messageStop", {"stopReason": "tool_use", "additionalModelResponseFields": {"x": 1}}),
    _event("metadata", {"usage": {"inputTokens": 3, "outputTokens": 7, "cacheReadInputTokens": 2},
                        "metrics": {"latencyMs": 12}}),
])


def _decode_stream(chunks: list[bytes]) -> tuple[list[Any], B.StreamDecoder]:
    decoder = B.StreamDecoder(CLAUDE)
    events: list[Any] = []
    for message in iter_messages(chunks):
        events.extend(decoder.feed(SseEvent(message.header(":event-type") or "", message.payload.decode())))
    events.extend(decoder.finish())
    return events, decoder


def test_stream_split_at_every_byte_boundary_yields_the_same_events() -> None:
    whole, decoder = _decode_stream([STREAM])
    ends = [e.part for e in whole if isinstance(e, PartEndEvent)]
    assert ends == [
        ThinkingPart("think", signature="sig", provider=ProviderPart("bedrock")),
        ThinkingPart("", provider=ProviderPart("bedrock", details=ProviderDetails({"redacted_content": "r"}))),
        TextPart("Sunny é.", provider=ProviderPart("bedrock", details=ProviderDetails({"citations": [{"title": "doc"}]}))),
        ToolCallPart("weather", '{"city":"Madrid"}', "t1", provider=ProviderPart("bedrock", id="t1")),
        ToolCallPart("noargs", "{}", "t2", provider=ProviderPart("bedrock", id="t2")),
    ]
    assert decoder.finish_reason is FinishReason.tool_call and decoder.usage.input_tokens == 5
    assert decoder.provider_details is not None
    assert decoder.provider_details["metrics"] == {"latencyMs": 12}
    assert decoder.provider_details["additionalModelResponseFields"] == {"x": 1}
    for cut in range(1, len(STREAM)):
        events, _ = _decode_stream([STREAM[:cut], STREAM[cut:]])
        assert events == whole, cut


def test_client_stream_reads_eventstream_from_raw_chunks() -> None:
    transport, client = _client(lambda request: MockResponse(
        200, (("content-type", "application/vnd.amazon.eventstream"),), STREAM))
    with client.stream(ModelRequest(messages=(RequestMessage.user("x"),))) as stream:
        events = list(stream)
    response = stream.response()
    assert events and response.finish_reason is FinishReason.tool_call
    assert [p.part_kind for p in response.parts] == ["thinking", "thinking", "text", "tool-call", "tool-call"]
    sent = transport.requests[0]
    assert sent.url.endswith("/model/us.anthropic.claude-sonnet-4-6/converse-stream")
    assert dict(sent.headers)["Accept"] == "application/vnd.amazon.eventstream"
    assert "stream" not in json.loads(sent.body)


@pytest.mark.parametrize(("headers", "error"), [
    ({":message-type": "exception", ":exception-type": "throttlingException"}, RateLimited),
    ({":message-type": "exception", ":exception-type": "validationException"}, ProviderBadRequest),
    ({":message-type": "exception", ":exception-type": "modelStreamErrorException"}, ProviderServerError),
    ({":message-type": "exception"}, ProviderServerError),
    ({":message-type": "error", ":error-code": "InternalFailure", ":error-message": "boom"}, ProviderServerError),
])
def test_stream_exceptions_raise_normalized_errors(headers: dict[str, str], error: type[Exception]) -> None:
    body = _event("messageStart", {"role": "assistant"}) + encode_message(headers, b'{"message":"nope"}')
    _, client = _client(lambda request: MockResponse(200, (), body))
    with pytest.raises(error) as caught, client.stream(ModelRequest(messages=(RequestMessage.user("x"),))) as s:
        list(s)
    assert caught.value.provider_name == "bedrock"  # type: ignore[attr-defined]


def test_stream_framing_and_contract_failures() -> None:
    frame = bytearray(_event("messageStop", {"stopReason": "end_turn"}))
    frame[-6] ^= 0x10
    for body, error in ((bytes(frame), MalformedEventStream),
                        (_event("messageStart", {}), B.BedrockDecodeError),
                        (_event("contentBlockDelta", {"delta": {"text": "x"}}), B.BedrockDecodeError),
                        (_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{"}}}),
                         B.BedrockDecodeError)):
        _, client = _client(lambda request, body=body: MockResponse(200, (), body))
        with pytest.raises(error), client.stream(ModelRequest(messages=(RequestMessage.user("x"),))) as stream:
            list(stream)
    _, client = _client(lambda request: MockResponse(200, (), STREAM), max_event_bytes=64)
    with pytest.raises(MalformedEventStream), client.stream(ModelRequest(messages=(RequestMessage.user("x"),))) as s:
        list(s)
    decoder = B.StreamDecoder()
    decoder.feed(SseEvent("contentBlockDelta", '{"contentBlockIndex":0,"delta":{"text":"a"}}'))
    with pytest.raises(B.BedrockDecodeError):
        decoder.feed(SseEvent("contentBlockDelta", '{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"b"}}}'))
    assert decoder.feed(SseEvent("contentBlockStop", '{"contentBlockIndex":9}')) == []
    assert decoder.feed(SseEvent("unknownEvent", "")) == []


class _LinesOnlyResponse:
    status = 200
    headers = Headers()
    request_id = None
    retry_after_s = None
    date = None

    def lines(self) -> Iterator[bytes]:
        yield b"not eventstream"

    def read_body(self) -> bytes:
        return b""


class _LinesOnlyTransport:
    def send(self, request: TransportRequest) -> Any:
        raise AssertionError("not used")

    @contextmanager
    def stream_lines(self, request: TransportRequest) -> Iterator[_LinesOnlyResponse]:
        yield _LinesOnlyResponse()


def test_stream_needs_a_transport_with_raw_chunks() -> None:
    client = B.Client(CLAUDE, B.Provider("k", "us-east-1", _LinesOnlyTransport()))
    with pytest.raises(B.EventStreamNeedsChunks):
        client.stream(ModelRequest(messages=(RequestMessage.user("x"),)))


def test_stream_edge_events() -> None:
    decoder = B.StreamDecoder()
    feed = [
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"citation": {"title": "first"}}}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"reasoningContent": {}}}),
        ("contentBlockDelta", {"contentBlockIndex": 2, "delta": {}}),
        ("messageStop", {}),
        ("metadata", {}),
    ]
    events: list[Any] = []
    for kind, payload in feed:
        events.extend(decoder.feed(SseEvent(kind, json.dumps(payload))))
    events.extend(decoder.finish())
    ends = [e.part for e in events if isinstance(e, PartEndEvent)]
    assert ends == [TextPart("", provider=ProviderPart("bedrock", details=ProviderDetails(
        {"citations": [{"title": "first"}]}))), ThinkingPart("", provider=ProviderPart("bedrock"))]
    assert decoder.finish_reason is None and decoder.provider_details is None
    assert B.converse_profile("anthropic.claude-instant-v1").json_schema_output is False  # type: ignore[union-attr]
    gpt_oss = B.converse_profile("openai.gpt-oss-120b-1:0")
    assert gpt_oss is not None and gpt_oss.reasoning_efforts == {"low", "medium", "high"}


def test_mantle_stays_beside_converse_and_needs_exactly_one_root() -> None:
    mantle = B.MantleProvider("k", region="eu-west-1")
    assert mantle.api_root.rstrip("/") == "https://bedrock-mantle.eu-west-1.api.aws/v1"
    for where in ({}, {"region": "eu-west-1", "base_url": "https://x.example/v1"}):
        with pytest.raises(ValueError, match="exactly one"):
            B.MantleProvider("k", **where)
