"""A zigai server talking to a 2025-session client unasked: its requests, the GET stream, subscriptions.

Raw HTTP over real loopback sockets and serve_stdio over real pipes, so every wire rule is
visible: an ``ask()`` in a session goes out on the POST's SSE stream (or the stdio pipe), the
answer POSTed back with the session id reaches the handler; the session's one GET stream carries
list changes and the updates of subscribed resources and ends on DELETE and expiry; every wait
and queue is bounded.  The mcp 1.30.0 SDK client side is in tests/test_mcp_interop_legacy.py.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import pytest

from zigai import mcp
from zigai.control import CancellationToken, RunControl
from zigai.mcp.server import outbound
from zigai.mcp.server.http import _PUSH_BACKLOG, _PushStream
from zigai.mcp.server.outbound import ClientCalls, Pushes
from zigai.mcp.wire.jsonrpc import JsonRpcError, JsonRpcResponse

pytestmark = pytest.mark.timeout(60)
FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def asking_server(**options: Any) -> mcp.Server:
    server = mcp.Server("pusher", "1", **options)

    def ask(args: dict[str, Any], request: mcp.ServerRequest) -> str:
        answer = request.ask(mcp.InputRequest("who", mcp.InputKind.elicitation, {"message": "Name?",
                                                                                 "requestedSchema": FORM}))
        return f"hello {answer['who']['content']['name']}"

    server.add_tool(mcp.ToolInfo("ask", {"type": "object"}), ask)
    server.add_resource("memo://a", lambda uri, request: "a", name="a")
    return server


class Raw:
    """A raw HTTP peer of one served zigai server (one connection per exchange)."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname or "", parts.port or 80, parts.path
        self.session: str | None = None

    def open(self, method: str, body: dict[str, Any] | None = None, *, accept: str = "application/json, text/event-stream",
             session: str | None = None) -> http.client.HTTPResponse:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=20)
        headers = {"Accept": accept, "Content-Type": "application/json"}
        named = session if session is not None else self.session
        if named:
            headers["Mcp-Session-Id"] = named
        data = None if body is None else json.dumps(body).encode()
        connection.request(method, self.path, body=data, headers=headers)
        return connection.getresponse()

    def post(self, body: dict[str, Any], **kwargs: Any) -> tuple[int, Any]:
        response = self.open("POST", body, **kwargs)
        raw = response.read()
        return response.status, json.loads(raw) if raw else None

    def initialize(self, capabilities: dict[str, Any]) -> str:
        response = self.open("POST", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "raw", "version": "1"}}})
        assert response.status == 200, response.read()
        response.read()
        self.session = response.headers["Mcp-Session-Id"]
        assert self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})[0] == 202
        return self.session


def events(response: http.client.HTTPResponse) -> Iterator[dict[str, Any] | str]:
    """The messages of an SSE body (and ``"keepalive"`` for a comment), until it ends."""
    data: list[str] = []
    while True:
        line = response.fp.readline()
        if not line:
            return
        text = line.decode().rstrip("\r\n")
        if text.startswith(":"):
            yield "keepalive"
        elif text.startswith("data: "):
            data.append(text[6:])
        elif not text and data:
            yield json.loads("\n".join(data))
            data = []


@contextmanager
def served(server: mcp.Server, policy: mcp.DeploymentPolicy | None = None) -> Iterator[Raw]:
    with mcp.serve_http(server, policy=policy) as handle:
        yield Raw(handle.url)


# ----------------------------------------------------------------------------- requests to the client


def test_an_ask_goes_out_on_the_post_stream_and_the_answer_posted_back_reaches_the_handler() -> None:
    with served(asking_server()) as raw:
        raw.initialize({"elicitation": {}})
        call = raw.open("POST", {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                                 "params": {"name": "ask", "arguments": {}}})
        assert call.getheader("Content-Type") == "text/event-stream"
        stream = events(call)
        asked = next(stream)
        assert isinstance(asked, dict) and asked["method"] == "elicitation/create"
        assert asked["params"] == {"message": "Name?", "requestedSchema": FORM}
        # an answer nobody waits for is accepted and dropped; without a session it is refused
        assert raw.post({"jsonrpc": "2.0", "id": 999, "result": {}})[0] == 202
        assert raw.post({"jsonrpc": "2.0", "id": asked["id"], "result": {}}, session="")[0] == 400
        answer = {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"name": "Ada"}}}
        assert raw.post(answer)[0] == 202
        final = next(stream)
        assert isinstance(final, dict) and final["id"] == 7
        assert final["result"]["content"][0]["text"] == "hello Ada"


