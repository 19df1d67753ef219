"""serve_stdio: run an :class:`~zigai.mcp.Server` on a byte stream pair, one JSON-RPC message per line.

Job
    Read lines from the input (normally the process's stdin), serve each request on its own
    worker thread so long calls and listen streams do not block the line reader, write each
    reply and notification as exactly one line under one lock, honour
    ``notifications/cancelled``, and return when the input ends.  A client that opens with a
    2025 ``initialize`` gets one session for the connection (``server.sessions``): its later
    requests without the 2026 envelope are served under that session's revision, its handlers'
    requests to the client go down the same pipe (the answers come back on the input and are
    routed to the waiting handler), and so do the server's change notifications.

Invariants
    * A line longer than ``max_line_bytes`` is answered with -32700 and skipped up to its
      newline; it is never held in memory whole.
    * At most ``max_concurrent`` requests run at once; one more is answered -32603 "server
      busy" at once rather than queued without bound.
    * A request cancelled by the client gets no further message, not even its response.
    * At end of input listen streams are cancelled at once and every other request gets
      ``drain_s`` to answer before it is cancelled too; nothing is written after
      :func:`serve_stdio` returns.
    * Every write is bounded by ``send_timeout_s`` (:func:`zigai.pipe_write.write_before` when
      the output has a file descriptor): a client that does not take a line in time is treated
      as gone, nothing more is written, and :func:`serve_stdio` returns when its input ends.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any, BinaryIO

from zigai.control import CancellationToken
from zigai.json import dumps
from zigai.mcp.errors import InternalError, InvalidMcpMessage, ParseError
from zigai.mcp.server.server import NO_REPLY, Server
from zigai.mcp.server.sessions import LegacySession, initialize_reply, opens_session
from zigai.mcp.wire.jsonrpc import (
    JsonRpcNotification,
    JsonRpcRequest,
    classify,
    error_message,
    parse_json,
)
from zigai.mcp.wire.primitives import Notification
from zigai.pipe_write import write_before

__all__ = ["serve_stdio"]

_READ_BYTES = 64 * 1024


def _read_chunk(stream: BinaryIO) -> bytes:
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        read1 = getattr(stream, "read1", None)
        return read1(_READ_BYTES) if callable(read1) else stream.read(_READ_BYTES)
    return os.read(fd, _READ_BYTES)


def _lines(stream: BinaryIO, limit: int) -> Iterator[bytes | None]:
    """Each line without its terminator; None for a line over ``limit`` (then skipped)."""
    buffer = bytearray()
    skipping = False
    while True:
        chunk = _read_chunk(stream)
        if not chunk:
            if buffer and not skipping:
                yield bytes(buffer)
            return
        buffer += chunk
        start = 0
        while (end := buffer.find(b"\n", start)) != -1:
            if skipping:
                skipping = False
            else:
                line = bytes(buffer[start:end]).rstrip(b"\r")
                yield line if len(line) <= limit else None
            start = end + 1
        del buffer[:start]
        if not skipping and len(buffer) > limit + 1:
            yield None
            skipping = True
        if skipping:
            buffer.clear()


def _fileno(stream: BinaryIO) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None


class _Session:
    def __init__(self, server: Server, output: BinaryIO, max_concurrent: int, send_timeout_s: float) -> None:
        self.server = server
        self.output = output
        self.send_timeout_s = send_timeout_s
        self.write_lock = threading.Lock()
        self.slots = threading.BoundedSemaphore(max_concurrent)
        self.lock = threading.Lock()
        self.running: dict[Any, CancellationToken] = {}
        self.streams: set[Any] = set()
        self.threads: list[threading.Thread] = []
        self.open = True
        self.legacy: LegacySession | None = None

    def write(self, message: dict[str, Any]) -> None:
        data = dumps(message).encode("utf-8") + b"\n"
        deadline = time.monotonic() + self.send_timeout_s
        if not self.write_lock.acquire(timeout=self.send_timeout_s):
            return  # the writer ahead of us is stuck until its own bound closes the output
        try:
            if not self.open:
                return
            try:
                fd = _fileno(self.output)
                if fd is None:
                    self.output.write(data)
                else:
                    self.output.flush()  # nothing else writes here; keeps buffered bytes in order
                    write_before(fd, data, deadline)
                self.output.flush()
            except (OSError, ValueError, TimeoutError):
                self.open = False  # the client went away or stopped reading
        finally:
            self.write_lock.release()

    def serve_line(self, line: bytes) -> None:
        try:
            value = parse_json(line, self.server.limits)
            message = classify(value)
        except InvalidMcpMessage:
            reply = self.server.handle(line)  # answers -32700 / -32600 with the right id
            if reply is not None and reply is not NO_REPLY:
                self.write(reply)
            return
        if isinstance(message, JsonRpcNotification):
            if message.method == "notifications/cancelled":
                target = (message.params or {}).get("requestId")
                with self.lock:
                    token = self.running.get(target)
                if token is not None:
                    token.cancel(str((message.params or {}).get("reason") or "cancelled by the client"))
            return
        if not isinstance(message, JsonRpcRequest):
            if self.legacy is not None:  # a 2025 client answering one of the server's requests
                self.legacy.calls.resolve(message)
            return  # a response nobody waits for is dropped
        if opens_session(message):
            reply, session = initialize_reply(self.server, message)
            if session is not None:
                if self.legacy is not None:
                    self.server.sessions.close(self.legacy.id)
                self.legacy = session
            self.write(reply)
            if session is not None:
                session.pushes.attach(self.write)  # change notifications go down the same pipe
            return
        if not self.slots.acquire(blocking=False):
            self.write(error_message(message.id, InternalError("server busy: too many concurrent requests").to_json()))
            return
        token = CancellationToken()
        with self.lock:
            self.running[message.id] = token
            if message.method == "subscriptions/listen":
                self.streams.add(message.id)
        worker = threading.Thread(target=self._run, args=(value, message.id, token), daemon=True,
                                  name=f"zigai-mcp-serve-{message.id!r}")
        self.threads = [t for t in self.threads if t.is_alive()] + [worker]
        worker.start()

    def _run(self, value: Any, request_id: Any, token: CancellationToken) -> None:
        def emit(notification: Notification) -> None:
            if not token.cancelled:
                self.write(notification.to_json())

        def send(message: dict[str, Any]) -> None:
            if not token.cancelled:
                self.write(message)

        try:
            reply = self.server.handle_value(value, emit=emit, token=token, session=self.legacy, send=send)
            if reply is not None and reply is not NO_REPLY and not token.cancelled:
                self.write(reply)
        finally:
            with self.lock:
                if self.running.get(request_id) is token:
                    del self.running[request_id]
                    self.streams.discard(request_id)
            self.slots.release()

    def finish(self, drain_s: float) -> None:
        """Listen streams end at once; other requests get ``drain_s`` to answer, then are cancelled."""
        with self.lock:
            streams = [self.running[key] for key in self.streams if key in self.running]
        for token in streams:
            token.cancel("the client closed the input")
        end = time.monotonic() + drain_s
        for thread in self.threads:
            thread.join(max(0.0, end - time.monotonic()))
        with self.lock:
            tokens = list(self.running.values())
        for token in tokens:
            token.cancel("the client closed the input")
        with self.write_lock:
            self.open = False
        if self.legacy is not None:
            self.server.sessions.close(self.legacy.id)


def serve_stdio(server: Server, input: BinaryIO | None = None, output: BinaryIO | None = None, *,
                max_line_bytes: int | None = None, max_concurrent: int = 32, drain_s: float = 1.0,
                send_timeout_s: float = 30.0) -> None:
    """Serve until ``input`` ends (defaults: this process's binary stdin and stdout)."""
    source = input if input is not None else sys.stdin.buffer
    sink = output if output is not None else sys.stdout.buffer
    limit = max_line_bytes if max_line_bytes is not None else server.limits.max_document_bytes
    session = _Session(server, sink, max_concurrent, send_timeout_s)
    try:
        for line in _lines(source, limit):
            if line is None:
                session.write(error_message(None, ParseError(
                    f"Parse error: a message line is longer than {limit} bytes").to_json()))
            elif line.strip():
                session.serve_line(line)
    finally:
        session.finish(drain_s)
