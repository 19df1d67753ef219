"""StdioTransport: an MCP server child process, one JSON-RPC message per line on its stdin/stdout.

Job
    Launch the server command, write each request as one line to its stdin (serialized by a
    writer thread), read its stdout on a reader thread, correlate responses by request id and
    route notifications to the request they belong to, and shut the child down for good.

Routing
    A response goes to the exchange with its id.  A notification carrying
    ``_meta.io.modelcontextprotocol/subscriptionId`` goes to that listen request; a progress
    notification to the request that registered its progress token; a server
    ``notifications/cancelled`` naming a listen request ends that stream
    (:class:`McpStreamEnded`).  Anything else (log messages, unknown notifications) goes to
    ``StdioOptions.on_unrouted`` (else the sink a client set with ``set_unrouted_sink``) on the
    reader thread, or is dropped.  A request from the server (2025 revisions: sampling,
    elicitation, roots, ping) goes to the handler a client set with ``set_request_handler``, on a
    thread of its own, and its reply is written back; without one it is answered -32601, and
    past :data:`~zigai.mcp.wire.transport.MAX_SERVER_REQUESTS` unanswered ones -32603 (busy).

Invariants
    * A line longer than ``max_line_bytes`` (terminator excluded) raises
      :class:`StdioLineTooLarge` for every pending and later request; no more of the child's
      output is read and the child is stopped at :meth:`close`.  Exactly-at-limit passes.
    * At most ``max_pending`` requests are accepted and unanswered at once; one more raises
      :class:`McpRequestQueueFull` before anything is written.
    * The child leads its own session (process group), so helpers it starts belong to it.
      Shutdown closes stdin, polls for exit up to ``shutdown_timeout_s``, sends SIGTERM to the
      group and waits up to ``terminate_timeout_s`` for the child to exit and its output to
      close, then SIGKILLs the group, reaps the child and joins the reader thread
      (:func:`zigai.child_process.stop_group`).  A helper that keeps stdout open cannot outlive
      :meth:`close`.  The child is always reaped: by :meth:`close`, by a restart, or by a
      finalizer (which kills the group) if the transport is dropped unclosed.
    * stderr is explicitly inherited or discarded (:class:`StderrMode`); it is never read.
    * Every write to the child's stdin is bounded (:func:`zigai.pipe_write.write_before`): a
      request's by its deadline, anything else (notifications, cancel notices, answers to the
      server's requests) by ``send_timeout_s``.  A write that misses its bound means the child
      stopped reading: the child's group is killed and every pending and later request fails
      with :class:`McpConnectionFailed` (the line may be half written, so nothing is resent).
      Answers to the server's own requests wait in at most ``max_line_bytes`` of backlog; a
      server that sends requests faster than it reads the answers is dropped the same way.
"""

from __future__ import annotations

import enum
import logging
import os
import queue
import subprocess
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from zigai.child_process import (
    InvalidChildEnvironment,
    child_environment,
    exit_status,
    kill_group,
    spawn_options,
    stop_group,
)
from zigai.json import Limits, defaults
from zigai.mcp.errors import (
    InvalidMcpMessage,
    InvalidMcpRequest,
    McpClientClosed,
    McpConnectionFailed,
    McpError,
    McpRequestQueueFull,
    McpServerExited,
    McpStreamEnded,
    StdioLineTooLarge,
)
from zigai.mcp.wire.jsonrpc import (
    META_SUBSCRIPTION_ID,
    JsonRpcError,
    JsonRpcNotification,
    JsonRpcRequest,
    JsonRpcResponse,
    RequestId,
    decode_message,
    encode,
    error_message,
    notification_message,
)
from zigai.mcp.wire.transport import (
    DEFAULT_BACKLOG,
    MAX_SERVER_REQUESTS,
    Exchange,
    NotificationSink,
    OutgoingRequest,
    Reply,
    ServerRequestHandler,
)
from zigai.pipe_write import write_before

__all__ = ["StderrMode", "StdioOptions", "StdioTransport"]

