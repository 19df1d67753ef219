"""zigai.providers.mistral Conversations: wire JSON, managed tools, decoding, streaming splits,
and a stored Session against a real HTTP server on 127.0.0.1 (start -> append -> history ->
delete)."""

from __future__ import annotations

import json
import pickle
import threading
from typing import Any

import pytest
from support.loopback import LoopbackServer, Received, Reply
from support.mock_transport import MockResponse, MockTransport
from support.sse_replay import feed_chunks

from zigai.messages import (
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
    SystemPromptPart,
    TaggedText,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UploadedFile,
    UrlSource,
    UserPromptPart,
)
from zigai.model import (
    InvalidToolDefinition,
    ManagedTool,
    ModelRequest,
    OutputFormat,
    PartEndEvent,
    ToolDefinition,
    UnsupportedModelFeature,
)
from zigai.provider import ProviderNotFound, ProviderServerError
from zigai.providers import mistral as M
from zigai.providers.sse import SseEvent
from zigai.security import UrlPolicy
from zigai.settings import ExtraBodyRejected, ModelSettings, ProviderExtraBody
from zigai.transport import HttpTransport

STRICT = ToolDefinition("weather", "Get weather.", {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
    "additionalProperties": False,
})
LOOSE = ToolDefinition("lookup", "", {"type": "object", "properties": {"q": {"type": "string"}}})
POLICY = UrlPolicy.local_development()


def _encode(request: ModelRequest, **options: Any) -> dict:
    return M.encode_request(request, model_name="mistral-small-latest", **options)


def _mock(body: object, status: int = 200, **client: Any) -> tuple[MockTransport, M.ConversationsClient]:
    transport = MockTransport(lambda request: MockResponse.of_json(body, status))
    return transport, M.ConversationsClient("mistral-small-latest",
                                            M.ConversationsProvider("ms-test", transport), **client)


def test_history_becomes_entries_with_instructions_and_strict_functions() -> None:
    png = BytesSource(b"\x89PNG", "image/png")
    messages = (
        RequestMessage(parts=(
            SystemPromptPart("Be brief."),
            UserPromptPart((TextContent("look"), TaggedText("t", "x"), ImageContent(png),
                            ImageContent(UrlSource("https://x.test/a.png")), CachePoint(),
                            DocumentContent(UrlSource("https://x.test/a.pdf"), title="a.pdf"),
                            DocumentContent(BytesSource(b"%PDF", "application/pdf")))),
        )),
        ResponseMessage(parts=(
            ThinkingPart("why", provider=ProviderPart("mistral")),
            ThinkingPart("foreign", provider=ProviderPart("openai")),
            TextPart("Let me check."),
            ToolCallPart("weather", '{"city": "Madrid"}', "c1"),
            NativeToolCallPart("web_search", "t1", ProviderPart("mistral", details=ProviderDetails(
                {"name": "web_search", "arguments": "{}", "info": {"q": "madrid"}})), args='{"q":"m"}'),
            NativeToolReturnPart("web_search", "t1", ProviderPart("mistral")),
            NativeToolCallPart("web_search", "o1", ProviderPart("openai")),
            TextPart("Sunny."),
        )),
        RequestMessage(parts=(
            ToolReturnPart("weather", "c1", {"temperature_c": 31}),
            ToolReturnPart("weather", "c2", "plain"),
            RetryPromptPart("fix args", tool_call_id="c3"),
            RetryPromptPart("say more"),
        )),
    )
    body = _encode(ModelRequest(messages=messages, instructions=("Use metric.",), tools=(STRICT, LOOSE)))
    assert body == {
        "model": "mistral-small-latest",
        "inputs": [
            {"object": "entry", "type": "message.input", "role": "user", "content": [
                {"type": "text", "text": "look"},
                {"type": "text", "text": "<t>x</t>"},
                {"type": "image_url", "image_url": "data:image/png;base64,iVBORw=="},
                {"type": "image_url", "image_url": "https://x.test/a.png"},
                {"type": "document_url", "document_url": "https://x.test/a.pdf", "document_name": "a.pdf"},
                {"type": "document_url", "document_url": "data:application/pdf;base64,JVBERg=="},
            ]},
            {"object": "entry", "type": "message.output", "role": "assistant", "content": [
                {"type": "thinking", "thinking": [{"type": "text", "text": "why"}]},
                {"type": "text", "text": "Let me check."},
            ]},
            {"object": "entry", "type": "function.call", "tool_call_id": "c1", "name": "weather",
             "arguments": {"city": "Madrid"}},
            {"object": "entry", "type": "tool.execution", "name": "web_search", "arguments": '{"q":"m"}',
             "info": {"q": "madrid"}},
            {"object": "entry", "type": "message.output", "role": "assistant", "content": "Sunny."},
            {"object": "entry", "type": "function.result", "tool_call_id": "c1",
             "result": '{"temperature_c":31}'},
            {"object": "entry", "type": "function.result", "tool_call_id": "c2", "result": "plain"},
            {"object": "entry", "type": "function.result", "tool_call_id": "c3", "result": "fix args"},
            {"object": "entry", "type": "message.input", "role": "user", "content": "say more"},
        ],
        "instructions": "Be brief.\n\nUse metric.",
        "tools": [
            {"type": "function", "function": {
                "name": "weather", "description": "Get weather.",
                "parameters": dict(STRICT.parameters_json_schema), "strict": True}},
            {"type": "function", "function": {
                "name": "lookup", "parameters": dict(LOOSE.parameters_json_schema), "strict": False}},
        ],
        "store": False,
        "stream": False,
    }
    explicit = ToolDefinition("f", "", {"type": "object"}, strict=True)
    assert _encode(ModelRequest(messages=(RequestMessage.user("x"),), tools=(explicit,)))["tools"][0][
        "function"]["strict"] is True