def test_a_client_refusal_fails_the_call_with_the_clients_code() -> None:
    with served(asking_server()) as raw:
        raw.initialize({"elicitation": {}})
        stream = events(raw.open("POST", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                          "params": {"name": "ask", "arguments": {}}}))
        asked = next(stream)
        assert isinstance(asked, dict)
        raw.post({"jsonrpc": "2.0", "id": asked["id"], "error": {"code": -1, "message": "the user closed the form"}})
        final = next(stream)
        assert isinstance(final, dict)
        assert final["error"]["code"] == -1 and "the user closed the form" in final["error"]["message"]


def test_an_unanswered_ask_ends_at_the_request_deadline_and_is_cancelled_at_the_client() -> None:
    with served(asking_server(request_timeout_ms=300)) as raw:
        raw.initialize({"elicitation": {}})
        started = time.monotonic()
        seen = list(events(raw.open("POST", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                             "params": {"name": "ask", "arguments": {}}})))
        assert time.monotonic() - started < 15
    asked, cancelled, final = seen
    assert isinstance(asked, dict) and isinstance(cancelled, dict) and isinstance(final, dict)
    assert cancelled["method"] == "notifications/cancelled" and cancelled["params"]["requestId"] == asked["id"]
    assert final["error"]["code"] == -32603 and "did not answer elicitation/create" in final["error"]["message"]


def test_an_ask_for_a_capability_the_session_did_not_declare_sends_nothing() -> None:
    with served(asking_server()) as raw:
        raw.initialize({})  # no elicitation
        status, reply = raw.post({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                  "params": {"name": "ask", "arguments": {}}})
        assert reply["error"]["code"] == -32021 and "elicitation" in reply["error"]["message"]


def test_over_stdio_the_ask_and_the_pushes_use_the_pipe_and_answers_come_back_on_the_input() -> None:
    server = asking_server()
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    with open(in_read, "rb") as source, open(out_write, "wb") as sink, open(in_write, "wb") as client, \
            open(out_read, "rb") as replies:
        runner = threading.Thread(target=mcp.serve_stdio, args=(server, source, sink), daemon=True)
        runner.start()

        def send(message: dict[str, Any]) -> None:
            client.write(json.dumps(message).encode() + b"\n")
            client.flush()

        send({"jsonrpc": "2.0", "id": 5, "result": {}})  # an answer before any session: dropped, nothing written
        send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "p", "version": "1"}}})
        assert json.loads(replies.readline())["result"]["protocolVersion"] == "2025-06-18"
        send({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": "memo://a"}})
        assert json.loads(replies.readline()) == {"jsonrpc": "2.0", "id": 1, "result": {}}
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask", "arguments": {}}})
        asked = json.loads(replies.readline())
        assert asked["method"] == "elicitation/create"
        server.notify_resource_updated("memo://b")  # not subscribed: not sent
        server.notify_resource_updated("memo://a")
        assert json.loads(replies.readline())["params"] == {"uri": "memo://a"}
        send({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"name": "Zig"}}})
        assert json.loads(replies.readline())["result"]["content"][0]["text"] == "hello Zig"
        # a call the client cancels while its ask waits gets nothing more, not even the ask's cancel notice
        send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "ask", "arguments": {}}})
        assert json.loads(replies.readline())["method"] == "elicitation/create"
        send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}})
        time.sleep(0.3)  # the ask notices the cancel within its 50 ms poll
        send({"jsonrpc": "2.0", "id": 4, "method": "ping"})
        assert json.loads(replies.readline()) == {"jsonrpc": "2.0", "id": 4, "result": {}}
        client.close()
        runner.join(10)
        assert not runner.is_alive()


# ----------------------------------------------------------------------------- the GET stream


