"""mcp.primitives value objects and mcp.results typed views: validation and exact wire JSON."""

from __future__ import annotations

import base64

import pytest

from zigai import mcp
from zigai.json import Limits
from zigai.mcp.errors import InvalidMcpMessage, InvalidMcpRequest
from zigai.mcp.wire.primitives import check_extension_id
from zigai.mcp.wire.results import parse_block


def test_capabilities_serialize_standard_fields_and_prefixed_extensions() -> None:
    caps = mcp.ClientCapabilities(roots={}, extensions={"io.modelcontextprotocol/tasks": {"mode": "x"}},
                                  experimental={"beta": {}})
    assert caps.to_json() == {"roots": {}, "experimental": {"beta": {}},
                              "extensions": {"io.modelcontextprotocol/tasks": {"mode": "x"}}}
    wire = caps.to_json()
    wire["roots"]["mutated"] = True
    assert caps.to_json()["roots"] == {}  # to_json never aliases
    assert mcp.ClientCapabilities.from_json(caps.to_json()) == caps
    server = mcp.ServerCapabilities(tools={"listChanged": True}, resources={"subscribe": True},
                                    extensions={"com.example/x": {}})
    assert server.tools_list_changed and server.resources_subscribe and server.has_extension("com.example/x")
    assert not mcp.ServerCapabilities().tools_list_changed
    assert mcp.ServerCapabilities.from_json(server.to_json()) == server


@pytest.mark.parametrize("identifier", ["tasks", "/x", "com./x", "com.example/", "com.example/-x",
                                         "1com.example/x", "com.example/x y", 7])
def test_extension_identifiers_need_a_prefix(identifier: object) -> None:
    with pytest.raises(InvalidMcpRequest):
        check_extension_id(identifier)
    with pytest.raises(InvalidMcpRequest):
        mcp.ClientCapabilities(extensions={identifier: {}})  # type: ignore[dict-item]


def test_capability_settings_must_be_objects() -> None:
    with pytest.raises(InvalidMcpRequest):
        mcp.ClientCapabilities(extensions={"com.example/x": []})  # type: ignore[dict-item]
    with pytest.raises(InvalidMcpRequest):
        mcp.ClientCapabilities(sampling=[])  # type: ignore[arg-type]
    with pytest.raises(InvalidMcpRequest):
        mcp.ServerCapabilities(experimental=[])  # type: ignore[arg-type]
    with pytest.raises(InvalidMcpMessage):
        mcp.ClientCapabilities.from_json({"extensions": {"bad": {}}})
    with pytest.raises(InvalidMcpMessage):
        mcp.ClientCapabilities.from_json([])
    with pytest.raises(InvalidMcpMessage):
        mcp.ServerCapabilities.from_json({"tools": 1})


def test_capabilities_cover() -> None:
    declared = mcp.ClientCapabilities(sampling={}, extensions={"com.example/a": {}})
    assert declared.covers(mcp.ClientCapabilities(sampling={"tools": {}}))
    assert declared.covers(mcp.ClientCapabilities(extensions={"com.example/a": {}}))
    assert not declared.covers(mcp.ClientCapabilities(elicitation={}))
    assert not declared.covers(mcp.ClientCapabilities(extensions={"com.example/b": {}}))


def test_subscription_filter_round_trip_narrowing_and_admission() -> None:
    wanted = mcp.SubscriptionFilter(tools_list_changed=True, resource_subscriptions=("a://1", "a://2"))
    assert wanted.to_json() == {"toolsListChanged": True, "resourceSubscriptions": ["a://1", "a://2"]}
    assert mcp.SubscriptionFilter.from_json(wanted.to_json()) == wanted
    ack = mcp.SubscriptionFilter(tools_list_changed=True, prompts_list_changed=True, resource_subscriptions=("a://1",))
    honored = ack.narrowed_to(wanted)
    assert honored == mcp.SubscriptionFilter(tools_list_changed=True, resource_subscriptions=("a://1",))
    assert honored.admits(mcp.Notification.tools_list_changed(1))
    assert not honored.admits(mcp.Notification.prompts_list_changed(1))
    assert not honored.admits(mcp.Notification.resources_list_changed(1))
    assert honored.admits(mcp.Notification.resource_updated("a://1", 1))
    assert not honored.admits(mcp.Notification.resource_updated("a://2", 1))
    assert not honored.admits(mcp.Notification.progress(1, 0.5))
    with pytest.raises(InvalidMcpRequest):
        mcp.SubscriptionFilter(resource_subscriptions="a://1")  # type: ignore[arg-type]
    with pytest.raises(InvalidMcpRequest):
        mcp.SubscriptionFilter(tools_list_changed=1)  # type: ignore[arg-type]
    with pytest.raises(InvalidMcpMessage):
        mcp.SubscriptionFilter.from_json({"resourceSubscriptions": [1]})
    with pytest.raises(InvalidMcpMessage):
        mcp.SubscriptionFilter.from_json(None)