@pytest.mark.parametrize(("settings", "wire"), [
    (ModelSettings(max_tokens=9), {"max_tokens": 9}),
    (ModelSettings(temperature=0.3), {"temperature": 0.3}),
    (ModelSettings(top_p=0.8), {"top_p": 0.8}),
    (ModelSettings(seed=4), {"random_seed": 4}),
    (ModelSettings(stop_sequences=("END",)), {"stop": ["END"]}),
    (ModelSettings(presence_penalty=0.1), {"presence_penalty": 0.1}),
    (ModelSettings(frequency_penalty=0.2), {"frequency_penalty": 0.2}),
    (ModelSettings(tool_choice="required"), {"tool_choice": "any"}),
    (ModelSettings(tool_choice="none"), {"tool_choice": "none"}),
    (ModelSettings(tool_choice="auto"), {"tool_choice": "auto"}),
])
def test_every_setting_has_its_completion_args_name(settings: ModelSettings, wire: dict) -> None:
    body = _encode(ModelRequest(messages=(RequestMessage.user("x"),), settings=settings))
    assert body["completion_args"] == wire
    assert "completion_args" not in _encode(ModelRequest(messages=(RequestMessage.user("x"),)))


def test_structured_output_is_a_completion_arg() -> None:
    schema = {"type": "object", "properties": {"v": {"type": "integer"}}}
    fmt = OutputFormat("json_schema", name="out", schema=schema, description="d", strict=False)
    body = _encode(ModelRequest(messages=(RequestMessage.user("x"),), output_format=fmt))
    assert body["completion_args"] == {"response_format": {"type": "json_schema", "json_schema": {
        "name": "out", "schema": schema, "strict": False, "description": "d"}}}
    body = _encode(ModelRequest(messages=(RequestMessage.user("x"),),
                                output_format=OutputFormat("json_schema", name="o", schema=schema)))
    assert body["completion_args"]["response_format"]["json_schema"]["strict"] is True
    body = _encode(ModelRequest(messages=(RequestMessage.user("x"),), output_format=OutputFormat("json_object")))
    assert body["completion_args"] == {"response_format": {"type": "json_object"}}