_log = logging.getLogger("zigai.mcp.stdio")
_READ_BYTES = 64 * 1024
_POLL_S = 0.01


class StderrMode(enum.Enum):
    """What happens to the child's stderr: shared with this process, or thrown away."""

    inherit = "inherit"
    discard = "discard"


@dataclass(frozen=True, slots=True)
class StdioOptions:
    """How the child is started, bounded and stopped.

    The child's environment is :func:`zigai.child_process.child_environment`: a small allowlist of
    this process's variables (``HOME``, ``PATH``, ``LANG``, ...; no API keys), plus the names in
    ``pass_env`` copied from this process, plus ``env``'s values; ``inherit_env=True`` copies
    this process's whole environment instead of the allowlist.  ``send_timeout_s`` bounds every
write that has no request deadline of its own (see the module invariants).  ``max_restarts``
    lets a request after an unexpected exit start a fresh child (the protocol is stateless, so
    only in-flight requests are lost).
    """

    env: Mapping[str, str] | None = None
    pass_env: tuple[str, ...] = ()
    inherit_env: bool = False
    cwd: str | None = None
    stderr: StderrMode = StderrMode.inherit
    max_line_bytes: int = defaults.mcp_message.max_document_bytes
    max_pending: int = 64
    shutdown_timeout_s: float = 2.0
    terminate_timeout_s: float = 1.0
    send_timeout_s: float = 30.0
    max_restarts: int = 0
    json_limits: Limits = defaults.mcp_message
    backlog: int = DEFAULT_BACKLOG
    on_unrouted: NotificationSink | None = None

    def __post_init__(self) -> None:
        for name, minimum in (("max_line_bytes", 1), ("max_pending", 1), ("max_restarts", 0), ("backlog", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise InvalidMcpRequest(f"StdioOptions.{name} must be an int >= {minimum}")
        for name in ("shutdown_timeout_s", "terminate_timeout_s", "send_timeout_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
                raise InvalidMcpRequest(f"StdioOptions.{name} must be a number >= 0")
        try:
            self.stderr_target()
        except ValueError as exc:
            raise InvalidMcpRequest(f"StdioOptions.stderr: {exc}") from None
        if isinstance(self.pass_env, str):
            raise InvalidMcpRequest("StdioOptions.pass_env must be a sequence of names, not one string")
        try:
            self.child_env()
        except InvalidChildEnvironment as exc:
            raise InvalidMcpRequest(f"StdioOptions: {exc}") from None

    def child_env(self) -> dict[str, str]:
        """The complete environment the child starts with (see the class docstring)."""
        return child_environment(self.env, pass_through=self.pass_env, inherit_all=self.inherit_env)

    def stderr_target(self) -> int | None:
        return None if StderrMode(self.stderr) is StderrMode.inherit else subprocess.DEVNULL


def _wait_exit(process: subprocess.Popen[bytes], timeout_s: float) -> bool:
    """Poll (never a blocking wait, never reaping) until the child exits or the timeout passes."""
    end = time.monotonic() + timeout_s
    while exit_status(process) is None:
        if time.monotonic() >= end:
            return False
        time.sleep(_POLL_S)
    return True


def _drained(reader: threading.Thread) -> Callable[[float], bool]:
    def wait(timeout: float) -> bool:
        reader.join(timeout)
        return not reader.is_alive()

    return wait


@dataclass(slots=True)
class _Write:
    """One line for the writer thread: written before ``deadline`` or the child is dropped."""

    data: bytes
    deadline: float
    done: threading.Event | None = None
    answer: bool = False
    written: bool = False


class _Child:
    """One running child with its reader and writer threads (replaced wholesale on restart)."""

    def __init__(self, owner: StdioTransport, command: Sequence[str]) -> None:
        options = owner.options
        try:
            self.process: subprocess.Popen[bytes] = subprocess.Popen(
                list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=options.stderr_target(), env=options.child_env(),
                cwd=options.cwd, bufsize=0, **spawn_options(),
            )
        except OSError as exc:
            raise McpConnectionFailed(f"could not start the MCP stdio server {command[0]!r}: {exc}") from None
        self.finalizer = weakref.finalize(owner, kill_group, self.process)
        self.writes: queue.SimpleQueue[_Write | None] = queue.SimpleQueue()
        self.broken: McpError | None = None
        self.answer_backlog = 0  # bytes of answers to server requests not yet written
        self.reader = threading.Thread(target=owner._read_loop, args=(self,), daemon=True,
                                       name=f"zigai-mcp-stdio-read-{self.process.pid}")
        self.writer = threading.Thread(target=owner._write_loop, args=(self,), daemon=True,
                                       name=f"zigai-mcp-stdio-write-{self.process.pid}")

    def start(self) -> None:
        """Start reading and writing; only once the owner holds this child as ``_child``, since a
        server may write (and be dropped, which compares against ``_child``) from its first line."""
        self.reader.start()
        self.writer.start()


class StdioTransport:
    """The stdio :class:`~zigai.mcp.wire.transport.McpTransport` (see module docstring)."""

    mirrors_headers = False

    def __init__(self, command: Sequence[str], options: StdioOptions | None = None) -> None:
        if isinstance(command, (str, bytes)) or not command or not all(isinstance(a, str) for a in command):
            raise InvalidMcpRequest("StdioTransport command must be a non-empty sequence of strings")
        self.command = tuple(command)
        self.options = options or StdioOptions()
        self._lock = threading.Lock()
        self._pending: dict[RequestId, Exchange] = {}
        self._progress: dict[RequestId, Exchange] = {}
        self._closed = False
        self._restarts = 0
        self._request_handler: ServerRequestHandler | None = None
        self._answering = threading.BoundedSemaphore(MAX_SERVER_REQUESTS)
        self._unrouted: NotificationSink | None = None
        self._child = _Child(self, self.command)
        self._child.start()

    def set_request_handler(self, handler: ServerRequestHandler | None) -> None:
        """Who answers the server's requests (see module docstring)."""
        self._request_handler = handler

    def set_unrouted_sink(self, sink: NotificationSink | None) -> None:
        """Who receives notifications of no request when ``StdioOptions.on_unrouted`` is None."""
        self._unrouted = sink

    # -- properties ------------------------------------------------------------------------

    @property
    def pid(self) -> int:
        return self._child.process.pid

    @property
    def returncode(self) -> int | None:
        return exit_status(self._child.process)

    # -- McpTransport ----------------------------------------------------------------------

    def request(self, request: OutgoingRequest, *, deadline: float | None,
                is_cancelled: Callable[[], bool], on_notification: NotificationSink) -> Reply:
        exchange = Exchange(request.id, self.options.backlog)
        child = self._admit(request, exchange)
        try:
            bound = deadline if deadline is not None else time.monotonic() + self.options.send_timeout_s
            child.writes.put(_Write(request.body + b"\n", bound))
            return exchange.wait(deadline, is_cancelled, on_notification)
        except BaseException:
            if not exchange.done:
                self._send_quietly(child, "notifications/cancelled",
                                   {"requestId": request.id, "reason": "the client stopped waiting"})
            raise
        finally:
            with self._lock:
                self._pending.pop(request.id, None)
                for token, owner in list(self._progress.items()):
                    if owner is exchange:
                        del self._progress[token]

    def notify(self, method: str, body: bytes, *, protocol_version: str, deadline: float | None) -> None:
        """Write one notification line, waiting until it is written (bounded like requests)."""
        with self._lock:
            child = self._usable_child()
        bound = deadline if deadline is not None else time.monotonic() + self.options.send_timeout_s
        item = _Write(body + b"\n", bound, threading.Event())
        child.writes.put(item)
        assert item.done is not None
        finished = item.done.wait(max(0.0, bound - time.monotonic()) + 1.0)
        if not finished or (not item.written and child.broken is not None):
            # the writer drops the child when the bound passes; report what it found
            raise child.broken or McpConnectionFailed("the MCP stdio server did not take the notification in time")

    def close(self) -> None:
        """Fail pending requests, then stop and reap the child (see module invariants)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            pending = list(self._pending.values())
            self._pending.clear()
            self._progress.clear()
            child = self._child
        for exchange in pending:
            exchange.fail(McpClientClosed("the MCP stdio transport was closed"))
        self._retire(child)

    def deinit(self) -> None:
        self.close()

    def __enter__(self) -> StdioTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals -------------------------------------------------------------------------

    def _usable_child(self) -> _Child:
        """The running child (restarting a dead one when allowed); caller holds the lock."""
        if self._closed:
            raise McpClientClosed("the MCP stdio transport is closed")
        child = self._child
        broken = child.broken
        if broken is not None:
            if isinstance(broken, McpServerExited) and self._restarts < self.options.max_restarts:
                self._restarts += 1
                _log.info("restarting MCP stdio server %r (%d of %d)", self.command[0],
                          self._restarts, self.options.max_restarts)
                threading.Thread(target=self._retire, args=(child,), daemon=True).start()
                self._child = child = _Child(self, self.command)
                child.start()
            else:
                raise broken
        return child

    def _admit(self, request: OutgoingRequest, exchange: Exchange) -> _Child:
        with self._lock:
            child = self._usable_child()
            if len(self._pending) >= self.options.max_pending:
                raise McpRequestQueueFull(
                    f"the MCP stdio transport already has {self.options.max_pending} unanswered requests",
                    limit=self.options.max_pending)
            if request.id in self._pending:
                raise InvalidMcpRequest(f"request id {request.id!r} is already in flight")
            self._pending[request.id] = exchange
            if request.progress_token is not None:
                self._progress[request.progress_token] = exchange
        return child

    def _send_quietly(self, child: _Child, method: str, params: dict[str, Any]) -> None:
        self._send_raw(child, encode(notification_message(method, params)))

    def _retire(self, child: _Child) -> None:
        child.writes.put(None)
        child.writer.join(0.2)
        options = self.options
        stop_group(child.process, shutdown_s=options.shutdown_timeout_s, terminate_s=options.terminate_timeout_s,
                   drained=_drained(child.reader))
        child.finalizer.detach()
        child.reader.join(2.0)
        if child.process.stdout is not None:
            child.process.stdout.close()

    def _break(self, child: _Child, error: McpError) -> None:
        with self._lock:
            if child.broken is None:
                child.broken = error
            if child is not self._child:
                return
            pending = list(self._pending.values())
        for exchange in pending:
            exchange.fail(error)

    def _write_loop(self, child: _Child) -> None:
        stdin = child.process.stdin
        assert stdin is not None
        try:
            fd = stdin.fileno()
            os.set_blocking(fd, False)  # our end of the pipe: short writes, never a stuck one
        except (OSError, ValueError):  # pragma: no cover - closed before the writer started
            return
        while True:
            item = child.writes.get()
            if item is None:
                break
            try:
                write_before(fd, item.data, item.deadline)
                item.written = True
            except TimeoutError:
                self._stalled(child)
                break
            except (OSError, ValueError):
                break  # the child closed stdin or is gone; the reader reports the exit
            finally:
                if item.answer:
                    with self._lock:
                        child.answer_backlog -= len(item.data)
                if item.done is not None:
                    item.done.set()
        try:
            stdin.close()
        except (OSError, ValueError):
            pass

    def _read_loop(self, child: _Child) -> None:
        stdout = child.process.stdout
        assert stdout is not None
        fd = stdout.fileno()
        limit = self.options.max_line_bytes
        buffer = bytearray()
        try:
            while True:
                try:
                    chunk = os.read(fd, _READ_BYTES)
                except OSError:
                    chunk = b""
                if not chunk:
                    break
                buffer += chunk
                start = 0
                while (end := buffer.find(b"\n", start)) != -1:
                    line = bytes(buffer[start:end])
                    start = end + 1
                    if line.endswith(b"\r"):
                        line = line[:-1]
                    if len(line) > limit:
                        raise StdioLineTooLarge(
                            f"the MCP stdio server wrote a line over {limit} bytes", limit=limit)
                    if line.strip():
                        self._route(child, line)
                del buffer[:start]
                if len(buffer) > limit + 1:  # + 1: a CR may still belong to the terminator
                    raise StdioLineTooLarge(f"the MCP stdio server wrote a line over {limit} bytes", limit=limit)
        except StdioLineTooLarge as exc:
            self._break(child, exc)
            return
        _wait_exit(child.process, 0.2)
        code = exit_status(child.process)
        self._break(child, McpServerExited(
            f"the MCP stdio server {self.command[0]!r} exited"
            + (f" with code {code}" if code is not None else " (closed its output)"), returncode=code))

    def _route(self, child: _Child, line: bytes) -> None:
        try:
            message = decode_message(line, self.options.json_limits)
        except InvalidMcpMessage as exc:
            _log.warning("MCP stdio server %r wrote an invalid message: %s", self.command[0], exc)
            return
        if isinstance(message, (JsonRpcResponse, JsonRpcError)):
            with self._lock:
                exchange = self._pending.get(message.id) if message.id is not None else None
            if exchange is not None:
                exchange.resolve(message)
            return
        if isinstance(message, JsonRpcRequest):
            handler = self._request_handler
            if handler is None:
                reply = error_message(message.id, {"code": -32601,
                                                   "message": "MCP 2026-07-28 servers do not send requests"})
                self._send_raw(child, encode(reply))
            elif not self._answering.acquire(blocking=False):
                self._send_raw(child, encode(error_message(message.id, {
                    "code": -32603, "message": f"client busy: {MAX_SERVER_REQUESTS} server requests in flight"})))
            else:
                threading.Thread(target=self._answer, args=(child, handler, message), daemon=True,
                                 name=f"zigai-mcp-stdio-answer-{message.id!r}").start()
            return
        self._route_notification(message)

    def _answer(self, child: _Child, handler: ServerRequestHandler, request: JsonRpcRequest) -> None:
        try:
            reply = handler(request)
        except Exception:  # the handler builds its own error replies; this is a bug in it
            _log.exception("the MCP server-request handler raised")
            reply = error_message(request.id, {"code": -32603, "message": "the client failed to answer"})
        finally:
            self._answering.release()
        self._send_raw(child, encode(reply))

    def _send_raw(self, child: _Child, data: bytes) -> None:
        """Queue a line nobody waits for (bounded by ``send_timeout_s`` and the answer backlog)."""
        if child.broken is not None or self._closed:
            return
        line = data + b"\n"
        with self._lock:
            flooded = child.answer_backlog + len(line) > self.options.max_line_bytes
            if not flooded:
                child.answer_backlog += len(line)
        if flooded:
            self._stalled(child, "sends requests faster than it reads the answers")
            return
        child.writes.put(_Write(line, time.monotonic() + self.options.send_timeout_s, answer=True))

    def _stalled(self, child: _Child, why: str = "did not read its input in time") -> None:
        """The child stopped reading: fail everything with McpConnectionFailed and kill its group."""
        self._break(child, McpConnectionFailed(
            f"the MCP stdio server {self.command[0]!r} {why}; the connection was closed"))
        kill_group(child.process, reap=False)

    def _route_notification(self, note: JsonRpcNotification) -> None:
        params = note.params or {}
        meta = params.get("_meta")
        subscription = meta.get(META_SUBSCRIPTION_ID) if isinstance(meta, dict) else None
        with self._lock:
            if note.method == "notifications/cancelled":
                target = self._pending.get(params.get("requestId"))  # type: ignore[arg-type]
                if target is not None:
                    target.fail(McpStreamEnded("the server ended the subscription stream"))
                return
            if subscription is not None:
                exchange = self._pending.get(subscription)
            elif note.method == "notifications/progress":
                exchange = self._progress.get(params.get("progressToken"))  # type: ignore[arg-type]
            else:
                exchange = None
        sink = self.options.on_unrouted or self._unrouted
        if exchange is not None:
            exchange.push(note)
        elif sink is not None:
            try:
                sink(note)
            except Exception:  # the reader thread must survive application callbacks
                _log.exception("StdioOptions.on_unrouted raised")

