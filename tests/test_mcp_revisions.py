"""Revision negotiation of mcp.Client: the discover probe, the legacy handshake, per-era methods,
and the 2025 HTTP session (id, 404 renewal, DELETE, server requests, GET stream, resumption).

Scripted peers play each kind of server exactly; tests/test_mcp_interop_legacy.py does the same
against the real mcp 1.30.0 SDK.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

import pytest
from support.loopback import LoopbackServer, Received, Reply
from support.mcp_stub import ScriptedPeer

from zigai import mcp
from zigai.mcp.client import legacy as legacy_client
from zigai.mcp.wire.jsonrpc import META_PROTOCOL_VERSION, JsonRpcRequest
from zigai.security import UrlPolicy

LOCAL = UrlPolicy.local_development()
INIT_2025 = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}, "logging": {}},
             "serverInfo": {"name": "old", "version": "1.0"}, "instructions": "be kind"}


def legacy_server(probe_error: mcp.McpErrorResponse, version: str = "2025-11-25") -> ScriptedPeer:
    """A 2025 server: refuses the probe with ``probe_error``, agrees on ``version``."""
    def reply(method: str, params: dict[str, Any]) -> Any:
        if method == "server/discover":
            return probe_error
        if method == "initialize":
            return {**INIT_2025, "protocolVersion": version}
        return {"tools": []} if method == "tools/list" else {}
    return ScriptedPeer(reply, answer_probe=False)


@pytest.mark.parametrize("probe_error", [
    mcp.MethodNotFound("Method not found"),          # the TypeScript SDK
    mcp.InvalidParams("Invalid request parameters"),  # the Python 1.x SDK
    mcp.InvalidRequest("Server not initialized"),
])
def test_a_probe_error_of_a_legacy_server_leads_to_initialize(probe_error: mcp.McpErrorResponse) -> None:
    peer = legacy_server(probe_error)
    seen: list[mcp.Notification] = []
    with mcp.Client(peer) as client:
        options = mcp.RequestOptions(metadata=mcp.RequestMetadata(progress_token="p", log_level=mcp.LogLevel.info),
                                     on_notification=seen.append)
        assert client.list_tools(options=options).items == ()
        assert client.protocol_version == "2025-11-25" and client.legacy
    probe, initialize, initialized, listing = peer.sent
    assert probe["method"] == "server/discover"
    assert probe["params"]["_meta"][META_PROTOCOL_VERSION] == "2026-07-28"
    assert "progressToken" not in probe["params"]["_meta"]  # the caller's metadata stays on its request
    assert initialize["method"] == "initialize"
    assert initialize["params"]["protocolVersion"] == "2025-11-25"
    assert initialize["params"]["clientInfo"]["name"] == "zigai" and "_meta" not in initialize["params"]
    assert initialized == {"jsonrpc": "2.0", "method": "notifications/initialized"}
    # a 2025 request carries no envelope: only the caller's own _meta (the log level goes by logging/setLevel)
    assert listing["params"] == {"_meta": {"progressToken": "p"}}
    assert client.server_capabilities is not None and client.server_capabilities.logging == {}


def test_the_era_is_agreed_once_per_client() -> None:
    peer = legacy_server(mcp.MethodNotFound("nope"))
    with mcp.Client(peer) as client:
        threads = [threading.Thread(target=client.list_tools) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
    assert peer.methods().count("server/discover") == 1 and peer.methods().count("initialize") == 1
    assert peer.methods().count("tools/list") == 4


def test_a_modern_server_is_used_without_a_handshake() -> None:
    peer = ScriptedPeer(lambda method, params: {"tools": []})
    with mcp.Client(peer) as client:
        client.list_tools()
        assert client.protocol_version == "2026-07-28" and not client.legacy
    assert peer.probes == 1 and peer.methods() == ["tools/list"]
    assert peer.sent[0]["params"]["_meta"][META_PROTOCOL_VERSION] == "2026-07-28"


@pytest.mark.parametrize("probe_error", [mcp.HeaderMismatch("header"), mcp.MissingRequiredClientCapability("cap")])
def test_a_modern_only_error_to_the_probe_means_a_modern_server(probe_error: mcp.McpErrorResponse) -> None:
    peer = legacy_server(probe_error)
    with mcp.Client(peer) as client:
        client.request_json("tools/list")
        assert client.protocol_version == "2026-07-28"
    assert "initialize" not in peer.methods()


def test_an_unsupported_version_answer_picks_the_revision() -> None:
    only_2025_06 = mcp.UnsupportedProtocolVersion("no", data={"supported": ["2025-06-18"]})
    peer = legacy_server(only_2025_06, version="2025-06-18")
    with mcp.Client(peer) as client:
        client.list_tools()
        assert client.protocol_version == "2025-06-18"
    assert peer.sent[1]["params"]["protocolVersion"] == "2025-06-18"  # initialize offered the listed one
    later = mcp.UnsupportedProtocolVersion("no", data={"supported": ["2027-01-01", "2026-07-28"]})
    peer = legacy_server(later)
    with mcp.Client(peer) as client:
        client.list_tools()
        assert client.protocol_version == "2026-07-28"


def test_no_common_revision_names_both_sides() -> None:
    future = mcp.UnsupportedProtocolVersion("no", data={"supported": ["2027-01-01"]})
    with mcp.Client(legacy_server(future)) as client, pytest.raises(mcp.NoCommonProtocolVersion) as caught:
        client.list_tools()
    assert caught.value.client_versions == ("2026-07-28", "2025-11-25", "2025-06-18")
    assert caught.value.server_versions == ("2027-01-01",)
    assert "2027-01-01" in str(caught.value) and "2025-06-18" in str(caught.value)
    # an initialize answer naming a revision the client does not speak
    with mcp.Client(legacy_server(mcp.MethodNotFound("x"), version="2024-11-05")) as client, \
            pytest.raises(mcp.NoCommonProtocolVersion) as caught:
        client.list_tools()
    assert caught.value.server_versions == ("2024-11-05",) and isinstance(caught.value, mcp.UnsupportedProtocolVersion)


def test_a_silent_probe_times_out_into_the_legacy_handshake(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(legacy_client, "PROBE_TIMEOUT_S", 0.3)
    answered = legacy_server(mcp.MethodNotFound("x"))

    class Silent(ScriptedPeer):
        def request(self, request: Any, *, deadline: float | None, is_cancelled: Any, on_notification: Any) -> Any:
            if request.method == "server/discover":
                assert deadline is not None
                time.sleep(max(0.0, deadline - time.monotonic()))
                raise mcp.McpRequestTimedOut("no answer")
            return answered.request(request, deadline=deadline, is_cancelled=is_cancelled,
                                    on_notification=on_notification)

    with mcp.Client(Silent(answered.reply, answer_probe=False), default_timeout_ms=10_000) as client:
        client.list_tools()
        assert client.legacy
    # the caller's own deadline is not a legacy signal
    monkeypatch.setattr(legacy_client, "PROBE_TIMEOUT_S", 5.0)
    with mcp.Client(Silent(answered.reply, answer_probe=False)) as client, pytest.raises(mcp.McpRequestTimedOut):
        client.list_tools(options=mcp.RequestOptions(timeout_ms=200))
    assert not client.legacy


def test_methods_of_the_other_era_fail_before_io() -> None:
    modern = ScriptedPeer(lambda method, params: {})
    with mcp.Client(modern) as client:
        with pytest.raises(mcp.FeatureNotInRevision, match="2026-07-28") as caught:
            client.set_logging_level(mcp.LogLevel.debug)
        assert caught.value.revision == "2026-07-28" and caught.value.feature == "logging/setLevel"
        with pytest.raises(mcp.FeatureNotInRevision):
            client.subscribe_resource("memo://a")
        with pytest.raises(mcp.FeatureNotInRevision):
            client.unsubscribe_resource("memo://a")
    assert modern.methods() == []
    old = legacy_server(mcp.MethodNotFound("x"))
    with mcp.Client(old) as client:
        client.set_logging_level(mcp.LogLevel.debug)
        client.subscribe_resource("memo://a")
        client.unsubscribe_resource("memo://a")
        client.ping()
        with pytest.raises(mcp.FeatureNotInRevision, match="agreed on 2025-11-25"):
            client.listen(mcp.SubscriptionFilter(tools_list_changed=True), lambda note: None)
        with pytest.raises(mcp.FeatureNotInRevision, match="Tasks"):
            client.request_json("tasks/get", {"taskId": "t"})
        with pytest.raises(mcp.InvalidMcpRequest):
            client.set_logging_level("debug")  # type: ignore[arg-type]
        with pytest.raises(mcp.InvalidMcpRequest):
            client.subscribe_resource("")
        found = client.discover()
    assert old.methods()[3:] == ["logging/setLevel", "resources/subscribe", "resources/unsubscribe", "ping"]
    assert old.sent[3]["params"] == {"level": "debug"}
    assert found.instructions == "be kind" and found.server_info == mcp.Implementation("old", "1.0")


def test_server_requests_are_answered_through_the_input_handler() -> None:
    def answer(request: mcp.InputRequest) -> mcp.InputResponse:
        if request.kind is mcp.InputKind.roots:
            return mcp.InputResponse.roots(["file:///w"])
        if request.kind is mcp.InputKind.sampling:
            return mcp.InputResponse.decline()  # the wrong family
        raise RuntimeError("the user closed the window")

    with mcp.Client(legacy_server(mcp.MethodNotFound("x")), input_handler=answer) as client:
        client.list_tools()
        roots = client._answer_server_request(JsonRpcRequest(5, "roots/list", None))
        assert roots == {"jsonrpc": "2.0", "id": 5, "result": {"roots": [{"uri": "file:///w"}]}}
        assert client._answer_server_request(JsonRpcRequest(6, "ping", None))["result"] == {}
        wrong = client._answer_server_request(JsonRpcRequest(7, "sampling/createMessage", {"messages": []}))
        assert wrong["error"]["code"] == -32603
        failed = client._answer_server_request(JsonRpcRequest(8, "elicitation/create", {"message": "name?"}))
        assert failed["error"] == {"code": -32603, "message": "the client could not answer this request"}
        malformed = client._answer_server_request(JsonRpcRequest(9, "elicitation/create", {}))
        assert malformed["error"]["code"] == -32602
        unknown = client._answer_server_request(JsonRpcRequest(10, "x/y", None))
        assert unknown["error"]["code"] == -32601
    with mcp.Client(legacy_server(mcp.MethodNotFound("x"))) as client:
        client.list_tools()
        assert client._answer_server_request(JsonRpcRequest(1, "roots/list", None))["error"]["code"] == -32601
    with mcp.Client(ScriptedPeer(lambda m, p: {"tools": []})) as client:  # 2026-07-28 servers send no requests
        client.list_tools()
        assert client._answer_server_request(JsonRpcRequest(1, "roots/list", None))["error"]["code"] == -32601


# ---------------------------------------------------------------------- the 2025 HTTP session


class OldHttpServer:
    """A scripted 2025-11-25 Streamable HTTP server with sessions."""

    def __init__(self, session_id: str = "s-1") -> None:
        self.session_ids = [session_id, "s-2"]
        self.live: set[str] = set()
        self.replies: list[dict[str, Any]] = []
        self.deleted: list[str] = []
        self.get_calls: list[Received] = []
        self.resume = False

    def __call__(self, request: Received) -> Reply:
        session = request.headers.get("mcp-session-id")
        if request.method == "DELETE":
            self.deleted.append(session or "")
            self.live.discard(session or "")
            return Reply(200)
        if request.method == "GET":
            self.get_calls.append(request)
            if request.headers.get("last-event-id") == "ev-1":
                answer = json.dumps({"jsonrpc": "2.0", "id": self.resumed_id, "result": {"tools": []}})
                return Reply(200, (("Content-Type", "text/event-stream"),),
                             pieces=(f"id: ev-2\ndata: {answer}\n\n".encode(),))
            return Reply(405)
        message = request.json()
        if "method" not in message:
            self.replies.append(message)
            return Reply(202)
        if message["method"] == "server/discover":
            return Reply.of_json({"jsonrpc": "2.0", "id": "server-error",
                                  "error": {"code": -32600, "message": "Bad Request: Missing session ID"}}, 400)
        if message["method"] == "initialize":
            new = self.session_ids.pop(0)
            self.live.add(new)
            return Reply.of_json({"jsonrpc": "2.0", "id": message["id"], "result": INIT_2025},
                                 headers=(("Mcp-Session-Id", new),))
        if session not in self.live:
            return Reply(404)
        if "id" not in message:
            return Reply(202)
        if message["method"] == "tools/call":  # a server request on the response stream first
            ask = json.dumps({"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list"})
            done = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"content": []}})
            return Reply(200, (("Content-Type", "text/event-stream"),),
                         pieces=(f"data: {ask}\n\n".encode(), f"data: {done}\n\n".encode()))
        if self.resume:
            self.resumed_id = message["id"]
            return Reply(200, (("Content-Type", "text/event-stream"),), pieces=(b"id: ev-1\n: primed\n\n",))
        return Reply.of_json({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": []}})


def test_http_session_ids_renewal_and_delete() -> None:
    old = OldHttpServer()
    with LoopbackServer(old) as server:
        transport = mcp.StreamableHttpTransport(server.url + "/mcp", url_policy=LOCAL)
        with mcp.Client(transport, default_timeout_ms=5_000) as client:
            client.list_tools()
            assert transport.session_id == "s-1" and client.protocol_version == "2025-11-25"
            old.live.clear()  # the server forgets the session
            client.list_tools()  # 404 -> initialize again -> one retry
            assert transport.session_id == "s-2"
        assert old.deleted == ["s-2"] and transport.session_id is None
    posts = [r for r in server.requests if r.method == "POST"]
    methods = [r.json().get("method") for r in posts]
    assert methods == ["server/discover", "initialize", "notifications/initialized", "tools/list", "tools/list",
                       "initialize", "notifications/initialized", "tools/list"]
    assert "mcp-session-id" not in posts[1].headers  # a new session starts without one
    assert posts[3].headers["mcp-session-id"] == "s-1" and posts[3].headers["mcp-protocol-version"] == "2025-11-25"
    assert posts[7].headers["mcp-session-id"] == "s-2"
    assert "_meta" not in posts[3].json()["params"]
    assert len(old.get_calls) == 2  # one GET stream per handshake; 405 means none is offered


@pytest.mark.parametrize("length, accepted", [(256, True), (257, False)])
def test_a_session_id_is_bounded_to_256_visible_characters(length: int, accepted: bool) -> None:
    old = OldHttpServer("x" * length)
    with LoopbackServer(old) as server, mcp.Client(
            mcp.StreamableHttpTransport(server.url + "/mcp", url_policy=LOCAL), default_timeout_ms=5_000) as client:
        if accepted:
            client.list_tools()
        else:
            with pytest.raises(mcp.InvalidMcpMessage, match="Mcp-Session-Id"):
                client.list_tools()


def test_http_server_requests_on_the_response_stream_are_answered_by_post() -> None:
    old = OldHttpServer()
    with LoopbackServer(old) as server, mcp.Client(
            mcp.StreamableHttpTransport(server.url + "/mcp", url_policy=LOCAL), default_timeout_ms=5_000,
            input_handler=lambda request: mcp.InputResponse.roots(["file:///r"])) as client:
        client.call_tool("anything", {})
        end = time.monotonic() + 5
        while not old.replies and time.monotonic() < end:
            time.sleep(0.01)
    assert old.replies == [{"jsonrpc": "2.0", "id": "srv-1", "result": {"roots": [{"uri": "file:///r"}]}}]
    reply_post = next(r for r in server.requests if r.method == "POST" and "method" not in r.json())
    assert reply_post.headers["mcp-session-id"] == "s-1"


def test_a_broken_2025_response_stream_resumes_with_last_event_id() -> None:
    old = OldHttpServer()
    with LoopbackServer(old) as server, mcp.Client(
            mcp.StreamableHttpTransport(server.url + "/mcp", url_policy=LOCAL), default_timeout_ms=5_000) as client:
        client.list_tools()
        old.resume = True
        assert client.list_tools().items == ()
    resumed = [r for r in old.get_calls if r.headers.get("last-event-id") == "ev-1"]
    assert len(resumed) == 1 and resumed[0].headers["mcp-session-id"] == "s-1"


class StreamingOldServer(OldHttpServer):
    """A 2025 server whose GET stream carries its own messages, then breaks once."""

    def __init__(self) -> None:
        super().__init__()
        self.streams = 0

    def __call__(self, request: Received) -> Reply:
        if request.method != "GET":
            return super().__call__(request)
        self.get_calls.append(request)
        self.streams += 1
        if self.streams > 1:
            return Reply(405)  # the reconnect (with Last-Event-ID) finds no stream: the listener ends
        note = json.dumps({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        ask = json.dumps({"jsonrpc": "2.0", "id": "srv-9", "method": "ping"})
        pieces = (b"event: other\ndata: {}\n\n", b"data: not json\n\n", f"id: g-1\ndata: {note}\n\n".encode(),
                  f"data: {ask}\n\n".encode())
        return Reply(200, (("Content-Type", "text/event-stream"),), pieces=pieces)


def test_the_get_stream_delivers_notifications_and_requests_then_reconnects_once() -> None:
    old = StreamingOldServer()
    seen: list[mcp.Notification] = []
    with LoopbackServer(old) as server, mcp.Client(
            mcp.StreamableHttpTransport(server.url + "/mcp", url_policy=LOCAL), default_timeout_ms=5_000,
            on_notification=seen.append) as client:
        client.list_tools()
        end = time.monotonic() + 5
        while (not old.replies or len(old.get_calls) < 2) and time.monotonic() < end:
            time.sleep(0.01)
    assert [note.method for note in seen] == ["notifications/tools/list_changed"]
    assert seen[0].subscription_id == "session"  # a 2025 session's own change notification
    assert old.replies == [{"jsonrpc": "2.0", "id": "srv-9", "result": {}}]
    assert old.get_calls[1].headers["last-event-id"] == "g-1"


def test_server_request_replies_survive_handler_bugs_and_refusals() -> None:
    old = OldHttpServer()
    with LoopbackServer(old) as server:
        transport = mcp.StreamableHttpTransport(server.url + "/mcp", url_policy=LOCAL)
        request = JsonRpcRequest("srv-1", "roots/list", None)
        transport._answer(request, "2025-11-25")  # no handler: -32601, POSTed without a session
        transport.set_request_handler(lambda message: 1 / 0)  # type: ignore[arg-type,return-value]
        transport._answer(request, "2025-11-25")
        transport.close()
    assert [reply["error"]["code"] for reply in old.replies] == [-32601, -32603]


def test_closing_after_the_server_is_gone_still_closes() -> None:
    old = OldHttpServer()
    server = LoopbackServer(old)
    with server:
        transport = mcp.StreamableHttpTransport(server.url + "/mcp", url_policy=LOCAL)
        client = mcp.Client(transport, default_timeout_ms=5_000)
        client.list_tools()
    client.close()  # the DELETE fails to connect; close() still finishes
    assert transport.session_id is None


def test_an_initialize_answer_without_a_session_id_means_no_session() -> None:
    class NoSessions(OldHttpServer):
        def __call__(self, request: Received) -> Reply:
            if request.method == "POST" and request.json().get("method") == "initialize":
                return Reply.of_json({"jsonrpc": "2.0", "id": request.json()["id"], "result": INIT_2025})
            if request.method == "POST" and "id" not in request.json():
                return Reply(202)
            if request.method == "POST" and request.json().get("method") == "tools/list":
                return Reply.of_json({"jsonrpc": "2.0", "id": request.json()["id"], "result": {"tools": []}})
            return super().__call__(request)

    with LoopbackServer(NoSessions()) as server, mcp.Client(
            mcp.StreamableHttpTransport(server.url + "/mcp", url_policy=LOCAL), default_timeout_ms=5_000) as client:
        assert client.list_tools().items == ()
        assert client.transport.session_id is None  # type: ignore[attr-defined]


def test_an_empty_priming_event_on_a_2025_stream_is_skipped() -> None:
    class Priming(OldHttpServer):
        def __call__(self, request: Received) -> Reply:
            if request.method == "POST" and request.json().get("method") == "initialize":
                answer = json.dumps({"jsonrpc": "2.0", "id": request.json()["id"], "result": INIT_2025})
                self.live.add("s-1")
                return Reply(200, (("Content-Type", "text/event-stream"), ("Mcp-Session-Id", "s-1")),
                             pieces=(b"id: p-0\ndata: \n\n", f"id: p-1\ndata: {answer}\n\n".encode()))
            return super().__call__(request)

    with LoopbackServer(Priming()) as server, mcp.Client(
            mcp.StreamableHttpTransport(server.url + "/mcp", url_policy=LOCAL), default_timeout_ms=5_000) as client:
        assert client.list_tools().items == () and client.protocol_version == "2025-11-25"


# ---------------------------------------------------------------------- edges of the rules


def test_revision_rules_at_their_edges() -> None:
    from zigai.mcp.wire import revisions

    assert revisions.means_legacy_server(mcp.InvalidMcpMessage("not a reply"), False)
    assert not revisions.means_legacy_server(mcp.McpHttpStatusError("boom", status=500), False)
    assert revisions.means_legacy_server(mcp.McpHttpStatusError("gone", status=405), False)
    assert not revisions.means_legacy_server(mcp.McpRequestTimedOut("slow"), False)
    assert revisions.means_legacy_server(mcp.McpRequestTimedOut("slow"), True)
    with pytest.raises(mcp.InvalidMcpMessage, match="protocolVersion"):
        revisions.agreed_version({"protocolVersion": 20251125}, revisions.CLIENT_VERSIONS)
    with pytest.raises(mcp.NoCommonProtocolVersion):  # a 2026 answer to initialize is not a session
        revisions.agreed_version({"protocolVersion": "2026-07-28"}, revisions.CLIENT_VERSIONS)


@pytest.mark.parametrize("discovered, offered", [
    ({"odd": True}, "2025-11-25"),  # a server that answers any method: not a discover result
    ({"supportedVersions": ["2025-06-18"], "capabilities": {}}, "2025-06-18"),
])
def test_a_discover_result_without_a_shared_modern_revision_leads_to_initialize(
        discovered: dict[str, Any], offered: str) -> None:
    def reply(method: str, params: dict[str, Any]) -> Any:
        if method == "initialize":
            return {**INIT_2025, "protocolVersion": params["protocolVersion"]}
        return discovered if method == "server/discover" else {"tools": []}

    peer = ScriptedPeer(reply, answer_probe=False)
    with mcp.Client(peer) as client:
        client.list_tools()
        assert client.protocol_version == offered and client.legacy
    assert peer.methods()[:2] == ["server/discover", "initialize"]
    future = ScriptedPeer(lambda method, params: {"supportedVersions": ["2027-01-01"], "capabilities": {}},
                          answer_probe=False)
    with mcp.Client(future) as client, pytest.raises(mcp.NoCommonProtocolVersion):
        client.list_tools()


def test_legacy_discover_without_server_info_and_session_notifications() -> None:
    from zigai.mcp.client.legacy import session_notification
    from zigai.mcp.wire.jsonrpc import META_SUBSCRIPTION_ID, JsonRpcNotification

    def reply(method: str, params: dict[str, Any]) -> Any:
        if method == "server/discover":
            return mcp.MethodNotFound("no")
        return {"protocolVersion": "2025-06-18", "capabilities": {}} if method == "initialize" else {}

    with mcp.Client(ScriptedPeer(reply, answer_probe=False)) as client:
        client.ping()
        found = client.discover()
    assert found.server_info is None and found.instructions is None
    plain = JsonRpcNotification("notifications/message", {"level": "info", "data": 1})
    assert session_notification(plain) is plain
    tagged = JsonRpcNotification("notifications/resources/updated",
                                 {"uri": "a://b", "_meta": {META_SUBSCRIPTION_ID: 7}})
    assert session_notification(tagged) is tagged
    untagged = session_notification(JsonRpcNotification("notifications/resources/updated", {"uri": "a://b"}))
    assert untagged.params == {"uri": "a://b", "_meta": {META_SUBSCRIPTION_ID: "session"}}


def test_a_handler_returning_something_else_is_a_client_error() -> None:
    with mcp.Client(legacy_server(mcp.MethodNotFound("x")),
                    input_handler=lambda request: "yes") as client:  # type: ignore[arg-type,return-value]
        client.list_tools()
        reply = client._answer_server_request(JsonRpcRequest(3, "roots/list", None))
    assert reply["error"]["code"] == -32603


def test_a_stdio_server_request_gets_the_handlers_reply_or_an_internal_error(tmp_path: Any) -> None:
    import sys

    script = tmp_path / "asks.py"
    script.write_text(
        "import json, sys\n"
        "print(json.dumps({'jsonrpc': '2.0', 'id': 'srv-1', 'method': 'roots/list'}), flush=True)\n"
        "reply = json.loads(sys.stdin.readline())\n"
        "print(json.dumps({'jsonrpc': '2.0', 'method': 'notifications/message',"
        " 'params': {'level': 'info', 'data': reply}}), flush=True)\n"
        "sys.stdin.read()\n")
    for handler, code in ((None, -32601), (lambda request: 1 / 0, -32603)):
        echoed: list[Any] = []
        options = mcp.StdioOptions(on_unrouted=lambda note, into=echoed: into.append(note.params))
        with mcp.StdioTransport([sys.executable, str(script)], options) as transport:
            transport.set_request_handler(handler)  # type: ignore[arg-type]
            end = time.monotonic() + 10
            while not echoed and time.monotonic() < end:
                time.sleep(0.01)
        assert echoed and echoed[0]["data"]["id"] == "srv-1" and echoed[0]["data"]["error"]["code"] == code


def test_a_resumption_the_server_refuses_ends_the_request() -> None:
    class Refusing(OldHttpServer):
        def __call__(self, request: Received) -> Reply:
            if request.method == "GET":
                self.get_calls.append(request)
                return Reply(405)
            return super().__call__(request)

    old = Refusing()
    with LoopbackServer(old) as server, mcp.Client(
            mcp.StreamableHttpTransport(server.url + "/mcp", url_policy=LOCAL), default_timeout_ms=5_000) as client:
        client.list_tools()
        old.resume = True
        with pytest.raises(mcp.McpStreamEnded):
            client.list_tools()


def test_a_refused_reply_and_an_unreachable_delete_are_only_logged(caplog: pytest.LogCaptureFixture) -> None:
    class RefusesReplies(OldHttpServer):
        def __call__(self, request: Received) -> Reply:
            if request.method == "POST" and "method" not in request.json():
                return Reply(500)
            return super().__call__(request)

    with LoopbackServer(RefusesReplies()) as server:
        transport = mcp.StreamableHttpTransport(server.url + "/mcp", url_policy=LOCAL)
        transport._answer(JsonRpcRequest("srv-1", "ping", None), "2025-11-25")
        transport.close()
    assert "answered HTTP 500" in caplog.text
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    closed_port = probe.getsockname()[1]
    probe.close()
    gone = mcp.StreamableHttpTransport(f"http://127.0.0.1:{closed_port}/mcp", url_policy=LOCAL)
    gone._session_id = "s-9"
    gone.close()  # DELETE cannot connect: logged, close() still finishes
    assert gone.session_id is None


def test_the_sse_parser_keeps_the_last_id_and_retry_within_bounds() -> None:
    from zigai.mcp.wire.sse import SseParser

    parser = SseParser(1024)
    parser.feed(b"id: " + b"a" * 256 + b"\nretry: 1500\ndata: {}\n\n")
    assert parser.last_event_id == "a" * 256 and parser.retry_ms == 1500
    parser.feed(b"id: " + b"b" * 257 + b"\nid: x\0y\nretry: soon\ndata: {}\n\n")  # refused: kept as before
    assert parser.last_event_id == "a" * 256 and parser.retry_ms == 1500
    parser.feed(b"retry: 999999999\n\n")
    assert parser.retry_ms == 60_000


def test_a_resumption_waits_for_the_retry_hint() -> None:
    class Hinting(OldHttpServer):
        def __call__(self, request: Received) -> Reply:
            if self.resume and request.method == "POST" and request.json().get("method") == "tools/list":
                self.resumed_id = request.json()["id"]
                self.sent_at = time.monotonic()
                return Reply(200, (("Content-Type", "text/event-stream"),), pieces=(b"id: ev-1\nretry: 300\n\n",))
            if request.method == "GET" and request.headers.get("last-event-id") == "ev-1":
                self.resumed_at = time.monotonic()
            return super().__call__(request)

    old = Hinting()
    with LoopbackServer(old) as server, mcp.Client(
            mcp.StreamableHttpTransport(server.url + "/mcp", url_policy=LOCAL), default_timeout_ms=5_000) as client:
        client.list_tools()
        old.resume = True
        assert client.list_tools().items == ()
    assert old.resumed_at - old.sent_at >= 0.3
