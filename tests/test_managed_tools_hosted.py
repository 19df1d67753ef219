"""Managed tools beyond web search: code interpreter, image generation, file search and remote
MCP on OpenAI Responses; code execution and the MCP connector on Anthropic; URL context and
code execution on Gemini.  Wire shapes follow each provider's documented request and event
shapes; every tool also makes a loopback round trip through the agent (request, decoded
history, replay on the next run)."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pytest
from support.loopback import LoopbackServer, Received, Reply

from zigai import Agent
from zigai.messages import (
    BytesSource,
    FilePart,
    NativeToolCallPart,
    NativeToolReturnPart,
    RequestMessage,
    ResponseMessage,
    TextPart,
    ToolOutcome,
    UploadedFile,
    UrlSource,
)
from zigai.messages.json_value import thaw_json
from zigai.model import ManagedTool, ModelRequest, PartAccumulator, UnsupportedModelFeature
from zigai.providers import anthropic, google, openai
from zigai.providers.anthropic import AnthropicEncodeError
from zigai.providers.openai import OpenAIDecodeError, OpenAIEncodeError
from zigai.providers.openai.decode import decode_response
from zigai.providers.openai.encode import EncodeOptions, encode_input, encode_request
from zigai.security import UrlPolicy

LOCAL = UrlPolicy.local_development()
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(40))
PNG_B64 = base64.b64encode(PNG).decode()


def _parts(messages: list[Any], kind: type) -> list[Any]:
    return [p for m in messages if isinstance(m, ResponseMessage) for p in m.parts if isinstance(p, kind)]


# -- OpenAI Responses: request shapes ---------------------------------------------------------


def _encode_tools(*managed: ManagedTool) -> list[dict[str, Any]]:
    request = ModelRequest(messages=(RequestMessage.user("x"),), managed_tools=managed)
    return encode_request(request, "gpt-5")["tools"]


def test_openai_tool_objects_follow_the_documented_shapes() -> None:
    assert _encode_tools(ManagedTool("code_execution")) == [
        {"type": "code_interpreter", "container": {"type": "auto"}}]
    assert _encode_tools(ManagedTool("code_execution", {"container": {
        "type": "auto", "memory_limit": "4g", "file_ids": ["file-1"]}})) == [
        {"type": "code_interpreter", "container": {"type": "auto", "memory_limit": "4g",
                                                   "file_ids": ["file-1"]}}]
    assert _encode_tools(ManagedTool("image_generation", {"size": "1024x1024", "quality": "low"})) == [
        {"type": "image_generation", "size": "1024x1024", "quality": "low"}]
    assert _encode_tools(ManagedTool("file_search", {"vector_store_ids": ("vs_1",), "max_num_results": 3})) == [
        {"type": "file_search", "vector_store_ids": ["vs_1"], "max_num_results": 3}]
    assert _encode_tools(ManagedTool("mcp_server", {
        "name": "deepwiki", "url": "https://mcp.deepwiki.com/mcp", "allowed_tools": ["ask_question"],
        "authorization": "tok", "description": "wiki"})) == [
        {"type": "mcp", "server_label": "deepwiki", "server_url": "https://mcp.deepwiki.com/mcp",
         "require_approval": "never", "server_description": "wiki", "allowed_tools": ["ask_question"],
         "authorization": "tok"}]
    assert _encode_tools(ManagedTool("web_search", {"search_context_size": "low"})) == [
        {"type": "web_search", "search_context_size": "low"}]


@pytest.mark.parametrize(("managed", "words"), [
    (ManagedTool("file_search"), "vector_store_ids"),
    (ManagedTool("file_search", {"vector_store_ids": []}), "vector_store_ids"),
    (ManagedTool("file_search", {"vector_store_ids": ["vs", 3]}), "vector_store_ids"),
    (ManagedTool("mcp_server", {"url": "https://m.example/mcp"}), "'name'"),
    (ManagedTool("mcp_server", {"name": "m"}), "'url'"),
    (ManagedTool("image_generation", {"n": 2}), "unknown image_generation options: n"),
    (ManagedTool("code_execution", {"memory": "4g"}), "unknown code_execution options"),
    (ManagedTool("web_fetch"), "has no web_fetch tool"),
])
def test_openai_tool_options_are_checked_before_io(managed: ManagedTool, words: str) -> None:
    with pytest.raises(OpenAIEncodeError, match=words):
        _encode_tools(managed)


def test_profiles_refuse_hosted_tools_a_model_lacks_before_io() -> None:
    class NoNetwork:
        def send(self, request: Any) -> Any:
            raise AssertionError("nothing may be sent")

        def stream_lines(self, request: Any) -> Any:
            raise AssertionError("nothing may be sent")

    search = openai.Client("gpt-4o-search-preview", openai.Provider("sk", transport=NoNetwork()))
    for kind in ("code_execution", "image_generation", "file_search", "mcp_server"):
        with pytest.raises(UnsupportedModelFeature, match=kind):
            Agent(search, builtin_tools=[kind]).run("x")
    haiku3 = anthropic.Client("claude-3-haiku-20240307", anthropic.Provider("k", NoNetwork()))
    with pytest.raises(UnsupportedModelFeature, match="code_execution"):
        Agent(haiku3, builtin_tools=["code_execution"]).run("x")
    sonnet4 = anthropic.Client("claude-sonnet-4-20250514", anthropic.Provider("k", NoNetwork()))
    assert "code_execution" in sonnet4.profile.provider_managed_tools
    with pytest.raises(UnsupportedModelFeature, match="mcp_server"):
        Agent(sonnet4, builtin_tools=[ManagedTool("mcp_server", {"name": "m", "url": "https://m"})]).run("x")
    assert "mcp_server" in anthropic.default_profile("claude-sonnet-4-5").provider_managed_tools


# -- OpenAI Responses: output items -----------------------------------------------------------

CODE_ITEM = {"type": "code_interpreter_call", "id": "ci_1", "status": "completed",
             "code": "print(6 * 7)", "container_id": "cntr_1",
             "outputs": [{"type": "logs", "logs": "42\n"}]}
PLOT_ITEM = {"type": "code_interpreter_call", "id": "ci_2", "status": "completed",
             "code": "plot()", "container_id": "cntr_1",
             "outputs": [{"type": "image", "url": "https://files.example/chart.png"},
                         {"type": "image", "url": ""}, "junk"]}
SEARCH_ITEM = {"type": "file_search_call", "id": "fs_1", "status": "completed",
               "queries": ["refund policy"],
               "results": [{"file_id": "file-1", "filename": "policy.pdf", "score": 0.9,
                            "text": "30 days"}]}
MCP_ITEM = {"type": "mcp_call", "id": "mcp_1", "server_label": "deepwiki", "name": "ask_question",
            "arguments": "{\"question\":\"zigai?\"}", "output": "an agent framework", "error": None,
            "status": "completed"}
MCP_FAILED = {"type": "mcp_call", "id": "mcp_2", "server_label": "deepwiki", "name": "ask_question",
              "arguments": "", "output": None, "error": "tool crashed"}
LIST_ITEM = {"type": "mcp_list_tools", "id": "mcpl_1", "server_label": "deepwiki",
             "tools": [{"name": "ask_question", "input_schema": {"type": "object"}}]}
IMAGE_ITEM = {"type": "image_generation_call", "id": "ig_1", "status": "completed",
              "revised_prompt": "a red square", "output_format": "png", "result": PNG_B64}


def _message(text: str, item_id: str = "msg_1") -> dict[str, Any]:
    return {"type": "message", "id": item_id, "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def _response(*items: dict[str, Any]) -> dict[str, Any]:
    return {"id": "resp_1", "model": "gpt-5", "status": "completed", "output": list(items),
            "usage": {"input_tokens": 5, "output_tokens": 3}}


def test_openai_hosted_items_decode_into_neutral_parts() -> None:
    response = decode_response(_response(LIST_ITEM, CODE_ITEM, SEARCH_ITEM, MCP_ITEM, MCP_FAILED,
                                         IMAGE_ITEM, _message("done")))
    calls = [p for p in response.parts if isinstance(p, NativeToolCallPart)]
    returns = [p for p in response.parts if isinstance(p, NativeToolReturnPart)]
    assert [(c.tool_name, c.args_as_dict()) for c in calls] == [
        ("code_interpreter", {"code": "print(6 * 7)", "container_id": "cntr_1"}),
        ("file_search", {"queries": ["refund policy"]}),
        ("mcp", {"question": "zigai?"}),
        ("mcp", {}),
        ("image_generation", {"revised_prompt": "a red square"}),
    ]
    contents = [thaw_json(r.content) for r in returns]
    assert contents[0] == {"status": "completed", "outputs": [{"type": "logs", "logs": "42\n"}]}
    assert contents[1]["results"][0]["text"] == "30 days"
    assert contents[2] == {"status": "completed", "server_label": "deepwiki",
                           "name": "ask_question", "output": "an agent framework"}
    assert contents[3] == {"server_label": "deepwiki", "name": "ask_question", "error": "tool crashed"}
    assert [r.outcome for r in returns] == [ToolOutcome.success] * 3 + [ToolOutcome.error, ToolOutcome.success]
    (image,) = [p for p in response.parts if isinstance(p, FilePart)]
    assert image.source == BytesSource(PNG, "image/png") and image.id == "ig_1"
    image_call = calls[-1]
    assert image_call.provider.details["result"] is None  # the bytes live in the file part only
    assert thaw_json(response.provider_details["output"]) == [LIST_ITEM]  # type: ignore[index]


@pytest.mark.parametrize(("result", "words"), [(5, "base64 text"), ("not base64!", "not base64")])
def test_openai_image_results_must_be_base64(result: Any, words: str) -> None:
    with pytest.raises(OpenAIDecodeError, match=words) as raised:
        decode_response(_response({**IMAGE_ITEM, "result": result}))
    assert raised.value.path == "$.output[0].result"
    pending = decode_response(_response({**IMAGE_ITEM, "result": None, "status": "generating",
                                         "output_format": "webp"}))
    assert not [p for p in pending.parts if isinstance(p, FilePart)]
    bare = {k: v for k, v in IMAGE_ITEM.items() if k != "result"}
    decoded = decode_response(_response(bare))
    assert "result" not in decoded.parts[0].provider.details  # type: ignore[union-attr, operator]


def test_openai_hosted_items_stream_to_the_buffered_parts() -> None:
    from zigai.providers.openai.stream import StreamDecoder
    from zigai.providers.sse import SseEvent

    items = [CODE_ITEM, SEARCH_ITEM, MCP_ITEM, {**IMAGE_ITEM, "output_format": "jpeg"}, _message("done")]
    decoder = StreamDecoder()
    accumulator = PartAccumulator()
    events: list[dict[str, Any]] = [{"type": "response.created", "response": {"id": "resp_1", "model": "gpt-5"}}]
    for index, item in enumerate(items):
        events.append({"type": "response.output_item.added", "output_index": index,
                       "item": {**item, "status": "in_progress"}})
        if item["type"] == "image_generation_call":
            events.append({"type": "response.image_generation_call.partial_image", "item_id": "ig_1",
                           "output_index": index, "partial_image_index": 0,
                           "partial_image_b64": PNG_B64})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": _response(*items)})
    for event in events:
        for produced in decoder.feed(SseEvent(event["type"], json.dumps(event))):
            accumulator.apply(produced)
    for produced in decoder.finish():
        accumulator.apply(produced)
    assert accumulator.parts() == decode_response(_response(*items)).parts
    assert [p for p in accumulator.parts() if isinstance(p, FilePart)][0].source.media_type == "image/jpeg"  # type: ignore[union-attr]


def test_openai_code_interpreter_images_become_url_file_parts() -> None:
    response = decode_response(_response(PLOT_ITEM, _message("chart")))
    (chart,) = [p for p in response.parts if isinstance(p, FilePart)]
    assert chart.source == UrlSource("https://files.example/chart.png") and chart.id == "ci_2"
    assert [p.part_kind for p in response.parts] == ["native-tool-call", "native-tool-return", "file", "text"]
    history = (RequestMessage.user("plot"), response, RequestMessage.user("again"))
    assert [item.get("role") for item in encode_input(history)] == ["user", "assistant", "user"]


def test_openai_replay_skips_hosted_traffic_unless_asked_and_never_resends_image_bytes() -> None:
    response = decode_response(_response(CODE_ITEM, IMAGE_ITEM, _message("done")))
    history = (RequestMessage.user("draw"), response, RequestMessage.user("again"))
    plain = encode_input(history)
    assert [item.get("type", item.get("role")) for item in plain] == ["message", "message", "message"]
    replayed = encode_input(history, EncodeOptions(replay_native_items=True))
    assert replayed[1] == CODE_ITEM
    assert replayed[2] == {**IMAGE_ITEM, "result": None}
    foreign = FilePart(BytesSource(PNG, "image/png"))
    with pytest.raises(OpenAIEncodeError, match="file part cannot be replayed"):
        encode_input((ResponseMessage(parts=(foreign,)),))


# -- Anthropic: request shapes ----------------------------------------------------------------


def _anthropic_body(*managed: ManagedTool, **settings: Any) -> tuple[dict[str, Any], tuple[str, ...]]:
    request = ModelRequest(messages=(RequestMessage.user("x"),), managed_tools=managed)
    return (anthropic.encode_request(request, model_name="claude-sonnet-4-5", max_tokens=64),
            anthropic.beta_features(request))


def test_anthropic_code_execution_and_mcp_connector_shapes() -> None:
    body, betas = _anthropic_body(ManagedTool("code_execution"))
    assert body["tools"] == [{"type": "code_execution_20250825", "name": "code_execution"}]
    assert betas == ("code-execution-2025-08-25",) and "mcp_servers" not in body
    server = {"name": "deepwiki", "url": "https://mcp.deepwiki.com/mcp", "authorization": "tok",
              "allowed_tools": ["ask_question"]}
    body, betas = _anthropic_body(ManagedTool("mcp_server", server), ManagedTool("web_fetch"))
    assert body["mcp_servers"] == [{"type": "url", "url": "https://mcp.deepwiki.com/mcp",
                                    "name": "deepwiki", "authorization_token": "tok"}]
    assert body["tools"] == [
        {"type": "mcp_toolset", "mcp_server_name": "deepwiki", "default_config": {"enabled": False},
         "configs": {"ask_question": {"enabled": True}}},
        {"type": "web_fetch_20250910", "name": "web_fetch"}]
    assert betas == ("mcp-client-2025-11-20", "web-fetch-2025-09-10")
    from zigai.providers.anthropic import _server_tools

    assert _server_tools.betas([ManagedTool("web_search"), ManagedTool("code_execution"),
                                ManagedTool("code_execution")]) == ["code-execution-2025-08-25"]
    body, _ = _anthropic_body(ManagedTool("mcp_server", {"name": "m", "url": "https://m.example"}))
    assert body["tools"] == [{"type": "mcp_toolset", "mcp_server_name": "m"}]
    assert body["mcp_servers"] == [{"type": "url", "url": "https://m.example", "name": "m"}]


@pytest.mark.parametrize(("config", "words"), [
    ({"url": "https://m.example"}, "'name'"),
    ({"name": "m"}, "'url'"),
    ({"name": "m", "url": "https://m", "headers": {}}, "unknown mcp_server options: headers"),
    ({"name": "m", "url": "https://m", "allowed_tools": "ask"}, "list of tool names"),
])
def test_anthropic_mcp_config_is_checked_before_io(config: dict[str, Any], words: str) -> None:
    with pytest.raises(AnthropicEncodeError, match=words):
        _anthropic_body(ManagedTool("mcp_server", config))


def test_anthropic_mcp_servers_are_not_set_twice() -> None:
    from zigai.settings import ModelSettings, ProviderExtraBody

    request = ModelRequest(
        messages=(RequestMessage.user("x"),),
        managed_tools=(ManagedTool("mcp_server", {"name": "m", "url": "https://m"}),),
        settings=ModelSettings(extra_body=ProviderExtraBody("anthropic", {"mcp_servers": []})))
    with pytest.raises(AnthropicEncodeError, match="extra_body"):
        anthropic.encode_request(request, model_name="claude-sonnet-4-5", max_tokens=64)


# -- Anthropic: result blocks -----------------------------------------------------------------

BASH_USE = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "bash_code_execution",
            "input": {"command": "python -c 'print(6*7)'"}}
BASH_RESULT = {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_1",
               "content": {"type": "bash_code_execution_result", "stdout": "42\n", "stderr": "",
                           "return_code": 0, "content": []}}
BASH_FILES = {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_3",
              "content": {"type": "bash_code_execution_result", "stdout": "", "stderr": "",
                          "return_code": 0,
                          "content": [{"type": "bash_code_execution_output", "file_id": "file_011"},
                                      {"type": "bash_code_execution_output", "file_id": ""}, "junk"]}}
BASH_USE_3 = {**BASH_USE, "id": "srvtoolu_3", "input": {"command": "python plot.py"}}
BASH_USE_2 = {**BASH_USE, "id": "srvtoolu_2"}
BASH_ERROR = {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_2",
              "content": {"type": "bash_code_execution_tool_result_error", "error_code": "unavailable"}}
MCP_USE = {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "ask_question", "server_name": "deepwiki",
           "input": {"question": "zigai?"}}
MCP_RESULT = {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_1", "is_error": False,
              "content": [{"type": "text", "text": "an agent framework"}]}
MCP_USE_2 = {**MCP_USE, "id": "mcptoolu_2"}
MCP_ERROR = {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_2", "is_error": True,
             "content": [{"type": "text", "text": "server down"}]}
TEXT = {"type": "text", "text": "It prints 42."}


def _anthropic_message(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": list(blocks), "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 5}}


ANTHROPIC_BLOCKS = (BASH_USE, BASH_RESULT, BASH_USE_2, BASH_ERROR, BASH_USE_3, BASH_FILES, MCP_USE,
                    MCP_RESULT, MCP_USE_2, MCP_ERROR, TEXT)


def test_anthropic_code_execution_and_mcp_blocks_decode_and_replay_exactly() -> None:
    response = anthropic.decode_response(_anthropic_message(*ANTHROPIC_BLOCKS))
    calls = [p for p in response.parts if isinstance(p, NativeToolCallPart)]
    returns = [p for p in response.parts if isinstance(p, NativeToolReturnPart)]
    assert [c.tool_name for c in calls] == ["bash_code_execution"] * 3 + ["ask_question"] * 2
    assert calls[3].provider.details["server_name"] == "deepwiki"
    assert [r.outcome for r in returns] == [ToolOutcome.success, ToolOutcome.error, ToolOutcome.success,
                                            ToolOutcome.success, ToolOutcome.error]
    (created,) = [p for p in response.parts if isinstance(p, FilePart)]
    assert created.source == UploadedFile("anthropic", "file_011")
    assert response.parts.index(created) == response.parts.index(returns[2]) + 1
    _, turns = anthropic.encode_messages((RequestMessage.user("run"), response))
    assert turns[1]["content"] == list(ANTHROPIC_BLOCKS)


def test_anthropic_streamed_blocks_equal_the_buffered_ones() -> None:
    from zigai.providers.anthropic import StreamDecoder
    from zigai.providers.sse import SseEvent

    events: list[dict[str, Any]] = [{"type": "message_start", "message": {
        **_anthropic_message(), "content": [], "stop_reason": None}}]
    for index, block in enumerate(ANTHROPIC_BLOCKS):
        if block["type"] in ("server_tool_use", "mcp_tool_use"):
            events.append({"type": "content_block_start", "index": index,
                           "content_block": {**block, "input": {}}})
            text = json.dumps(block["input"], separators=(",", ":"))
            for piece in (text[:5], text[5:]):
                events.append({"type": "content_block_delta", "index": index,
                               "delta": {"type": "input_json_delta", "partial_json": piece}})
        elif block["type"] == "text":
            events.append({"type": "content_block_start", "index": index,
                           "content_block": {"type": "text", "text": ""}})
            events.append({"type": "content_block_delta", "index": index,
                           "delta": {"type": "text_delta", "text": block["text"]}})
        else:
            events.append({"type": "content_block_start", "index": index, "content_block": block})
        events.append({"type": "content_block_stop", "index": index})
    events += [{"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 5}}, {"type": "message_stop"}]
    decoder = StreamDecoder()
    accumulator = PartAccumulator()
    for event in events:
        for produced in decoder.feed(SseEvent(event["type"], json.dumps(event))):
            accumulator.apply(produced)
    for produced in decoder.finish():
        accumulator.apply(produced)
    assert accumulator.parts() == anthropic.decode_response(_anthropic_message(*ANTHROPIC_BLOCKS)).parts


# -- loopback round trips through the agent -----------------------------------------------------


def _round_trip(handler: Callable[[Received, int], Reply], build: Callable[[str], Any],
                tool: ManagedTool | str) -> tuple[list[Received], list[Any], list[Any]]:
    """Two agent runs against a loopback provider: the second continues the first's history."""
    calls: list[int] = []

    def answer(received: Received) -> Reply:
        calls.append(1)
        return handler(received, len(calls))

    with LoopbackServer(answer) as server:
        agent = Agent(build(server.url), builtin_tools=[tool])
        with agent.run("first") as first:
            history = first.all_messages()
        with agent.run_stream("second", message_history=history) as streamed:
            list(streamed)
            second = streamed.result().all_messages()
    return list(server.requests), history, second