def test_portable_and_mistral_only_managed_tools() -> None:
    authorization = {"type": "oauth2", "value": "tok-secret"}
    connector = M.Connector("my_deepwiki", include=("search",), authorization=authorization)
    managed = (M.WebSearchPremium(), M.ImageGeneration(), M.DocumentLibrary(("lib-1", "lib-2")),
               connector, M.Connector("gmail", exclude=("send",)), M.Connector("plain"))
    request = ModelRequest(messages=(RequestMessage.user("x"),),
                           managed_tools=(ManagedTool("web_search"), ManagedTool("code_execution")))
    assert _encode(request, managed=managed)["tools"] == [
        {"type": "web_search"}, {"type": "code_interpreter"}, {"type": "web_search_premium"},
        {"type": "image_generation"}, {"type": "document_library", "library_ids": ["lib-1", "lib-2"]},
        {"type": "connector", "connector_id": "my_deepwiki", "tool_configuration": {"include": ["search"]},
         "authorization": {"type": "oauth2", "value": "tok-secret"}},
        {"type": "connector", "connector_id": "gmail", "tool_configuration": {"exclude": ["send"]}},
        {"type": "connector", "connector_id": "plain"},
    ]
    # borrowed: the application's later change is what the next request sends; never shown
    authorization["value"] = "tok-rotated"
    assert _encode(request, managed=(connector,))["tools"][2]["authorization"]["value"] == "tok-rotated"
    assert "tok" not in repr(connector)
    with pytest.raises(TypeError):
        pickle.dumps(connector)
    client = M.ConversationsClient("mistral-small-latest", M.ConversationsProvider("k"), managed_tools=managed)
    assert client.managed_tools == managed


@pytest.mark.parametrize("make", [
    lambda: M.DocumentLibrary(()),
    lambda: M.DocumentLibrary("lib"),
    lambda: M.DocumentLibrary(("a", "a")),
    lambda: M.DocumentLibrary(("bad id",)),
    lambda: M.Connector("x/y"),
    lambda: M.Connector("c", include=("a",), exclude=("b",)),
    lambda: M.Connector("c", include="a"),
    lambda: M.Connector("c", authorization="token"),
    lambda: M.ConversationsClient("mistral-small-latest", M.ConversationsProvider("k"),
                                  managed_tools=(M.ImageGeneration(), M.ImageGeneration())),
    lambda: M.ConversationsClient("mistral-small-latest", M.ConversationsProvider("k"),
                                  managed_tools=("web_search",)),
])
def test_bad_managed_tools_fail_on_construction(make: Any) -> None:
    with pytest.raises(M.MistralEncodeError):
        make()


def test_managed_tool_requests_that_cannot_be_sent() -> None:
    request = ModelRequest(messages=(RequestMessage.user("x"),), managed_tools=(ManagedTool("web_fetch"),))
    with pytest.raises(M.MistralEncodeError):
        _encode(request)
    with pytest.raises(InvalidToolDefinition, match="more than once"):
        ModelRequest(messages=(RequestMessage.user("x"),),
                     managed_tools=(ManagedTool("web_search"), ManagedTool("web_search")))
    request = ModelRequest(messages=(RequestMessage.user("x"),),
                           managed_tools=(ManagedTool("web_search", {"region": "eu"}),))
    with pytest.raises(M.MistralEncodeError, match="no options"):
        _encode(request)
    bad = M.Connector("c", authorization={"n": float("nan")})
    with pytest.raises(M.MistralEncodeError, match="authorization"):
        _encode(ModelRequest(messages=(RequestMessage.user("x"),)), managed=(bad,))


def test_extension_tag_and_rejection_before_io() -> None:
    body = _encode(ModelRequest(messages=(RequestMessage.user("x"),), settings=ModelSettings(
        extra_body=ProviderExtraBody("mistral", {"handoff_execution": "client", "metadata": {"k": "v"}}))))
    assert body["handoff_execution"] == "client" and body["metadata"] == {"k": "v"}
    transport, client = _mock({})
    unknown = M.ConversationsClient("gpt-5", M.ConversationsProvider("ms-test", transport))
    failures = [
        (client, ModelRequest(messages=(RequestMessage.user("x"),), settings=ModelSettings(
            extra_body=ProviderExtraBody("cohere", {"x": 1}))), ExtraBodyRejected),
        (client, ModelRequest(messages=(RequestMessage.user("x"),), settings=ModelSettings(
            extra_body=ProviderExtraBody("mistral", {"store": True}))), ExtraBodyRejected),
        (client, ModelRequest(messages=(RequestMessage.user("x"),), managed_tools=(ManagedTool("web_fetch"),)),
         UnsupportedModelFeature),
        (unknown, ModelRequest(messages=(RequestMessage.user("x"),), tools=(STRICT,)), UnsupportedModelFeature),
        (client, ModelRequest(messages=(ResponseMessage(parts=(ToolCallPart("f", "{not json", "c1"),)),)),
         M.MistralEncodeError),
        (client, ModelRequest(messages=(RequestMessage.user((ImageContent(UploadedFile("mistral", "f1")),)),)),
         M.MistralEncodeError),
    ]
    for model, request, error in failures:
        with pytest.raises(error):
            model.request(request)
    assert transport.requests == []


