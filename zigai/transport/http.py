"""HttpTransport: the standard transport, on one urllib3 ``PoolManager`` with TLS verification.

Job
    Send a :class:`TransportRequest` and return a bounded buffered response or a bounded line
    stream, enforcing the :class:`~zigai.security.UrlPolicy`, the redirect policy, the response
    limits and the request deadline.  urllib3 errors are mapped to the stable transport errors
    here and nowhere else.

Invariants
    * urllib3 is imported when an ``HttpTransport`` is constructed, never at ``import zigai``.
    * Redirects are never followed (urllib3 retries and redirects are disabled).
    * Bodies are requested with ``decode_content=False`` and decoded by
      :class:`~zigai.transport.decoding.BodyDecoder`, so limits apply to decompressed bytes and a
      compression bomb is stopped at limit + 1 bytes.  Accept-Encoding is owned by the transport
      and only names encodings it can bound.
    * A connection is returned to the pool only after its body was read to the end; a response
      abandoned early (error, limit, early stop of a stream) is closed instead.
    * Stale keep-alive: when a *reused* pooled connection fails because the peer closed or
      reset it before any response byte arrived, the request is sent once more on a new
      connection (the peer cannot have answered it).  A new connection that fails, or a
      failure after any response byte, is never resent.  The resend is inside one
      :meth:`send`/:meth:`stream_lines` call, under the same deadline and token.
    * Error messages carry the method and ``scheme://host:port/path`` only, never the query
      (which may hold a key), and never the request headers.

Deadlines and cancellation
    Every request with a deadline or a cancellation token gets an
    :class:`~zigai.transport._guard.IoGuard`: name resolution and connect run in bounded slices
    that re-check it, and a process-wide watchdog thread shuts the request's socket down the
    moment the deadline passes or (within :data:`~zigai.transport._guard.CANCEL_POLL_S`) the
    token is set.  That wakes whatever http.client is blocked in -- writing the request,
    reading a status line or headers that trickle in byte by byte, a body, a silent stream --
    so each phase ends within the remaining time plus a few milliseconds, and the request
    raises :class:`TransportTimedOut` or :class:`zigai.control.Cancelled`.  Decompression
    re-checks the guard between output pieces.  A stopped connection is closed, never pooled.
    What stays outside: a name lookup the OS resolver never returns keeps its (daemon) lookup
    thread until it does; the request itself returns on time.

Resolve and pin
    With ``resolve_and_pin=True`` each new connection resolves its name once, refuses it when
    any address fails :meth:`~zigai.security.UrlPolicy.check_resolved_address`, and connects to
    a checked address; ``Host``, TLS SNI and certificate verification still use the URL's
    name.  ``resolver`` replaces the system resolver (a callable: name -> IP strings).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import Any

from zigai.control import Cancelled
from zigai.security import UrlPolicy, UrlPolicyViolation, UrlRejection
from zigai.transport._connect import Resolver, StaleConnection, fresh_connections, pool_classes
from zigai.transport._guard import IoGuard, guarding
from zigai.transport.base import (
    Headers,
    InvalidTransportRequest,
    Limits,
    RedirectPolicy,
    RedirectRejected,
    ResponseHeadersTooLarge,
    ResponseHeaderView,
    TransportConnectionFailed,
    TransportDecodeFailed,
    TransportError,
    TransportRequest,
    TransportResponse,
    TransportTimedOut,
)
from zigai.transport.decoding import (
    PIECE_BYTES,
    BodyDecoder,
    LineSplitter,
    accept_encoding,
    guarded_pieces,
    read_bounded,
)
from zigai.transport.retry_after import extract_rate_limits, response_metadata

__all__ = ["HttpTransport"]

_ENCODING_OWNED = frozenset({"accept-encoding"})


def _safe_target(method: str, url: str) -> str:
    """``METHOD scheme://authority/path`` without userinfo, query or fragment."""
    cut = len(url)
    for delimiter in "?#":
        position = url.find(delimiter)
        if position != -1:
            cut = min(cut, position)
    text = url[:cut]
    scheme, sep, rest = text.partition("://")
    if sep and "@" in rest.split("/", 1)[0]:
        authority, slash, path = rest.partition("/")
        text = f"{scheme}://{authority.rsplit('@', 1)[1]}{slash}{path}"
    return f"{method} {text}"