def _openai(url: str) -> Any:
    return openai.Client("gpt-5", openai.Provider("sk-test", base_url=url + "/v1", url_policy=LOCAL))


def _openai_handler(item: dict[str, Any]) -> Callable[[Received, int], Reply]:
    def handler(received: Received, count: int) -> Reply:
        if count == 1:
            return Reply.of_json(_response(item, _message("first answer")))
        body = _response(_message("second answer", "msg_2"))
        events = [{"type": "response.created", "response": {"id": "resp_2", "model": "gpt-5"}},
                  {"type": "response.output_item.done", "output_index": 0, "item": _message("second answer", "msg_2")},
                  {"type": "response.completed", "response": body}]
        return Reply.sse([json.dumps(e) for e in events])
    return handler


@pytest.mark.parametrize(("tool", "item", "wire"), [
    (ManagedTool("code_execution"), CODE_ITEM, {"type": "code_interpreter", "container": {"type": "auto"}}),
    (ManagedTool("image_generation", {"size": "1024x1024"}), IMAGE_ITEM,
     {"type": "image_generation", "size": "1024x1024"}),
    (ManagedTool("file_search", {"vector_store_ids": ["vs_1"]}), SEARCH_ITEM,
     {"type": "file_search", "vector_store_ids": ["vs_1"]}),
    (ManagedTool("mcp_server", {"name": "deepwiki", "url": "https://mcp.deepwiki.com/mcp"}), MCP_ITEM,
     {"type": "mcp", "server_label": "deepwiki", "server_url": "https://mcp.deepwiki.com/mcp",
      "require_approval": "never"}),
], ids=["code_interpreter", "image_generation", "file_search", "mcp"])
def test_openai_hosted_tool_round_trip_through_the_agent(
    tool: ManagedTool, item: dict[str, Any], wire: dict[str, Any]
) -> None:
    requests, history, second = _round_trip(_openai_handler(item), _openai, tool)
    first_body, second_body = (r.json() for r in requests)
    assert first_body["tools"] == [wire] and second_body["tools"] == [wire]
    (call,) = _parts(history, NativeToolCallPart)
    assert call.tool_call_id == item["id"] and call.provider.provider_name == "openai"
    if item is IMAGE_ITEM:
        (image,) = _parts(history, FilePart)
        assert image.source.data == PNG
    # OpenAI ran the tool inside the first response: the second request carries its text only
    assert [entry.get("role") for entry in second_body["input"]] == ["user", "assistant", "user"]
    assert _parts(second, TextPart)[-1].content == "second answer"


