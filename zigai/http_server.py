"""A small, bounded HTTP/1.1 server core for loopback and embedded endpoints (MCP, UI, tests).

Job
    Accept connections, frame requests strictly, hand each one to a handler callable, write the
    answer, and keep every connection inside time and count bounds.  The MCP HTTP server
    (:func:`zigai.mcp.serve_http`) and the UI's :class:`zigai.ui.LocalServer` both run on it;
    :func:`wsgi_handler` adapts any WSGI application.

Bounds (:class:`ServerLimits`)
    * at most ``max_connections`` connections are served at once; one more is answered
      ``503`` with ``Connection: close`` and closed at once (never queued);
    * a connection waiting for a request (the first one or the next keep-alive one) is closed
      after ``idle_timeout_s``; a request head must arrive completely within
      ``head_timeout_s`` of its first byte (else ``408``), a body within ``body_timeout_s`` of
      the handler asking for it; every write must finish within ``write_timeout_s``;
    * a head over ``max_head_bytes`` or with more than ``max_header_lines`` lines is ``431``.

Framing (refusals are ``400`` and close the connection, before the handler runs)
    * any ``Transfer-Encoding`` (none is implemented), a ``Content-Length`` that is repeated,
      a list, or not plain digits; whitespace before a header's colon; folded header lines;
      a malformed request line.  ``HTTP/2`` and other versions are ``505``.
    * Exactly ``Content-Length`` body bytes belong to a request.  If the handler leaves part
      of the body unread, the answer carries ``Connection: close`` and nothing after it is
      read, so body bytes are never parsed as a request.

Writing
    A ``HEAD`` request gets the head only.  A bytes body goes out in one ``sendall`` with its head and ``TCP_NODELAY`` is set on every
    connection, so no request waits for a delayed ACK.  An iterable body without
    ``Content-Length`` is streamed piece by piece and ends the connection.

Client gone
    :meth:`Request.client_gone` is True once the client closed or reset its side of the
    connection (on Linux read from the kernel's TCP state, so a FIN behind unread bytes such as
    a TLS ``close_notify`` counts; elsewhere by peeking at the stream).  A client that only
    half-closes (``shutdown(SHUT_WR)``) after its request counts as gone too.

Invariants
    * Handlers run on the connection's thread; a handler exception is logged and answered
      ``500`` (when nothing was sent yet) and closes the connection.
    * :meth:`HttpServer.close` stops accepting, closes idle connections at once, gives busy
      ones ``close_grace_s``, then shuts their sockets and joins every thread it started.
"""

from __future__ import annotations

import logging
import re
import select
import socket
import ssl
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Protocol
from urllib.parse import unquote

from zigai.errors import HttpServerError

__all__ = ["ServerLimits", "Request", "Response", "HttpServer", "HttpServerError", "ClientTimedOut",
           "ClientGone", "wsgi_handler"]