def test_the_get_stream_carries_list_changes_and_only_subscribed_updates_one_per_session() -> None:
    server = asking_server()
    with served(server) as raw:
        assert raw.open("GET", session="nobody").status == 404
        raw.initialize({})
        assert raw.open("GET", accept="application/json").status == 406
        stream = raw.open("GET", accept="text/event-stream")
        assert stream.status == 200 and stream.getheader("Content-Type") == "text/event-stream"
        second = raw.open("GET", accept="text/event-stream")
        assert second.status == 409 and "one is served per session" in second.read().decode()
        assert raw.post({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": "memo://a"}}) \
            == (200, {"jsonrpc": "2.0", "id": 1, "result": {}})
        assert raw.post({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {}})[1]["error"][
            "code"] == -32602
        pushed = events(stream)
        server.notify_resource_updated("memo://b")  # not subscribed: skipped
        server.notify_tools_changed()
        server.notify_resource_updated("memo://a")
        assert next(pushed) == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}}
        assert next(pushed) == {"jsonrpc": "2.0", "method": "notifications/resources/updated",
                                "params": {"uri": "memo://a"}}
        raw.post({"jsonrpc": "2.0", "id": 3, "method": "resources/unsubscribe", "params": {"uri": "memo://a"}})
        server.notify_resource_updated("memo://a")
        server.notify_prompts_changed()
        assert next(pushed)["method"] == "notifications/prompts/list_changed"  # type: ignore[index]
        # DELETE ends the session and its stream
        assert raw.open("DELETE").status == 200
        assert list(pushed) == []
        assert raw.open("GET", accept="text/event-stream").status == 404


def test_closing_the_get_stream_frees_the_sessions_slot_and_keepalives_flow() -> None:
    policy = mcp.DeploymentPolicy(keepalive_s=0.05)
    with served(asking_server(), policy) as raw:
        raw.initialize({})
        first = raw.open("GET", accept="text/event-stream")
        assert next(events(first)) == "keepalive"
        first.close()
        end = time.monotonic() + 10
        while (again := raw.open("GET", accept="text/event-stream")).status == 409 and time.monotonic() < end:
            again.close()
            time.sleep(0.1)
        assert again.status == 200
        again.close()


def test_an_expiring_session_ends_its_get_stream() -> None:
    with served(asking_server(session_idle_s=0.5)) as raw:
        raw.initialize({})
        started = time.monotonic()
        assert [item for item in events(raw.open("GET", accept="text/event-stream")) if item != "keepalive"] == []
        assert time.monotonic() - started < 10
        assert raw.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})[0] == 404


def test_a_get_stream_holds_at_most_its_backlog_for_a_slow_reader(caplog: pytest.LogCaptureFixture) -> None:
    server = asking_server()
    session = server.sessions.open("2025-11-25", mcp.ClientCapabilities(), None)
    stream = _PushStream(server, session, 15.0, lambda: False)
    assert session.pushes.attach(stream.put)
    with caplog.at_level(logging.WARNING, logger="zigai.mcp.server_http"):
        for _ in range(_PUSH_BACKLOG):
            server.notify_tools_changed()
        assert not caplog.records
        server.notify_tools_changed()
    assert "not being read" in caplog.text
    assert sum(1 for _ in zip(range(_PUSH_BACKLOG), stream, strict=False)) == _PUSH_BACKLOG
    stream.close()  # frees the slot even though the body was not read to its end
    assert not session.pushes.attached


# ----------------------------------------------------------------------------- bounds of the outbound side


def test_pending_requests_to_one_client_are_bounded_at_exactly_the_limit() -> None:
    calls = ClientCalls()
    sent: list[dict[str, Any]] = []
    failures: list[str] = []

    def wait() -> None:
        try:
            calls.call(sent.append, "roots/list", {}, RunControl())
        except mcp.InternalError as exc:
            failures.append(str(exc))

    threads = [threading.Thread(target=wait) for _ in range(outbound.MAX_PENDING)]
    for thread in threads:
        thread.start()
    end = time.monotonic() + 10
    while len(sent) < outbound.MAX_PENDING and time.monotonic() < end:
        time.sleep(0.01)
    assert len(sent) == outbound.MAX_PENDING
    with pytest.raises(mcp.InternalError, match="server busy"):
        calls.call(sent.append, "roots/list", {}, RunControl())
    calls.ended.set()  # the session ends: every wait ends, each request is cancelled at the client
    for thread in threads:
        thread.join(10)
    assert len(failures) == outbound.MAX_PENDING and all("session ended" in text for text in failures)
    assert sum(1 for message in sent if message.get("method") == "notifications/cancelled") == outbound.MAX_PENDING