def test_notification_builders_produce_the_wire_framing() -> None:
    assert mcp.Notification.progress("t", 1, 4, "one").to_json() == {
        "jsonrpc": "2.0", "method": "notifications/progress",
        "params": {"progressToken": "t", "progress": 1, "total": 4, "message": "one"}}
    assert mcp.Notification.cancelled(5, "late").to_json()["params"] == {"requestId": 5, "reason": "late"}
    updated = mcp.Notification.resource_updated("a://1", "L1")
    assert updated.to_json()["params"] == {"uri": "a://1", "_meta": {"io.modelcontextprotocol/subscriptionId": "L1"}}
    assert updated.subscription_id == "L1" and updated.uri == "a://1"
    ack = mcp.Notification.acknowledged(mcp.SubscriptionFilter(tools_list_changed=True), 3)
    assert ack.acknowledged_filter == mcp.SubscriptionFilter(tools_list_changed=True)
    assert mcp.Notification.tools_list_changed(3).acknowledged_filter is None
    log = mcp.Notification.log(mcp.LogLevel.warning, {"k": [1, 2]}, logger="db")
    assert log.to_json()["params"] == {"level": "warning", "data": {"k": [1, 2]}, "logger": "db"}
    assert mcp.Notification.progress(9, 0.5).progress_token == 9
    assert mcp.Notification.tools_list_changed(1).progress_token is None


def test_notifications_are_validated_by_kind() -> None:
    with pytest.raises(InvalidMcpRequest, match="subscriptionId"):
        mcp.Notification("notifications/tools/list_changed", {})
    for bad in (float("nan"), float("inf")):
        with pytest.raises(InvalidMcpRequest, match="not JSON"):
            mcp.Notification.progress(1, bad)
    for wrong in ("1", True):
        with pytest.raises(InvalidMcpRequest, match="finite"):
            mcp.Notification.progress(1, wrong)  # type: ignore[arg-type]
    with pytest.raises(InvalidMcpRequest, match="finite"):
        mcp.Notification.progress(1, 1, total="2")  # type: ignore[arg-type]
    with pytest.raises(InvalidMcpRequest):
        mcp.Notification.progress(1, 1, message=3)  # type: ignore[arg-type]
    with pytest.raises(InvalidMcpRequest):
        mcp.Notification("notifications/progress", {"progress": 1})
    with pytest.raises(InvalidMcpRequest, match="LogLevel"):
        mcp.Notification("notifications/message", {"level": "loud", "data": 1})
    with pytest.raises(InvalidMcpRequest, match="data"):
        mcp.Notification("notifications/message", {"level": "info"})
    with pytest.raises(InvalidMcpRequest):
        mcp.Notification("notifications/cancelled", {})
    with pytest.raises(InvalidMcpRequest):
        mcp.Notification("notifications/resources/updated", {"_meta": {"io.modelcontextprotocol/subscriptionId": 1}})
    with pytest.raises(InvalidMcpRequest):
        mcp.Notification("")
    with pytest.raises(InvalidMcpMessage):
        mcp.Notification.from_wire("notifications/progress", {"progressToken": 1, "progress": "x"})
    assert mcp.Notification.from_wire("vendor/custom", {"anything": [1]}).params == {"anything": [1]}


def test_log_data_passes_the_bounded_profile_first() -> None:
    small = Limits(max_document_bytes=64, max_value_bytes=64, max_depth=3, max_items=4)
    assert mcp.Notification.log(mcp.LogLevel.info, [1, 2], limits=small).params["data"] == [1, 2]
    with pytest.raises(InvalidMcpRequest, match="log data"):
        mcp.Notification.log(mcp.LogLevel.info, [[[[1]]]], limits=small)
    with pytest.raises(InvalidMcpRequest, match="log data"):
        mcp.Notification.log(mcp.LogLevel.info, list(range(5)), limits=small)
    assert mcp.Notification.log_json(mcp.LogLevel.error, '{"x":1}').params == {"level": "error", "data": {"x": 1}}
    with pytest.raises(InvalidMcpRequest):
        mcp.Notification.log_json(mcp.LogLevel.error, "{bad")


def test_log_levels_are_ordered() -> None:
    levels = list(mcp.LogLevel)
    assert [level.severity for level in levels] == list(range(8))
    assert mcp.LogLevel.error.severity > mcp.LogLevel.warning.severity


