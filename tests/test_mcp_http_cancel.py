"""Cancellation over MCP HTTP (issue 33, item 4), through real loopback sockets.

The server notices a client that closed its connection within about a second -- while the
answer is still pending and while it streams -- and cancels the handler's token; a handler
that fails because it was cancelled logs no ERROR.  The client announces a request it gave up
(cancel or deadline) with ``notifications/cancelled``, as it does over stdio.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from zigai import mcp
from zigai.control import CancellationToken
from zigai.http_server import HttpServer, Request, Response
from zigai.security import UrlPolicy

ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
NOTICE_BOUND_S = 5.0  # nominally 0.25 s; generous for a loaded machine, far below the old 15 s


class Blocker:
    """A tool handler that runs until its request is cancelled, then fails as cancelled code does."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.cancelled_at: float | None = None
        self.finished = threading.Event()

    def __call__(self, arguments: dict[str, Any], request: Any) -> str:
        if arguments.get("progress"):
            request.progress(0, 1, "started")
        self.started.set()
        end = time.monotonic() + 30
        try:
            while not request.control.cancelled and time.monotonic() < end:
                time.sleep(0.01)
            if request.control.cancelled:
                self.cancelled_at = time.monotonic()
                raise RuntimeError("stopped: the request was cancelled")
            return "never cancelled"
        finally:
            self.finished.set()


@contextmanager
def _served(blocker: Blocker) -> Iterator[mcp.HttpServerHandle]:
    server = mcp.Server("s", "1")
    server.add_tool(mcp.ToolInfo("block", {"type": "object"}), blocker)
    with mcp.serve_http(server) as running:
        yield running


def _call(progress: bool) -> bytes:
    meta = {**ENVELOPE, **({"progressToken": "p"} if progress else {})}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "block", "arguments": {"progress": progress}, "_meta": meta}}).encode()
    return (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
            b"Mcp-Method: tools/call\r\nMcp-Name: block\r\nContent-Length: %d\r\n\r\n" % len(body) + body)


@pytest.mark.parametrize("streaming", [False, True], ids=["answer-pending", "answer-streaming"])
def test_a_client_that_closes_its_connection_cancels_the_handler_promptly(
        streaming: bool, caplog: pytest.LogCaptureFixture) -> None:
    blocker = Blocker()
    with _served(blocker) as running, caplog.at_level(logging.ERROR, logger="zigai"):
        sock = socket.create_connection(("127.0.0.1", running.httpd.port), timeout=10)
        sock.sendall(_call(progress=streaming))
        assert blocker.started.wait(10)
        if streaming:
            seen = b""
            while b"event: message" not in seen:
                chunk = sock.recv(4096)
                assert chunk, f"the server closed the stream early: {seen!r}"
                seen += chunk
            assert b"text/event-stream" in seen
        closed_at = time.monotonic()
        sock.close()
        assert blocker.finished.wait(NOTICE_BOUND_S + 5)
    assert blocker.cancelled_at is not None, "the handler ran to its end: the closed connection went unnoticed"
    assert blocker.cancelled_at - closed_at < NOTICE_BOUND_S
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []  # cancelled is not a failure


def test_a_failing_handler_that_was_not_cancelled_is_still_logged(caplog: pytest.LogCaptureFixture) -> None:
    def broken(arguments: dict[str, Any], request: Any) -> str:
        raise RuntimeError("a real bug")

    server = mcp.Server("s", "1")
    server.add_tool(mcp.ToolInfo("broken", {"type": "object"}), broken)
    with mcp.serve_http(server) as running, caplog.at_level(logging.ERROR, logger="zigai"), \
            mcp.Client(mcp.StreamableHttpTransport(running.url, url_policy=UrlPolicy.local_development())) as client:
        assert client.call_tool("broken", {}).is_error
    assert "MCP tool 'broken' failed" in caplog.text


# ----------------------------------------------------------------------------- the client side


@contextmanager
def _recording_server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    notices: list[dict[str, Any]] = []

    def handle(request: Request) -> Response:
        message = json.loads(request.read_body())
        if "id" not in message:
            notices.append(message)
            return Response(202)
        end = time.monotonic() + 20
        while not request.client_gone() and time.monotonic() < end:
            time.sleep(0.01)
        return Response(200, [("Content-Type", "application/json")],
                        json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}}).encode())

    with HttpServer(handle) as server:
        yield f"http://127.0.0.1:{server.port}/mcp", notices


