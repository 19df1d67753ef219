"""mcp.Server: the dispatcher ladder, registration, the HTTP deployment policy and both serving loops."""

from __future__ import annotations

import io
import json
import os
import threading
import time
import wsgiref.simple_server
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from support import mcp_peers
from support.mcp_peers import ROOT, build_zigai_server, stdio_command
from support.timing import StallMeter, assert_ended_within

from zigai import mcp
from zigai.control import CancellationToken
from zigai.json import Limits
from zigai.mcp.server.http import DeploymentPolicy, handle_http
from zigai.security import UrlPolicy
from zigai.tool import Tool

LOCAL = UrlPolicy.local_development()
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}


def _body(method: str, params: dict[str, Any] | None = None, *, request_id: Any = 1, meta: Any = ENVELOPE) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method,
                               "params": {**(params or {}), **({"_meta": meta} if meta is not None else {})}}
    return json.dumps(message).encode()


def _routing(method: str, name: str | None = None, version: str = "2026-07-28") -> dict[str, tuple[str, ...]]:
    headers = {"mcp-protocol-version": (version,), "mcp-method": (method,)}
    if name is not None:
        headers["mcp-name"] = (name,)
    return headers


@pytest.fixture(scope="module")
def server() -> mcp.Server:
    return build_zigai_server()


# ----------------------------------------------------------------------------- the ladder


def test_discover_stamps_identity_versions_and_cache_hints(server: mcp.Server) -> None:
    reply = server.handle(_body("server/discover"))
    assert reply is not None
    result = reply["result"]
    assert result["supportedVersions"] == ["2026-07-28"] and result["instructions"] == "A test server."
    assert result["resultType"] == "complete" and result["cacheScope"] == "private" and result["ttlMs"] == 0
    assert result["_meta"] == {"io.modelcontextprotocol/serverInfo": {"name": "zigai-peer", "version": "1.0"}}
    assert result["capabilities"] == {
        "tools": {"listChanged": True}, "resources": {"listChanged": True, "subscribe": True},
        "prompts": {"listChanged": True}, "completions": {}, "logging": {},
        "extensions": {"com.example/echo": {}},
    }