def test_request_metadata_fields_and_reserved_keys() -> None:
    meta = mcp.RequestMetadata(progress_token="p", log_level=mcp.LogLevel.debug, extra={"com.example/trace": "t"})
    assert meta.to_meta() == {"com.example/trace": "t", "progressToken": "p",
                              "io.modelcontextprotocol/logLevel": "debug"}
    assert mcp.RequestMetadata(log_level="info").log_level is mcp.LogLevel.info  # type: ignore[arg-type]
    for extra in ({"progressToken": 1}, {"io.modelcontextprotocol/protocolVersion": "x"}):
        with pytest.raises(InvalidMcpRequest, match="reserved"):
            mcp.RequestMetadata(extra=extra)
    with pytest.raises(InvalidMcpRequest):
        mcp.RequestMetadata(progress_token=True)  # type: ignore[arg-type]


def test_implementation_identity() -> None:
    info = mcp.Implementation("n", "1", title="T", website_url="https://x.example")
    assert info.to_json() == {"name": "n", "version": "1", "title": "T", "websiteUrl": "https://x.example"}
    assert mcp.Implementation.from_json(info.to_json()) == info
    assert mcp.Implementation.from_json({"name": "n"}) is None
    assert mcp.Implementation.from_json("n") is None
    with pytest.raises(InvalidMcpRequest):
        mcp.Implementation("n", 1)  # type: ignore[arg-type]
    with pytest.raises(InvalidMcpRequest):
        mcp.Implementation("n", "1", title=2)  # type: ignore[arg-type]


