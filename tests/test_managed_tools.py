"""Provider-managed tools end to end through ``Agent.builtin_tools``: each adapter maps the
portable kinds to its own server tools, decodes the provider-executed call and result into
history as native tool parts (never dispatched locally), and the next run replays them as the
provider documents; a kind the model's profile lacks, or a repeated kind, fails before I/O."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from support.mock_transport import MockResponse, MockTransport

from zigai.agent import Agent, InvalidAgentConfiguration
from zigai.messages import (
    NativeToolCallPart,
    NativeToolReturnPart,
    RequestMessage,
    ResponseMessage,
    ToolOutcome,
)
from zigai.model import InvalidToolDefinition, ManagedTool, ModelRequest, UnsupportedModelFeature
from zigai.providers import anthropic, bedrock, cohere, google, mistral, openai, xai
from zigai.providers import azure_openai as azure


def _serve(*answers: Any) -> MockTransport:
    """A transport answering the scripted bodies in order (text bodies are SSE streams)."""
    queue = list(answers)

    def handle(request: Any) -> MockResponse:
        answer = queue.pop(0)
        return MockResponse.of_text(answer) if isinstance(answer, str) else MockResponse.of_json(answer)

    return MockTransport(handle)


def _body(transport: MockTransport, index: int) -> dict[str, Any]:
    return json.loads(transport.requests[index].body or b"")


def _native(messages: tuple[Any, ...]) -> list[NativeToolCallPart | NativeToolReturnPart]:
    return [part for message in messages if isinstance(message, ResponseMessage) for part in message.parts
            if isinstance(part, (NativeToolCallPart, NativeToolReturnPart))]


def _two_runs(agent: Agent) -> tuple[Any, tuple[Any, ...]]:
    """Run once, then continue the conversation; the first run's messages and output."""
    with agent.run("search for zigai") as first:
        output, history = first.output, first.all_messages()
    agent.run("and now?", message_history=history).close()
    return output, history


# -- OpenAI Responses -------------------------------------------------------------------------

WEB_SEARCH_CALL = {"type": "web_search_call", "id": "ws_1", "status": "completed",
                   "action": {"type": "search", "query": "zigai"}}


def _responses_answer(*items: dict[str, Any]) -> dict[str, Any]:
    return {"id": "resp_1", "status": "completed", "output": [*items, {
        "type": "message", "id": "msg_1", "role": "assistant",
        "content": [{"type": "output_text", "text": "found it", "annotations": []}]}],
        "usage": {"input_tokens": 9, "output_tokens": 3}}


@pytest.mark.parametrize("replay_reasoning", [False, True])
def test_openai_web_search_is_decoded_and_replayed_by_its_rule(replay_reasoning: bool) -> None:
    transport = _serve(_responses_answer(WEB_SEARCH_CALL), _responses_answer())
    model = openai.Client("gpt-4.1-mini", openai.Provider("sk-test", transport=transport),
                          replay_reasoning=replay_reasoning)
    output, history = _two_runs(Agent(model, builtin_tools=["web_search"]))
    assert output == "found it" and len(transport.requests) == 2  # nothing dispatched locally
    assert _body(transport, 0)["tools"] == [{"type": "web_search"}]
    call, result = _native(history)
    assert (call.tool_name, call.tool_call_id, call.provider_name) == ("web_search", "ws_1", "openai")
    assert call.args_as_dict() == {"type": "search", "query": "zigai"}
    assert result.outcome is ToolOutcome.success
    replayed = [item for item in _body(transport, 1)["input"] if item.get("type") == "web_search_call"]
    # by default OpenAI's own answer text carries the outcome; with reasoning replay every item goes back
    assert replayed == ([WEB_SEARCH_CALL] if replay_reasoning else [])


def test_azure_responses_web_search_through_the_agent() -> None:
    failed = {**WEB_SEARCH_CALL, "status": "failed"}
    transport = _serve(_responses_answer(failed), _responses_answer())
    model = azure.ResponsesClient("gpt-4o", azure.Provider("az-key", transport, resource="contoso"))
    output, history = _two_runs(Agent(model, builtin_tools=["web_search"]))
    assert output == "found it" and _body(transport, 0)["tools"] == [{"type": "web_search"}]
    call, result = _native(history)
    assert call.provider_name == "azure_openai" and result.outcome is ToolOutcome.error


