"""Guarded connection setup for HttpTransport: name resolution, optional pinning, connect.

Job
    Replace urllib3's socket creation with one that (a) resolves the name within the
    request's deadline and cancellation, (b) in resolve-and-pin mode checks every resolved
    address against the :class:`~zigai.security.UrlPolicy` before connecting, (c) connects in
    bounded slices so a deadline or a cancel interrupts a hanging connect, and (d) hands the
    socket to the request's :class:`~zigai.transport._guard.IoGuard` before any byte moves.

Invariants
    * Only the socket's destination changes: urllib3 still sends ``Host`` for the URL's name
      and TLS still uses that name for SNI and certificate verification, so pinning never
      weakens TLS.
    * In pin mode a name is refused when *any* of its addresses is refused (a name that mixes
      public and private records is a rebinding setup, not a load balancer to pick from).
    * Connections are made by these classes only; urllib3 is imported by the caller
      (:func:`pool_classes` takes the module) so importing this file imports no third party.
    * A *reused* keep-alive connection whose peer closed or reset it before sending a single
      response byte fails with :class:`StaleConnection` (the caller may retry that once on a
      fresh connection); a fresh connection, or one that received any byte, never does.  The
      first byte is detected exactly: the response peeks at its buffered reader before
      http.client parses the status line, so a reset is told apart from a partial response.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import selectors
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from zigai.security import UrlPolicy
from zigai.transport._guard import IoGuard, current_guard

__all__ = [
    "Resolver",
    "StaleConnection",
    "fresh_connections",
    "open_socket",
    "pool_classes",
    "resolve",
]

Resolver = Callable[[str], Iterable[str]]
"""A custom name resolver: host name -> IP address strings (IPv4 or IPv6)."""

Address = tuple[int, Any]  # (address family, sockaddr)

_MAX_PARALLEL_LOOKUPS = 8
_lookup_slots = threading.BoundedSemaphore(_MAX_PARALLEL_LOOKUPS)


class StaleConnection(ConnectionResetError):
    """A reused pooled connection the peer had already closed: no response byte arrived."""


_reuse = threading.local()


class fresh_connections:
    """``with fresh_connections():`` makes this thread's requests skip idle pooled sockets."""

    __slots__ = ("_previous",)

    def __init__(self) -> None:
        self._previous = False

    def __enter__(self) -> None:
        self._previous = getattr(_reuse, "fresh", False)
        _reuse.fresh = True

    def __exit__(self, *exc: object) -> None:
        _reuse.fresh = self._previous


def _literal(host: str, port: int) -> list[Address] | None:
    try:
        parsed = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None
    if isinstance(parsed, ipaddress.IPv4Address):
        return [(socket.AF_INET, (str(parsed), port))]
    return [(socket.AF_INET6, (str(parsed), port, 0, 0))]


def _lookup(host: str, port: int, resolver: Resolver | None) -> list[Address]:
    if resolver is not None:
        found: list[Address] = []
        for text in resolver(host):
            literal = _literal(str(text), port)
            if literal is None:
                raise socket.gaierror(socket.EAI_NONAME, f"resolver returned {text!r}")
            found.extend(literal)
        return found
    family = socket.AF_UNSPEC if socket.has_ipv6 else socket.AF_INET
    return [
        (info[0], info[4])
        for info in socket.getaddrinfo(host, port, family, socket.SOCK_STREAM)
    ]


def resolve(host: str, port: int, guard: IoGuard, resolver: Resolver | None = None) -> list[Address]:
    """The addresses of ``host``; bounded by the guard when it watches a deadline or token.

    The OS resolver cannot be interrupted, so a watched lookup runs on a short-lived daemon
    thread (at most :data:`_MAX_PARALLEL_LOOKUPS` at once) while this thread waits in slices;
    a lookup that outlives its request is abandoned and its answer dropped.
    """
    literal = _literal(host, port)
    if literal is not None:
        return literal
    if not guard.watched:
        addresses = _lookup(host, port, resolver)
    else:
        while not _lookup_slots.acquire(timeout=guard.slice()):
            guard.check()
        box: dict[str, Any] = {}
        done = threading.Event()

        def work() -> None:
            try:
                box["value"] = _lookup(host, port, resolver)
            except BaseException as exc:  # handed to the waiting thread
                box["error"] = exc
            finally:
                _lookup_slots.release()
                done.set()

        threading.Thread(target=work, name="zigai-dns", daemon=True).start()
        while not done.wait(guard.slice()):
            guard.check()
        if "error" in box:
            raise box["error"]
        addresses = box["value"]
    if not addresses:
        raise socket.gaierror(socket.EAI_NONAME, "name resolved to no address")
    return addresses


def _connect(sock: socket.socket, address: Any, timeout: float | None, guard: IoGuard) -> None:
    sock.setblocking(False)
    err = sock.connect_ex(address)
    if err in (errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EALREADY):
        give_up = None if timeout is None else time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(sock, selectors.EVENT_WRITE)
            while True:
                guard.check()
                left = None if give_up is None else give_up - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError("connect timed out")
                if selector.select(guard.slice(left)):
                    break
        err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if err:
        raise OSError(err, os.strerror(err))


