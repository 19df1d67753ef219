"""Realtime sends are bounded by the turn deadline (issue 32, defect 6), over a real socket.

The peer is a minimal WebSocket server on 127.0.0.1 that completes the handshake, scripts a
tool call, then never reads again with a tiny receive buffer: a large tool result fills the
socket buffers and a send without a bound would block forever.
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from zigai.realtime import OpenAIRealtimeCodec, RealtimeConnectionError, RealtimeSendTimedOut
from zigai.realtime.session import RealtimeSession
from zigai.reflect import tool

pytest.importorskip("websockets.sync.client", reason="install the websockets extra: pip install -e '.[dev]'")
from zigai.realtime.websocket import WebSocketConnection  # noqa: E402

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def _frame(message: dict[str, Any]) -> bytes:
    payload = json.dumps(message).encode()
    size = len(payload)
    if size < 126:
        head = bytes([0x81, size])
    elif size < 65536:
        head = bytes([0x81, 126]) + size.to_bytes(2, "big")
    else:
        head = bytes([0x81, 127]) + size.to_bytes(8, "big")
    return head + payload


class DeafPeer:
    """Answers the handshake, sends ``script`` and then reads nothing more."""

    def __init__(self, script: list[dict[str, Any]]) -> None:
        self.script = script
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # accepted sockets inherit it
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.port = self.listener.getsockname()[1]
        self.connections: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.listener.settimeout(20)
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        self.connections.append(conn)
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = conn.recv(1)  # byte by byte: nothing past the request head is consumed
            if not chunk:
                return
            head += chunk
        key = next(line.split(b":", 1)[1].strip() for line in head.split(b"\r\n")
                   if line.lower().startswith(b"sec-websocket-key:"))
        accept = base64.b64encode(hashlib.sha1(key + GUID).digest())  # noqa: S324 - RFC 6455
        conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n")
        for message in self.script:
            conn.sendall(_frame(message))

    def close(self) -> None:
        self.listener.close()
        for conn in self.connections:
            conn.close()
        self.thread.join(5)


SCRIPT = [
    {"type": "session.created", "session": {"id": "sess_1"}},
    {"type": "session.updated", "session": {}},
    {"type": "response.created", "response": {"id": "r1", "status": "in_progress"}},
    {"type": "response.output_item.done", "response_id": "r1", "item": {
        "id": "fc", "type": "function_call", "call_id": "call_1", "name": "dump", "arguments": "{}"}},
    {"type": "response.done", "response": {"id": "r1", "status": "completed"}},
]


def dump() -> str:
    """A large result."""
    return "x" * (16 * 1024 * 1024)


@pytest.fixture
def peer() -> Iterator[DeafPeer]:
    running = DeafPeer(SCRIPT)
    yield running
    running.close()


def test_a_large_tool_result_to_a_peer_that_stopped_reading_fails_at_the_turn_deadline(peer: DeafPeer) -> None:
    session = RealtimeSession(lambda: WebSocketConnection(f"ws://127.0.0.1:{peer.port}"),
                              OpenAIRealtimeCodec(), tools=[tool("dump", None, dump)],
                              receive_timeout_s=10)
    outcome: list[Any] = []

    def ask() -> None:
        started = time.monotonic()
        try:
            session.ask("dump it", timeout=3)
        except BaseException as exc:  # noqa: BLE001 - the test inspects it
            outcome.append(exc)
        else:
            outcome.append(None)
        outcome.append(time.monotonic() - started)

    session.start(timeout=10)
    worker = threading.Thread(target=ask, daemon=True)
    worker.start()
    worker.join(3 + 30)  # generous for a loaded machine; an unbounded send never returns
    alive = worker.is_alive()
    if alive:
        peer.close()  # unblock the stuck send so the thread ends
        worker.join(10)
    session.close()
    assert not alive, "ask(timeout=3) was still blocked in send 33 s later"
    error, elapsed = outcome
    assert isinstance(error, RealtimeSendTimedOut) and isinstance(error, RealtimeConnectionError)
    assert "peer stopped reading" in str(error)
    assert elapsed >= 2.5  # the bound is the turn's deadline, not an early give-up


def test_a_send_with_no_time_left_is_refused_before_writing(peer: DeafPeer) -> None:
    connection = WebSocketConnection(f"ws://127.0.0.1:{peer.port}", close_timeout_s=0.2)  # the peer never answers a close
    try:
        with pytest.raises(RealtimeSendTimedOut, match="deadline had passed"):
            connection.send('{"type": "x"}', 0)
        connection.send('{"type": "x"}', 5)  # a small frame fits the buffers at once
        connection.send('{"type": "x"}')
    finally:
        connection.close()
    connection._abort(threading.Event())  # a timer firing after close finds the socket gone
