"""Transport contract: request/response values, limits, the Transport protocol and its errors.

Job
    Everything a provider adapter needs to talk HTTP without knowing which HTTP client is used:
    :class:`TransportRequest`, the buffered :class:`TransportResponse`, the line-streaming
    :class:`StreamResponse` protocol, :class:`Limits`, :class:`RedirectPolicy` and the stable
    error classes.  No I/O happens here.

Invariants
    * Requests are validated on construction (method token, header names and values free of
      CR/LF/NUL, bytes body, finite deadline, cancellation token type); an invalid request raises
      :class:`InvalidTransportRequest` before any transport sees it.
    * Response values are immutable.  ``request_id`` is at most
      :data:`MAX_REQUEST_ID_BYTES` printable ASCII bytes.
    * Limits count *decompressed* bytes; a body or line exactly at its limit is accepted, one
      byte more raises :class:`ResponseTooLarge` / :class:`StreamLineTooLarge`.  The stream line
      limit excludes the line terminator (``\\n`` or ``\\r\\n``).
    * A response-header sink receives a :class:`ResponseHeaderView` that is usable only while
      the response is open; afterwards every accessor raises ``ValueError``.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, runtime_checkable

from zigai.control import CancellationToken
from zigai.errors import TransportError

__all__ = [
    "MAX_REQUEST_ID_BYTES",
    "MIB",
    "ChunkedStreamResponse",
    "Headers",
    "InvalidTransportRequest",
    "Limits",
    "RedirectPolicy",
    "RedirectRejected",
    "ResponseHeaderSink",
    "ResponseHeaderView",
    "ResponseHeadersTooLarge",
    "ResponseTooLarge",
    "StreamLineTooLarge",
    "StreamResponse",
    "Transport",
    "TransportConnectionFailed",
    "TransportDecodeFailed",
    "TransportRequest",
    "TransportResponse",
    "TransportTimedOut",
]

MIB = 1024 * 1024
MAX_REQUEST_ID_BYTES = 256


# ----------------------------------------------------------------------------- errors


class ResponseTooLarge(TransportError):
    """A buffered (decompressed) response body exceeded ``Limits.max_response_body_bytes``."""

    def __init__(self, message: str, *, limit: int = 0) -> None:
        super().__init__(message)
        self.limit = limit


class ResponseHeadersTooLarge(TransportError):
    """The status line or header block broke a bound: more than 99 header fields (the HTTP
    client's bound), or one status/header line longer than 65,536 bytes with its CRLF.  Like
    every size failure it is never retried.  ``limit`` is the bound that was broken (a field
    count or a line length in bytes)."""

    def __init__(self, message: str, *, limit: int = 0) -> None:
        super().__init__(message)
        self.limit = limit


class StreamLineTooLarge(TransportError):
    """One streamed (decompressed) line exceeded ``Limits.max_stream_line_bytes``."""

    def __init__(self, message: str, *, limit: int = 0) -> None:
        super().__init__(message)
        self.limit = limit


class TransportConnectionFailed(TransportError):
    """The connection could not be established, or broke before the response completed."""


class TransportTimedOut(TransportError):
    """The request deadline (or a per-operation timeout) expired.

    A request whose ``cancellation`` token is set raises :class:`zigai.control.Cancelled`
    instead, so an explicit cancel is never reported as a timeout."""


class TransportDecodeFailed(TransportError):
    """The response framing or content encoding could not be decoded."""


class RedirectRejected(TransportError):
    """The server answered with a redirect and the policy is :attr:`RedirectPolicy.reject`.

    ``location`` is the Location header without query, fragment or userinfo.
    """

    def __init__(self, message: str, *, status: int = 0, location: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.location = location


class InvalidTransportRequest(TransportError):
    """The request cannot be sent as given (bad method, header injection, bad body/deadline)."""


# ----------------------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on untrusted response allocation, counted after content decompression."""

    max_response_body_bytes: int = 16 * MIB
    max_stream_line_bytes: int = 1 * MIB

    def __post_init__(self) -> None:
        for name in ("max_response_body_bytes", "max_stream_line_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"Limits.{name} must be a non-negative int, got {value!r}")


class RedirectPolicy(enum.Enum):
    """Redirects are never followed; the only choice is what the caller sees."""

    reject = "reject"
    return_response = "return_response"


@dataclass(frozen=True, slots=True)
class Headers:
    """An immutable, ordered header list with case-insensitive lookup; duplicates are kept."""

    items: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, pairs: Iterable[tuple[str, str]]) -> Headers:
        return cls(tuple((str(k), str(v)) for k, v in pairs))

    def get(self, name: str, default: str | None = None) -> str | None:
        """The first value for ``name`` (case-insensitive), or ``default``."""
        wanted = name.lower()
        for key, value in self.items:
            if key.lower() == wanted:
                return value
        return default

    def get_all(self, name: str) -> tuple[str, ...]:
        wanted = name.lower()
        return tuple(value for key, value in self.items if key.lower() == wanted)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


class ResponseHeaderView:
    """Raw status and headers of an open response, handed to a trusted header sink.

    Valid only while the response is open: the transport closes the view when the response is
    released, after which every accessor raises ``ValueError``.  Copy what you need inside the
    callback.
    """

    __slots__ = ("_status", "_headers", "_open")

    def __init__(self, status: int, headers: Headers) -> None:
        self._status = status
        self._headers = headers
        self._open = True

    def _checked(self) -> Headers:
        if not self._open:
            raise ValueError("response header view used after the response was closed")
        return self._headers

    @property
    def is_open(self) -> bool:
        return self._open

    @property
    def status(self) -> int:
        self._checked()
        return self._status

    def get(self, name: str, default: str | None = None) -> str | None:
        return self._checked().get(name, default)

    def get_all(self, name: str) -> tuple[str, ...]:
        return self._checked().get_all(name)

    def items(self) -> tuple[tuple[str, str], ...]:
        return self._checked().items

    def close(self) -> None:
        self._open = False


ResponseHeaderSink = Callable[[ResponseHeaderView], None]

_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_BAD_VALUE = re.compile(r"[\r\n\x00]")


@dataclass(frozen=True, slots=True)
class TransportRequest:
    """One HTTP request.  ``deadline`` is an absolute ``time.monotonic()`` value or None.

    ``cancellation`` is the run's token: a transport that honours it (HttpTransport does, in
    every phase) stops waiting soon after the token is set and raises
    :class:`zigai.control.Cancelled`.
    """

    method: str
    url: str
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes | None = None
    deadline: float | None = None
    response_header_sink: ResponseHeaderSink | None = None
    cancellation: CancellationToken | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.method, str) or not _TOKEN.match(self.method):
            raise InvalidTransportRequest(f"invalid HTTP method {self.method!r}")
        if not isinstance(self.url, str) or not self.url:
            raise InvalidTransportRequest("request URL must be a non-empty string")
        if not isinstance(self.headers, tuple):
            raise InvalidTransportRequest("headers must be a tuple of (name, value) pairs")
        for pair in self.headers:
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise InvalidTransportRequest("headers must be a tuple of (name, value) pairs")
            name, value = pair
            if not isinstance(name, str) or not _TOKEN.match(name):
                raise InvalidTransportRequest(f"invalid header name {name!r}")
            if not isinstance(value, str) or _BAD_VALUE.search(value):
                # the value is not echoed: it may be a credential
                raise InvalidTransportRequest(f"invalid value for header {name!r}")
        if self.body is not None and not isinstance(self.body, bytes):
            raise InvalidTransportRequest("request body must be bytes or None")
        if self.deadline is not None and (
            isinstance(self.deadline, bool)
            or not isinstance(self.deadline, (int, float))
            or not math.isfinite(self.deadline)
        ):
            raise InvalidTransportRequest("deadline must be a finite time.monotonic() value")
        if self.response_header_sink is not None and not callable(self.response_header_sink):
            raise InvalidTransportRequest("response_header_sink must be callable")
        if self.cancellation is not None and not isinstance(self.cancellation, CancellationToken):
            raise InvalidTransportRequest("cancellation must be a zigai.control.CancellationToken")