def test_xai_search_and_code_execution_are_replayed_as_they_came() -> None:
    code = {"type": "code_interpreter_call", "id": "ci_1", "status": "completed", "code": "print(1)"}
    transport = _serve(_responses_answer(WEB_SEARCH_CALL, code), _responses_answer())
    model = xai.Client("grok-4", xai.Provider("xai-key", transport=transport))
    output, history = _two_runs(Agent(model, builtin_tools=["web_search", "code_execution"]))
    assert output == "found it"
    assert _body(transport, 0)["tools"] == [{"type": "web_search"}, {"type": "code_interpreter"}]
    assert [p.tool_name for p in _native(history)] == ["web_search", "web_search", "code_interpreter",
                                                       "code_interpreter"]
    sent = _body(transport, 1)["input"]
    assert [item for item in sent if item.get("type", "").endswith("_call")] == [WEB_SEARCH_CALL, code]


# -- Anthropic Messages -----------------------------------------------------------------------

SEARCH_RESULTS = [{"type": "web_search_result", "url": "https://zigai.test", "title": "zigai",
                   "encrypted_content": "enc-1", "page_age": None}]
FETCHED = {"type": "web_fetch_result", "url": "https://zigai.test", "content": {
    "type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "hello"}}}
ANTHROPIC_BLOCKS = [
    {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "zigai"}},
    {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": SEARCH_RESULTS},
    {"type": "server_tool_use", "id": "srvtoolu_2", "name": "web_fetch", "input": {"url": "https://zigai.test"}},
    {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_2", "content": FETCHED},
    {"type": "text", "text": "found it"},
]


def _anthropic_answer(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": blocks, "stop_reason": "end_turn",
            "usage": {"input_tokens": 5, "output_tokens": 3, "server_tool_use": {"web_search_requests": 1}}}


def _anthropic_stream(blocks: list[dict[str, Any]]) -> str:
    events: list[dict[str, Any]] = [{"type": "message_start", "message": {
        **_anthropic_answer([]), "stop_reason": None}}]
    for index, block in enumerate(blocks):
        if block["type"] == "server_tool_use":
            events.append({"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}})
            text = json.dumps(block["input"], separators=(",", ":"))
            for piece in (text[:5], text[5:]):
                events.append({"type": "content_block_delta", "index": index,
                               "delta": {"type": "input_json_delta", "partial_json": piece}})
        elif block["type"] == "text":
            events.append({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
            events.append({"type": "content_block_delta", "index": index,
                           "delta": {"type": "text_delta", "text": block["text"]}})
        else:
            events.append({"type": "content_block_start", "index": index, "content_block": block})
        events.append({"type": "content_block_stop", "index": index})
    events += [{"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}},
               {"type": "message_stop"}]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def _anthropic_agent(transport: MockTransport) -> Agent:
    model = anthropic.Client("claude-sonnet-4-5", anthropic.Provider("sk-ant", transport), max_tokens=64)
    return Agent(model, builtin_tools=["web_search", "web_fetch"])


def test_anthropic_search_and_fetch_are_decoded_and_replayed_as_server_blocks() -> None:
    transport = _serve(_anthropic_answer(ANTHROPIC_BLOCKS), _anthropic_answer([{"type": "text", "text": "ok"}]))
    output, history = _two_runs(_anthropic_agent(transport))
    assert output == "found it"
    parts = _native(history)
    assert [(type(p).__name__, p.tool_name, p.tool_call_id) for p in parts] == [
        ("NativeToolCallPart", "web_search", "srvtoolu_1"), ("NativeToolReturnPart", "web_search", "srvtoolu_1"),
        ("NativeToolCallPart", "web_fetch", "srvtoolu_2"), ("NativeToolReturnPart", "web_fetch", "srvtoolu_2")]
    assistant = _body(transport, 1)["messages"][1]
    assert assistant["role"] == "assistant" and assistant["content"][:4] == ANTHROPIC_BLOCKS[:4]


def test_anthropic_streamed_run_keeps_the_same_native_parts() -> None:
    buffered = _serve(_anthropic_answer(ANTHROPIC_BLOCKS))
    with _anthropic_agent(buffered).run("search for zigai") as result:
        expected = _native(result.all_messages())
    streamed = _serve(_anthropic_stream(ANTHROPIC_BLOCKS))
    with _anthropic_agent(streamed).run_stream("search for zigai") as stream:
        list(stream)
        with stream.result() as result:
            assert result.output == "found it"
            assert _native(result.all_messages()) == expected
    assert _body(streamed, 0)["stream"] is True


# -- Gemini -----------------------------------------------------------------------------------

GROUNDING = {"webSearchQueries": ["zigai"], "groundingChunks": [{"web": {"uri": "https://zigai.test"}}]}
URL_CONTEXT = {"urlMetadata": [{"retrievedUrl": "https://zigai.test", "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_SUCCESS"}]}
GEMINI_PARTS = [{"executableCode": {"language": "PYTHON", "code": "print(2 + 3)"}},
                {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "5\n"}},
                {"text": "found it"}]


def test_gemini_search_url_context_and_code_execution_through_the_agent() -> None:
    answer = {"candidates": [{"content": {"role": "model", "parts": GEMINI_PARTS}, "finishReason": "STOP",
                              "groundingMetadata": GROUNDING, "urlContextMetadata": URL_CONTEXT}],
              "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 2}}
    done = {"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}]}
    transport = _serve(answer, done)
    model = google.Client("gemini-2.5-flash", google.Provider("g-key", transport))
    output, history = _two_runs(Agent(model, builtin_tools=["web_search", "web_fetch", "code_execution"]))
    assert output == "found it"
    assert _body(transport, 0)["tools"] == [{"googleSearch": {}}, {"urlContext": {}}, {"codeExecution": {}}]
    call, result = _native(history)
    assert call.tool_name == "code_execution" and call.args_as_dict() == {"language": "PYTHON", "code": "print(2 + 3)"}
    assert result.content == {"outcome": "OUTCOME_OK", "output": "5\n"}
    response = next(m for m in history if isinstance(m, ResponseMessage))
    assert response.provider_details is not None
    assert response.provider_details["grounding_metadata"]["webSearchQueries"] == ("zigai",)
    assert "url_context_metadata" in response.provider_details
    model_turn = _body(transport, 1)["contents"][1]
    assert model_turn["role"] == "model" and [next(iter(p)) for p in model_turn["parts"]] == [
        "executableCode", "codeExecutionResult", "text"]


# -- Mistral Conversations --------------------------------------------------------------------

def test_mistral_web_search_and_code_interpreter_through_the_agent() -> None:
    execution = {"object": "entry", "type": "tool.execution", "id": "tool_1", "name": "web_search",
                 "arguments": '{"query": "zigai"}', "info": {"results": 2}}
    answer = {"conversation_id": "conv_1", "outputs": [
        execution, {"object": "entry", "type": "message.output", "id": "msg_1", "role": "assistant",
                    "content": "found it"}], "usage": {"prompt_tokens": 4, "completion_tokens": 2}}
    done = {"conversation_id": "conv_2", "outputs": [{"type": "message.output", "content": "ok"}]}
    transport = _serve(answer, done)
    model = mistral.ConversationsClient("mistral-medium-latest", mistral.ConversationsProvider("ms", transport))
    output, history = _two_runs(Agent(model, builtin_tools=["web_search", "code_execution"]))
    assert output == "found it"
    first = _body(transport, 0)
    assert first["tools"] == [{"type": "web_search"}, {"type": "code_interpreter"}] and first["store"] is False
    call, result = _native(history)
    assert (call.tool_name, call.provider_name, call.args_as_dict()) == ("web_search", "mistral", {"query": "zigai"})
    replayed = [entry for entry in _body(transport, 1)["inputs"] if entry.get("type") == "tool.execution"]
    assert replayed == [{k: v for k, v in execution.items() if k != "id"}]


# -- refused before any request ---------------------------------------------------------------

def _never() -> MockTransport:
    return MockTransport(lambda request: pytest.fail("no request may be sent"))


REFUSALS: list[tuple[str, Callable[[MockTransport], Any], str]] = [
    ("openai web_fetch", lambda t: openai.Client("gpt-4.1-mini", openai.Provider("k", transport=t)), "web_fetch"),
    ("anthropic file_search", lambda t: anthropic.Client("claude-sonnet-4-5", anthropic.Provider("k", t),
                                                         max_tokens=5), "file_search"),
    ("anthropic-3 code_execution", lambda t: anthropic.Client("claude-3-haiku-20240307",
                                                              anthropic.Provider("k", t), max_tokens=5),
     "code_execution"),
    ("bedrock image_generation", lambda t: bedrock.Client("us.anthropic.claude-sonnet-4-6",
                                                          bedrock.Provider("k", "us-east-1", t)),
     "image_generation"),
    ("gemini tool_search", lambda t: google.Client("gemini-2.5-flash", google.Provider("k", t)), "tool_search"),
    ("mistral web_fetch", lambda t: mistral.ConversationsClient("mistral-medium-latest",
                                                                mistral.ConversationsProvider("k", t)), "web_fetch"),
    ("xai web_fetch", lambda t: xai.Client("grok-4", xai.Provider("k", transport=t)), "web_fetch"),
    ("mistral chat route", lambda t: mistral.Client("mistral-medium-latest", mistral.Provider("k", t)), "web_search"),
    ("bedrock converse", lambda t: bedrock.Client("us.anthropic.claude-sonnet-4-6",
                                                  bedrock.Provider("k", "us-east-1", t)), "web_search"),
    ("cohere v2", lambda t: cohere.ChatClient("command-a-03-2025", cohere.ChatProvider("k", t)), "web_search"),
    ("unknown azure deployment", lambda t: azure.ResponsesClient("prod-chat", azure.Provider("k", t, resource="r")),
     "web_search"),
]


@pytest.mark.parametrize(("build", "kind"), [(b, k) for _, b, k in REFUSALS], ids=[n for n, _, _ in REFUSALS])
def test_a_kind_the_profile_lacks_is_refused_before_any_request(
    build: Callable[[MockTransport], Any], kind: str
) -> None:
    transport = _never()
    agent = Agent(build(transport), builtin_tools=[kind])
    with pytest.raises(UnsupportedModelFeature, match=kind):
        agent.run("x")
    with pytest.raises(UnsupportedModelFeature, match=kind), agent.run_stream("x") as stream:
        list(stream)
    assert transport.requests == []


def test_a_repeated_kind_is_refused_at_the_agent_and_at_the_model_request() -> None:
    model = openai.Client("gpt-4.1-mini", openai.Provider("k", transport=_never()))
    with pytest.raises(InvalidAgentConfiguration, match="twice"):
        Agent(model, builtin_tools=["web_search", "web_search"])
    with pytest.raises(InvalidToolDefinition, match="web_search"):
        ModelRequest(messages=(RequestMessage.user("x"),),
                     managed_tools=(ManagedTool("web_search"), ManagedTool("web_search", {"search_context_size": "low"})))
    ModelRequest(messages=(RequestMessage.user("x"),), managed_tools=(ManagedTool("web_search"), ManagedTool("web_fetch")))


# -- persisted history ------------------------------------------------------------------------

GEMINI_ANSWER = {"candidates": [{"content": {"role": "model", "parts": GEMINI_PARTS}, "finishReason": "STOP"}]}
MISTRAL_ANSWER = {"conversation_id": "conv_1", "outputs": [
    {"object": "entry", "type": "tool.execution", "id": "tool_1", "name": "web_search",
     "arguments": '{"query": "zigai"}', "info": {"results": 2}},
    {"object": "entry", "type": "message.output", "role": "assistant", "content": "found it"}]}
ROUTES: dict[str, tuple[Callable[[MockTransport], Any], list[str], Any, Any]] = {
    "anthropic": (lambda t: anthropic.Client("claude-sonnet-4-5", anthropic.Provider("k", t), max_tokens=64),
                  ["web_search", "web_fetch"], _anthropic_answer(ANTHROPIC_BLOCKS),
                  _anthropic_answer([{"type": "text", "text": "ok"}])),
    "google": (lambda t: google.Client("gemini-2.5-flash", google.Provider("k", t)), ["code_execution"],
               GEMINI_ANSWER, GEMINI_ANSWER),
    "mistral": (lambda t: mistral.ConversationsClient("mistral-medium-latest", mistral.ConversationsProvider("k", t)),
                ["web_search"], MISTRAL_ANSWER, MISTRAL_ANSWER),
    "xai": (lambda t: xai.Client("grok-4", xai.Provider("k", transport=t)), ["web_search"],
            _responses_answer(WEB_SEARCH_CALL), _responses_answer()),
}


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_native_parts_survive_stringify_and_parse_and_replay_identically(route: str) -> None:
    from zigai import history

    build, kinds, first, second = ROUTES[route]
    transport = _serve(first, second, second)
    agent = Agent(build(transport), builtin_tools=kinds)
    with agent.run("search for zigai") as result:
        live = result.all_messages()
    assert _native(live)
    with history.parse(history.stringify(live)) as stored:
        assert stored.messages == live
        agent.run("and now?", message_history=stored.messages).close()
    agent.run("and now?", message_history=live).close()
    assert _body(transport, 1) == _body(transport, 2)
