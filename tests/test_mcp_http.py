"""StreamableHttpTransport and the Client over loopback HTTP: headers, JSON and SSE answers, bounds.

The clients here are pinned to 2026-07-28 (no negotiation probe), so each test sees exactly the
requests it makes; negotiation is covered by tests/test_mcp_revisions.py.
"""

from __future__ import annotations

import json
import threading
import time
from contextlib import contextmanager
from typing import Any

import pytest
from support.loopback import LoopbackServer, Received, Reply
from support.timing import DEADLINE_SLACK_S, StallMeter, assert_ended_within

from zigai import mcp
from zigai.json import Limits
from zigai.security import UrlPolicy, UrlPolicyViolation
from zigai.transport import Limits as TransportLimits
from zigai.transport import MemoryStreamResponse, TransportRequest, TransportResponse

LOCAL = UrlPolicy.local_development()
REGION_TOOL = {"name": "sql", "inputSchema": {"type": "object", "properties": {
    "region": {"type": "string", "x-mcp-header": "Region"}, "query": {"type": "string"}}}}
BAD_TOOL = {"name": "broken", "inputSchema": {"type": "object", "properties": {
    "n": {"type": "number", "x-mcp-header": "N"}}}}


def _result(request: Received, result: dict[str, Any], status: int = 200) -> Reply:
    return Reply.of_json({"jsonrpc": "2.0", "id": request.json()["id"], "result": result}, status)


def _error(request: Received, code: int, message: str, status: int = 400) -> Reply:
    return Reply.of_json({"jsonrpc": "2.0", "id": request.json()["id"], "error": {"code": code, "message": message}},
                         status)


@contextmanager
def _client(handler: Any, **options: Any):
    with LoopbackServer(handler) as server:
        transport = mcp.StreamableHttpTransport(server.url + "/mcp", url_policy=LOCAL, **options)
        with mcp.Client(transport, protocol_version=mcp.PROTOCOL_VERSION, default_timeout_ms=5000) as client:
            yield client, server


def test_every_post_carries_the_required_headers_and_the_envelope() -> None:
    def handler(request: Received) -> Reply:
        method = request.json()["method"]
        if method == "tools/list":
            return _result(request, {"tools": [REGION_TOOL, BAD_TOOL], "resultType": "complete"})
        return _result(request, {"content": [{"type": "text", "text": "ok"}], "resultType": "complete"})

    with _client(handler, headers=(("X-Tenant", "t1"),),
                 header_provider=lambda request: (("Authorization", f"Bearer for-{request.method}"),)) as (client, server):
        page = client.list_tools()
        assert [tool.name for tool in page.items] == ["sql"]
        assert page.rejected[0][0] == "broken" and "needs type" in page.rejected[0][1]
        assert client.call_tool("sql", {"region": "eu-west", "query": "select 1"}).text == "ok"
        client.request_json("prompts/get", {"name": "héllo"})
    listing, call, prompt = server.requests
    assert listing.headers["content-type"] == "application/json"
    assert listing.headers["accept"] == "application/json, text/event-stream"
    assert listing.headers["mcp-protocol-version"] == "2026-07-28"
    assert listing.headers["mcp-method"] == "tools/list" and "mcp-name" not in listing.headers
    assert listing.headers["x-tenant"] == "t1" and listing.headers["authorization"] == "Bearer for-tools/list"
    assert call.headers["mcp-method"] == "tools/call" and call.headers["mcp-name"] == "sql"
    assert call.headers["mcp-param-region"] == "eu-west"
    assert prompt.headers["mcp-name"] == "=?base64?aMOpbGxv?="
    body = call.json()
    assert body["params"]["arguments"] == {"region": "eu-west", "query": "select 1"}
    assert body["params"]["_meta"] == {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "zigai", "version": client.client_info.version},
        "io.modelcontextprotocol/clientCapabilities": {},
    }