def test_profiles() -> None:
    small = M.conversations_profile("mistral-small-latest")
    assert small is not None and small.provider_managed_tools == {"web_search", "code_execution"}
    assert "image" in small.content_kinds and "parallel_tool_calls" not in small.settings
    codestral = M.conversations_profile("codestral-latest")
    assert codestral is not None and "image" not in codestral.content_kinds
    assert M.conversations_profile("claude-x") is None


OUTPUTS = [
    {"object": "entry", "type": "tool.execution", "id": "tool_1", "name": "web_search",
     "arguments": '{"query": "madrid"}', "info": {"results": 3}},
    {"object": "entry", "type": "message.output", "id": "msg_1", "model": "mistral-medium-2505",
     "role": "assistant", "content": [
         {"type": "thinking", "thinking": [{"type": "text", "text": "look"}, {"type": "other"}]},
         {"type": "text", "text": "It is "},
         {"type": "tool_reference", "tool": "web_search", "title": "Weather", "url": "https://w.test"},
         {"type": "text", "text": "sunny."},
         {"type": "tool_file", "tool": "image_generation", "file_id": "f1"},
     ]},
    {"object": "entry", "type": "function.call", "id": "fc_1", "tool_call_id": "call1", "name": "weather",
     "arguments": {"city": "Madrid"}},
    {"object": "entry", "type": "agent.handoff", "id": "h1"},
]


def test_buffered_response_decodes_every_entry_family() -> None:
    message = M.decode_response({"conversation_id": "conv_1", "outputs": OUTPUTS, "usage": {
        "prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14, "connector_tokens": 2,
        "connectors": {"web_search": 1}}}, model_name="mistral-medium-latest")
    details = {"id": "tool_1", "name": "web_search", "arguments": '{"query": "madrid"}', "info": {"results": 3}}
    provider = ProviderPart("mistral", id="tool_1", details=ProviderDetails(details))
    assert message.parts == (
        NativeToolCallPart("web_search", "tool_1", provider, args='{"query": "madrid"}'),
        NativeToolReturnPart("web_search", "tool_1", provider, content={"results": 3}),
        ThinkingPart("look", id="msg_1", provider=ProviderPart("mistral", id="msg_1")),
        TextPart("It is sunny.", id="msg_1", provider=ProviderPart("mistral", id="msg_1", details=ProviderDetails(
            {"references": [OUTPUTS[1]["content"][2]]}))),
        ToolCallPart("weather", '{"city":"Madrid"}', "call1", id="fc_1", provider=ProviderPart("mistral", id="fc_1")),
    )
    assert message.model_name == "mistral-medium-2505" and message.provider_response_id == "conv_1"
    assert message.finish_reason is FinishReason.tool_call
    assert message.usage.input_tokens == 10 and dict(message.usage.details) == {
        "connector_tokens": 2, "connectors.web_search": 1}
    assert message.provider_details is not None
    assert message.provider_details["chunks"][0]["file_id"] == "f1"
    assert message.provider_details["outputs"][0]["type"] == "agent.handoff"
    # a decoded answer replays: the execution entry is sent back as it came
    inputs = _encode(ModelRequest(messages=(RequestMessage.user("x"), message)))["inputs"]
    assert inputs[1] == {"object": "entry", "type": "tool.execution", "name": "web_search",
                         "arguments": '{"query": "madrid"}', "info": {"results": 3}}
    plain = M.decode_response({"outputs": [{"type": "message.output", "content": "pong"}]})
    assert plain.text == "pong" and plain.finish_reason is FinishReason.stop and plain.usage.input_tokens == 0