@dataclass(frozen=True, slots=True)
class TransportResponse:
    """A fully buffered response (body already decompressed and within limits).

    ``rate_limits`` are the response's rate-limit counts as plain integers
    (:func:`zigai.transport.extract_rate_limits`); the standard transport fills them, a
    custom one may leave them empty (providers read the headers themselves).
    """

    status: int
    headers: Headers
    body: bytes
    request_id: str | None = None
    retry_after_s: float | None = None
    date: datetime | None = None
    rate_limits: Mapping[str, int] = field(default_factory=dict)


@runtime_checkable
class StreamResponse(Protocol):
    """An open streamed response.  Consume it with exactly one of :meth:`lines` or
    :meth:`read_body` (or ``chunks``, see :class:`ChunkedStreamResponse`) inside the
    ``stream_lines`` context; leaving the context early releases the connection."""

    @property
    def status(self) -> int: ...

    @property
    def headers(self) -> Headers: ...

    @property
    def request_id(self) -> str | None: ...

    @property
    def retry_after_s(self) -> float | None: ...

    @property
    def date(self) -> datetime | None: ...

    def lines(self) -> Iterator[bytes]:
        """Each line without its terminator, bounded by ``Limits.max_stream_line_bytes``."""
        ...

    def read_body(self) -> bytes:
        """The rest of the body, bounded by ``Limits.max_response_body_bytes`` (for decoding
        non-2xx error bodies)."""
        ...


@runtime_checkable
class ChunkedStreamResponse(StreamResponse, Protocol):
    """A stream response that can also hand over its decoded body in pieces.

    Both built-in transports implement it; a custom transport may offer only :meth:`lines`,
    and provider code then rebuilds the pieces from the lines.
    """

    def chunks(self) -> Iterator[bytes]:
        """The decoded body as it arrives, in pieces split anywhere (terminators kept).

        The line limit still holds: once a line grows past ``Limits.max_stream_line_bytes``
        no further byte is delivered and :class:`StreamLineTooLarge` is raised, so that line
        never reaches the consumer complete.  Pieces let a consumer such as the SSE decoder
        work on many lines per call instead of one.
        """
        ...


@runtime_checkable
class Transport(Protocol):
    """What provider adapters call.  Custom transports are trusted application code."""

    def send(self, request: TransportRequest) -> TransportResponse: ...

    def stream_lines(self, request: TransportRequest) -> AbstractContextManager[StreamResponse]: ...