def test_a_header_mismatch_relists_the_tool_and_retries_once() -> None:
    listings = []

    def handler(request: Received) -> Reply:
        method = request.json()["method"]
        if method == "tools/list":
            listings.append(1)
            return _result(request, {"tools": [REGION_TOOL]})
        if "mcp-param-region" not in request.headers:
            return _error(request, -32020, "Mcp-Param-Region header is missing")
        return _result(request, {"content": [{"type": "text", "text": request.headers["mcp-param-region"]}]})

    with _client(handler) as (client, server):
        assert client.call_tool("sql", {"region": "ap"}).text == "ap"
        assert len(listings) == 1 and len(server.requests) == 3
        # a mismatch that re-listing cannot fix is raised
        with pytest.raises(mcp.HeaderMismatch):
            client.call_tool("other", {"region": "x"})


def test_request_scoped_sse_delivers_notifications_then_the_response() -> None:
    def handler(request: Received) -> Reply:
        request_id = request.json()["id"]
        events = [
            json.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "p", "progress": 1}}),
            json.dumps({"jsonrpc": "2.0", "id": "someone-else", "result": {}}),
            json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}}),
            json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": "done"}]}}),
            json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "late"}}),
        ]
        reply = Reply.sse(events)
        return Reply(reply.status, reply.headers, pieces=(b"event: other\ndata: {}\n\n", b": ping\n\n", *reply.pieces))

    notes: list[mcp.Notification] = []
    with _client(handler) as (client, _server):
        options = mcp.RequestOptions(metadata=mcp.RequestMetadata(progress_token="p", log_level=mcp.LogLevel.info),
                                     on_notification=notes.append)
        assert client.call_tool("t", {}, options=options).text == "done"
    assert [(n.method, n.params.get("data")) for n in notes] == [("notifications/progress", None),
                                                                  ("notifications/message", "hi")]


def test_streams_that_end_early_or_break_are_classified_interruptions() -> None:
    def ended(request: Received) -> Reply:
        return Reply.sse([json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                                      "params": {"level": "info", "data": 1}})])

    with _client(ended) as (client, _server), pytest.raises(mcp.McpStreamEnded):
        client.call_tool("t", {})

    note = json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": 1}})

    def broken(request: Received) -> Reply:
        return Reply.sse([note, note], abort_after=1)

    with _client(broken) as (client, _server), pytest.raises(mcp.McpConnectionFailed):
        client.call_tool("t", {})

    def garbage(request: Received) -> Reply:
        return Reply.sse(["{}"])

    with _client(garbage) as (client, _server), pytest.raises(mcp.InvalidMcpMessage, match="jsonrpc"):
        client.call_tool("t", {})


@pytest.mark.parametrize(("reply", "error", "detail"), [
    (lambda r: _error(r, -32020, "mismatch"), mcp.HeaderMismatch, None),
    (lambda r: _error(r, -32601, "no such method", 404), mcp.MethodNotFound, None),
    (lambda r: _error(r, -32022, "Unsupported protocol version"), mcp.UnsupportedProtocolVersion, None),
    (lambda r: Reply(500, (("Content-Type", "text/html"),), b"<h1>oops</h1>"), mcp.McpHttpStatusError, 500),
    (lambda r: Reply(502, (), b"{not json"), mcp.McpHttpStatusError, 502),
    (lambda r: Reply(200, (("Content-Type", "text/plain"),), b"hello"), mcp.InvalidMcpMessage, None),
    (lambda r: Reply.of_json({"jsonrpc": "2.0", "id": 12345, "result": {}}), mcp.InvalidMcpMessage, None),
    (lambda r: Reply(307, (("Location", "https://elsewhere.example/mcp"),)), mcp.McpHttpStatusError, 307),
])
def test_error_answers_map_to_named_errors(reply: Any, error: type[Exception], detail: int | None) -> None:
    with _client(reply) as (client, _server), pytest.raises(error) as caught:
        client.request_json("x/y")
    if detail is not None:
        assert caught.value.status == detail  # type: ignore[attr-defined]


def test_unsupported_version_errors_expose_the_supported_list() -> None:
    def handler(request: Received) -> Reply:
        return Reply.of_json({"jsonrpc": "2.0", "id": request.json()["id"], "error": {
            "code": -32022, "message": "Unsupported protocol version",
            "data": {"supported": ["2027-01-01"], "requested": "2026-07-28"}}}, 400)

    with _client(handler) as (client, _server), pytest.raises(mcp.UnsupportedProtocolVersion) as caught:
        client.discover()
    assert caught.value.supported == ("2027-01-01",)


