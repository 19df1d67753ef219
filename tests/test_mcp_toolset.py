"""McpToolset and listen_with_recovery against a real zigai mcp.Server (in process).

The toolset is exercised through the agent loop: cursors followed, schemas kept exactly,
``x-mcp-header`` arguments mirrored, results rendered, errors retried, caches honoured and the
run's cancellation reaching the call.  Recovery reissues a listen after interruptions.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from support.mcp_peers import PNG
from support.timing import CancelLater, StallMeter, assert_ended_within

from zigai import Agent, mcp
from zigai.control import CancellationToken, RunControl
from zigai.mcp.wire.results import (
    AudioBlock,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResourceBlock,
    ImageBlock,
    ResourceLinkBlock,
    TextBlock,
    TextResourceContents,
    UnknownBlock,
)
from zigai.messages import (
    ImageContent,
    RequestMessage,
    ResponseMessage,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from zigai.security import UrlPolicy
from zigai.testing import FunctionModel, TestModel
from zigai.tool import ModelRetry, ToolDefinitionError, ToolOutput

SQL_SCHEMA = {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"},
                                               "query": {"type": "string"}}, "required": ["region", "query"]}
OUT_SCHEMA = {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}


class CountingTransport(mcp.InProcessTransport):
    """The in-process transport, counting requests per method and remembering routing headers."""

    def __init__(self, server: mcp.Server) -> None:
        super().__init__(server)
        self.calls: dict[str, int] = {}
        self.headers: list[tuple[tuple[str, str], ...]] = []

    def request(self, request: mcp.OutgoingRequest, **kwargs: Any) -> Any:
        self.calls[request.method] = self.calls.get(request.method, 0) + 1
        self.headers.append(request.param_headers)
        return super().request(request, **kwargs)


def _server(seen: list[dict[str, Any]]) -> mcp.Server:
    server = mcp.Server("toolset-peer", "1.0", page_size=2)

    def record(name: str, value: Any) -> Callable[[dict[str, Any], mcp.ServerRequest], Any]:
        def handler(args: dict[str, Any], request: mcp.ServerRequest) -> Any:
            seen.append({"tool": name, "args": args})
            return value(args) if callable(value) else value
        return handler

    server.add_tool(mcp.ToolInfo("add", {"type": "object", "properties": {"a": {"type": "integer"},
                                                                           "b": {"type": "integer"}},
                                         "required": ["a", "b"]}, "Add.", output_schema=OUT_SCHEMA),
                    record("add", lambda args: CallToolResult((TextBlock("sum"),), {"sum": args["a"] + args["b"]})))
    server.add_tool(mcp.ToolInfo("sql", SQL_SCHEMA, "Query."), record("sql", lambda args: f"{args['region']}!"))
    server.add_tool(mcp.ToolInfo("broken", {"type": "object", "properties": {}}, "Fails."),
                    record("broken", CallToolResult((TextBlock("disk full"),), None, True)))
    server.add_tool(mcp.ToolInfo("pic", {"type": "object", "properties": {}}, "Picture."),
                    record("pic", CallToolResult((TextBlock("a pixel"), ImageBlock(PNG, "image/png")))))
    server.add_tool(mcp.ToolInfo("dotted.name", {"type": "object", "properties": {}}, "Dots."),
                    record("dotted.name", "dots"))
    server.add_tool(mcp.ToolInfo("dotted_name", {"type": "object", "properties": {}}, "Collides."),
                    record("dotted_name", "collides"))
    server.add_tool(mcp.ToolInfo("x" * 65, {"type": "object", "properties": {}}, "Too long."), record("long", "-"))

    def wait(args: dict[str, Any], request: mcp.ServerRequest) -> str:
        while not request.control.cancelled:
            time.sleep(0.01)
        seen.append({"tool": "wait", "cancelled": True})
        return "never seen"

    server.add_tool(mcp.ToolInfo("wait", {"type": "object", "properties": {}}, "Blocks."), wait)
    return server


def _tool_returns(result: Any) -> list[Any]:
    return [part for message in result.all_messages() for part in getattr(message, "parts", ())
            if getattr(part, "part_kind", "") in ("tool-return", "retry-prompt")]


def test_the_toolset_follows_cursors_keeps_schemas_and_reports_rejected_names() -> None:
    transport = CountingTransport(_server([]))
    with mcp.Client(transport) as client:
        toolset = mcp.McpToolset(client, namespace="srv")
        tools = {tool.name: tool for tool in toolset.list_tools()}
    assert set(tools) == {"add", "sql", "broken", "pic", "dotted_name", "wait"}
    assert transport.calls["tools/list"] == 4  # eight tools, two per page
    assert tools["sql"].parameters_json_schema == SQL_SCHEMA
    assert tools["add"].return_json_schema == OUT_SCHEMA
    assert tools["dotted_name"].metadata["mcp_tool"] == "dotted.name"
    assert dict(toolset.rejected) == {"dotted_name": "its provider-safe name 'dotted_name' is already taken",
                                      "x" * 65: "the name is longer than 64 characters"}


def _calls_then_text(*calls: ToolCallPart) -> FunctionModel:
    def respond(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        if not any(isinstance(m, ResponseMessage) for m in messages):
            return ResponseMessage(calls)
        return ResponseMessage((TextPart("done"),))
    return FunctionModel(respond)


def test_an_agent_calls_through_the_toolset_over_http_with_headers_structured_results_and_attachments() -> None:
    seen: list[dict[str, Any]] = []
    with mcp.serve_http(_server(seen)) as running, \
            mcp.Client(mcp.StreamableHttpTransport(running.url, url_policy=UrlPolicy.local_development()),
                       default_timeout_ms=10_000) as client:
        toolset = mcp.McpToolset(client, include=lambda info: info.name in ("add", "sql", "pic"))
        model = _calls_then_text(ToolCallPart("add", '{"a":2,"b":40}', "c1"),
                                 ToolCallPart("sql", '{"region":"eu-west","query":"q"}', "c2"),
                                 ToolCallPart("pic", "{}", "c3"))
        result = Agent(model=model, toolsets=[toolset]).run("go")
    returns = {part.tool_name: part.content for part in _tool_returns(result)}
    assert returns["add"] == {"sum": 42}  # structuredContent wins over the text block
    # the server refuses a tools/call whose Mcp-Param-Region header is missing or differs (-32020)
    assert returns["sql"] == "eu-west!" and {"tool": "sql", "args": {"region": "eu-west", "query": "q"}} in seen
    assert list(returns["pic"]) == ["a pixel", "[image 1 (image/png): attached in the next user message]"]
    images = [item for message in result.all_messages() if isinstance(message, RequestMessage)
              for part in message.parts if isinstance(part, UserPromptPart) and not isinstance(part.content, str)
              for item in part.content if isinstance(item, ImageContent)]
    assert len(images) == 1 and images[0].source.data == PNG


def test_an_error_result_becomes_a_retry_prompt_the_model_sees() -> None:
    with mcp.Client(mcp.InProcessTransport(_server([]))) as client:
        toolset = mcp.McpToolset(client, include=lambda info: info.name == "broken")
        result = Agent(model=_calls_then_text(ToolCallPart("broken", "{}", "c1")), toolsets=[toolset]).run("go")
    retries = [part for part in _tool_returns(result) if part.part_kind == "retry-prompt"]
    assert retries and "MCP tool 'broken' failed: disk full" in str(retries[0].content)


def test_listings_are_cached_for_list_cache_ms_and_invalidated_on_demand() -> None:
    transport = CountingTransport(_server([]))
    with mcp.Client(transport) as client:
        fresh = mcp.McpToolset(client)  # the server says ttlMs 0: list before every step
        fresh.list_tools()
        fresh.list_tools()
        assert transport.calls["tools/list"] == 8
        cached = mcp.McpToolset(client, list_cache_ms=60_000)
        cached.list_tools()
        cached.list_tools()
        assert transport.calls["tools/list"] == 12
        cached.invalidate()
        cached.list_tools()
        assert transport.calls["tools/list"] == 16


def test_run_cancellation_reaches_the_server_side_call() -> None:
    seen: list[dict[str, Any]] = []
    with mcp.Client(mcp.InProcessTransport(_server(seen))) as client:
        tool = {t.name: t for t in mcp.McpToolset(client).list_tools()}["wait"]
        agent = Agent(model=TestModel(call_tools=["wait"]), tools=[tool])
        token = CancellationToken()
        with StallMeter() as meter:
            cancel = CancelLater(token, 0.3).start()
            with pytest.raises(Exception) as caught:
                agent.run("go", cancellation=token)
            assert_ended_within(cancel.cancelled_at, 2.7, meter, "the cancelled run")
    assert "cancel" in type(caught.value).__name__.lower() or "cancel" in str(caught.value).lower()
    deadline = time.monotonic() + 5
    while {"tool": "wait", "cancelled": True} not in seen and time.monotonic() < deadline:
        time.sleep(0.01)
    assert {"tool": "wait", "cancelled": True} in seen


def test_render_tool_result_covers_every_block_kind() -> None:
    result = CallToolResult((
        TextBlock("hello"),
        AudioBlock(b"RIFF", "audio/wav"),
        ResourceLinkBlock("file:///a.txt", "a", mime_type="text/plain"),
        ResourceLinkBlock("file:///b", "b"),
        EmbeddedResourceBlock(TextResourceContents("memo://t", "note", "text/plain")),
        EmbeddedResourceBlock(TextResourceContents("memo://u", "bare")),
        EmbeddedResourceBlock(BlobResourceContents("memo://img", PNG, "image/png")),
        EmbeddedResourceBlock(BlobResourceContents("memo://bin", b"\x00", None)),
        ImageBlock(PNG, "not a media type"),
        UnknownBlock("vendor", {"type": "vendor", "x": 1}),
    ))
    output = mcp.render_tool_result(result, "t")
    assert isinstance(output, ToolOutput)
    assert output.content == [
        "hello",
        "[audio 1 (audio/wav): attached in the next user message]",
        {"type": "resource_link", "uri": "file:///a.txt", "name": "a", "mimeType": "text/plain"},
        {"type": "resource_link", "uri": "file:///b", "name": "b"},
        {"type": "resource", "uri": "memo://t", "text": "note", "mimeType": "text/plain"},
        {"type": "resource", "uri": "memo://u", "text": "bare"},
        "[resource memo://img 2 (image/png): attached in the next user message]",
        "[resource memo://bin 3 (application/octet-stream): attached in the next user message]",
        "[image 4 (application/octet-stream): attached in the next user message]",
        {"type": "vendor", "x": 1},
    ]
    kinds = [type(item).__name__ for item in output.follow_up_messages[0].parts[0].content]
    assert kinds == ["TextContent", "AudioContent", "ImageContent", "BinaryContent", "BinaryContent"]
    with pytest.raises(ModelRetry, match="without details"):
        mcp.render_tool_result(CallToolResult((), None, True), "t")


def test_toolset_options_are_validated() -> None:
    with mcp.Client(mcp.InProcessTransport(_server([]))) as client:
        with pytest.raises(ToolDefinitionError, match="needs a zigai.mcp.Client"):
            mcp.McpToolset(object())  # type: ignore[arg-type]
        with pytest.raises(ToolDefinitionError, match="include must be callable"):
            mcp.McpToolset(client, include=3)  # type: ignore[arg-type]
        for bad in (-1, True, 1.5):
            with pytest.raises(ToolDefinitionError, match="list_cache_ms"):
                mcp.McpToolset(client, list_cache_ms=bad)  # type: ignore[arg-type]
        toolset = mcp.McpToolset(client, namespace="n")
        assert toolset.client is client and "namespace='n'" in repr(toolset)


# ----------------------------------------------------------------------------- listen_with_recovery


class FlakyTransport(mcp.InProcessTransport):
    """Fails the first ``failures`` listen requests with a classified interruption, then serves."""

    def __init__(self, server: mcp.Server, failures: int) -> None:
        super().__init__(server)
        self.failures = failures
        self.listen_ids: list[Any] = []

    def request(self, request: mcp.OutgoingRequest, **kwargs: Any) -> Any:
        if request.method == "subscriptions/listen":
            self.listen_ids.append(request.id)
            if self.failures:
                self.failures -= 1
                raise mcp.McpStreamEnded("the stream ended before its response")
        return super().request(request, **kwargs)


def _listen_in_thread(run: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    outcome: list[Any] = []

    def target() -> None:
        try:
            outcome.append(run())
        except BaseException as exc:  # noqa: BLE001 - inspected by the test
            outcome.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    return thread, outcome


def test_listen_with_recovery_reissues_the_filter_with_fresh_ids() -> None:
    server = _server([])
    transport = FlakyTransport(server, failures=2)
    events: list[mcp.Notification] = []
    interruptions: list[int] = []
    with mcp.Client(transport) as client:
        thread, outcome = _listen_in_thread(lambda: mcp.listen_with_recovery(
            client, mcp.SubscriptionFilter(tools_list_changed=True), events.append, max_retries=2,
            retry_delay_s=0.01, on_interruption=lambda error, attempt: interruptions.append(attempt)))
        deadline = time.monotonic() + 5
        while not events and time.monotonic() < deadline:
            time.sleep(0.01)
        server.notify_tools_changed()
        while len(events) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        server.close_listeners()
        thread.join(5)
    assert interruptions == [1, 2] and len(set(transport.listen_ids)) == 3
    assert [e.method for e in events] == ["notifications/subscriptions/acknowledged",
                                          "notifications/tools/list_changed"]
    assert isinstance(outcome[0], mcp.ListenResult)


def test_listen_with_recovery_gives_up_after_the_retry_bound_and_accepts_raw_filters() -> None:
    transport = FlakyTransport(_server([]), failures=2)
    with mcp.Client(transport) as client:
        with pytest.raises(mcp.McpStreamEnded):
            mcp.listen_with_recovery(client, {"toolsListChanged": True}, lambda event: None, max_retries=1,
                                     retry_delay_s=0)
    assert len(transport.listen_ids) == 2  # the first try and exactly one retry


def test_listen_with_recovery_stops_for_cancellation_and_the_deadline_between_attempts() -> None:
    with mcp.Client(FlakyTransport(_server([]), failures=5)) as client:
        token = CancellationToken()
        with StallMeter() as meter:
            cancel = CancelLater(token, 0.1).start()
            with pytest.raises(mcp.McpRequestCancelled):
                mcp.listen_with_recovery(client, mcp.SubscriptionFilter(), lambda e: None, retry_delay_s=10,
                                         cancel=token)
            assert_ended_within(cancel.cancelled_at, 1.9, meter, "the cancelled recovery")  # not the 10 s delay
            control = RunControl(deadline=time.monotonic() + 0.1)
            with pytest.raises(mcp.McpRequestTimedOut):
                mcp.listen_with_recovery(client, mcp.SubscriptionFilter(), lambda e: None, retry_delay_s=10,
                                         control=control)
            assert_ended_within(control.deadline, 1.9, meter, "the timed-out recovery")
        for bad in ({"max_retries": -1}, {"max_retries": True}, {"retry_delay_s": -0.1}, {"retry_delay_s": "1"}):
            with pytest.raises(mcp.InvalidMcpRequest):
                mcp.listen_with_recovery(client, mcp.SubscriptionFilter(), lambda e: None, **bad)


# ----------------------------------------------------------------------------- client argument checks


def test_client_refuses_bad_arguments_before_any_io_and_after_close() -> None:
    server = _server([])
    server.add_method("com.example/ask", lambda params, request: {"resultType": params["kind"]})
    transport = CountingTransport(server)
    client = mcp.Client(transport)
    bad_calls: list[Callable[[], Any]] = [
        lambda: mcp.RequestOptions(timeout_ms=-1),
        lambda: mcp.RequestOptions(timeout_ms=True),  # type: ignore[arg-type]
        lambda: mcp.RequestOptions(metadata={"progressToken": 1}),  # type: ignore[arg-type]
        lambda: mcp.Client(object()),  # type: ignore[arg-type]
        lambda: client.request_json("", {}),
        lambda: client.request_json("tools/list", [1]),  # type: ignore[arg-type]
        lambda: client.request_json("tools/list", {"_meta": 3}),
        lambda: client.request_json("tools/call", {"name": 7}),
        lambda: client.request_json("tools/list", options=3),  # type: ignore[arg-type]
        # an empty mapping is falsy but still not a RequestOptions
        lambda: client.request_json("tools/list", options={}),  # type: ignore[arg-type]
        lambda: client.listen_json({}, lambda e: None, options={}),  # type: ignore[arg-type]
        lambda: client.send_notification(mcp.Notification.cancelled(1), options={}),  # type: ignore[arg-type]
        lambda: client.call_tool(""),
        lambda: client.call_tool("add", [1]),  # type: ignore[arg-type]
        lambda: client.read_resource(""),
        lambda: client.get_prompt("explain"),  # type: ignore[arg-type]
        lambda: client.complete("x"),  # type: ignore[arg-type]
        lambda: client.listen({"toolsListChanged": True}, lambda e: None),  # type: ignore[arg-type]
        lambda: client.listen_json([1], lambda e: None),  # type: ignore[arg-type]
        lambda: client.list_tools(cursor=5),  # type: ignore[arg-type]
    ]
    for call in bad_calls:
        with pytest.raises(mcp.InvalidMcpRequest):
            call()
    assert transport.calls == {}  # nothing reached the transport
    assert client.cancel("not-in-flight") is False
    # the raw path returns the result exactly as received, whatever its resultType
    assert client.request_json("com.example/ask", {"kind": "input_required"})["resultType"] == "input_required"
    with client:
        pass  # leaving the block closes it
    client.close()  # idempotent
    with pytest.raises(mcp.McpClientClosed):
        client.discover()
    with pytest.raises(mcp.McpClientClosed):
        client.send_notification(mcp.Notification.cancelled(1))