def _remaining(deadline: float | None, target: str) -> float | None:
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        raise TransportTimedOut(f"{target}: deadline expired")
    return left


class _OpenResponse:
    """One urllib3 response being consumed under the request's limits, deadline and token."""

    def __init__(
        self, raw: Any, target: str, guard: IoGuard, limits: Limits, view: ResponseHeaderView
    ) -> None:
        self._raw = raw
        self._target = target
        self._guard = guard
        self._limits = limits
        self._view = view
        self._consumed = False
        self._complete = False
        self.status: int = raw.status
        self.headers: Headers = view._headers
        self.request_id: str | None
        self.retry_after_s: float | None
        self.date: datetime | None
        self.request_id, self.retry_after_s, self.date = response_metadata(self.headers)
        self.rate_limits: dict[str, int] = extract_rate_limits(self.headers)
        self._decoder = BodyDecoder(
            self.headers.get("content-encoding"), checkpoint=guard.check if guard.watched else None
        )

    def _raw_chunks(self) -> Iterator[bytes]:
        from urllib3.exceptions import HTTPError

        guard = self._guard
        while True:
            guard.check()
            try:
                chunk = self._raw.read1(PIECE_BYTES, decode_content=False)
            except (HTTPError, OSError) as exc:
                raise guard.failure() or _map_error(exc, self._target) from None
            if not chunk:
                guard.check()  # a socket the watchdog shut down reads as a clean end
                self._complete = True
                return
            yield chunk

    def _take(self) -> None:
        if self._consumed:
            raise ValueError("a stream response can be consumed only once")
        self._consumed = True

    def read_body(self) -> bytes:
        self._take()
        return read_bounded(
            self._raw_chunks(), self._decoder, self._limits.max_response_body_bytes
        )

    def _decoded(self) -> Iterator[bytes]:
        decoder = self._decoder
        for chunk in self._raw_chunks():
            yield from decoder.feed(chunk)
        decoder.finish()

    def lines(self) -> Iterator[bytes]:
        self._take()
        splitter = LineSplitter(self._limits.max_stream_line_bytes)
        for piece in self._decoded():
            yield from splitter.feed(piece)
        yield from splitter.finish()

    def chunks(self) -> Iterator[bytes]:
        self._take()
        yield from guarded_pieces(self._decoded(), self._limits.max_stream_line_bytes)

    def release(self) -> None:
        self._view.close()
        tripped = self._guard.close()
        if self._complete and not tripped:
            self._raw.release_conn()
        else:
            self._raw.close()  # unread bytes (or a shut-down socket) would poison the pool
            self._raw.release_conn()


def _header_limit_error(inner: BaseException, target: str) -> ResponseHeadersTooLarge | None:
    """http.client's header bounds, which it reports as generic protocol errors."""
    import http.client

    max_line: int = getattr(http.client, "_MAXLINE", 65536)
    if isinstance(inner, http.client.LineTooLong):
        return ResponseHeadersTooLarge(
            f"{target}: a response status or header line exceeds {max_line} bytes",
            limit=max_line,
        )
    if type(inner) is http.client.HTTPException and str(inner).startswith("got more than"):
        # http.client counts the blank line that ends the block, so the field bound is one less
        fields: int = getattr(http.client, "_MAXHEADERS", 100) - 1
        return ResponseHeadersTooLarge(
            f"{target}: the response has more than {fields} header fields", limit=fields
        )
    return None