def test_an_unsupported_version_answer_naming_a_version_we_speak_is_retried_once() -> None:
    seen: list[tuple[str, str, Any]] = []

    def handler(request: Received) -> Reply:
        body = request.json()
        seen.append(({k.lower(): v for k, v in request.headers.items()}["mcp-protocol-version"],
                     body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], body["id"]))
        if len(seen) == 1:
            return Reply.of_json({"jsonrpc": "2.0", "id": body["id"], "error": {
                "code": -32022, "message": "Unsupported protocol version",
                "data": {"supported": ["2027-01-01", "2026-07-28"], "requested": "2026-07-28"}}}, 400)
        return Reply.of_json({"jsonrpc": "2.0", "id": body["id"], "result": {"tools": []}})

    with _client(handler) as (client, _server):
        assert client.list_tools().items == ()
    assert [(header, meta) for header, meta, _id in seen] == [("2026-07-28", "2026-07-28")] * 2

    def always(request: Received) -> Reply:
        seen.append(("", "", request.json()["id"]))
        return Reply.of_json({"jsonrpc": "2.0", "id": request.json()["id"], "error": {
            "code": -32022, "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"}}}, 400)

    seen.clear()
    with _client(always) as (client, _server), pytest.raises(mcp.UnsupportedProtocolVersion):
        client.list_tools()
    assert len(seen) == 2  # one retry, never a loop

    def odd(request: Received) -> Reply:
        seen.append(("", "", request.json()["id"]))
        return Reply.of_json({"jsonrpc": "2.0", "id": request.json()["id"], "error": {
            "code": -32022, "message": "Unsupported protocol version", "data": {"supported": "2026-07-28"}}}, 400)

    seen.clear()
    with _client(odd) as (client, _server), pytest.raises(mcp.UnsupportedProtocolVersion):
        client.list_tools()
    assert len(seen) == 1  # a malformed 'supported' is not retried


LIMITS = Limits(max_document_bytes=512, max_value_bytes=512, max_depth=8, max_items=64)


def _sized_result(request: Received, size: int) -> bytes:
    head = json.dumps({"jsonrpc": "2.0", "id": request.json()["id"], "result": {"t": ""}})
    return head.replace('"t": ""', '"t": "' + "x" * (size - len(head)) + '"').encode()


@pytest.mark.parametrize("size", [512, 513])
def test_json_bodies_are_bounded_exactly(size: int) -> None:
    def handler(request: Received) -> Reply:
        return Reply(200, (("Content-Type", "application/json"),), _sized_result(request, size))

    with _client(handler, json_limits=LIMITS) as (client, _server):
        if size == 512:
            assert client.request_json("x/y")["t"].startswith("x")
        else:
            with pytest.raises(mcp.McpMessageTooLarge) as caught:
                client.request_json("x/y")
            assert caught.value.limit == 512


@pytest.mark.parametrize("size", [512, 513])
def test_sse_events_are_bounded_exactly_before_json_parsing(size: int) -> None:
    def handler(request: Received) -> Reply:
        return Reply(200, (("Content-Type", "text/event-stream"),),
                     pieces=(b"data: " + _sized_result(request, size) + b"\n\n",))

    with _client(handler, json_limits=LIMITS) as (client, _server):
        if size == 512:
            assert client.request_json("x/y")["t"].startswith("x")
        else:
            with pytest.raises(mcp.SseEventTooLarge):
                client.request_json("x/y")


class _AnythingGoes:
    """A custom transport with no URL policy of its own; it records what reaches it."""

    def __init__(self) -> None:
        self.seen: list[TransportRequest] = []

    def send(self, request: TransportRequest) -> TransportResponse:
        self.seen.append(request)
        from zigai.transport import Headers

        return TransportResponse(202, Headers(), b"")

    def stream_lines(self, request: TransportRequest) -> Any:
        self.seen.append(request)
        from contextlib import nullcontext

        from zigai.transport import Headers

        body = json.dumps({"jsonrpc": "2.0", "id": json.loads(request.body or b"{}")["id"], "result": {}}).encode()
        return nullcontext(MemoryStreamResponse(200, Headers((("content-type", "application/json"),)), body,
                                                TransportLimits()))