@pytest.mark.parametrize(("body", "path"), [
    ({}, "$.outputs"),
    ({"outputs": [1]}, "$.outputs[0]"),
    ({"outputs": [{"content": "x"}]}, "$.outputs[0].type"),
    ({"outputs": [{"type": "message.output", "content": [{"type": "text"}]}]}, "$.outputs[0].content[0].text"),
    ({"outputs": [{"type": "function.call", "name": "f"}]}, "$.outputs[0].tool_call_id"),
    ({"outputs": [{"type": "function.call", "name": "", "tool_call_id": "c"}]}, "$.outputs[0]"),
    ({"outputs": [{"type": "function.call", "name": "f", "tool_call_id": "c", "arguments": 3}]},
     "$.outputs[0].arguments"),
    ({"outputs": [{"type": "tool.execution", "name": "web_search"}]}, "$.outputs[0].id"),
    ({"outputs": [{"type": "message.output", "content": [{"type": "thinking", "thinking": 5}]}]},
     "$.outputs[0].content[0].thinking"),
    ({"outputs": [], "usage": {"prompt_tokens": -1}}, "$.usage.prompt_tokens"),
])
def test_malformed_answers_raise_named_errors_with_paths(body: Any, path: str) -> None:
    with pytest.raises(M.MistralDecodeError) as caught:
        M.decode_response(body)
    assert caught.value.path == path


def test_client_sends_store_false_and_annotates_errors() -> None:
    transport, client = _mock({"conversation_id": "c", "outputs": [{"type": "message.output", "content": "pong"}]})
    response = client.request(ModelRequest(messages=(RequestMessage.user("ping"),)))
    assert response.text == "pong"
    (sent,) = transport.requests
    assert sent.url == "https://api.mistral.ai/v1/conversations"
    assert dict(sent.headers)["Authorization"] == "Bearer ms-test"
    assert json.loads(sent.body)["store"] is False
    transport, client = _mock({})
    with pytest.raises(M.MistralDecodeError) as caught:
        client.request(ModelRequest(messages=(RequestMessage.user("x"),)))
    assert caught.value.status == 200


STREAM = "".join(f"event: {kind}\ndata: {json.dumps(data)}\n\n" for kind, data in [
    ("conversation.response.started", {"type": "conversation.response.started", "conversation_id": "conv_s"}),
    ("tool.execution.started", {"type": "tool.execution.started", "id": "tool_1", "name": "web_search",
                                "arguments": ""}),
    ("tool.execution.delta", {"type": "tool.execution.delta", "id": "tool_1", "arguments": '{"query": "madrid"}'}),
    ("tool.execution.done", {"type": "tool.execution.done", "id": "tool_1", "name": "web_search",
                             "info": {"results": 3}}),
    ("message.output.delta", {"type": "message.output.delta", "id": "msg_1", "output_index": 1, "content_index": 0,
                              "model": "mistral-medium-2505", "content": {"type": "thinking", "thinking": [
                                  {"type": "text", "text": "look"}]}}),
    ("message.output.delta", {"type": "message.output.delta", "id": "msg_1", "output_index": 1,
                              "content_index": 1, "content": "It is "}),
    ("message.output.delta", {"type": "message.output.delta", "id": "msg_1", "output_index": 1,
                              "content_index": 2, "content": {"type": "tool_reference", "tool": "web_search",
                                                              "title": "Weather", "url": "https://w.test"}}),
    ("message.output.delta", {"type": "message.output.delta", "id": "msg_1", "output_index": 1,
                              "content_index": 3, "content": {"type": "text", "text": "sunny. é"}}),
    ("message.output.delta", {"type": "message.output.delta", "id": "msg_1", "output_index": 1,
                              "content": {"type": "tool_file", "file_id": "f1"}}),
    ("function.call.delta", {"type": "function.call.delta", "id": "fc_1", "tool_call_id": "call1",
                             "name": "weather", "arguments": '{"city":'}),
    ("function.call.delta", {"type": "function.call.delta", "id": "fc_1", "tool_call_id": "call1",
                             "name": "weather", "arguments": ' "Madrid"}'}),
    ("agent.handoff.started", {"type": "agent.handoff.started"}),
    ("conversation.response.done", {"type": "conversation.response.done", "usage": {
        "prompt_tokens": 10, "completion_tokens": 4}}),
])