def _wait_for(notices: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    end = time.monotonic() + 10
    while len(notices) < count and time.monotonic() < end:
        time.sleep(0.01)
    return notices


def test_the_client_announces_a_request_given_up_at_its_deadline_or_cancelled() -> None:
    # pinned: this server only ever answers a request when its client gives up, a negotiation probe too
    with _recording_server() as (url, notices), \
            mcp.Client(mcp.StreamableHttpTransport(url, url_policy=UrlPolicy.local_development()),
                       protocol_version=mcp.PROTOCOL_VERSION) as client:
        with pytest.raises(mcp.McpRequestTimedOut):
            client.call_tool("slow", {}, options=mcp.RequestOptions(timeout_ms=200, request_id="late"))
        token = CancellationToken()
        threading.Timer(0.2, token.cancel).start()
        with pytest.raises(mcp.McpRequestCancelled):
            client.call_tool("slow", {}, options=mcp.RequestOptions(cancel=token, request_id="stopped"))
        got = _wait_for(notices, 2)
    by_id = {n["params"]["requestId"]: n for n in got}  # each notice has its own thread: any order
    assert sorted(by_id) == ["late", "stopped"] and {n["method"] for n in got} == {"notifications/cancelled"}
    assert "timed out" in by_id["late"]["params"]["reason"]
    assert "cancelled" in by_id["stopped"]["params"]["reason"]


def test_a_cancel_notice_the_server_never_answers_is_dropped_quietly(caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as silent, caplog.at_level(logging.DEBUG, logger="zigai.mcp.http"):
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # connections complete in the backlog and are never answered
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/mcp"
        transport = mcp.StreamableHttpTransport(url, url_policy=UrlPolicy.local_development())
        with mcp.Client(transport, protocol_version=mcp.PROTOCOL_VERSION) as client, \
                pytest.raises(mcp.McpRequestTimedOut):
            client.call_tool("slow", {}, options=mcp.RequestOptions(timeout_ms=200))
        end = time.monotonic() + 15
        while "was not delivered" not in caplog.text and time.monotonic() < end:
            time.sleep(0.05)
    assert "notifications/cancelled for 1 was not delivered" in caplog.text
    transport._announce_cancelled(mcp.OutgoingRequest(id=1, method="m", body=b"", protocol_version="v"),
                                  "closed")  # after close nothing is sent


def test_a_prompt_handler_failing_after_its_cancel_logs_no_error(
        caplog: pytest.LogCaptureFixture) -> None:
    token = CancellationToken()

    def render(arguments: dict[str, str], request: Any) -> str:
        token.cancel("the client went away")
        raise RuntimeError("interrupted")

    server = mcp.Server("s", "1")
    server.add_prompt("p", render)
    message = {"jsonrpc": "2.0", "id": 7, "method": "prompts/get", "params": {"name": "p", "_meta": ENVELOPE}}
    with caplog.at_level(logging.ERROR, logger="zigai"):
        server.handle_value(message, token=token)  # whatever it answers, nobody is waiting for it
    assert caplog.records == []


def test_the_wsgi_entry_waits_for_a_slow_handler_without_a_connection_probe() -> None:
    import io

    def slow(arguments: dict[str, Any], request: Any) -> str:
        time.sleep(0.4)  # longer than one connection poll
        return "slow answer"

    server = mcp.Server("s", "1")
    server.add_tool(mcp.ToolInfo("slow", {"type": "object"}), slow)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "slow", "arguments": {}, "_meta": ENVELOPE}}).encode()
    environ = {"REQUEST_METHOD": "POST", "HTTP_HOST": "127.0.0.1", "HTTP_ACCEPT": "*/*", "wsgi.url_scheme": "http",
               "HTTP_MCP_PROTOCOL_VERSION": "2026-07-28", "HTTP_MCP_METHOD": "tools/call", "HTTP_MCP_NAME": "slow",
               "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body)}
    statuses: list[str] = []
    answer = b"".join(mcp.wsgi_app(server)(environ, lambda status, headers: statuses.append(status)))
    assert statuses == ["200 OK"] and b"slow answer" in answer