def open_socket(
    host: str,
    port: int,
    timeout: float | None,
    guard: IoGuard,
    *,
    pin_policy: UrlPolicy | None = None,
    resolver: Resolver | None = None,
    source_address: tuple[str, int] | None = None,
    socket_options: Sequence[tuple[int, int, int | bytes]] | None = None,
) -> socket.socket:
    """A connected socket to ``host:port`` (the first address that answers), already
    attached to ``guard``; with ``pin_policy`` every resolved address is checked first."""
    addresses = resolve(host, port, guard, resolver)
    if pin_policy is not None:
        for _, sockaddr in addresses:
            pin_policy.check_resolved_address(host, sockaddr[0])
    last: OSError | None = None
    for family, sockaddr in addresses:
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            for level, option, value in socket_options or ():
                sock.setsockopt(level, option, value)
            if source_address is not None:
                sock.bind(source_address)
            guard.attach(sock)
            _connect(sock, sockaddr, timeout, guard)
            sock.settimeout(timeout)
            return sock
        except OSError as exc:
            sock.close()
            last = exc
        except BaseException:
            sock.close()
            raise
    assert last is not None
    raise last


def _seconds(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def pool_classes(
    urllib3: Any, pin_policy: UrlPolicy | None, resolver: Resolver | None
) -> dict[str, type]:
    """urllib3 pool classes whose connections use :func:`open_socket` and the current guard."""
    import http.client
    import ssl

    from urllib3 import connection as u3_connection
    from urllib3 import connectionpool
    from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError

    class _FirstByteResponse(http.client.HTTPResponse):
        def begin(self) -> None:
            if self.headers is None:  # pragma: no branch - http.client begins a response once
                try:
                    self.fp.peek(1)  # b"" (a clean close) makes http.client raise below
                except (ConnectionResetError, ConnectionAbortedError, ssl.SSLEOFError) as exc:
                    raise http.client.RemoteDisconnected(
                        "the peer reset the connection before any response byte"
                    ) from exc
            super().begin()

    class _Guarded:
        response_class: type[http.client.HTTPResponse] = _FirstByteResponse
        # True while the current socket has already delivered a response head
        _zigai_served = False
        _zigai_reused = False

        def _new_conn(self: Any) -> socket.socket:
            guard = current_guard() or IoGuard(None, None, "")
            try:
                sock = open_socket(
                    self._dns_host,
                    self.port,
                    _seconds(self.timeout),
                    guard,
                    pin_policy=pin_policy,
                    resolver=resolver,
                    source_address=self.source_address,
                    socket_options=self.socket_options,
                )
            except socket.gaierror as exc:
                raise NameResolutionError(self.host, self, exc) from exc
            except TimeoutError as exc:
                raise ConnectTimeoutError(self, f"Connection to {self.host} timed out.") from exc
            except OSError as exc:
                raise NewConnectionError(self, f"Failed to establish a new connection: {exc}") from exc
            sys.audit("http.client.connect", self, self.host, self.port)
            self._zigai_served = False
            return sock

        def request(self: Any, *args: Any, **kwargs: Any) -> Any:
            self._zigai_reused = self.sock is not None and self._zigai_served
            guard = current_guard()
            if guard is not None and self.sock is not None:
                guard.attach(self.sock)  # a pooled connection starts a new request
            try:
                return super().request(*args, **kwargs)  # type: ignore[misc]
            except ssl.SSLEOFError as exc:
                if not self._zigai_reused:
                    raise
                # TLS reports a peer gone mid-write as EOF; as with a plain socket's EPIPE,
                # urllib3 then reads whatever the peer answered and the read side decides
                raise BrokenPipeError(errno.EPIPE, "the peer closed the connection") from exc

        def getresponse(self: Any) -> Any:
            try:
                response = super().getresponse()  # type: ignore[misc]
            except http.client.RemoteDisconnected as exc:
                if self._zigai_reused:
                    raise StaleConnection(
                        "a reused keep-alive connection was closed by the peer before any "
                        "response byte"
                    ) from exc
                raise
            self._zigai_served = True
            return response

    class GuardedHTTPConnection(_Guarded, u3_connection.HTTPConnection):
        pass

    class GuardedHTTPSConnection(_Guarded, u3_connection.HTTPSConnection):
        pass

    class _FreshWhenAsked:
        def _get_conn(self: Any, timeout: float | None = None) -> Any:
            conn = super()._get_conn(timeout)  # type: ignore[misc]
            if getattr(_reuse, "fresh", False) and conn.sock is not None:
                conn.close()  # an idle pooled socket: reconnect instead
            return conn

    class GuardedHTTPPool(_FreshWhenAsked, connectionpool.HTTPConnectionPool):
        ConnectionCls = GuardedHTTPConnection

    class GuardedHTTPSPool(_FreshWhenAsked, connectionpool.HTTPSConnectionPool):
        ConnectionCls = GuardedHTTPSConnection

    return {"http": GuardedHTTPPool, "https": GuardedHTTPSPool}
