"""MockTransport: a handler-based Transport for unit tests, plus the shared in-memory responder.

The handler receives each validated :class:`~zigai.transport.TransportRequest` and returns a
:class:`MockResponse` (or raises, e.g. ``TransportTimedOut``, to simulate a failure).  Responses
go through the same limits, metadata parsing, header-sink lifetime and line splitting as the
real HTTP transport, so a test double cannot be more permissive than production.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from zigai.transport import (
    Headers,
    Limits,
    MemoryStreamResponse,
    ResponseHeaderView,
    ResponseTooLarge,
    TransportRequest,
    TransportResponse,
    TransportTimedOut,
    response_metadata,
)

__all__ = ["MockResponse", "MockTransport", "respond_buffered", "respond_streamed"]


@dataclass(frozen=True, slots=True)
class MockResponse:
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""

    @classmethod
    def of_json(
        cls, value: Any, status: int = 200, headers: tuple[tuple[str, str], ...] = ()
    ) -> MockResponse:
        encoded = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
        return cls(status, (("content-type", "application/json"), *headers), encoded)

    @classmethod
    def of_text(
        cls, text: str, status: int = 200, headers: tuple[tuple[str, str], ...] = ()
    ) -> MockResponse:
        return cls(status, headers, text.encode())


def _check_deadline(request: TransportRequest) -> None:
    if request.deadline is not None and time.monotonic() >= request.deadline:
        raise TransportTimedOut(f"{request.method} request deadline expired")


def respond_buffered(
    request: TransportRequest, status: int, headers: Headers, body: bytes, limits: Limits
) -> TransportResponse:
    """Build the buffered response a real transport would return for these bytes."""
    _check_deadline(request)
    view = ResponseHeaderView(status, headers)
    try:
        if request.response_header_sink is not None:
            request.response_header_sink(view)
    finally:
        view.close()
    limit = limits.max_response_body_bytes
    if len(body) > limit:
        raise ResponseTooLarge(f"response body exceeds the {limit}-byte limit", limit=limit)
    request_id, retry_after_s, date = response_metadata(headers)
    return TransportResponse(status, headers, body, request_id, retry_after_s, date)


@contextmanager
def respond_streamed(
    request: TransportRequest, status: int, headers: Headers, body: bytes, limits: Limits
) -> Iterator[MemoryStreamResponse]:
    """The streamed counterpart: same line semantics and header-view lifetime as HTTP."""
    _check_deadline(request)
    view = ResponseHeaderView(status, headers)
    try:
        if request.response_header_sink is not None:
            request.response_header_sink(view)
        yield MemoryStreamResponse(status, headers, body, limits)
    finally:
        view.close()


class MockTransport:
    """A Transport whose responses come from ``handler(request)``; records every request."""

    def __init__(
        self, handler: Callable[[TransportRequest], MockResponse], *, limits: Limits | None = None
    ) -> None:
        self._handler = handler
        self.limits = limits or Limits()
        self.requests: list[TransportRequest] = []

    def _call(self, request: TransportRequest) -> tuple[int, Headers, bytes]:
        self.requests.append(request)
        result = self._handler(request)
        return result.status, Headers.of(result.headers), result.body

    def send(self, request: TransportRequest) -> TransportResponse:
        status, headers, body = self._call(request)
        return respond_buffered(request, status, headers, body, self.limits)

    def stream_lines(self, request: TransportRequest) -> Any:
        status, headers, body = self._call(request)
        return respond_streamed(request, status, headers, body, self.limits)