def test_prompt_and_completion_requests_bound_their_argument_maps() -> None:
    assert mcp.PromptRequest("review", {"code": "x"}).to_params() == {"name": "review", "arguments": {"code": "x"}}
    assert mcp.PromptRequest("bare").to_params() == {"name": "bare"}
    small = Limits(max_document_bytes=1000, max_value_bytes=4, max_depth=4, max_items=2)
    assert mcp.PromptRequest("p", {"a": "1234", "b": ""}, limits=small).arguments == {"a": "1234", "b": ""}
    with pytest.raises(InvalidMcpRequest, match="bytes"):
        mcp.PromptRequest("p", {"a": "12345"}, limits=small)
    with pytest.raises(InvalidMcpRequest, match="entries"):
        mcp.PromptRequest("p", {"a": "", "b": "", "c": ""}, limits=small)
    with pytest.raises(InvalidMcpRequest):
        mcp.PromptRequest("p", {"a": 1})  # type: ignore[dict-item]
    with pytest.raises(InvalidMcpRequest):
        mcp.PromptRequest("")
    completion = mcp.CompletionRequest(mcp.ResourceTemplateReference("notes://{name}"), "name", "a",
                                       context_arguments={"kind": "md"})
    assert completion.to_params() == {"ref": {"type": "ref/resource", "uri": "notes://{name}"},
                                      "argument": {"name": "name", "value": "a"},
                                      "context": {"arguments": {"kind": "md"}}}
    assert mcp.CompletionRequest(mcp.PromptReference("p"), "x").to_params()["ref"] == {"type": "ref/prompt", "name": "p"}
    with pytest.raises(InvalidMcpRequest):
        mcp.CompletionRequest("p", "x")  # type: ignore[arg-type]
    with pytest.raises(InvalidMcpRequest):
        mcp.CompletionRequest(mcp.PromptReference("p"), "x", "12345", limits=small)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_content_blocks_parse_keep_raw_and_render_back() -> None:
    raw = [
        {"type": "text", "text": "hi", "annotations": {"priority": 1}},
        {"type": "image", "data": _b64(b"\x89PNG"), "mimeType": "image/png"},
        {"type": "audio", "data": _b64(b"RIFF"), "mimeType": "audio/wav"},
        {"type": "resource_link", "uri": "a://1", "name": "one", "mimeType": "text/plain", "description": "d"},
        {"type": "resource", "resource": {"uri": "a://2", "text": "body", "mimeType": "text/plain"}},
        {"type": "resource", "resource": {"uri": "a://3", "blob": _b64(b"\x00\x01")}},
        {"type": "future_kind", "payload": 1},
    ]
    result = mcp.CallToolResult.from_json({"content": raw, "structuredContent": {"v": 1}, "isError": False,
                                           "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "2"}}})
    kinds = [type(block).__name__ for block in result.content]
    assert kinds == ["TextBlock", "ImageBlock", "AudioBlock", "ResourceLinkBlock", "EmbeddedResourceBlock",
                     "EmbeddedResourceBlock", "UnknownBlock"]
    assert result.content[1].data == b"\x89PNG"  # type: ignore[union-attr]
    assert result.content[5].resource.blob == b"\x00\x01"  # type: ignore[union-attr]
    assert result.text == "hi" and result.server_info == mcp.Implementation("s", "2")
    assert [block.to_json() for block in result.content] == raw
    assert result.to_json() == {"content": raw, "isError": False, "structuredContent": {"v": 1}}


@pytest.mark.parametrize("block", [
    {"type": "image", "data": "!!", "mimeType": "image/png"}, {"type": "image", "data": "AA=="},
    {"type": "text"}, {"type": 3}, "text", {"type": "resource", "resource": {"uri": "a://x"}},
    {"type": "resource", "resource": {"text": "x"}}, {"type": "text", "text": True},
])
def test_malformed_blocks_are_refused(block: object) -> None:
    with pytest.raises(InvalidMcpMessage):
        parse_block(block)


def test_result_views_parse_core_results() -> None:
    tool = mcp.ToolInfo.from_json({"name": "t", "inputSchema": {"type": "object", "x-extra": 1},
                                   "outputSchema": {"type": "object"}, "title": "T", "future": True})
    assert tool.input_schema == {"type": "object", "x-extra": 1} and tool.raw["future"] is True
    assert tool.to_json() == {"name": "t", "inputSchema": {"type": "object", "x-extra": 1},
                              "outputSchema": {"type": "object"}, "title": "T", "future": True}
    with pytest.raises(InvalidMcpMessage, match="type 'object'"):
        mcp.ToolInfo.from_json({"name": "t", "inputSchema": {"type": "string"}})
    with pytest.raises(InvalidMcpMessage, match="isError"):
        mcp.CallToolResult.from_json({"content": [], "isError": "yes"})
    read = mcp.ReadResourceResult.from_json({"contents": [{"uri": "a://1", "text": "x"}], "ttlMs": 5,
                                             "cacheScope": "public"})
    assert read.contents[0].text == "x" and read.ttl_ms == 5 and read.cache_scope == "public"  # type: ignore[union-attr]
    with pytest.raises(InvalidMcpMessage):
        mcp.ReadResourceResult.from_json({"contents": {}})
    with pytest.raises(InvalidMcpMessage, match="ttlMs"):
        mcp.ReadResourceResult.from_json({"contents": [], "ttlMs": -1})
    prompt = mcp.GetPromptResult.from_json({"messages": [{"role": "assistant", "content": {"type": "text", "text": "ok"}}],
                                            "description": "d"})
    assert prompt.messages[0].role == "assistant" and prompt.description == "d"
    assert prompt.messages[0].to_json() == {"role": "assistant", "content": {"type": "text", "text": "ok"}}
    for bad in ({"messages": {}}, {"messages": [{"role": "system", "content": {"type": "text", "text": "x"}}]}):
        with pytest.raises(InvalidMcpMessage):
            mcp.GetPromptResult.from_json(bad)
    listed = mcp.Prompt.from_json({"name": "p", "arguments": [{"name": "a", "required": True}, {"name": "b"}]})
    assert listed.arguments == (mcp.PromptArgument("a", None, True), mcp.PromptArgument("b"))
    assert listed.to_json()["arguments"] == [{"name": "a", "required": True}, {"name": "b", "required": False}]
    completion = mcp.Completion.from_json({"completion": {"values": ["a"], "total": 3, "hasMore": True}})
    assert completion == mcp.Completion(("a",), 3, True, completion.raw)
    assert completion.to_json() == {"completion": {"values": ["a"], "total": 3, "hasMore": True}}
    with pytest.raises(InvalidMcpMessage):
        mcp.Completion.from_json({"completion": {"values": [1]}})
    discover = mcp.DiscoverResult.from_json({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                                             "instructions": "be nice", "ttlMs": 0, "cacheScope": "private"})
    assert discover.capabilities.tools == {} and discover.instructions == "be nice"
    with pytest.raises(InvalidMcpMessage):
        mcp.DiscoverResult.from_json({"supportedVersions": "2026-07-28"})
    resource = mcp.Resource.from_json({"uri": "a://1", "name": "n", "size": 3, "mimeType": "text/plain"})
    assert resource.to_json() == {"uri": "a://1", "name": "n", "size": 3, "mimeType": "text/plain"}
    with pytest.raises(InvalidMcpMessage):
        mcp.Resource.from_json({"uri": "a://1", "name": "n", "size": True})
    template = mcp.ResourceTemplate.from_json({"uriTemplate": "a://{x}", "name": "n", "description": "d"})
    assert template.to_json() == {"uriTemplate": "a://{x}", "name": "n", "description": "d"}