def test_stream_split_at_every_byte_boundary_yields_the_same_events() -> None:
    data = STREAM.encode()
    decoder = M.StreamDecoder("mistral-medium-latest")
    whole = feed_chunks(decoder, [data])
    ends = [e.part for e in whole if isinstance(e, PartEndEvent)]
    details = {"id": "tool_1", "name": "web_search", "arguments": '{"query": "madrid"}', "info": {"results": 3}}
    provider = ProviderPart("mistral", id="tool_1", details=ProviderDetails(details))
    reference = {"type": "tool_reference", "tool": "web_search", "title": "Weather", "url": "https://w.test"}
    assert ends == [
        NativeToolCallPart("web_search", "tool_1", provider, args='{"query": "madrid"}'),
        NativeToolReturnPart("web_search", "tool_1", provider, content={"results": 3}),
        ThinkingPart("look", id="msg_1", provider=ProviderPart("mistral", id="msg_1")),
        TextPart("It is sunny. é", id="msg_1", provider=ProviderPart(
            "mistral", id="msg_1", details=ProviderDetails({"references": [reference]}))),
        ToolCallPart("weather", '{"city": "Madrid"}', "call1", id="fc_1", provider=ProviderPart("mistral", id="fc_1")),
    ]
    assert decoder.response_id == "conv_s" and decoder.model_name == "mistral-medium-2505"
    assert decoder.finish_reason is FinishReason.tool_call and decoder.usage.output_tokens == 4
    assert decoder.provider_details is not None and decoder.provider_details["chunks"][0]["file_id"] == "f1"
    for cut in range(1, len(data)):
        assert feed_chunks(M.StreamDecoder("mistral-medium-latest"), [data[:cut], data[cut:]]) == whole, cut


def test_stream_contract_violations() -> None:
    decoder = M.StreamDecoder()
    with pytest.raises(M.MistralDecodeError):
        decoder.finish()
    assert decoder.feed(SseEvent("message", "")) == []
    with pytest.raises(ProviderServerError) as caught:
        decoder.feed(SseEvent("message", '{"type":"conversation.response.error","message":"boom","code":3000}'))
    assert caught.value.code == "3000"
    with pytest.raises(M.MistralDecodeError):
        decoder.feed(SseEvent("message", '{"type":"function.call.delta","tool_call_id":"","name":"f"}'))
    with pytest.raises(M.MistralDecodeError) as path_error:
        decoder.feed(SseEvent("message", '{"type":"tool.execution.delta","id":"x"}'))
    assert path_error.value.path.endswith(".name")
    with pytest.raises(M.MistralDecodeError):
        decoder.feed(SseEvent("message", '{"type":"message.output.delta","content":5}'))


def test_client_stream_over_the_transport() -> None:
    transport = MockTransport(lambda request: MockResponse.of_text(STREAM))
    client = M.ConversationsClient("mistral-small-latest", M.ConversationsProvider("ms-test", transport))
    with client.stream(ModelRequest(messages=(RequestMessage.user("x"),))) as stream:
        list(stream)
    assert stream.response().text == "It is sunny. é"
    assert json.loads(transport.requests[0].body)["stream"] is True


# -- stored sessions against a real HTTP server on 127.0.0.1 ------------------------------------