_log = logging.getLogger("zigai.http_server")
_TOKEN = re.compile(rb"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_VERSIONS = (b"HTTP/1.1", b"HTTP/1.0")
_READ = 64 * 1024
_TCP_INFO: int | None = getattr(socket, "TCP_INFO", None) if sys.platform.startswith("linux") else None
_PEER_CLOSED_STATES = frozenset({7, 8, 9})  # Linux tcp_states.h: CLOSE, CLOSE_WAIT, LAST_ACK


class ClientTimedOut(HttpServerError):
    """The client did not send the request body within ``body_timeout_s``."""


class ClientGone(HttpServerError):
    """The client closed the connection before the request body was complete."""


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """Per-server bounds (see the module docstring); every timeout is in seconds."""

    max_connections: int = 64
    idle_timeout_s: float = 15.0
    head_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    write_timeout_s: float = 30.0
    max_head_bytes: int = 64 * 1024
    max_header_lines: int = 100
    close_grace_s: float = 2.0

    def __post_init__(self) -> None:
        for name in ("max_connections", "max_head_bytes", "max_header_lines"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"ServerLimits.{name} must be an int >= 1")
        for name in ("idle_timeout_s", "head_timeout_s", "body_timeout_s", "write_timeout_s", "close_grace_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"ServerLimits.{name} must be a number > 0")


@dataclass(slots=True)
class Response:
    """One answer: ``body`` is bytes or an iterable of bytes (closed after use when it can be)."""

    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes | Iterable[bytes] = b""


class _Answer(Protocol):
    status: int
    headers: list[tuple[str, str]]
    body: Any


class _Refusal(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


class Request:
    """One framed request: method, target, header lines as sent, and a bounded body reader."""

    def __init__(self, conn: _Connection, method: str, target: str, version: str,
                 headers: list[tuple[str, str]], length: int, expect_continue: bool) -> None:
        self._conn = conn
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.content_length = length
        self.remaining = length
        self._expect_continue = expect_continue
        self._deadline: float | None = None

    @property
    def tls(self) -> bool:
        return self._conn.tls

    @property
    def client_address(self) -> tuple[str, int]:
        return self._conn.address

    @property
    def server_address(self) -> tuple[str, int]:
        return self._conn.server.address

    def read_body(self, size: int = -1) -> bytes:
        """Up to ``size`` more body bytes (all that remain when negative), never past the body."""
        want = self.remaining if size < 0 else min(size, self.remaining)
        if want <= 0:
            return b""
        if self._expect_continue:
            self._expect_continue = False
            self._conn.send(b"HTTP/1.1 100 Continue\r\n\r\n")
        if self._deadline is None:
            self._deadline = time.monotonic() + self._conn.server.limits.body_timeout_s
        data = self._conn.read_exact(want, self._deadline)
        self.remaining -= len(data)
        return data

    def client_gone(self) -> bool:
        """True once the client has closed (or reset) its side of the connection."""
        return self._conn.peer_closed()


class HttpServer:
    """Serve ``handler(request) -> Response`` on ``host:port`` in background threads."""

    def __init__(self, handler: Callable[[Request], _Answer], host: str = "127.0.0.1", port: int = 0, *,
                 limits: ServerLimits | None = None, ssl_context: ssl.SSLContext | None = None,
                 name: str = "zigai-http") -> None:
        self.handler = handler
        self.limits = limits or ServerLimits()
        self.ssl_context = ssl_context
        self.name = name
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._listener = socket.socket(family, socket.SOCK_STREAM)
        try:
            self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._listener.bind((host, port))
            self._listener.listen(128)
        except BaseException:
            self._listener.close()
            raise
        self.address: tuple[str, int] = self._listener.getsockname()[:2]
        self._lock = threading.Lock()
        self._connections: set[_Connection] = set()
        self._closing = threading.Event()
        self._refused = 0
        self._accepter = threading.Thread(target=self._accept_loop, daemon=True, name=f"{name}-accept")
        self._accepter.start()

    @property
    def port(self) -> int:
        return self.address[1]

    @property
    def active_connections(self) -> int:
        with self._lock:
            return len(self._connections)

    @property
    def refused_connections(self) -> int:
        """How many connections were answered 503 because ``max_connections`` were busy."""
        return self._refused

    def _accept_loop(self) -> None:
        while not self._closing.is_set():
            try:
                readable, _, _ = select.select([self._listener], [], [], 0.05)
                if not readable:
                    continue
                sock, address = self._listener.accept()
            except (OSError, ValueError):  # pragma: no cover - close() raced the accept, or EMFILE
                if self._closing.is_set():
                    return
                continue
            with self._lock:
                full = len(self._connections) >= self.limits.max_connections
                conn = None if full else _Connection(self, sock, address[:2])
                if conn is not None:
                    self._connections.add(conn)
            if conn is not None:
                try:
                    conn.thread.start()
                except RuntimeError:  # pragma: no cover - the interpreter cannot start another thread
                    self._done(conn)
                    conn = None
            if conn is None:
                self._refused += 1
                _refuse_busy(sock)

    def _done(self, conn: _Connection) -> None:
        with self._lock:
            self._connections.discard(conn)

    def close(self) -> None:
        """Stop accepting and end every connection (see the module docstring)."""
        if self._closing.is_set():
            return
        self._closing.set()
        self._accepter.join(2.0)
        self._listener.close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            if conn.idle:
                conn.shutdown()
        end = time.monotonic() + self.limits.close_grace_s
        for conn in connections:
            conn.thread.join(max(0.0, end - time.monotonic()))
        for conn in connections:
            conn.shutdown()
            conn.thread.join(2.0)

    def __enter__(self) -> HttpServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _refuse_busy(sock: socket.socket) -> None:
    try:
        sock.setblocking(False)
        sock.send(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 1\r\n"
                  b"Connection: close\r\n\r\n")
    except OSError:  # pragma: no cover - the refused client is already gone
        pass
    finally:
        sock.close()


class _Connection:
    def __init__(self, server: HttpServer, sock: socket.socket, address: tuple[str, int]) -> None:
        self.server = server
        self.sock: socket.socket = sock
        self.address = address
        self.tls = False
        self.idle = True
        self.buffer = bytearray()
        self.eof = False
        self.thread = threading.Thread(target=self._run, daemon=True, name=f"{server.name}-conn")

    # -- socket helpers ------------------------------------------------------------------

    def shutdown(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _recv(self, deadline: float) -> bytes:
        remaining = deadline - time.monotonic()
        if remaining <= 0:  # pragma: no cover - the deadline passed between two reads
            raise TimeoutError
        self.sock.settimeout(remaining)
        data = self.sock.recv(_READ)
        if not data:
            self.eof = True
        return data

    def read_exact(self, size: int, deadline: float) -> bytes:
        try:
            while len(self.buffer) < size:
                if not self._recv_into_buffer(deadline):
                    raise ClientGone("the client closed the connection before the body was complete")
        except TimeoutError:
            raise ClientTimedOut("the client did not send the request body in time") from None
        except OSError:
            raise ClientGone("the connection failed while reading the request body") from None
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    def _recv_into_buffer(self, deadline: float) -> bool:
        data = self._recv(deadline)
        self.buffer += data
        return bool(data)

    def send(self, data: bytes) -> None:
        self.sock.settimeout(self.server.limits.write_timeout_s)
        self.sock.sendall(data)

    def peer_closed(self) -> bool:
        if self.eof:
            return True
        raw = self.sock
        try:
            if _TCP_INFO is not None:  # Linux: the kernel knows the peer sent FIN, even behind unread bytes
                state = raw.getsockopt(socket.IPPROTO_TCP, _TCP_INFO, 1)[0]
                if state in _PEER_CLOSED_STATES:
                    return True
            readable, _, _ = select.select([raw], [], [], 0)
            if not readable:
                return False
            peeked = socket.socket.recv(raw, 1, socket.MSG_PEEK)  # the TCP stream, also under TLS
        except BlockingIOError:  # pragma: no cover - readiness raced away
            return False
        except (OSError, ValueError):
            return True
        return not peeked

    # -- the connection's life -----------------------------------------------------------

    def _run(self) -> None:
        limits = self.server.limits
        try:
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.server.ssl_context is not None:
                self.sock.settimeout(limits.head_timeout_s)
                self.sock = self.server.ssl_context.wrap_socket(self.sock, server_side=True)
                self.tls = True
            while not self.server._closing.is_set():
                if not self._serve_one():
                    break
        except (OSError, ssl.SSLError, ValueError):
            pass  # the client went away or timed out; nothing more can be said to it
        finally:
            self.shutdown()
            try:
                self.sock.close()
            finally:
                self.server._done(self)

    def _read_head(self) -> bytes | None:
        """The head (through the blank line) or None when the client closed or idled out."""
        limits = self.server.limits
        deadline = time.monotonic() + limits.idle_timeout_s
        started = bool(self.buffer.strip(b"\r\n"))
        if started:
            deadline = time.monotonic() + limits.head_timeout_s
        while True:
            while self.buffer[:2] == b"\r\n":  # RFC 9112 2.2: ignore empty lines before a request
                del self.buffer[:2]
            end = self.buffer.find(b"\r\n\r\n")
            if end != -1:
                if end + 4 > limits.max_head_bytes:
                    raise _Refusal(431, "the request head is too large")
                head = bytes(self.buffer[:end + 4])
                del self.buffer[:end + 4]
                return head
            if len(self.buffer) > limits.max_head_bytes:
                raise _Refusal(431, "the request head is too large")
            try:
                data = self._recv(deadline)
            except TimeoutError:
                if started:
                    raise _Refusal(408, "the request head did not arrive in time") from None
                return None
            if not data:
                return None
            self.buffer += data
            if not started and self.buffer.strip(b"\r\n"):
                started = True
                deadline = time.monotonic() + limits.head_timeout_s

    def _serve_one(self) -> bool:
        """Serve one request; False when the connection must end."""
        self.idle = True
        try:
            head = self._read_head()
            if head is None:
                return False
            self.idle = False
            request, keep_alive = self._parse(head)
        except _Refusal as refusal:
            self.idle = False
            self._write_simple(refusal.status, str(refusal))
            return False
        try:
            answer = self.server.handler(request)
        except (ClientTimedOut, ClientGone):
            return False  # the body never arrived; there is no one to answer
        except Exception:
            _log.exception("HTTP handler failed for %s %s", request.method, request.target)
            self._write_simple(500, "internal server error")
            return False
        if request.remaining:
            keep_alive = False  # unread body bytes must never be parsed as the next request
        try:
            return self._write(answer, keep_alive and not self.server._closing.is_set(), request.method == "HEAD")
        except OSError:
            return False  # the client went away or stopped reading (write_timeout_s)
        except Exception:
            _log.exception("HTTP response body failed for %s %s", request.method, request.target)
            return False

    def _parse(self, head: bytes) -> tuple[Request, bool]:
        lines = head[:-4].split(b"\r\n")
        if len(lines) - 1 > self.server.limits.max_header_lines:
            raise _Refusal(431, "too many header lines")
        parts = lines[0].split(b" ")
        if len(parts) != 3 or not _TOKEN.match(parts[0]) or not parts[1] or b"\n" in lines[0]:
            raise _Refusal(400, "malformed request line")
        method, target, version = parts
        if version not in _VERSIONS:
            raise _Refusal(505 if version.startswith(b"HTTP/") else 400, "only HTTP/1.1 and HTTP/1.0 are served")
        headers: list[tuple[str, str]] = []
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon or not _TOKEN.match(name) or b"\n" in line or b"\r" in line:
                raise _Refusal(400, "malformed header line (folded lines and whitespace before ':' are refused)")
            headers.append((name.decode("ascii"), value.strip(b" \t").decode("latin-1")))
        lowered = [(name.lower(), value) for name, value in headers]
        if any(name == "transfer-encoding" for name, _ in lowered):
            raise _Refusal(400, "Transfer-Encoding is not supported; send Content-Length")
        lengths = [value for name, value in lowered if name == "content-length"]
        if len(lengths) > 1:
            raise _Refusal(400, "Content-Length must appear once")
        length = 0
        if lengths:
            if not lengths[0].isdigit() or not lengths[0].isascii() or len(lengths[0]) > 18:
                raise _Refusal(400, "Content-Length must be one decimal number")
            length = int(lengths[0])
        expects = [value.lower() for name, value in lowered if name == "expect"]
        if expects and expects != ["100-continue"]:
            raise _Refusal(417, "only 'Expect: 100-continue' is supported")
        connection = {token.strip().lower() for name, value in lowered if name == "connection"
                      for token in value.split(",")}
        keep_alive = "close" not in connection and (version == b"HTTP/1.1" or "keep-alive" in connection)
        request = Request(self, method.decode("ascii"), target.decode("latin-1"), version.decode("ascii"),
                          headers, length, bool(expects) and version == b"HTTP/1.1")
        return request, keep_alive

    def _write_simple(self, status: int, reason: str) -> None:
        body = reason.encode("utf-8") + b"\n"
        try:
            self.send(_head(status, [("Content-Type", "text/plain; charset=utf-8"),
                                     ("Content-Length", str(len(body)))], False) + body)
        except OSError:  # pragma: no cover - the refused client is already gone
            pass

    def _write(self, answer: _Answer, keep_alive: bool, head_only: bool = False) -> bool:
        body = answer.body
        headers = list(answer.headers)
        has_length = any(name.lower() == "content-length" for name, _ in headers)
        wants_close = any(name.lower() == "connection" and value.lower() == "close" for name, value in headers)
        if isinstance(body, (list, tuple)) and all(isinstance(piece, bytes) for piece in body):
            body = b"".join(body)
        if isinstance(body, (bytes, bytearray)):
            if not has_length:
                headers.append(("Content-Length", str(len(body))))
            keep = keep_alive and not wants_close
            try:
                self.send(_head(answer.status, headers, keep) + (b"" if head_only else bytes(body)))
            finally:
                _close_body(answer.body)
            return keep
        keep = keep_alive and has_length and not wants_close
        pieces = iter(body)
        try:
            self.send(_head(answer.status, headers, keep))
            for piece in () if head_only else pieces:
                if piece:
                    self.send(piece)
        finally:
            _close_body(body)
        return keep


def _close_body(body: object) -> None:
    close = getattr(body, "close", None)
    if callable(close):
        close()


def _head(status: int, headers: list[tuple[str, str]], keep_alive: bool) -> bytes:
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "Status"
    lines = [f"HTTP/1.1 {status} {phrase}"]
    lines += [f"{name}: {value}" for name, value in headers if name.lower() != "connection"]
    lines.append("Connection: keep-alive" if keep_alive else "Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


# ----------------------------------------------------------------------------- WSGI


class _WsgiInput:
    """``wsgi.input``: reads only the request's own body, bounded by its deadline."""

    def __init__(self, request: Request) -> None:
        self._request = request

    def read(self, size: int | None = -1) -> bytes:
        return self._request.read_body(-1 if size is None else size)

    def readline(self, size: int | None = -1) -> bytes:
        line = bytearray()
        while (size is None or size < 0 or len(line) < size) and (byte := self._request.read_body(1)):
            line += byte
            if byte == b"\n":
                break
        return bytes(line)

    def readlines(self, hint: int = -1) -> list[bytes]:
        return list(iter(self.readline, b""))

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.readline, b"")


def wsgi_handler(app: Callable[..., Iterable[bytes]]) -> Callable[[Request], Response]:
    """Adapt a WSGI application to :class:`HttpServer` (header names with ``_`` are dropped)."""
    def handle(request: Request) -> Response:
        path, _, query = request.target.partition("?")
        host, port = request.server_address
        environ: dict[str, Any] = {
            "REQUEST_METHOD": request.method, "SCRIPT_NAME": "", "PATH_INFO": unquote(path, "latin-1"),
            "QUERY_STRING": query, "SERVER_NAME": str(host), "SERVER_PORT": str(port),
            "SERVER_PROTOCOL": request.version, "REMOTE_ADDR": request.client_address[0],
            "wsgi.version": (1, 0), "wsgi.url_scheme": "https" if request.tls else "http",
            "wsgi.input": _WsgiInput(request), "wsgi.errors": sys.stderr, "wsgi.multithread": True,
            "wsgi.multiprocess": False, "wsgi.run_once": False,
        }
        for name, value in request.headers:
            if "_" in name:
                continue  # would be indistinguishable from a dash once in the environ
            key = name.upper().replace("-", "_")
            if key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
                environ[key] = value
                continue
            key = "HTTP_" + key
            environ[key] = f"{environ[key]},{value}" if key in environ else value
        started: list[Response] = []

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], None]:
            if exc_info is not None and started:
                raise exc_info[1].with_traceback(exc_info[2])
            started[:] = [Response(int(status.split(" ", 1)[0]), list(headers))]
            return _no_write

        result = app(environ, start_response)
        if not started:  # a lazy app calls start_response on its first piece
            iterator = iter(result)
            first = next(iterator, b"")
            response = started[0]
            response.body = _chain(first, iterator, result)
            return response
        started[0].body = result
        return started[0]

    return handle


def _no_write(data: bytes) -> None:
    raise HttpServerError("the WSGI write() callable is not supported; return an iterable")


def _chain(first: bytes, rest: Iterator[bytes], owner: Iterable[bytes]) -> Iterator[bytes]:
    try:
        yield first
        yield from rest
    finally:
        _close_body(owner)
