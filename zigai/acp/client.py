"""``AcpClient``: a stateful JSON-RPC 2.0 client of one ACP agent over a replaceable transport.

States: ``disconnected`` → (connect) ``connected`` → (:meth:`initialize`) ``initialized``
→ (:meth:`new_session` / :meth:`load_session`) ``in_session``.  Calls out of order raise
:class:`AcpStateError`.

A reader thread takes every message off the transport:

* responses are matched to their request by ``id`` (a response with an unknown id is a
  protocol error and closes the connection);
* ``session/update`` notifications go to ``on_update`` and are collected for the prompt
  in flight, at most ``max_prompt_updates`` of them and ``max_prompt_update_bytes`` of their
  encoded size; one more stops the collecting, asks the agent to cancel the turn, and
  :meth:`AcpClient.prompt` raises :class:`AcpPromptUpdatesTooLarge` (``on_update`` still sees
  every update, so a streaming consumer needs no collected copy);
* agent requests (files, permissions, terminals) run on a small pool of daemon threads
  through the editor handlers and are answered with a result or a JSON-RPC error, while the
  client's own request keeps waiting.  :meth:`AcpClient.close` never waits for a handler
  (one may be blocked on the user); a handler still running is abandoned, its answer is
  dropped, and it never keeps the process alive.

Reconnect (:meth:`reconnect`) opens a new transport from the factory, initializes again and
resumes the active session with ``session/load``; it never resends a prompt.  A prompt
whose connection died raises :class:`AcpConnectionClosed` with ``prompt_in_flight=True``:
whether to send it again is the application's decision, not a guess.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Literal

from zigai import json as zjson
from zigai._workers import WorkerPool
from zigai.acp.editor import AcpInvalidParams, EditorHandlers
from zigai.acp.transport import AcpConnectionClosed, AcpTransport
from zigai.errors import AcpError, ExecutionEnvironmentError, JsonError
from zigai.json import Limits

__all__ = ["AcpClient", "PromptResult", "AcpProtocolError", "AcpRemoteError", "AcpStateError",
           "AcpRequestTimedOut", "AcpPromptUpdatesTooLarge", "PROTOCOL_VERSION"]

PROTOCOL_VERSION = 1
MESSAGE_LIMITS = Limits(4 * 1024 * 1024, 1024 * 1024, 64, 16_384)
_MAX_QUEUED_REQUESTS = 64


class AcpProtocolError(AcpError):
    """The agent broke JSON-RPC or ACP (malformed message, unknown response id, bad result)."""


class AcpRemoteError(AcpError):
    """The agent answered a request with a JSON-RPC error (``code``, ``data``)."""

    def __init__(self, message: str, *, code: int = 0, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data


class AcpStateError(AcpError):
    """A call was made in the wrong state (not initialized, no session, already closed)."""


class AcpRequestTimedOut(AcpError):
    """The agent did not answer a request within its timeout."""


class AcpPromptUpdatesTooLarge(AcpError):
    """A prompt's ``session/update``s passed the client's bound; the turn was cancelled.

    Raise ``max_prompt_updates`` / ``max_prompt_update_bytes``, or consume updates as they
    arrive with ``on_update``.
    """

    def __init__(self, message: str, *, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


@dataclass(frozen=True, slots=True)
class PromptResult:
    stop_reason: str
    updates: tuple[dict[str, Any], ...] = field(default=())

    @property
    def text(self) -> str:
        """The agent's message chunks (``agent_message_chunk`` text) joined."""
        return "".join(
            u.get("content", {}).get("text", "") for u in self.updates
            if u.get("sessionUpdate") == "agent_message_chunk" and isinstance(u.get("content"), dict)
        )


State = Literal["disconnected", "connected", "initialized", "in_session", "closed"]