def _anthropic(url: str) -> Any:
    return anthropic.Client("claude-sonnet-4-5", anthropic.Provider("sk-ant", base_url=url + "/v1",
                                                                     url_policy=LOCAL), max_tokens=256)


def _anthropic_handler(blocks: tuple[dict[str, Any], ...]) -> Callable[[Received, int], Reply]:
    def handler(received: Received, count: int) -> Reply:
        if count == 1:
            return Reply.of_json(_anthropic_message(*blocks, TEXT))
        events = [
            {"type": "message_start", "message": {**_anthropic_message(), "content": [], "stop_reason": None}},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "again"}},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
            {"type": "message_stop"},
        ]
        return Reply.sse([json.dumps(e) for e in events])
    return handler


@pytest.mark.parametrize(("tool", "blocks", "beta"), [
    (ManagedTool("code_execution"), (BASH_USE, BASH_RESULT), "code-execution-2025-08-25"),
    (ManagedTool("mcp_server", {"name": "deepwiki", "url": "https://mcp.deepwiki.com/mcp",
                                "authorization": "tok"}), (MCP_USE, MCP_RESULT), "mcp-client-2025-11-20"),
], ids=["code_execution", "mcp_connector"])
def test_anthropic_server_tool_round_trip_through_the_agent(
    tool: ManagedTool, blocks: tuple[dict[str, Any], ...], beta: str
) -> None:
    requests, history, second = _round_trip(_anthropic_handler(blocks), _anthropic, tool)
    assert all(r.headers["anthropic-beta"] == beta for r in requests)
    second_body = requests[1].json()
    # Anthropic needs its server tool blocks back, exactly as they came
    assert second_body["messages"][1]["content"] == [*blocks, TEXT]
    assert len(_parts(history, NativeToolCallPart)) == 1
    assert _parts(second, TextPart)[-1].content == "again"


