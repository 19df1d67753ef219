"""mcp.Server under 2025-revision clients: initialize, the bounded session table, DELETE, expiry,
the deployment policy for every revision, and the 2025 result shapes.

The zigai client pinned to a 2025 revision drives a real zigai server over loopback HTTP and a
real stdio child; raw HTTP requests check the session rules exactly.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from support.mcp_peers import ROOT, build_zigai_server, stdio_command

from zigai import mcp
from zigai.mcp.server.sessions import SessionTable
from zigai.security import UrlPolicy

LOCAL = UrlPolicy.local_development()
QUIET = mcp.StdioOptions(stderr=mcp.StderrMode.discard, env={**os.environ, "PYTHONPATH": str(ROOT)})
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}


def post(url: str, body: dict[str, Any], **headers: str) -> tuple[int, dict[str, str], Any]:
    sent = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=sent, method="POST")
    return _open(request)


def _open(request: urllib.request.Request) -> tuple[int, dict[str, str], Any]:
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            raw = response.read()
            return response.status, {k.lower(): v for k, v in response.headers.items()}, json.loads(raw) if raw else None
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, json.loads(raw) if raw else None


@pytest.fixture()
def served() -> Iterator[tuple[mcp.Server, str]]:
    server = build_zigai_server(page_size=50)
    with mcp.serve_http(server) as handle:
        yield server, handle.url


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18"])
def test_a_2025_client_is_served_over_http_with_a_session(served: tuple[mcp.Server, str], version: str) -> None:
    server, url = served
    seen: list[mcp.Notification] = []
    transport = mcp.StreamableHttpTransport(url, url_policy=LOCAL)
    with mcp.Client(transport, protocol_version=version, default_timeout_ms=10_000) as client:
        assert client.call_tool("double_3", {"x": 14}).text == "42"
        assert client.protocol_version == version and transport.session_id is not None
        assert len(server.sessions) == 1
        client.set_logging_level(mcp.LogLevel.debug)
        options = mcp.RequestOptions(metadata=mcp.RequestMetadata(progress_token=7), on_notification=seen.append)
        assert client.call_tool("slow", {"steps": 2}, options=options).text == "slow done"
        assert client.read_resource("notes://zig").contents[0].text == "note zig"  # type: ignore[union-attr]
        found = client.discover()
        assert found.server_info == mcp.Implementation("zigai-peer", "1.0")
        # a session declares the changes it pushes (its GET stream carries them), no 2026 extensions
        assert found.capabilities.tools == {"listChanged": True} and found.capabilities.extensions is None
        assert found.capabilities.resources == {"listChanged": True, "subscribe": True}
        client.ping()
    assert [n.method for n in seen].count("notifications/progress") == 2
    assert [n.method for n in seen].count("notifications/message") == 2  # the session's log level applies
    assert len(server.sessions) == 0  # close() sent DELETE


def test_a_2025_client_is_served_over_stdio() -> None:
    with mcp.Client(mcp.StdioTransport(stdio_command("zigai-stdio"), QUIET), protocol_version="2025-11-25",
                    default_timeout_ms=20_000) as client:
        assert client.call_tool("double_2", {"x": 4}).text == "8"
        listed = client.list_tools()
        assert [tool.name for tool in listed.items][:2] == ["double_0", "double_1"]
        assert client.get_prompt(mcp.PromptRequest("review", {"code": "x"})).messages[0].content.text == \
            "Please review: x"  # type: ignore[union-attr]
        with pytest.raises(mcp.FeatureNotInRevision):
            client.listen(mcp.SubscriptionFilter(tools_list_changed=True), lambda note: None)


def test_session_rules_over_raw_http(served: tuple[mcp.Server, str]) -> None:
    server, url = served
    status, headers, reply = post(url, {**INIT, "params": {**INIT["params"], "protocolVersion": "2024-11-05"}})
    assert status == 200 and reply["result"]["protocolVersion"] == "2025-11-25"  # our newest 2025 revision
    session = headers["mcp-session-id"]
    assert len(session) == 32 and all(0x21 <= ord(c) <= 0x7E for c in session)
    assert "resultType" not in reply["result"]
    status, _, _ = post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, **{"Mcp-Session-Id": session})
    assert status == 202
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "double_1", "arguments": {"x": 5}}}
    status, _, reply = post(url, call, **{"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"})
    assert status == 200 and reply["result"]["content"][0]["text"] == "5"
    assert "structuredContent" not in reply["result"]  # 5 is not an object: 2025 drops it
    status, _, reply = post(url, call, **{"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-06-18"})
    assert status == 400
    discover = {"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {}}
    status, _, reply = post(url, discover, **{"Mcp-Session-Id": session})
    assert reply["error"]["code"] == -32601 and "2026-07-28" in reply["error"]["message"]
    status, _, reply = post(url, call, **{"Mcp-Session-Id": "not-a-session"})
    assert status == 404
    delete = urllib.request.Request(url, method="DELETE", headers={"Mcp-Session-Id": session})
    assert _open(delete)[0] == 200
    assert _open(urllib.request.Request(url, method="DELETE", headers={"Mcp-Session-Id": session}))[0] == 404
    assert post(url, call, **{"Mcp-Session-Id": session})[0] == 404
    assert _open(urllib.request.Request(url, method="DELETE"))[0] == 405  # no session named: POST only
    # without a session, a request without the 2026 envelope is refused as before
    assert post(url, call)[2]["error"]["code"] == -32602


def test_the_deployment_policy_applies_to_2025_clients(served: tuple[mcp.Server, str]) -> None:
    _, url = served
    assert post(url, INIT, Host="evil.example")[0] == 421
    assert post(url, INIT, Origin="https://evil.example")[0] == 403
    status, headers, _ = post(url, INIT)
    session = headers["mcp-session-id"]
    call = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    assert post(url, call, **{"Mcp-Session-Id": session, "Origin": "https://evil.example"})[0] == 403
    delete = urllib.request.Request(url, method="DELETE", headers={"Mcp-Session-Id": session, "Host": "evil.example"})
    assert _open(delete)[0] == 421
    listen = urllib.request.Request(url, method="GET", headers={"Mcp-Session-Id": session, "Accept": "text/event-stream",
                                                                "Origin": "https://evil.example"})
    assert _open(listen)[0] == 403  # the session's GET stream is behind the same policy


@pytest.mark.parametrize("limit", [1, 2])
def test_the_session_table_is_bounded_at_exactly_its_limit(limit: int) -> None:
    table = SessionTable(max_sessions=limit)
    caps = mcp.ClientCapabilities()
    opened = [table.open("2025-11-25", caps, None) for _ in range(limit)]
    with pytest.raises(mcp.InternalError, match="server busy"):
        table.open("2025-11-25", caps, None)
    assert table.close(opened[0].id) and not table.close(opened[0].id)
    table.open("2025-11-25", caps, None)  # room again


def test_idle_sessions_expire() -> None:
    table = SessionTable(max_sessions=1, idle_s=0.05)
    first = table.open("2025-11-25", mcp.ClientCapabilities(), None)
    assert table.get(first.id) is first
    time.sleep(0.1)
    assert table.get(first.id) is None and len(table) == 0
    table.open("2025-11-25", mcp.ClientCapabilities(), None)
    time.sleep(0.1)
    table.open("2025-11-25", mcp.ClientCapabilities(), None)  # the idle one made room


def test_a_full_table_refuses_initialize_over_http() -> None:
    server = build_zigai_server()
    server.sessions.max_sessions = 1
    with mcp.serve_http(server) as handle:
        assert post(handle.url, INIT)[0] == 200
        status, headers, reply = post(handle.url, INIT)
        assert reply["error"]["code"] == -32603 and "mcp-session-id" not in headers


def test_initialize_params_are_checked(served: tuple[mcp.Server, str]) -> None:
    _, url = served
    bad_version = {**INIT, "params": {"capabilities": {}}}
    assert post(url, bad_version)[2]["error"]["code"] == -32602
    bad_caps = {**INIT, "params": {**INIT["params"], "capabilities": {"sampling": 3}}}
    assert post(url, bad_caps)[2]["error"]["code"] == -32602


def test_input_asking_handlers_without_a_channel_and_bad_log_levels_fail_in_a_session() -> None:
    server = mcp.Server("asker", "1")

    def ask(args: dict[str, Any], request: mcp.ServerRequest) -> str:
        answers = request.ask(mcp.InputRequest("name", mcp.InputKind.elicitation, {
            "message": "name?", "requestedSchema": {"type": "object", "properties": {}}}))
        return str(answers)

    server.add_tool(mcp.ToolInfo("ask", {"type": "object"}), ask)
    session = server.sessions.open("2025-11-25", mcp.ClientCapabilities(elicitation={}), None)
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask", "arguments": {}}}
    reply = server.handle_value(call, session=session)  # in process: no channel to send the client a request on
    assert reply is not None and reply["error"]["code"] == -32600 and "2026-07-28" in reply["error"]["message"]
    with mcp.serve_http(server) as handle:
        _, headers, _ = post(handle.url, INIT)
        named = {"Mcp-Session-Id": headers["mcp-session-id"]}
        reply = post(handle.url, {"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel",
                                  "params": {"level": "loud"}}, **named)[2]
        assert reply["error"]["code"] == -32602


def test_a_2026_initialize_is_a_removed_method_not_a_session(served: tuple[mcp.Server, str]) -> None:
    server, url = served
    envelope = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}
    modern = {**INIT, "params": {**INIT["params"], "_meta": envelope}}
    status, headers, reply = post(url, modern, **{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "initialize"})
    assert status == 404 and reply["error"]["code"] == -32601 and "mcp-session-id" not in headers
    status, headers, reply = post(url, INIT, **{"MCP-Protocol-Version": "2026-07-28"})
    assert status == 400 and len(server.sessions) == 0  # a 2026 request without its envelope


def test_2025_shapes_drop_what_the_revision_cannot_carry() -> None:
    from zigai.mcp.server.sessions import legacy_capabilities, legacy_shape

    listed = legacy_shape("tools/list", {"tools": [
        {"name": "a", "outputSchema": {"type": "integer"}}, {"name": "b", "outputSchema": {"type": "object"}},
        "not-a-tool"]})
    assert listed["tools"][0] == {"name": "a"} and listed["tools"][1]["outputSchema"] == {"type": "object"}
    called = legacy_shape("tools/call", {"content": [], "structuredContent": [1, 2]})
    assert called == {"content": []}
    assert legacy_capabilities({"logging": {}, "experimental": None, "extensions": {"x/y": {}},
                                "tools": {"listChanged": True}}) == {"logging": {}, "experimental": None,
                                                                      "tools": {"listChanged": True}}