def _map_error(exc: BaseException, target: str) -> TransportError:
    """The one place urllib3 and socket failures become stable transport errors."""
    from urllib3 import exceptions as u3

    detail = type(exc).__name__
    if isinstance(exc, u3.NewConnectionError):  # before ConnectTimeoutError: it subclasses it
        reason = exc.__cause__ or exc.__context__ or exc
        errno = getattr(reason, "errno", None)
        suffix = f" (errno {errno})" if errno else ""
        return TransportConnectionFailed(f"{target}: connection failed: {detail}{suffix}")
    if isinstance(exc, (u3.TimeoutError, TimeoutError)):
        return TransportTimedOut(f"{target}: timed out ({detail})")
    if isinstance(exc, (u3.DecodeError, u3.HeaderParsingError, u3.InvalidHeader)):
        return TransportDecodeFailed(f"{target}: malformed response ({detail})")
    if isinstance(exc, u3.LocationParseError):
        return InvalidTransportRequest(f"{target}: URL could not be parsed")
    if isinstance(exc, u3.ProtocolError):
        inner = exc.args[1] if len(exc.args) > 1 else None
        too_large = _header_limit_error(inner, target) if isinstance(inner, BaseException) else None
        if too_large is not None:
            return too_large
        if isinstance(inner, TimeoutError):
            return TransportTimedOut(f"{target}: timed out ({type(inner).__name__})")
        name = type(inner).__name__ if isinstance(inner, BaseException) else detail
        if name in ("BadStatusLine", "UnknownProtocol"):
            return TransportDecodeFailed(f"{target}: malformed response ({name})")
        return TransportConnectionFailed(f"{target}: connection broken ({name})")
    if isinstance(exc, u3.MaxRetryError) and exc.reason is not None:
        return _map_error(exc.reason, target)
    return TransportConnectionFailed(f"{target}: connection failed ({detail})")