def _gemini(url: str) -> Any:
    return google.Client("gemini-2.5-flash", google.Provider("g-key", base_url=url + "/v1beta",
                                                            url_policy=LOCAL))


GEMINI_CODE = [{"executableCode": {"language": "PYTHON", "code": "print(6*7)"}},
               {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "42\n"}},
               {"text": "It prints 42."}]
URL_METADATA = {"urlMetadata": [{"retrievedUrl": "https://zigai.example/",
                                 "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_SUCCESS"}]}


def _gemini_handler(parts: list[dict[str, Any]], extra: dict[str, Any]) -> Callable[[Received, int], Reply]:
    def handler(received: Received, count: int) -> Reply:
        candidate = {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", **extra}
        body = {"candidates": [candidate], "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 2}}
        if count == 1:
            return Reply.of_json(body)
        return Reply.sse([json.dumps(body)])
    return handler


@pytest.mark.parametrize(("kind", "wire", "parts", "extra"), [
    ("code_execution", {"codeExecution": {}}, GEMINI_CODE, {}),
    ("web_fetch", {"urlContext": {}}, [{"text": "zigai is an agent framework."}],
     {"urlContextMetadata": URL_METADATA}),
], ids=["code_execution", "url_context"])
def test_gemini_managed_tool_round_trip_through_the_agent(
    kind: str, wire: dict[str, Any], parts: list[dict[str, Any]], extra: dict[str, Any]
) -> None:
    requests, history, second = _round_trip(_gemini_handler(parts, extra), _gemini, kind)
    assert all(r.json()["tools"] == [wire] for r in requests)
    model_turn = requests[1].json()["contents"][1]
    assert model_turn["role"] == "model" and model_turn["parts"] == parts
    if kind == "code_execution":
        (call,) = _parts(history, NativeToolCallPart)
        assert call.tool_name == "code_execution" and call.args_as_dict()["code"] == "print(6*7)"
    else:
        (answer,) = [m for m in history if isinstance(m, ResponseMessage)]
        assert answer.provider_details is not None and "url_context_metadata" in answer.provider_details
    assert len([m for m in second if isinstance(m, ResponseMessage)]) == 2