def test_the_url_policy_is_enforced_by_the_mcp_transport_itself() -> None:
    custom = _AnythingGoes()
    with pytest.raises(UrlPolicyViolation):
        mcp.StreamableHttpTransport("http://127.0.0.1:9/mcp", transport=custom)  # default policy: https, public
    with pytest.raises(UrlPolicyViolation):
        mcp.StreamableHttpTransport("https://169.254.169.254/mcp", transport=custom)
    with pytest.raises(UrlPolicyViolation):
        mcp.StreamableHttpTransport("https://user:pw@mcp.example.com/mcp", transport=custom)
    transport = mcp.StreamableHttpTransport("https://mcp.example.com/mcp", transport=custom)
    with mcp.Client(transport, protocol_version=mcp.PROTOCOL_VERSION) as client:
        assert client.request_json("x/y") == {}
        client.send_notification(mcp.Notification("notifications/initialized"))
    assert [r.url for r in custom.seen] == ["https://mcp.example.com/mcp"] * 2
    assert custom.seen[1].headers[3] == ("Mcp-Method", "notifications/initialized")
    allowlisted = UrlPolicy(allowed_hosts=frozenset({"mcp.example.com"}))
    with pytest.raises(UrlPolicyViolation):
        mcp.StreamableHttpTransport("https://other.example.com/mcp", transport=custom, url_policy=allowlisted)


def test_transport_options_are_validated() -> None:
    for headers in ((("Mcp-Method", "x"),), (("mcp-param-region", "x"),), (("Accept", "*/*"),)):
        with pytest.raises(mcp.InvalidMcpRequest, match="set by the MCP transport"):
            mcp.StreamableHttpTransport("https://mcp.example.com/mcp", transport=_AnythingGoes(), headers=headers)
    with pytest.raises(mcp.InvalidMcpRequest):
        mcp.StreamableHttpTransport("https://mcp.example.com/mcp", transport=_AnythingGoes(), max_in_flight=0)
    sneaky = mcp.StreamableHttpTransport("https://mcp.example.com/mcp", transport=_AnythingGoes(),
                                         header_provider=lambda request: (("MCP-Protocol-Version", "1999"),))
    with mcp.Client(sneaky) as client, pytest.raises(mcp.InvalidMcpRequest):
        client.request_json("x/y")
    closed = mcp.StreamableHttpTransport("https://mcp.example.com/mcp", transport=_AnythingGoes())
    closed.close()
    with pytest.raises(mcp.McpClientClosed):
        mcp.Client(closed).request_json("x/y")


def test_concurrent_posts_are_limited_to_max_in_flight_with_backpressure() -> None:
    release = threading.Event()
    lock = threading.Lock()
    active = {"now": 0, "peak": 0}

    def handler(request: Received) -> Reply:
        with lock:
            active["now"] += 1
            active["peak"] = max(active["peak"], active["now"])
        release.wait(5)
        with lock:
            active["now"] -= 1
        return _result(request, {})

    with _client(handler, max_in_flight=2) as (client, server):
        results: list[Any] = []
        threads = [threading.Thread(target=lambda: results.append(client.request_json("x/y"))) for _ in range(3)]
        for thread in threads:
            thread.start()
        waited_until = time.monotonic() + 5  # poll: the two admitted requests arrive when scheduled
        while len(server.requests) < 2 and time.monotonic() < waited_until:
            time.sleep(0.01)
        time.sleep(0.3)  # a third request, were it sent, would arrive in this window too
        assert len(server.requests) == 2  # the third waits for a slot before any I/O
        with StallMeter() as meter:
            deadline = time.monotonic() + 0.15
            with pytest.raises(mcp.McpRequestTimedOut, match="slots"):
                client.request_json("x/y", options=mcp.RequestOptions(timeout_ms=150))
            assert_ended_within(deadline, DEADLINE_SLACK_S, meter)
        release.set()
        for thread in threads:
            thread.join(5)
        assert results == [{}, {}, {}] and active["peak"] == 2