class AcpClient:
    """See module docs.  ``connect`` is a factory of fresh transports (used again on reconnect)."""

    def __init__(self, connect: Callable[[], AcpTransport], editor: EditorHandlers, *,
                 on_update: Callable[[str, dict[str, Any]], None] | None = None,
                 request_timeout_s: float = 30.0, prompt_timeout_s: float = 300.0,
                 max_prompt_updates: int = 10_000, max_prompt_update_bytes: int = 64 * 1024 * 1024) -> None:
        for name, value in (("max_prompt_updates", max_prompt_updates),
                            ("max_prompt_update_bytes", max_prompt_update_bytes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1")
        self.max_prompt_updates = max_prompt_updates
        self.max_prompt_update_bytes = max_prompt_update_bytes
        self._connect = connect
        self.editor = editor
        self.on_update = on_update
        self.request_timeout_s = request_timeout_s
        self.prompt_timeout_s = prompt_timeout_s
        self.state: State = "disconnected"
        self.agent_info: dict[str, Any] = {}
        self.session_id: str | None = None
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._pending: dict[int, Future[Any]] = {}
        self._collecting: list[dict[str, Any]] | None = None
        self._collected_bytes = 0
        self._overflow: AcpPromptUpdatesTooLarge | None = None
        self._transport: AcpTransport | None = None
        self._reader: threading.Thread | None = None
        # daemon workers: a handler blocked on the user (a permission prompt) or a terminal never
        # holds close() or the interpreter's exit; its late answer finds no transport and is dropped
        self._pool = WorkerPool(4, "zigai-acp-handler")
        # agent requests queued for the pool: past this the reader waits, and the pipe pushes back
        self._queued = threading.BoundedSemaphore(_MAX_QUEUED_REQUESTS)
        self._handlers = editor.handlers()
        self._update_error: Exception | None = None

    # -- connection ----------------------------------------------------------------------------

    def _open(self) -> None:
        self._transport = self._connect()
        self.state = "connected"
        self._reader = threading.Thread(target=self._read, args=(self._transport,), daemon=True,
                                        name="zigai-acp-reader")
        self._reader.start()

    def _read(self, transport: AcpTransport) -> None:
        error: AcpError = AcpConnectionClosed("the agent closed the connection")
        try:
            while True:
                raw = transport.receive(None)
                if raw is None:
                    break
                self._dispatch(raw)
        except AcpError as exc:
            error = exc
        except Exception as exc:  # a transport bug must not leave requests waiting forever
            error = AcpConnectionClosed(f"reading from the agent failed: {type(exc).__name__}: {exc}")
        self._fail_pending(transport, error)

    def _fail_pending(self, transport: AcpTransport, error: AcpError) -> None:
        with self._lock:
            if transport is not self._transport:
                return
            pending, self._pending = self._pending, {}
            if self.state != "closed":
                self.state = "disconnected"
        for future in pending.values():
            if not future.done():
                future.set_exception(error)

    def _dispatch(self, raw: bytes) -> None:
        try:
            message = zjson.parse(raw, MESSAGE_LIMITS)
        except JsonError as exc:
            raise AcpProtocolError(f"the agent sent a message that is not bounded JSON: {exc}") from None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            raise AcpProtocolError("the agent sent a message that is not a JSON-RPC 2.0 object")
        method = message.get("method")
        if isinstance(method, str):
            raw_params = message.get("params")
            params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
            if "id" in message:
                self._queued.acquire()
                try:
                    self._pool.submit(self._answer, message["id"], method, params)
                except BaseException:  # pragma: no cover - the pool was shut down meanwhile
                    self._queued.release()
                    raise
            elif method == "session/update":
                self._update(params, len(raw))
            return
        ident = message.get("id")
        if "error" not in message and "result" not in message:
            # left pending: ending the connection fails it with this error
            raise AcpProtocolError(f"the response to request {ident!r} has neither result nor error")
        with self._lock:
            future = self._pending.pop(ident, None) if isinstance(ident, int) else None
        if future is None:
            raise AcpProtocolError(f"the agent answered an unknown request id {ident!r}")
        if "error" in message:
            error = message["error"] if isinstance(message["error"], dict) else {}
            future.set_exception(AcpRemoteError(str(error.get("message", "agent error")),
                                                code=int(error.get("code", 0) or 0), data=error.get("data")))
        else:
            future.set_result(message["result"])

    def _update(self, params: dict[str, Any], size: int) -> None:
        update = params.get("update")
        session = params.get("sessionId")
        if not isinstance(update, dict) or not isinstance(session, str):
            return
        overflowed = False
        with self._lock:
            if self._collecting is not None and self._overflow is None and session == self.session_id:
                if len(self._collecting) >= self.max_prompt_updates:
                    self._overflow = AcpPromptUpdatesTooLarge(
                        f"the agent sent more than {self.max_prompt_updates} session updates for one prompt; "
                        "the turn was cancelled (raise max_prompt_updates or consume them with on_update)",
                        limit=self.max_prompt_updates)
                elif self._collected_bytes + size > self.max_prompt_update_bytes:
                    self._overflow = AcpPromptUpdatesTooLarge(
                        f"the agent's session updates for one prompt exceed {self.max_prompt_update_bytes} bytes; "
                        "the turn was cancelled (raise max_prompt_update_bytes or consume them with on_update)",
                        limit=self.max_prompt_update_bytes)
                else:
                    self._collecting.append(update)
                    self._collected_bytes += size
                if self._overflow is not None:
                    self._collecting.clear()
                    overflowed = True
        if overflowed:  # not on the reader thread: a send may wait for the agent to read
            self._pool.submit(self._cancel_quietly)
        if self.on_update is not None:
            try:
                self.on_update(session, update)
            except Exception as exc:  # kept for the prompt in flight; the connection goes on
                with self._lock:
                    if self._update_error is None:
                        self._update_error = exc

    def _answer(self, ident: Any, method: str, params: dict[str, Any]) -> None:
        try:
            self._answer_now(ident, method, params)
        finally:
            self._queued.release()

    def _answer_now(self, ident: Any, method: str, params: dict[str, Any]) -> None:
        handler = self._handlers.get(method)
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": ident}
        if handler is None:
            reply["error"] = {"code": -32601, "message": f"method {method!r} is not supported by this client"}
        else:
            try:
                reply["result"] = handler(params)
            except (AcpInvalidParams, ExecutionEnvironmentError) as exc:
                reply["error"] = {"code": -32602, "message": str(exc)}
            except Exception as exc:  # the handler failed: tell the agent, keep the connection
                reply["error"] = {"code": -32603, "message": f"{type(exc).__name__}: {exc}"}
        try:
            self._send(reply)
        except AcpError:  # pragma: no cover - the connection died while we answered
            pass

    def _send(self, message: dict[str, Any]) -> None:
        transport = self._transport
        if transport is None:
            raise AcpStateError("the client is not connected")
        transport.send(json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode())

    def request(self, method: str, params: dict[str, Any], *, timeout: float | None = None) -> Any:
        """Send one request and wait for its response (interleaved traffic is dispatched)."""
        if self.state in ("disconnected", "closed"):
            raise AcpStateError(f"cannot call {method!r}: the client is {self.state}")
        ident = next(self._ids)
        future: Future[Any] = Future()
        with self._lock:
            self._pending[ident] = future
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        try:
            return future.result(timeout=self.request_timeout_s if timeout is None else timeout)
        except TimeoutError:
            with self._lock:
                self._pending.pop(ident, None)
            raise AcpRequestTimedOut(f"{method} got no answer in time") from None

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    # -- the ACP lifecycle -----------------------------------------------------------------------

    def initialize(self) -> dict[str, Any]:
        """Connect (if needed) and negotiate the protocol version and capabilities."""
        if self.state == "closed":
            raise AcpStateError("the client is closed")
        if self.state == "disconnected":
            self._open()
        result = self.request("initialize", {
            "protocolVersion": PROTOCOL_VERSION,
            "clientCapabilities": self.editor.capabilities(),
            "clientInfo": {"name": "zigai", "version": _version()},
        })
        if not isinstance(result, dict) or result.get("protocolVersion") != PROTOCOL_VERSION:
            version = result.get("protocolVersion") if isinstance(result, dict) else None
            raise AcpProtocolError(f"the agent speaks ACP version {version!r}; this client speaks "
                                   f"{PROTOCOL_VERSION}")
        self.agent_info = result
        self.state = "initialized"
        return result

    def _need(self, *states: State) -> None:
        if self.state not in states:
            raise AcpStateError(f"this call needs state {' or '.join(states)}; the client is {self.state}")

    def new_session(self, mcp_servers: Sequence[dict[str, Any]] = ()) -> str:
        """A session rooted at the editor root (its ``cwd``); returns the session id."""
        self._need("initialized", "in_session")
        result = self.request("session/new", {"cwd": self.editor.root, "mcpServers": list(mcp_servers)})
        if not isinstance(result, dict) or not isinstance(result.get("sessionId"), str):
            raise AcpProtocolError("session/new answered without a sessionId")
        self.session_id = result["sessionId"]
        self.state = "in_session"
        return self.session_id

    @property
    def can_load_sessions(self) -> bool:
        capabilities = self.agent_info.get("agentCapabilities")
        return isinstance(capabilities, dict) and capabilities.get("loadSession") is True

    def load_session(self, session_id: str, mcp_servers: Sequence[dict[str, Any]] = ()) -> None:
        self._need("initialized", "in_session")
        if not self.can_load_sessions:
            raise AcpStateError("the agent did not advertise loadSession; start a new session")
        self.request("session/load", {"sessionId": session_id, "cwd": self.editor.root,
                                      "mcpServers": list(mcp_servers)})
        self.session_id = session_id
        self.state = "in_session"

    def prompt(self, content: str | Sequence[dict[str, Any]]) -> PromptResult:
        """Send one user turn and wait for its stop reason, collecting the session updates."""
        self._need("in_session")
        assert self.session_id is not None
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        with self._lock:
            if self._collecting is not None:
                raise AcpStateError("a prompt is already in flight in this session")
            self._collecting = []
            self._collected_bytes = 0
            self._overflow = None
        try:
            result = self.request("session/prompt", {"sessionId": self.session_id, "prompt": blocks},
                                  timeout=self.prompt_timeout_s)
        except AcpConnectionClosed as exc:
            raise AcpConnectionClosed(f"{exc}; the prompt got no answer and was not resent",
                                      prompt_in_flight=True) from None
        except AcpRequestTimedOut:
            self._cancel_quietly()  # the agent should stop working on a turn nobody waits for
            raise
        finally:
            with self._lock:
                updates, self._collecting = self._collecting or [], None
                update_error, self._update_error = self._update_error, None
                overflow, self._overflow = self._overflow, None
        if overflow is not None:
            raise overflow
        if update_error is not None:
            raise update_error
        if not isinstance(result, dict) or not isinstance(result.get("stopReason"), str):
            raise AcpProtocolError("session/prompt answered without a stopReason")
        return PromptResult(result["stopReason"], tuple(updates))

    def cancel(self) -> None:
        """Ask the agent to stop the prompt in flight (a notification; the prompt still answers,
        normally with stop reason ``cancelled``).  Safe to call from another thread."""
        self._need("in_session")
        self.notify("session/cancel", {"sessionId": self.session_id})

    def _cancel_quietly(self) -> None:
        try:
            self.notify("session/cancel", {"sessionId": self.session_id})
        except AcpError:  # the connection is already gone; nothing is left to stop
            pass

    def reconnect(self) -> None:
        """A new connection, initialized again, resuming the active session (never a prompt)."""
        if self.state == "closed":
            raise AcpStateError("the client is closed")
        session = self.session_id
        self._drop_transport()
        self.state = "disconnected"
        self.initialize()
        if session is not None:
            self.load_session(session)

    def _drop_transport(self) -> None:
        with self._lock:
            transport, self._transport = self._transport, None
            pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(AcpConnectionClosed("the connection was replaced"))
        if transport is not None:
            transport.close()

    def close(self) -> None:
        if self.state == "closed":
            return
        self.state = "closed"
        self._drop_transport()
        self._pool.shutdown()  # never waits for a handler still running

    def __enter__(self) -> AcpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _version() -> str:
    from zigai import __version__

    return str(__version__)