def test_a_wait_ends_at_its_bound_or_on_cancel_and_late_answers_are_dropped() -> None:
    calls = ClientCalls()
    sent: list[dict[str, Any]] = []
    with pytest.raises(mcp.InternalError, match="no answer in time"):
        calls.call(sent.append, "roots/list", {}, RunControl(), wait_s=0.1)
    assert not calls.resolve(JsonRpcResponse(sent[0]["id"], {}))  # too late: dropped
    assert not calls.resolve(JsonRpcError("not-ours", -1, "x"))
    token = CancellationToken()
    token.cancel("stop")
    with pytest.raises(mcp.InternalError, match="was cancelled"):
        calls.call(sent.append, "roots/list", {}, RunControl(token=token))


def test_subscriptions_per_session_are_bounded_at_exactly_the_limit() -> None:
    pushes = Pushes()
    for index in range(outbound.MAX_SUBSCRIPTIONS):
        pushes.subscribe(f"memo://{index}")
    pushes.subscribe("memo://0")  # already subscribed: no new room needed
    with pytest.raises(mcp.InvalidParams, match="unsubscribe from one first"):
        pushes.subscribe("memo://one-more")
    pushes.unsubscribe("memo://0")
    pushes.subscribe("memo://one-more")
    with pytest.raises(mcp.InvalidParams):
        pushes.unsubscribe(3)
    assert not pushes.push("notifications/tools/list_changed", {})  # no channel attached


def test_closing_the_server_ends_open_get_streams_without_waiting_out_the_grace() -> None:
    from zigai.http_server import ServerLimits

    server = asking_server()
    handle = mcp.serve_http(server, limits=ServerLimits(close_grace_s=30))
    raw = Raw(handle.url)
    raw.initialize({})
    stream = raw.open("GET", accept="text/event-stream")
    started = time.monotonic()
    handle.close()
    assert time.monotonic() - started < 15  # the stream ended itself; the 30 s grace was not waited out
    assert list(events(stream)) == []


def test_the_get_stream_is_behind_the_bearer_policy_before_any_session_lookup() -> None:
    from zigai.mcp.auth.server import AccessToken, BearerAuthPolicy
    from zigai.mcp.server.http import handle_http

    resource = "http://127.0.0.1:8123/mcp"
    policy = BearerAuthPolicy(resource, ["http://127.0.0.1:8124"], lambda token: AccessToken(
        scopes=(), audience=(resource,)) if token == "good" else None)
    server = asking_server()
    session = server.sessions.open("2025-11-25", mcp.ClientCapabilities(), None)

    def get(session_id: str, *extra: tuple[str, str]) -> Any:
        headers = [("Host", "127.0.0.1:8123"), ("Accept", "text/event-stream"), ("Mcp-Session-Id", session_id),
                   *extra]
        return handle_http(server, None, method="GET", headers=headers, read_body=lambda n: b"", tls=False,
                           auth=policy, path="/mcp")

    assert get("unknown").status == 401  # no token: refused before the session table is asked
    assert get(session.id, ("Authorization", "Bearer bad")).status == 401
    assert get("unknown", ("Authorization", "Bearer good")).status == 404
    opened = get(session.id, ("Authorization", "Bearer good"))
    assert opened.status == 200 and session.pushes.attached
    opened.body.close()
    assert not session.pushes.attached


def test_a_wsgi_container_serves_the_get_stream_and_its_close_frees_the_slot() -> None:
    import io

    server = asking_server()
    session = server.sessions.open("2025-11-25", mcp.ClientCapabilities(), None)
    started: list[str] = []
    environ = {"REQUEST_METHOD": "GET", "HTTP_HOST": "127.0.0.1", "HTTP_ACCEPT": "text/event-stream",
               "HTTP_MCP_SESSION_ID": session.id, "wsgi.input": io.BytesIO(), "wsgi.url_scheme": "http"}
    body = mcp.wsgi_app(server)(environ, lambda status, headers: started.append(status))
    assert started == ["200 OK"]
    server.notify_tools_changed()
    assert next(iter(body)).startswith(b"event: message\ndata: ")
    body.close()  # type: ignore[attr-defined]  # what a WSGI server does when the client goes
    assert not session.pushes.attached