class _ConversationServer:
    """A tiny stand-in for the stored-conversation endpoints: it keeps entries per id."""

    def __init__(self) -> None:
        self.store: dict[str, list[dict[str, Any]]] = {}
        self.lock = threading.Lock()

    def __call__(self, received: Received) -> Reply:
        path = received.target
        with self.lock:
            if received.method == "POST" and path == "/v1/conversations":
                body = received.json()
                conversation_id = f"conv_{len(self.store) + 1}"
                answer = {"object": "entry", "type": "message.output", "id": "msg_a", "role": "assistant",
                          "content": "first answer"}
                self.store[conversation_id] = [*body["inputs"], answer]
                return Reply.of_json({"conversation_id": conversation_id, "outputs": [answer],
                                      "usage": {"prompt_tokens": 3, "completion_tokens": 2}})
            conversation_id = path.split("/")[3]
            entries = self.store.get(conversation_id)
            if entries is None:
                return Reply.of_json({"message": "conversation not found"}, status=404)
            if received.method == "POST":
                body = received.json()
                answer = {"object": "entry", "type": "message.output", "id": "msg_b", "role": "assistant",
                          "content": f"saw {len(entries) + len(body['inputs'])} entries"}
                entries.extend([*body["inputs"], answer])
                return Reply.of_json({"conversation_id": conversation_id, "outputs": [answer]})
            if received.method == "GET" and path.endswith("/history"):
                shown = [*entries, {"object": "entry", "type": "beta.future", "id": "x1", "extra": [1]}]
                return Reply.of_json({"object": "conversation.history", "conversation_id": conversation_id,
                                      "entries": shown})
            del self.store[conversation_id]
            return Reply(204)


def test_session_start_append_history_delete_over_http() -> None:
    backend = _ConversationServer()
    with LoopbackServer(backend) as server, HttpTransport(url_policy=POLICY, default_timeout_s=10.0) as transport:
        provider = M.ConversationsProvider("ms-test", transport, base_url=server.url + "/v1", url_policy=POLICY)
        client = M.ConversationsClient("mistral-small-latest", provider)
        started = client.start(ModelRequest(messages=(RequestMessage.user("hello"),), instructions=("Be kind.",),
                                            tools=(STRICT,)))
        assert started.conversation_id == "conv_1" and started.response.text == "first answer"
        first = server.requests[0].json()
        assert first["store"] is True and first["instructions"] == "Be kind." and first["tools"]

        session = M.Session(provider, started.conversation_id, model_name="mistral-small-latest",
                            settings=ModelSettings(max_tokens=32))
        answer = session.append(ModelRequest(messages=(RequestMessage.user("again"),)))
        assert answer.text == "saw 3 entries"
        append = server.requests[1]
        assert append.target == "/v1/conversations/conv_1"
        assert append.json() == {
            "inputs": [{"object": "entry", "type": "message.input", "role": "user", "content": "again"}],
            "completion_args": {"max_tokens": 32}, "store": True, "stream": False,
        }
        assert append.headers["authorization"] == "Bearer ms-test"

        with session.history() as history:
            assert history.conversation_id == "conv_1" and len(history) == 5
            families = [entry.family for entry in history.entries]
            assert families == [M.EntryFamily.message_input, M.EntryFamily.message_output,
                                M.EntryFamily.message_input, M.EntryFamily.message_output,
                                M.EntryFamily.unknown]
            beta = history.entries[-1]
            assert (beta.type, beta.id, beta.role) == ("beta.future", "x1", None)
            assert beta.details["extra"] == (1,)
            assert history.entries[1].details["content"] == "first answer"
        with pytest.raises(M.ConversationHistoryClosed):
            _ = history.entries
        assert server.requests[2].method == "GET"

        session.delete()
        assert server.requests[3].method == "DELETE" and backend.store == {}
        with pytest.raises(ProviderNotFound):
            session.history()


def test_session_refuses_bad_ids_and_initial_request_fields_before_io() -> None:
    transport = MockTransport(lambda request: MockResponse.of_json({}))
    provider = M.ConversationsProvider("ms-test", transport)
    for bad in ("", "../admin", "conv 1", "a" * 129, "conv%2F1", 7):
        with pytest.raises(M.InvalidConversationId):
            M.Session(provider, bad)  # type: ignore[arg-type]
    M.Session(provider, "a" * 128)
    session = M.Session(provider, "conv_1")
    assert repr(session) == "Session(conversation_id='conv_1')"
    refused = [
        ModelRequest(messages=(RequestMessage.user("x"),), instructions=("new rules",)),
        ModelRequest(messages=(RequestMessage.user("x"),), tools=(STRICT,)),
        ModelRequest(messages=(RequestMessage.user("x"),), managed_tools=(ManagedTool("web_search"),)),
        ModelRequest(messages=(RequestMessage(parts=(SystemPromptPart("sys"), UserPromptPart("x"))),)),
        ModelRequest(messages=(RequestMessage(parts=(SystemPromptPart("sys"),)),)),
    ]
    for request in refused:
        with pytest.raises(M.MistralEncodeError):
            session.append(request)
    with pytest.raises(ExtraBodyRejected):
        session.append(ModelRequest(messages=(RequestMessage.user("x"),), settings=ModelSettings(
            extra_body=ProviderExtraBody("mistral", {"inputs": []}))))
    assert transport.requests == []
    body = M.encode_append(ModelRequest(messages=(RequestMessage.user("x"),), settings=ModelSettings(
        temperature=0.1, extra_body=ProviderExtraBody("mistral", {"handoff_execution": "client"}))), stream=True)
    assert body["stream"] is True and body["handoff_execution"] == "client"


