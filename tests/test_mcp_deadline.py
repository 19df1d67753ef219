"""One MCP request deadline, one error: :class:`McpRequestTimedOut` over every transport.

A request to a tool that never answers must raise ``McpRequestTimedOut`` -- never earlier than
its deadline -- whether it travels in process, over stdio or over Streamable HTTP, and
whichever side notices the deadline first.  Over HTTP two sides can: the caller's wait and
the HTTP transport's deadline guard on the worker's socket.  On a loaded machine the waiting
thread is often late, so the guard's failure lands first.  The test makes that interleaving
certain instead of lucky: the tool sends one progress notification, and the caller's
notification sink holds the caller until the deadline has passed and the transport's worker
thread (if the transport has one) has ended -- a slow sink, as a user's can be.
"""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from support.raw_server import RawServer

from zigai import mcp
from zigai.security import UrlPolicy
from zigai.transport import HttpTransport

BUDGET_MS = 400
CEILING_S = 10.0  # generous: each wait below ends at the deadline; this only bounds a bug

HANGING_SERVER = r"""
import time
from zigai import mcp

server = mcp.Server("slow", "1.0")

def hang(arguments, request):
    request.progress(0)
    end = time.monotonic() + 10
    while not request.control.cancelled and time.monotonic() < end:
        time.sleep(0.01)
    return "late"

server.add_tool(mcp.ToolInfo("hang", {"type": "object"}), hang)
server.add_tool(mcp.ToolInfo("quick", {"type": "object"}), lambda arguments, request: "quick")
mcp.serve_stdio(server)
"""


def _hanging_server(release: threading.Event) -> mcp.Server:
    server = mcp.Server("slow", "1.0")

    def hang(arguments: dict[str, Any], request: mcp.ServerRequest) -> str:
        request.progress(0)
        end = time.monotonic() + CEILING_S
        while not release.is_set() and not request.control.cancelled and time.monotonic() < end:
            release.wait(0.01)
        return "late"

    server.add_tool(mcp.ToolInfo("hang", {"type": "object"}), hang)
    server.add_tool(mcp.ToolInfo("quick", {"type": "object"}), lambda arguments, request: "quick")
    return server


class SlowSink:
    """A notification sink that returns only once ``deadline`` has passed and no thread named
    ``worker`` is alive (both bounded by ``CEILING_S``)."""

    def __init__(self, deadline: float, worker: str) -> None:
        self.deadline = deadline
        self.worker = worker
        self.notes: list[Any] = []
        self.worker_ended = False

    def __call__(self, note: Any) -> None:
        self.notes.append(note)
        give_up = time.monotonic() + CEILING_S
        while time.monotonic() < give_up:
            if time.monotonic() >= self.deadline and not self._worker_alive():
                self.worker_ended = True
                return
            time.sleep(0.005)

    def _worker_alive(self) -> bool:
        return any(thread.name == self.worker for thread in threading.enumerate())


@contextmanager
def _transport(kind: str) -> Iterator[mcp.McpTransport]:
    release = threading.Event()
    try:
        if kind == "in-process":
            yield mcp.InProcessTransport(_hanging_server(release))
        elif kind == "http":
            with mcp.serve_http(_hanging_server(release)) as running:
                yield mcp.StreamableHttpTransport(running.url, url_policy=UrlPolicy.local_development())
        else:
            with mcp.StdioTransport([sys.executable, "-c", HANGING_SERVER]) as stdio:
                yield stdio
    finally:
        release.set()


@pytest.mark.parametrize("kind", ["in-process", "stdio", "http"])
def test_a_request_past_its_deadline_is_mcp_request_timed_out_on_every_transport(kind: str) -> None:
    with _transport(kind) as transport, mcp.Client(transport, default_timeout_ms=20_000) as client:
        assert client.call_tool("quick", {}).text == "quick"  # within its deadline: answered
        request_id = "slow-1"
        deadline = time.monotonic() + BUDGET_MS / 1000
        sink = SlowSink(deadline, f"zigai-mcp-http-{request_id!r}")
        with pytest.raises(mcp.McpRequestTimedOut, match="timed out"):
            client.call_tool("hang", {}, options=mcp.RequestOptions(
                timeout_ms=BUDGET_MS, request_id=request_id, on_notification=sink,
                metadata=mcp.RequestMetadata(progress_token="p")))
        assert time.monotonic() >= deadline  # never before the deadline
        assert len(sink.notes) == 1 and sink.worker_ended  # the interleaving really happened
        assert client.call_tool("quick", {}).text == "quick"  # the transport is still usable


def test_an_http_notification_past_its_deadline_is_mcp_request_timed_out() -> None:
    def silent(conn: socket.socket, stop: threading.Event) -> None:
        stop.wait(CEILING_S)

    with RawServer(silent) as server:
        transport = mcp.StreamableHttpTransport(server.url("/mcp"), url_policy=UrlPolicy.local_development())
        deadline = time.monotonic() + BUDGET_MS / 1000
        with pytest.raises(mcp.McpRequestTimedOut, match="notification 'notifications/x' timed out"):
            transport.notify("notifications/x", b'{"jsonrpc": "2.0", "method": "notifications/x"}',
                             protocol_version=mcp.PROTOCOL_VERSION, deadline=deadline)
        assert time.monotonic() >= deadline


def test_an_http_socket_timeout_without_a_deadline_stays_a_connection_failure() -> None:
    def silent(conn: socket.socket, stop: threading.Event) -> None:
        stop.wait(CEILING_S)

    local = UrlPolicy.local_development()
    with RawServer(silent) as server, HttpTransport(url_policy=local, default_timeout_s=0.3) as http:
        transport = mcp.StreamableHttpTransport(server.url("/mcp"), transport=http, url_policy=local)
        with mcp.Client(transport) as client, pytest.raises(mcp.McpConnectionFailed, match="timed out"):
            client.request_json("tools/list")  # no deadline: the HTTP transport's 0.3 s read timeout