@pytest.mark.parametrize(("body", "code"), [
    (b"{not json", -32700),
    (b'{"jsonrpc":"2.0","id":1,"method":"m","method":"n"}', -32700),
    (b"[]", -32600),
    (b'{"jsonrpc":"1.0","id":4,"method":"m"}', -32600),
    (b'{"jsonrpc":"2.0","id":3,"result":{}}', -32600),
    (_body("tools/list", meta=None), -32602),
    (_body("tools/list", meta={"io.modelcontextprotocol/protocolVersion": "2026-07-28"}), -32602),
    (_body("tools/list", meta={**ENVELOPE, "io.modelcontextprotocol/protocolVersion": 7}), -32602),
    (_body("tools/list", meta={**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": []}), -32602),
    (_body("tools/list", meta={**ENVELOPE, "io.modelcontextprotocol/logLevel": "loud"}), -32602),
    (_body("tools/list", meta={**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}), -32022),
    (_body("vendor/none"), -32601),
    (_body("tools/call", {"name": "nope"}), -32602),
    (_body("tools/call", {"name": 3}), -32602),
    (_body("tools/call", {"name": "double_1", "arguments": []}), -32602),
    (_body("tools/call", {"name": "ask_model"}), -32021),
    (_body("com.example/echo", {"x": 1}), -32021),
    (_body("tools/list", {"cursor": "garbage"}), -32602),
    (_body("tools/list", {"cursor": "emlnYWk6OTk="}), -32602),
    (_body("resources/read", {"uri": "memo://missing"}), -32602),
    (_body("resources/read", {}), -32602),
    (_body("prompts/get", {"name": "review"}), -32602),
    (_body("prompts/get", {"name": "nope"}), -32602),
    (_body("prompts/get", {"name": "review", "arguments": {"code": 1}}), -32602),
    (_body("completion/complete", {"ref": {"type": "ref/other"}, "argument": {"name": "a"}}), -32602),
    (_body("completion/complete", {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": 1}}), -32602),
    (_body("completion/complete", {}), -32602),
    (_body("subscriptions/listen", {"notifications": "all"}), -32602),
])
def test_ladder_errors_carry_the_specified_codes(server: mcp.Server, body: bytes, code: int) -> None:
    reply = server.handle(body)
    assert reply is not None and reply["error"]["code"] == code, reply


def test_error_data_names_what_is_missing(server: mcp.Server) -> None:
    version = server.handle(_body("tools/list", meta={**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "1999"}))
    assert version is not None and version["error"]["data"] == {"supported": ["2026-07-28"], "requested": "1999"}
    capability = server.handle(_body("com.example/echo"))
    assert capability is not None
    assert capability["error"]["data"] == {"requiredCapabilities": {"extensions": {"com.example/echo": {}}}}
    echoed = server.handle(_body("com.example/echo", {"x": 1}, meta={
        **ENVELOPE, "io.modelcontextprotocol/clientCapabilities": {"extensions": {"com.example/echo": {}}}}))
    assert echoed is not None and echoed["result"]["echo"] == {"x": 1}


def test_http_header_rung(server: mcp.Server) -> None:
    def code(body: bytes, headers: dict[str, tuple[str, ...]]) -> int | None:
        reply = server.handle(body, headers=headers)
        assert reply is not None
        return reply.get("error", {}).get("code")

    assert code(_body("tools/list"), _routing("tools/list")) is None
    assert code(_body("tools/list"), _routing("tools/call")) == -32020
    assert code(_body("tools/list"), {"mcp-method": ("tools/list",)}) == -32020
    assert code(_body("tools/list"), _routing("tools/list", version="2025-11-25")) == -32020
    assert code(_body("tools/list"), {**_routing("tools/list"), "mcp-method": ("tools/list", "tools/list")}) == -32020
    call = _body("tools/call", {"name": "sql", "arguments": {"region": "eu", "query": "q"}})
    assert code(call, {**_routing("tools/call", "sql"), "mcp-param-region": ("eu",)}) is None
    assert code(call, _routing("tools/call", "sql")) == -32020  # the mirrored header is missing
    assert code(call, {**_routing("tools/call", "sql"), "mcp-param-region": ("us",)}) == -32020
    assert code(call, {**_routing("tools/call", "other"), "mcp-param-region": ("eu",)}) == -32020
    assert code(_body("resources/read", {"uri": "notes://é"}), _routing("resources/read", "=?base64?bm90ZXM6Ly/DqQ==?=")) is None
    unsupported = _body("tools/list", meta={**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "1999"})
    assert code(unsupported, _routing("tools/list", version="1999")) == -32022


def test_tools_paginate_and_results_render(server: mcp.Server) -> None:
    names, cursor = [], None
    while True:
        reply = server.handle(_body("tools/list", {"cursor": cursor} if cursor else {}))
        assert reply is not None
        names += [tool["name"] for tool in reply["result"]["tools"]]
        cursor = reply["result"].get("nextCursor")
        if cursor is None:
            break
    assert names[:5] == [f"double_{i}" for i in range(5)] and len(names) == 11
    sql = server.handle(_body("tools/list", {"cursor": "emlnYWs6NQ=="}))
    assert sql is not None and "error" in sql  # a cursor from another server is refused
    called = server.handle(_body("tools/call", {"name": "double_4", "arguments": {"x": 2}}))
    assert called is not None and called["result"]["content"] == [{"type": "text", "text": "8"}]
    assert called["result"]["structuredContent"] == 8 and called["result"]["isError"] is False
    picture = server.handle(_body("tools/call", {"name": "picture"}))
    assert picture is not None
    assert [block["type"] for block in picture["result"]["content"]] == ["text", "image"]
    assert picture["result"]["content"][1]["data"] == "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def test_registration_is_validated() -> None:
    server = mcp.Server("s", "1")
    tool = Tool.manual("t", "", {"type": "object"}, lambda args: 1)
    server.add_tool(tool)
    with pytest.raises(mcp.InvalidServerDefinition, match="already"):
        server.add_tool(tool)
    with pytest.raises(mcp.InvalidServerDefinition, match="needs type"):
        server.add_tool(mcp.ToolInfo("h", {"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}),
                        lambda args, request: 1)
    with pytest.raises(mcp.InvalidServerDefinition):
        server.add_tool(mcp.ToolInfo("n", {"type": "object"}))
    with pytest.raises(mcp.InvalidServerDefinition):
        server.add_tool(tool, lambda args, request: 1)
    with pytest.raises(mcp.InvalidServerDefinition):
        server.add_tool("t")  # type: ignore[arg-type]
    server.add_resource("a://1", lambda uri, request: "x")
    with pytest.raises(mcp.InvalidServerDefinition):
        server.add_resource("a://1", lambda uri, request: "x")
    with pytest.raises(mcp.InvalidServerDefinition):
        server.add_resource_template("a://fixed", lambda uri, values, request: "x", name="n")
    server.add_prompt("p", lambda args, request: "x")
    with pytest.raises(mcp.InvalidServerDefinition):
        server.add_prompt("p", lambda args, request: "x")
    with pytest.raises(mcp.InvalidServerDefinition, match="core"):
        server.add_method("tools/list", lambda params, request: {})
    with pytest.raises(mcp.InvalidServerDefinition):
        server.add_method("noslash", lambda params, request: {})
    with pytest.raises(mcp.InvalidServerDefinition):
        server.set_completion("no")  # type: ignore[arg-type]
    with pytest.raises(mcp.InvalidServerDefinition):
        mcp.Server("s", "1", extensions={"bad": {}})
    with pytest.raises(mcp.InvalidServerDefinition):
        mcp.Server("s", "1", page_size=0)
    assert server.handle(_body("completion/complete", {"ref": {"type": "ref/prompt", "name": "p"},
                                                       "argument": {"name": "a", "value": ""}}))["error"]["code"] == -32601  # type: ignore[index]


def test_handler_failures_do_not_leak_their_text() -> None:
    server = mcp.Server("s", "1")

    def explode(params: dict[str, Any], request: mcp.ServerRequest) -> dict[str, Any]:
        raise RuntimeError("secret database password in traceback")

    def boom(args: dict[str, Any]) -> int:
        raise RuntimeError("secret")

    server.add_method("x/explode", explode)
    server.add_method("x/bad", lambda params, request: [1])  # type: ignore[arg-type,return-value]
    server.add_tool(Tool.manual("boom", "", {"type": "object"}, boom))
    server.add_tool(mcp.ToolInfo("native_boom", {"type": "object"}), lambda args, request: boom(args))
    server.add_resource("r://bad", lambda uri, request: 42)
    for method, params in (("x/explode", {}), ("x/bad", {}), ("resources/read", {"uri": "r://bad"})):
        reply = server.handle(_body(method, params))
        assert reply is not None and reply["error"]["code"] == -32603 and "secret" not in json.dumps(reply)
    for name in ("boom", "native_boom"):
        reply = server.handle(_body("tools/call", {"name": name}))
        assert reply is not None and reply["result"]["isError"] is True and "secret" not in json.dumps(reply)


def test_native_tools_resources_and_prompts_accept_their_value_forms() -> None:
    server = mcp.Server("s", "1")
    server.add_tool(mcp.ToolInfo("native", {"type": "object"}), lambda args, request: {"k": [1]})
    server.add_tool(mcp.ToolInfo("text", {"type": "object"}), lambda args, request: "plain")
    server.add_tool(mcp.ToolInfo("retry", {"type": "object"}),
                    lambda args, request: (_ for _ in ()).throw(mcp.InvalidParams("bad input")))
    server.add_resource("r://blob", lambda uri, request: b"\x00\x01")
    server.add_resource("r://many", lambda uri, request: [mcp.TextResourceContents(uri, "a"),
                                                          mcp.TextResourceContents(uri, "b")])
    server.add_prompt("chat", lambda args, request: [mcp.PromptMessage("assistant", mcp.TextBlock("hi"))])
    server.add_prompt("full", lambda args, request: mcp.GetPromptResult((), "custom"))
    native = server.handle(_body("tools/call", {"name": "native"}))
    assert native is not None and native["result"]["structuredContent"] == {"k": [1]}
    assert native["result"]["content"] == [{"type": "text", "text": '{"k":[1]}'}]
    text = server.handle(_body("tools/call", {"name": "text"}))
    assert text is not None and "structuredContent" not in text["result"]
    assert server.handle(_body("tools/call", {"name": "retry"}))["error"]["code"] == -32602  # type: ignore[index]
    blob = server.handle(_body("resources/read", {"uri": "r://blob"}))
    assert blob is not None and blob["result"]["contents"] == [{"uri": "r://blob", "blob": "AAE=",
                                                                "mimeType": "application/octet-stream"}]
    many = server.handle(_body("resources/read", {"uri": "r://many"}))
    assert many is not None and [c["text"] for c in many["result"]["contents"]] == ["a", "b"]
    chat = server.handle(_body("prompts/get", {"name": "chat"}))
    assert chat is not None and chat["result"]["messages"][0]["role"] == "assistant"
    full = server.handle(_body("prompts/get", {"name": "full"}))
    assert full is not None and full["result"] == {"messages": [], "description": "custom", "resultType": "complete",
                                                   "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}}
    assert server.handle(b'{"jsonrpc":"2.0","method":"notifications/whatever"}') is None


def test_completion_caps_values_at_one_hundred() -> None:
    server = mcp.Server("s", "1")
    server.set_completion(lambda ref, name, value, context, request: [str(i) for i in range(150)])
    reply = server.handle(_body("completion/complete", {"ref": {"type": "ref/resource", "uri": "a://{x}"},
                                                        "argument": {"name": "x", "value": ""},
                                                        "context": {"arguments": {"y": "1"}}}))
    assert reply is not None
    completion = reply["result"]["completion"]
    assert len(completion["values"]) == 100 and completion["total"] == 150 and completion["hasMore"] is True


# ----------------------------------------------------------------------------- HTTP entry


def _http(server: mcp.Server, *, method: str = "POST", body: bytes = b"", headers: dict[str, str] | None = None,
          tls: bool = False, policy: DeploymentPolicy | None = None, parse: bool = True) -> tuple[int, Any, dict]:
    base = {"Host": "127.0.0.1:8000", "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream", "Content-Length": str(len(body))}
    base.update(headers or {})
    pairs = [(k, v) for k, v in base.items() if v is not None]
    reads: list[int] = []

    def read(length: int) -> bytes:
        reads.append(length)
        return body[:length]

    reply = handle_http(server, policy, method=method, headers=pairs, read_body=read, tls=tls)
    payload = reply.body if isinstance(reply.body, bytes) else b"".join(reply.body)
    info = {"reads": reads, "headers": dict(reply.headers)}
    return reply.status, (json.loads(payload) if parse and payload else payload), info


def test_header_values_are_read_without_their_surrounding_whitespace(server: mcp.Server) -> None:
    body = _body("tools/call", {"name": "double_3", "arguments": {"x": 2}})
    padded = {"MCP-Protocol-Version": " 2026-07-28\t", "Mcp-Method": "\ttools/call ", "Mcp-Name": "  double_3  "}
    status, reply, _info = _http(server, body=body, headers=padded)
    assert status == 200 and reply["result"]["structuredContent"] == 6
    status, reply, _info = _http(server, body=body, headers={**padded, "Mcp-Name": " double_ 3 "})
    assert status == 400 and reply["error"]["code"] == -32020  # inner whitespace is part of the value


def test_deployment_policy_refuses_before_reading_the_body(server: mcp.Server) -> None:
    body = _body("tools/list")
    cases = [
        ({"Origin": "https://evil.example"}, False, None, 403),
        ({"Origin": "null"}, False, None, 403),
        ({"Host": "attacker.example"}, False, None, 421),
        ({"Host": "mcp.example.com"}, True, None, 421),
        ({"Host": "mcp.example.com"}, False, DeploymentPolicy(allowed_hosts=("mcp.example.com",)), 403),
        ({}, False, DeploymentPolicy(require_tls=True), 403),
        ({"Origin": "https://app.example"}, True,
         DeploymentPolicy(allowed_hosts=("127.0.0.1:*",), allowed_origins=("https://other.example",)), 403),
    ]
    for headers, tls, policy, status in cases:
        got, reply, info = _http(server, body=body, headers=headers, tls=tls, policy=policy)
        assert got == status, (headers, policy)
        assert info["reads"] == [] and reply["error"]["code"] == -32600 and reply["id"] is None
    for headers, tls, policy in (
        ({"Origin": "http://localhost:3000"}, False, None),
        ({"Host": "localhost"}, False, None),
        ({"Host": "[::1]:9000"}, False, None),
        ({"Host": "mcp.example.com", "Origin": "https://app.example"}, True,
         DeploymentPolicy(allowed_hosts=("mcp.example.com",), allowed_origins=("https://app.example",))),
        ({"Origin": "http://localhost:5173"}, False,
         DeploymentPolicy(allowed_origins=("http://localhost:*",))),
    ):
        routed = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list", **headers}
        got, reply, _info = _http(server, body=body, headers=routed, tls=tls, policy=policy)
        assert got == 200 and "result" in reply, (headers, policy)


@pytest.mark.parametrize(("method", "headers", "status"), [
    ("GET", {}, 405), ("DELETE", {}, 405),
    ("POST", {"Content-Type": "text/plain"}, 415),
    ("POST", {"Accept": "application/json"}, 406),
    ("POST", {"Content-Length": None}, 411),
    ("POST", {"Content-Length": "-4"}, 400),
])
def test_http_framing_is_checked_before_json(server: mcp.Server, method: str, headers: dict, status: int) -> None:
    got, _reply, info = _http(server, method=method, body=_body("tools/list"), headers=headers)
    assert got == status and info["reads"] == []
    if status == 405:
        assert info["headers"]["Allow"] == "POST"


def test_request_bodies_are_bounded_exactly() -> None:
    small = mcp.Server("s", "1", limits=Limits(max_document_bytes=300, max_value_bytes=300, max_depth=16, max_items=64))
    head = _body("tools/list", {"pad": ""})
    exact = head.replace(b'"pad": ""', b'"pad": "' + b"x" * (300 - len(head)) + b'"')
    assert len(exact) == 300
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
    status, reply, _ = _http(small, body=exact, headers=headers)
    assert status == 200 and "result" in reply
    over = exact.replace(b'"pad": "', b'"pad": "x')
    status, reply, info = _http(small, body=over, headers=headers)
    assert status == 413 and info["reads"] == [] and reply["error"]["code"] == -32700


def test_http_status_table_and_notifications(server: mcp.Server) -> None:
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "vendor/none"}
    assert _http(server, body=_body("vendor/none"), headers=headers)[0] == 404
    assert _http(server, body=b"{oops")[0] == 400
    assert _http(server, body=_body("tools/list"), headers={"Mcp-Method": "tools/list"})[0] == 400
    note = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}'
    status, payload, _ = _http(server, body=note, headers={"MCP-Protocol-Version": "2026-07-28"})
    assert status == 202 and payload == b""
    status, reply, _ = _http(server, body=note, headers={"MCP-Protocol-Version": "1999"})
    assert status == 400 and reply["error"]["code"] == -32022 and reply["id"] is None
    response = b'{"jsonrpc":"2.0","id":1,"result":{}}'
    assert _http(server, body=response)[0] == 400


def test_notifications_switch_the_answer_to_sse(server: mcp.Server) -> None:
    body = _body("tools/call", {"name": "slow", "arguments": {"steps": 2}},
                 meta={**ENVELOPE, "progressToken": "p", "io.modelcontextprotocol/logLevel": "info"})
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "slow"}
    status, payload, info = _http(server, body=body, headers=headers, parse=False)
    assert status == 200 and info["headers"]["Content-Type"] == "text/event-stream"
    events = [json.loads(chunk.split(b"data: ", 1)[1]) for chunk in payload.split(b"\n\n") if chunk]
    assert [e.get("method", "response") for e in events] == ["notifications/progress", "notifications/message",
                                                            "notifications/progress", "notifications/message",
                                                            "response"]
    assert events[-1]["result"]["content"][0]["text"] == "slow done"


# ----------------------------------------------------------------------------- served end to end


@contextmanager
def _served(server: mcp.Server, **policy: Any) -> Iterator[mcp.Client]:
    with mcp.serve_http(server, policy=DeploymentPolicy(**policy) if policy else None) as running:
        transport = mcp.StreamableHttpTransport(running.url, url_policy=LOCAL)
        with mcp.Client(transport, default_timeout_ms=10_000) as client:
            yield client


def test_zigai_client_and_server_over_http_with_listen_and_close() -> None:
    server = build_zigai_server()
    with _served(server) as client:
        assert client.discover().server_info == mcp.Implementation("zigai-peer", "1.0")
        assert client.call_tool("sql", {"region": "eu", "query": "q"}).text == "eu: q"
        events: list[mcp.Notification] = []
        outcome: list[Any] = []
        thread = threading.Thread(target=lambda: outcome.append(client.listen(
            mcp.SubscriptionFilter(tools_list_changed=True, resource_subscriptions=("memo://greeting",)),
            events.append, mcp.RequestOptions(request_id="s-1"))))
        thread.start()
        deadline = time.monotonic() + 5
        while not events and time.monotonic() < deadline:
            time.sleep(0.01)
        assert client.call_tool("touch", {}).text == "touched"
        while len(events) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        server.close_listeners()  # graceful end: the stream's final result arrives
        thread.join(5)
    assert [e.method for e in events] == ["notifications/subscriptions/acknowledged",
                                          "notifications/tools/list_changed", "notifications/resources/updated"]
    assert outcome[0].subscription_id == "s-1" and outcome[0].acknowledged.tools_list_changed


def test_cancelling_an_http_request_closes_its_stream_and_cancels_the_handler() -> None:
    mcp_peers.SEEN_CANCELLED.clear()
    with _served(build_zigai_server(), keepalive_s=0.05) as client:
        token = CancellationToken()
        threading.Timer(0.3, token.cancel).start()
        started = time.monotonic()
        with pytest.raises(mcp.McpRequestCancelled):
            client.call_tool("slow", {"steps": 1, "block": True},
                             options=mcp.RequestOptions(cancel=token, metadata=mcp.RequestMetadata(progress_token=1)))
        assert time.monotonic() - started < 2.0
        assert mcp_peers.SEEN_CANCELLED.wait(5)


def test_wsgi_entry_passes_headers_and_serves_requests() -> None:
    server = build_zigai_server()
    app = mcp.wsgi_app(server, DeploymentPolicy(allowed_hosts=("127.0.0.1:*", "mcp.example.com")))
    httpd = wsgiref.simple_server.make_server("127.0.0.1", 0, app, handler_class=_QuietHandler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{httpd.server_port}/mcp"
        with mcp.Client(mcp.StreamableHttpTransport(url, url_policy=LOCAL), default_timeout_ms=10_000) as client:
            assert client.call_tool("sql", {"region": "ap", "query": "x"}).text == "ap: x"
            with pytest.raises(mcp.MethodNotFound):
                client.request_json("vendor/none")
            notes: list[mcp.Notification] = []
            options = mcp.RequestOptions(metadata=mcp.RequestMetadata(progress_token="w"), on_notification=notes.append)
            assert client.call_tool("slow", {"steps": 2}, options=options).text == "slow done"
            assert [n.params["progress"] for n in notes] == [0, 1]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)
    environ = {"REQUEST_METHOD": "POST", "HTTP_HOST": "mcp.example.com", "wsgi.url_scheme": "http",
               "HTTP_ACCEPT": "*/*",
               "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": "2", "wsgi.input": io.BytesIO(b"{}")}
    statuses: list[str] = []
    assert b"cleartext" in b"".join(app(environ, lambda status, headers: statuses.append(status)))
    secure = {**environ, "wsgi.url_scheme": "https", "wsgi.input": io.BytesIO(b"{}")}
    assert b'"code":-32600' in b"".join(app(secure, lambda status, headers: statuses.append(status)))
    assert statuses == ["403 Forbidden", "400 Bad Request"]  # over TLS the body is read and judged


class _QuietHandler(wsgiref.simple_server.WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


# ----------------------------------------------------------------------------- stdio loop


def test_zigai_client_and_server_over_stdio_with_cancellation() -> None:
    options = mcp.StdioOptions(stderr=mcp.StderrMode.discard, env={**os.environ, "PYTHONPATH": str(ROOT)})
    with mcp.Client(mcp.StdioTransport(stdio_command("zigai-stdio"), options), default_timeout_ms=10_000) as client:
        pages = client.list_all_tools()
        assert len(pages) == 6 and pages[0].items[0].name == "double_0"
        assert client.call_tool("double_2", {"x": 5}).structured_content == 10
        with StallMeter() as meter:
            started = time.monotonic()
            with pytest.raises(mcp.McpRequestTimedOut):
                client.call_tool("slow", {"steps": 1, "block": True}, options=mcp.RequestOptions(timeout_ms=300))
            assert_ended_within(started + 0.3, 1.2, meter)
        assert client.call_tool("double_1", {"x": 1}).text == "1"  # the server is still serving
        events: list[mcp.Notification] = []
        token = CancellationToken()

        def listen() -> None:
            with pytest.raises(mcp.McpRequestCancelled):
                client.listen(mcp.SubscriptionFilter(prompts_list_changed=True), events.append,
                              mcp.RequestOptions(cancel=token))

        thread = threading.Thread(target=listen)
        thread.start()
        deadline = time.monotonic() + 5
        while not events and time.monotonic() < deadline:
            time.sleep(0.01)
        client.call_tool("touch", {})
        while len(events) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        token.cancel()
        thread.join(5)
        assert [e.method for e in events] == ["notifications/subscriptions/acknowledged",
                                              "notifications/prompts/list_changed"]


def _serve_lines(server: mcp.Server, lines: list[bytes], **options: Any) -> list[dict[str, Any]]:
    read, write = os.pipe()
    out = io.BytesIO()
    with os.fdopen(write, "wb") as sink:
        sink.write(b"".join(lines))
    with os.fdopen(read, "rb") as source:
        mcp.serve_stdio(server, source, out, **options)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_serve_stdio_bounds_lines_answers_parse_errors_and_drains(server: mcp.Server) -> None:
    long_line = b'{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"x":"' + b"y" * 5000 + b'"}}\n'
    replies = _serve_lines(server, [b"{bad\n", b"\n", long_line, _body("double_nothing") + b"\n",
                                    b'{"jsonrpc":"2.0","id":2,"result":{}}\n', _body("server/discover", request_id=3)],
                           max_line_bytes=1000)
    by_id = {reply.get("id"): reply for reply in replies}
    assert [r["error"]["code"] for r in replies if r.get("id") is None] == [-32700, -32700]
    assert by_id[1]["error"]["code"] == -32601 and by_id[3]["result"]["supportedVersions"] == ["2026-07-28"]
    assert 2 not in by_id and len(replies) == 4


def test_serve_stdio_refuses_work_beyond_its_concurrency_bound() -> None:
    server = mcp.Server("s", "1")
    gate = threading.Event()
    server.add_method("x/wait", lambda params, request: {"waited": gate.wait(2)})
    lines = [_body("x/wait", request_id=i) + b"\n" for i in range(3)]
    timer = threading.Timer(0.5, gate.set)
    timer.start()
    replies = _serve_lines(server, lines, max_concurrent=2, drain_s=3.0)
    busy = [r for r in replies if "error" in r]
    assert len(busy) == 1 and "busy" in busy[0]["error"]["message"] and busy[0]["id"] == 2


def test_in_process_transport_carries_results_progress_and_cancellation() -> None:
    mcp_peers.SEEN_CANCELLED.clear()
    transport = mcp.InProcessTransport(build_zigai_server())
    with mcp.Client(transport, default_timeout_ms=5_000) as client:
        assert client.discover().server_info == mcp.Implementation("zigai-peer", "1.0")
        progress: list[mcp.Notification] = []
        done = client.call_tool("slow", {"steps": 2}, options=mcp.RequestOptions(
            metadata=mcp.RequestMetadata(progress_token="p"), on_notification=progress.append))
        assert done.text == "slow done"
        assert [n.method for n in progress if n.method == "notifications/progress"] == ["notifications/progress"] * 2
        with pytest.raises(mcp.MethodNotFound):
            client.request_json("vendor/unknown", {})
        token = CancellationToken()
        threading.Timer(0.2, token.cancel).start()
        started = time.monotonic()
        with pytest.raises(mcp.McpRequestCancelled):
            client.call_tool("slow", {"steps": 1, "block": True}, options=mcp.RequestOptions(cancel=token))
        assert time.monotonic() - started < 2.0
        assert mcp_peers.SEEN_CANCELLED.wait(5)  # the server-side handler saw the cancellation
        client.send_notification(mcp.Notification.cancelled("nothing-running"))
    with pytest.raises(mcp.McpClientClosed):
        transport.request(mcp.OutgoingRequest(id=9, method="ping", body=b"{}", protocol_version="2026-07-28"),
                          deadline=None, is_cancelled=lambda: False, on_notification=lambda n: None)
    with pytest.raises(mcp.McpClientClosed):
        transport.notify("notifications/cancelled", b"{}", protocol_version="2026-07-28", deadline=None)
