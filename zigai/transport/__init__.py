"""zigai.transport: the HTTP boundary every provider adapter talks through (layer 3).

Job
    Define the :class:`Transport` protocol (buffered :meth:`~Transport.send` and line-streaming
    :meth:`~Transport.stream_lines`), its immutable request/response values, response
    :class:`Limits`, the stable transport errors, and the standard :class:`HttpTransport`.

Invariants
    * Importing this package imports no third-party module; urllib3 is loaded when an
      :class:`HttpTransport` is constructed.
    * Limits count decompressed bytes; exactly-at-limit passes, one byte more raises
      :class:`ResponseTooLarge` or :class:`StreamLineTooLarge`.
    * Redirects are never followed: :class:`RedirectPolicy` chooses between rejecting
      (:class:`RedirectRejected`) and returning the 3xx response.
    * Metadata is factual: ``retry_after_s``, ``request_id`` (<= 256 bytes), ``date`` and the
      rate-limit counts (:func:`extract_rate_limits`, plain ints) are parsed here; whether to
      retry is decided above this layer.

Submodules: ``base`` (values, protocol, errors), ``retry_after`` (Retry-After, Date, request
ids, rate-limit counts), ``decoding`` (bounded content decoding and line splitting), ``http`` (urllib3).
"""

from __future__ import annotations

from zigai.transport.base import (
    MAX_REQUEST_ID_BYTES,
    MIB,
    ChunkedStreamResponse,
    Headers,
    InvalidTransportRequest,
    Limits,
    RedirectPolicy,
    RedirectRejected,
    ResponseHeaderSink,
    ResponseHeadersTooLarge,
    ResponseHeaderView,
    ResponseTooLarge,
    StreamLineTooLarge,
    StreamResponse,
    Transport,
    TransportConnectionFailed,
    TransportDecodeFailed,
    TransportRequest,
    TransportResponse,
    TransportTimedOut,
)
from zigai.transport.decoding import (
    LineSplitter,
    MemoryStreamResponse,
    StreamLineGuard,
    guarded_pieces,
)
from zigai.transport.http import HttpTransport
from zigai.transport.retry_after import (
    REQUEST_ID_HEADERS,
    extract_rate_limits,
    extract_request_id,
    parse_http_date,
    parse_retry_after,
    response_metadata,
)

__all__ = [
    "MAX_REQUEST_ID_BYTES",
    "MIB",
    "REQUEST_ID_HEADERS",
    "ChunkedStreamResponse",
    "Headers",
    "HttpTransport",
    "InvalidTransportRequest",
    "Limits",
    "LineSplitter",
    "MemoryStreamResponse",
    "RedirectPolicy",
    "RedirectRejected",
    "ResponseHeaderSink",
    "ResponseHeaderView",
    "ResponseHeadersTooLarge",
    "ResponseTooLarge",
    "StreamLineGuard",
    "StreamLineTooLarge",
    "StreamResponse",
    "Transport",
    "TransportConnectionFailed",
    "TransportDecodeFailed",
    "TransportRequest",
    "TransportResponse",
    "TransportTimedOut",
    "extract_rate_limits",
    "extract_request_id",
    "guarded_pieces",
    "parse_http_date",
    "parse_retry_after",
    "response_metadata",
]