def test_session_decode_errors_carry_the_status() -> None:
    answers = iter([MockResponse.of_json({"outputs": "no"}), MockResponse(200, (), b"{bad"),
                    MockResponse.of_json({"conversation_id": "other", "entries": []}),
                    MockResponse.of_json({"entries": [{"type": 1}]})])
    transport = MockTransport(lambda request: next(answers))
    session = M.Session(M.ConversationsProvider("ms-test", transport), "conv_1")
    with pytest.raises(M.MistralDecodeError) as caught:
        session.append(ModelRequest(messages=(RequestMessage.user("x"),)))
    assert caught.value.path == "$.outputs" and caught.value.status == 200
    with pytest.raises(M.MistralDecodeError) as caught:
        session.append(ModelRequest(messages=(RequestMessage.user("x"),)))
    assert caught.value.status == 200
    with pytest.raises(M.MistralDecodeError) as caught:
        session.history()
    assert caught.value.path == "$.conversation_id"
    with pytest.raises(M.MistralDecodeError) as caught:
        session.history()
    assert caught.value.path == "$.entries[0].type"


def test_edge_entries_decode_the_same_buffered_and_streamed() -> None:
    outputs = [
        {"type": "message.output", "id": "m1", "content": [
            {"type": "tool_reference", "tool": "web_search", "title": "T"}, {"type": "text", "text": "after"}]},
        {"type": "message.output", "id": "m2", "content": [{"type": "thinking", "thinking": "plain string"}]},
        {"type": "function.call", "id": "f1", "tool_call_id": "c1", "name": "noargs"},
        {"type": "tool.execution", "id": "t1", "name": "code_interpreter"},
    ]
    message = M.decode_response({"outputs": outputs, "usage": {"connectors": {"ok": 2, "bad": -1}}})
    text, thinking, call, execution, result = message.parts
    assert isinstance(text, TextPart) and text.content == "after"
    assert text.provider is not None and text.provider.details is not None
    assert text.provider.details["references"][0]["title"] == "T"
    assert isinstance(thinking, ThinkingPart) and thinking.content == "plain string"
    assert isinstance(call, ToolCallPart) and call.args == "{}"
    assert isinstance(execution, NativeToolCallPart) and execution.args == "{}"
    assert isinstance(result, NativeToolReturnPart) and result.content is None
    assert dict(message.usage.details) == {"connectors.ok": 2}
    events = [
        {"type": "message.output.delta", "output_index": 0, "content": ""},
        {"type": "message.output.delta", "output_index": 1, "content": {"type": "thinking", "thinking": ""}},
        {"type": "message.output.delta", "output_index": 1, "content": {"type": "thinking", "thinking": "a"}},
        {"type": "function.call.delta", "tool_call_id": "c1", "name": "noargs"},
        {"type": "tool.execution.started", "id": "t1", "name": "code_interpreter", "arguments": {"x": 1}},
        {"type": "tool.execution.done", "id": "t1"},
        {"type": "conversation.response.done"},
    ]
    data = "".join(f"data: {json.dumps(event)}\n\n" for event in events).encode()
    decoder = M.StreamDecoder()
    parts = [e.part for e in feed_chunks(decoder, [data]) if isinstance(e, PartEndEvent)]
    assert [p.part_kind for p in parts] == ["native-tool-call", "native-tool-return", "text", "thinking",
                                            "tool-call"]
    assert parts[0].args == "{}" and parts[3].content == "a"
    assert decoder.usage.input_tokens == 0
