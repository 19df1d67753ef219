"""The Provider boundary: authenticated, policy-checked HTTP on behalf of model adapters.

Job
    A :class:`Provider` owns everything a model adapter must not see or duplicate: the
    credential, the API root, configured headers, the outbound URL policy, the per-attempt
    request timeout, the transport and profile lookup.  Adapters hand it a
    :class:`ProviderHttpRequest` with a *relative* endpoint and a JSON body and get back a
    :class:`ProviderHttpResponse` (2xx only) or a :class:`ProviderLineStream`.
    ``zigai.providers.http.Configured`` is the standard implementation.

Invariants
    * Non-2xx answers never reach the adapter as data.  The provider reads them as a bounded
      body, decodes ``code``/``message`` (:func:`decode_error_body`), reports a
      :class:`ProviderErrorView` to the request's ``error_observer`` and raises the
      :class:`~zigai.errors.ProviderRequestError` subclass chosen by status.  Because this
      happens inside the provider, credential redaction never requires exposing a secret to an
      adapter.
    * Response headers given to adapters are the redacted view (sensitive names show
      ``[REDACTED]``); request ids are bounded by the transport (256 bytes).
    * ``ProviderHttpResponse.json()`` is bounded by ``zigai.json.defaults.provider_response``;
      malformed JSON raises :class:`ProviderResponseDecodeError` (retry category ``decode``),
      while a size/depth limit failure keeps its own ``JsonError`` (never retried).

Submodules: ``operations`` (the optional operations and :class:`UnsupportedProviderOperation`),
``discovery`` (``list_models`` values and the bounded page loop), ``files`` (provider files:
inputs, descriptors, owners, limits, multipart framing), ``http_request``
(:class:`ProviderHttpRequest`, a value the submodules share without importing this package).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from zigai.errors import JsonError
from zigai.model.profile import ModelProfile
from zigai.provider._errors import (
    MAX_ERROR_CODE_CHARS,
    MAX_ERROR_MESSAGE_CHARS,
    ProviderAuthError,
    ProviderBadRequest,
    ProviderClientError,
    ProviderConnectionError,
    ProviderErrorView,
    ProviderNotFound,
    ProviderResponseDecodeError,
    ProviderServerError,
    RateLimited,
    UnexpectedRedirect,
    decode_error_body,
    error_class_for_status,
    raise_provider_error,
    redact_body,
)
from zigai.provider.discovery import (
    DiscoveryLimitExceeded,
    DiscoveryLimits,
    DuplicateDiscoveredModel,
    InvalidModelListing,
    OwnedProviderModels,
    ProviderModelDescriptor,
)
from zigai.provider.files import (
    ForeignProviderFile,
    InvalidProviderFileHandle,
    InvalidProviderFileInput,
    InvalidProviderFileResponse,
    OwnedProviderFile,
    OwnedProviderFileDownload,
    ProviderFile,
    ProviderFileInput,
    ProviderFileLimits,
    ProviderFileTooLarge,
    UploadSessionRejected,
)
from zigai.provider.http_request import ProviderHttpRequest
from zigai.provider.operations import ProviderOperations, UnsupportedProviderOperation
from zigai.transport.base import Headers

__all__ = [
    "DiscoveryLimitExceeded",
    "DiscoveryLimits",
    "DuplicateDiscoveredModel",
    "ForeignProviderFile",
    "InvalidModelListing",
    "InvalidProviderFileHandle",
    "InvalidProviderFileInput",
    "InvalidProviderFileResponse",
    "OwnedProviderFile",
    "OwnedProviderFileDownload",
    "OwnedProviderModels",
    "ProviderFile",
    "ProviderFileInput",
    "ProviderFileLimits",
    "ProviderFileTooLarge",
    "ProviderModelDescriptor",
    "ProviderOperations",
    "UnsupportedProviderOperation",
    "UploadSessionRejected",
    "MAX_ERROR_CODE_CHARS",
    "MAX_ERROR_MESSAGE_CHARS",
    "Headers",
    "Provider",
    "ProviderAuthError",
    "ProviderBadRequest",
    "ProviderClientError",
    "ProviderConnectionError",
    "ProviderErrorView",
    "ProviderHttpRequest",
    "ProviderHttpResponse",
    "ProviderLineStream",
    "ProviderNotFound",
    "ProviderResponseDecodeError",
    "ProviderServerError",
    "RateLimited",
    "UnexpectedRedirect",
    "decode_error_body",
    "parse_provider_json",
    "error_class_for_status",
    "raise_provider_error",
    "redact_body",
]


@dataclass(frozen=True, slots=True)
class ProviderHttpResponse:
    """A buffered 2xx response as the adapter sees it (headers already redacted)."""

    status: int
    headers: Headers
    body: bytes
    request_id: str | None = None

    def json(self) -> Any:
        """The body as a JSON value, bounded by the provider-response JSON limits."""
        return parse_provider_json(self.body, status=self.status, request_id=self.request_id)


def parse_provider_json(
    data: bytes | str, *, status: int | None = None, request_id: str | None = None
) -> Any:
    """Bounded JSON decoding for provider payloads (whole bodies or one SSE ``data`` field).

    Malformed JSON becomes :class:`ProviderResponseDecodeError`; limit failures keep their own
    named ``JsonError`` because a bigger answer will not shrink on retry.
    """
    from zigai import json as zjson

    try:
        return zjson.parse(data, zjson.defaults.provider_response)
    except zjson.MalformedJson as exc:
        raise ProviderResponseDecodeError(
            f"provider response is not valid JSON: {exc}",
            status=status,
            request_id=request_id,
        ) from None
    except JsonError:
        raise


class ProviderLineStream:
    """An open 2xx streamed response: status, redacted headers, request id and its body.

    Read the body once, either as lines (iterate: each item is one line without its
    terminator) or as decoded byte pieces split anywhere (:meth:`chunks`, terminators kept);
    both are bounded by the transport's line limit.  Leaving the ``stream_lines`` context (or
    :meth:`close`) releases the connection; nothing can be read afterwards.
    """

    __slots__ = ("status", "headers", "request_id", "_lines", "_chunks", "_closed", "_on_close")

    def __init__(
        self,
        status: int,
        headers: Headers,
        request_id: str | None,
        lines: Iterator[bytes],
        on_close: Callable[[], None] | None = None,
        *,
        chunks: Iterator[bytes] | None = None,
    ) -> None:
        self.status = status
        self.headers = headers
        self.request_id = request_id
        self._lines = lines
        self._chunks = chunks
        self._closed = False
        self._on_close = on_close

    def _read(self, source: Iterator[bytes]) -> Iterator[bytes]:
        while True:
            if self._closed:
                raise ValueError("provider line stream used after close")
            try:
                item = next(source)
            except StopIteration:
                return
            yield item

    def __iter__(self) -> Iterator[bytes]:
        return self._read(self._lines)

    @property
    def has_raw_chunks(self) -> bool:
        """True when :meth:`chunks` hands over the transport's own bytes unchanged (binary
        framing such as AWS EventStream needs this); False when they are rebuilt from lines."""
        return self._chunks is not None

    def chunks(self) -> Iterator[bytes]:
        """The body as decoded pieces; rebuilt from the lines when the transport has none."""
        if self._chunks is not None:
            return self._read(self._chunks)
        return self._read(line + b"\n" for line in self._lines)

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            if self._on_close is not None:
                self._on_close()

    def __repr__(self) -> str:
        return (
            f"ProviderLineStream(status={self.status}, request_id={self.request_id!r}, "
            f"closed={self._closed})"
        )


@runtime_checkable
class Provider(Protocol):
    """The borrowed operations boundary every model adapter talks through.

    ``send`` returns only 2xx responses; every other status raises a
    :class:`~zigai.errors.ProviderRequestError` subclass after the request's error observer
    saw it.  ``stream_lines`` does the same before yielding the stream.  ``profile_for``
    returns the provider's profile for a model name, or None when it has no opinion.
    """

    name: str

    def send(self, request: ProviderHttpRequest) -> ProviderHttpResponse: ...

    def stream_lines(
        self, request: ProviderHttpRequest
    ) -> AbstractContextManager[ProviderLineStream]: ...

    def profile_for(self, model_name: str) -> ModelProfile | None: ...

