"""Interop with the official MCP Python SDK (``mcp`` 2.3.0), in all four directions.

zigai client -> SDK server over stdio and Streamable HTTP; SDK client -> zigai server over
stdio and HTTP.  Every peer is a real process or a real loopback server started and stopped
here with bounded timeouts.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from support.mcp_peers import PNG, ROOT, build_zigai_server, stdio_command

from zigai import Agent, mcp
from zigai.control import CancellationToken
from zigai.security import UrlPolicy
from zigai.testing import TestModel
from zigai.tool import ModelRetry

SDK_INSTALLED = importlib.util.find_spec("mcp") is not None and importlib.util.find_spec("mcp_types") is not None
pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(not SDK_INSTALLED, reason="the MCP SDK is not installed (dev extra: pip install mcp==2.3.0)"),
    pytest.mark.timeout(60),
]
LOCAL = UrlPolicy.local_development()
sdk_http_server = pytest.importorskip("support.mcp_sdk_peer", reason="the MCP SDK is not installed "
                                      "(dev extra: pip install mcp==2.3.0)").sdk_http_server
QUIET = mcp.StdioOptions(stderr=mcp.StderrMode.discard, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.fixture(scope="module", params=["stdio", "http"])
def sdk(request: pytest.FixtureRequest) -> Iterator[mcp.Client]:
    """A zigai client connected to the SDK server over each transport."""
    if request.param == "stdio":
        with mcp.Client(mcp.StdioTransport(stdio_command("sdk-stdio"), QUIET), default_timeout_ms=20_000) as client:
            yield client
    else:
        with sdk_http_server() as url, mcp.Client(mcp.StreamableHttpTransport(url, url_policy=LOCAL),
                                                  default_timeout_ms=20_000) as client:
            yield client


# ----------------------------------------------------------------------------- zigai -> SDK


def test_discover_reports_the_sdk_server(sdk: mcp.Client) -> None:
    found = sdk.discover()
    assert "2026-07-28" in found.supported_versions
    assert found.server_info is not None and found.server_info.name == "sdk-peer"
    assert found.capabilities.tools is not None and found.instructions == "The official SDK."
    assert sdk.server_capabilities == found.capabilities


def test_tools_keep_their_schemas_exactly(sdk: mcp.Client) -> None:
    tools = {tool.name: tool for page in sdk.list_all_tools() for tool in page.items}
    assert {"add", "fail", "picture", "slow", "touch"} <= set(tools)
    assert tools["add"].input_schema == {
        "type": "object", "title": "addArguments", "required": ["a", "b"],
        "properties": {"a": {"title": "A", "type": "integer"}, "b": {"title": "B", "type": "integer"}},
    }
    assert tools["add"].output_schema is not None and tools["add"].description == "Add two integers."
    assert tools["add"].input_schema == tools["add"].raw["inputSchema"]


def test_call_a_tool_a_tool_error_and_an_image_result(sdk: mcp.Client) -> None:
    added = sdk.call_tool("add", {"a": 20, "b": 22})
    assert not added.is_error and added.structured_content == {"result": 42} and added.text == "42"
    failed = sdk.call_tool("fail", {"reason": "disk full"})
    assert failed.is_error and failed.text
    with pytest.raises(ModelRetry, match="MCP tool 'fail' failed"):
        mcp.render_tool_result(failed, "fail")
    picture = sdk.call_tool("picture", {})
    image = picture.content[0]
    assert isinstance(image, mcp.ImageBlock) and image.data == PNG and image.mime_type == "image/png"
    rendered = mcp.render_tool_result(picture, "picture")
    attachment = rendered.follow_up_messages[0].parts[0].content[1]  # type: ignore[union-attr]
    assert attachment.source.data == PNG and attachment.source.media_type == "image/png"


def test_progress_notifications_arrive_on_the_calling_thread(sdk: mcp.Client) -> None:
    notes: list[mcp.Notification] = []
    caller = threading.get_ident()
    threads: set[int] = set()

    def sink(note: mcp.Notification) -> None:
        threads.add(threading.get_ident())
        notes.append(note)

    options = mcp.RequestOptions(metadata=mcp.RequestMetadata(progress_token="job-1"), on_notification=sink)
    assert sdk.call_tool("slow", {"steps": 3}, options=options).text == "slow done"
    assert [(n.params["progress"], n.params["progressToken"]) for n in notes] == [(0, "job-1"), (1, "job-1"), (2, "job-1")]
    assert threads == {caller}


def test_resources_and_templates(sdk: mcp.Client) -> None:
    listed = sdk.list_resources()
    assert [(r.uri, r.mime_type) for r in listed.items] == [("memo://greeting", "text/plain")]
    templates = sdk.list_resource_templates()
    assert [t.uri_template for t in templates.items] == ["notes://{name}"]
    read = sdk.read_resource("memo://greeting")
    assert read.contents[0].text == "hello"  # type: ignore[union-attr]
    assert sdk.read_resource("notes://todo").contents[0].text == "note todo"  # type: ignore[union-attr]


def test_prompts_and_completion(sdk: mcp.Client) -> None:
    prompts = sdk.list_prompts()
    assert prompts.items[0].name == "review" and prompts.items[0].arguments[0].required
    got = sdk.get_prompt(mcp.PromptRequest("review", {"code": "x = 1"}))
    assert got.messages[0].role == "user" and got.messages[0].content.text == "Please review: x = 1"  # type: ignore[union-attr]
    raw = sdk.get_prompt_json({"name": "review", "arguments": {"code": "y"}})
    assert raw["messages"][0]["content"]["text"] == "Please review: y" and raw["resultType"] == "complete"
    completion = sdk.complete(mcp.CompletionRequest(mcp.PromptReference("review"), "code", "p"))
    assert completion.values == ("python", "pascal", "perl")
    assert sdk.complete_json({"ref": {"type": "ref/prompt", "name": "review"},
                              "argument": {"name": "code", "value": "z"}})["completion"]["values"] == ["zig"]


def test_unknown_methods_are_named_errors(sdk: mcp.Client) -> None:
    with pytest.raises(mcp.MethodNotFound) as caught:
        sdk.request_json("vendor/unknown", {"x": 1})
    assert caught.value.code == -32601


def test_listen_delivers_acknowledgement_and_change_events(sdk: mcp.Client) -> None:
    events: list[mcp.Notification] = []
    stop = CancellationToken()
    errors: list[BaseException] = []

    def listen() -> None:
        try:
            sdk.listen(mcp.SubscriptionFilter(tools_list_changed=True, resource_subscriptions=("memo://greeting",)),
                       events.append, mcp.RequestOptions(cancel=stop, request_id="watch-1"))
        except mcp.McpRequestCancelled:
            pass
        except BaseException as exc:  # noqa: BLE001 - surfaced by the assertion below
            errors.append(exc)

    thread = threading.Thread(target=listen)
    thread.start()
    deadline = time.monotonic() + 10
    while not events and time.monotonic() < deadline:
        time.sleep(0.02)
    assert sdk.call_tool("touch", {}).text == "touched"
    while len(events) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    stop.cancel()
    thread.join(10)
    assert not errors
    assert [e.method for e in events] == ["notifications/subscriptions/acknowledged",
                                          "notifications/tools/list_changed", "notifications/resources/updated"]
    assert {e.subscription_id for e in events} == {"watch-1"}
    assert events[0].acknowledged_filter == mcp.SubscriptionFilter(tools_list_changed=True,
                                                                    resource_subscriptions=("memo://greeting",))


def test_a_cancelled_http_listen_frees_its_connection_at_once() -> None:
    """With one HTTP slot, a request right after cancelling a silent listen stream gets through."""
    with sdk_http_server() as url, mcp.Client(mcp.StreamableHttpTransport(url, url_policy=LOCAL, max_in_flight=1),
                                              default_timeout_ms=20_000) as client:
        events: list[mcp.Notification] = []
        stop = CancellationToken()
        thread = threading.Thread(target=lambda: pytest.raises(mcp.McpRequestCancelled, client.listen,
                                                               mcp.SubscriptionFilter(tools_list_changed=True),
                                                               events.append, mcp.RequestOptions(cancel=stop)))
        thread.start()
        deadline = time.monotonic() + 10
        while not events and time.monotonic() < deadline:
            time.sleep(0.02)
        assert events and events[0].method == "notifications/subscriptions/acknowledged"
        stop.cancel()
        thread.join(5)
        started = time.monotonic()
        assert client.call_tool("add", {"a": 2, "b": 3}, options=mcp.RequestOptions(timeout_ms=3_000)).structured_content == \
            {"result": 5}
        assert time.monotonic() - started < 2.0  # the listen's slot was released, not held to its deadline


def test_an_agent_run_calls_an_sdk_served_tool_through_the_toolset(sdk: mcp.Client) -> None:
    toolset = mcp.McpToolset(sdk, include=lambda tool: tool.name == "add", namespace="sdk")
    agent = Agent(model=TestModel(call_tools=["sdk__add"]), toolsets=[toolset])
    result = agent.run("add two numbers")
    returns = [part for message in result.all_messages() for part in getattr(message, "parts", ())
               if getattr(part, "part_kind", "") == "tool-return"]
    assert len(returns) == 1 and returns[0].tool_name == "sdk__add"
    assert returns[0].content == {"result": returns[0].content["result"]}
    calls = [part for message in result.all_messages() for part in getattr(message, "parts", ())
             if getattr(part, "part_kind", "") == "tool-call"]
    arguments = calls[0].args_as_dict()
    assert returns[0].content["result"] == arguments["a"] + arguments["b"]


# ----------------------------------------------------------------------------- SDK -> zigai


def _sdk_session_checks(target: Any) -> dict[str, Any]:
    """Drive the SDK client against a zigai server and report what it saw."""
    from mcp import Client
    from mcp.shared.exceptions import MCPError
    from mcp_types import PaginatedRequestParams, PromptReference, Request

    async def main() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with Client(target, mode="auto", read_timeout_seconds=20) as client:
            seen["version"] = client.protocol_version
            seen["server"] = client.server_info.name if client.server_info else None
            seen["instructions"] = client.instructions
            names, cursors, cursor = [], [], None
            for _ in range(10):
                page = await client.session.list_tools(
                    params=PaginatedRequestParams(cursor=cursor) if cursor else None)
                names.append([tool.name for tool in page.tools])
                cursor = page.next_cursor
                cursors.append(cursor)
                if cursor is None:
                    break
            seen["pages"], seen["cursors"] = names, cursors
            called = await client.call_tool("double_3", {"x": 7})
            seen["call"] = (called.structured_content, called.content[0].text, called.is_error)
            region = await client.call_tool("sql", {"region": "eu-west", "query": "q"})
            seen["region"] = region.content[0].text
            invalid = await client.call_tool("double_1", {"x": "seven"})
            seen["invalid"] = (invalid.is_error, invalid.content[0].text)
            failed = await client.call_tool("fail", {})
            seen["fail"] = (failed.is_error, failed.content[0].text)
            picture = await client.call_tool("picture", {})
            seen["picture"] = [(block.type, getattr(block, "mimeType", None) or getattr(block, "mime_type", None))
                               for block in picture.content]
            for name, call in (
                ("unknown_tool", client.call_tool("no_such_tool", {})),
                ("missing_capability", client.call_tool("ask_model", {})),
                ("unknown_method", client.session.send_request(Request(method="vendor/none", params=None), dict)),
                ("unknown_resource", client.read_resource("memo://missing")),
            ):
                try:
                    await call
                    seen[name] = None
                except MCPError as exc:
                    seen[name] = (exc.error.code, exc.error.data)
            seen["read"] = (await client.read_resource("notes://plan")).contents[0].text
            seen["prompt"] = (await client.get_prompt("review", {"code": "x"})).messages[0].content.text
            completion = await client.complete(PromptReference(type="ref/prompt", name="review"),
                                               {"name": "code", "value": "p"})
            seen["complete"] = completion.completion.values
        return seen

    return asyncio.run(asyncio.wait_for(main(), 40))


def _assert_sdk_saw_the_zigai_server(seen: dict[str, Any]) -> None:
    assert seen["version"] == "2026-07-28" and seen["server"] == "zigai-peer"
    assert seen["instructions"] == "A test server."
    flat = [name for page in seen["pages"] for name in page]
    assert seen["pages"][0] == ["double_0", "double_1"] and len(seen["pages"]) == 6
    assert flat[:5] == [f"double_{i}" for i in range(5)] and "sql" in flat and "ask_model" in flat
    assert seen["cursors"][-1] is None and all(isinstance(c, str) for c in seen["cursors"][:-1])
    assert seen["call"] == (21, "21", False)
    assert seen["region"] == "eu-west: q"
    assert seen["invalid"][0] is True and "integer" in seen["invalid"][1]
    assert seen["fail"] == (True, "the disk is full")
    assert seen["picture"] == [("text", None), ("image", "image/png")]
    assert seen["unknown_tool"][0] == -32602
    assert seen["missing_capability"] == (-32021, {"requiredCapabilities": {"sampling": {}}})
    assert seen["unknown_method"][0] == -32601
    assert seen["unknown_resource"][0] == -32602
    assert seen["read"] == "note plan" and seen["prompt"] == "Please review: x"
    assert seen["complete"] == ["python", "pascal", "perl"]


def test_sdk_client_uses_the_zigai_server_over_stdio() -> None:
    from mcp import StdioServerParameters

    command = stdio_command("zigai-stdio")
    target = StdioServerParameters(command=command[0], args=command[1:], env={**os.environ, "PYTHONPATH": str(ROOT)})
    _assert_sdk_saw_the_zigai_server(_sdk_session_checks(target))


def test_sdk_client_uses_the_zigai_server_over_http() -> None:
    with mcp.serve_http(build_zigai_server()) as running:
        _assert_sdk_saw_the_zigai_server(_sdk_session_checks(running.url))


def test_sdk_client_listens_to_the_zigai_server_over_http() -> None:
    from mcp import Client

    server = build_zigai_server()

    async def main() -> list[str]:
        async with Client(running.url, mode="auto", read_timeout_seconds=20) as client:
            async with client.listen(tools_list_changed=True, resource_subscriptions=["memo://greeting"]) as sub:
                assert sub.honored.tools_list_changed
                server.notify_tools_changed()
                server.notify_prompts_changed()  # not subscribed: never delivered
                server.notify_resource_updated("memo://greeting")
                received = []
                async for event in sub:
                    received.append(type(event).__name__)
                    if len(received) == 2:
                        break
                return received

    with mcp.serve_http(server) as running:
        assert asyncio.run(asyncio.wait_for(main(), 30)) == ["ToolsListChanged", "ResourceUpdated"]