class HttpTransport:
    """The standard :class:`~zigai.transport.Transport` (thread-safe; share one per process).

    ``default_timeout_s`` is the per-operation connect/read timeout for requests that carry no
    deadline; requests with a deadline use the remaining time instead, and the deadline and the
    request's cancellation token bound every phase (see the module docstring).
    ``resolve_and_pin`` checks every address a name resolves to against ``url_policy`` and
    connects only to checked addresses; ``resolver`` replaces the system name resolver.
    """

    def __init__(
        self,
        *,
        limits: Limits | None = None,
        url_policy: UrlPolicy | None = None,
        redirect_policy: RedirectPolicy = RedirectPolicy.reject,
        default_timeout_s: float = 300.0,
        ca_certs: str | None = None,
        max_connections_per_host: int = 10,
        resolve_and_pin: bool = False,
        resolver: Resolver | None = None,
    ) -> None:
        import urllib3  # lazy: only a constructed transport needs it

        self.limits = limits or Limits()
        self.url_policy = url_policy or UrlPolicy()
        self.redirect_policy = redirect_policy
        self.default_timeout_s = default_timeout_s
        self.resolve_and_pin = bool(resolve_and_pin)
        if resolver is not None and not callable(resolver):
            raise TypeError("resolver must be a callable: host name -> IP address strings")
        self._urllib3 = urllib3
        self._accept_encoding = accept_encoding()
        self._pool = urllib3.PoolManager(
            num_pools=16,
            maxsize=max_connections_per_host,
            cert_reqs="CERT_REQUIRED",
            ca_certs=ca_certs,
            retries=False,
        )
        self._pool.pool_classes_by_scheme = pool_classes(
            urllib3, self.url_policy if self.resolve_and_pin else None, resolver
        )
        self._closed = False

    # -- lifecycle ------------------------------------------------------------------------

    def close(self) -> None:
        """Close every pooled connection; the transport cannot be used afterwards."""
        self._closed = True
        self._pool.clear()

    def deinit(self) -> None:
        self.close()

    def __enter__(self) -> HttpTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- Transport ------------------------------------------------------------------------

    def send(self, request: TransportRequest) -> TransportResponse:
        with self._open(request) as response:
            body = response.read_body()
        return TransportResponse(
            status=response.status,
            headers=response.headers,
            body=body,
            request_id=response.request_id,
            retry_after_s=response.retry_after_s,
            date=response.date,
            rate_limits=response.rate_limits,
        )

    def stream_lines(self, request: TransportRequest) -> AbstractContextManager[_OpenResponse]:
        """Open a streamed response; leave the ``with`` block to release the connection."""
        return self._open(request)

    # -- internals ------------------------------------------------------------------------

    @contextmanager
    def _open(self, request: TransportRequest) -> Iterator[_OpenResponse]:
        if self._closed:
            raise InvalidTransportRequest("HttpTransport is closed")
        if not isinstance(request, TransportRequest):
            raise InvalidTransportRequest("expected a TransportRequest")
        target = _safe_target(request.method, request.url)
        self._check_url(request.url)
        token = request.cancellation
        if token is not None and token.cancelled:  # before the deadline: never a timeout
            raise Cancelled(token.reason or f"{target}: request cancelled")
        left = _remaining(request.deadline, target)
        budget = self.default_timeout_s if left is None else left
        timeout = self._urllib3.Timeout(connect=budget, read=budget)
        headers = self._urllib3.HTTPHeaderDict()
        for name, value in request.headers:
            if name.lower() not in _ENCODING_OWNED:
                headers.add(name, value)
        headers["Accept-Encoding"] = self._accept_encoding
        guard = IoGuard(request.deadline, request.cancellation, target)
        try:
            with guarding(guard):
                raw = self._urlopen(request, headers, timeout, guard)
        except (self._urllib3.exceptions.HTTPError, OSError) as exc:
            guard.close()
            raise guard.failure() or _map_error(exc, target) from None
        except BaseException:
            guard.close()
            raise
        view = ResponseHeaderView(raw.status, Headers.of(raw.headers.items()))
        try:
            response = _OpenResponse(raw, target, guard, self.limits, view)
        except BaseException:
            guard.close()
            view.close()
            raw.close()
            raw.release_conn()
            raise
        try:
            if request.response_header_sink is not None:
                request.response_header_sink(view)
            if 300 <= response.status < 400 and response.status != 304:
                if self.redirect_policy is RedirectPolicy.reject:
                    location = response.headers.get("location") or ""
                    safe_location = _safe_target("", location).strip() if location else ""
                    raise RedirectRejected(
                        f"{target}: redirect {response.status} rejected (never followed)",
                        status=response.status,
                        location=safe_location,
                    )
            yield response
        finally:
            response.release()

    def _urlopen(self, request: TransportRequest, headers: Any, timeout: Any, guard: IoGuard) -> Any:
        """urllib3's response head; a stale reused connection is retried once on a new one."""
        def attempt() -> Any:
            return self._pool.urlopen(
                request.method,
                request.url,
                body=request.body,
                headers=headers,
                redirect=False,
                retries=False,
                preload_content=False,
                decode_content=False,
                timeout=timeout,
            )

        try:
            return attempt()
        except self._urllib3.exceptions.ProtocolError as exc:
            cause = exc.args[1] if len(exc.args) > 1 else None
            if not isinstance(cause, StaleConnection) or guard.failure() is not None:
                raise
        # The peer closed an idle keep-alive connection as we reused it, before any response
        # byte, so the request was not answered: send it again, once, on a new connection
        # (same bytes, same idempotency key; callers' retry accounting never sees this).
        with fresh_connections():
            return attempt()

    def _check_url(self, url: str) -> None:
        checked = self.url_policy.check(url)
        # Defense in depth: urllib3 must connect to exactly the host the policy approved.
        parsed = self._urllib3.util.parse_url(url)
        host = (parsed.host or "").lower().strip("[]").rstrip(".")
        if checked.is_ip_literal and ":" in host:
            import ipaddress

            host = str(ipaddress.IPv6Address(host))
        port = parsed.port or (443 if checked.scheme == "https" else 80)
        if host != checked.host or port != checked.port:
            raise UrlPolicyViolation(
                "URL parses ambiguously", reason=UrlRejection.malformed, host=checked.host
            )
