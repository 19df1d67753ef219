"""Plumbing shared by every provider adapter: client identity, HTTP requests, JSON, streams.

Job
    * :class:`AdapterClient` is the part of the :class:`~zigai.model.Model` protocol that is the
      same for every adapter ``Client``: ``model_name``/``profile`` properties, ``model()``, and
      :meth:`AdapterClient.checked_request` (client settings merged below the request's, then
      :func:`~zigai.model.check_request_supported` against the resolved profile, before I/O).
    * :func:`http_request` builds the :class:`~zigai.provider.ProviderHttpRequest` for an encoded
      body, copying the run-time fields of the :class:`~zigai.model.ModelRequest` (control, error
      observer, error-body capture) and the profile's idempotency header in one place.
    * :class:`JsonReader` reads a decoded provider JSON document with a JSON path attached to
      every failure, so malformed responses raise the adapter's *named* decode error (never a
      ``KeyError``/``TypeError`` from deep inside a decoder).
    * :class:`DecodedLineStream` is the ``StreamedResponse`` over one open
      :class:`~zigai.provider.ProviderLineStream`: it frames server-sent events with
      :func:`~zigai.providers.sse.iter_sse_batches`, hands each to a pure, adapter-specific state
      machine (``feed(event) -> list[ModelStreamEvent]``, ``finish()``) and copies usage and
      finish reason from it as they arrive.  :class:`SseModelStream` is the same stream opened by
      itself (Anthropic, Gemini).
    * :class:`LazyHttpTransport` creates the standard ``HttpTransport`` on first use.

Invariants: nothing here knows a wire format; the stream is released once, on exhaustion, on
error and on ``close()``; HTTP errors surface when the stream is opened, before any event.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import Any, Protocol, Self, TypeVar

from zigai.json import type_name
from zigai.messages import ProviderDetails
from zigai.messages.json_value import thaw_json
from zigai.messages.media import media_urls_of
from zigai.model import (
    ModelProfile,
    ModelRequest,
    ModelStreamEvent,
    StreamedResponse,
    check_request_supported,
)
from zigai.provider import (
    ProviderHttpRequest,
    ProviderLineStream,
    ProviderResponseDecodeError,
    parse_provider_json,
)
from zigai.providers.sse import SseEvent, iter_sse_batches
from zigai.security import UrlPolicy
from zigai.settings import ModelSettings
from zigai.transport.base import Transport

__all__ = [
    "AdapterClient",
    "DecodedLineStream",
    "JsonReader",
    "LazyHttpTransport",
    "SseModelStream",
    "StreamStateMachine",
    "details_or_none",
    "effective_request",
    "http_request",
    "open_stream",
    "plain_json",
]

_Stream = TypeVar("_Stream", bound=StreamedResponse)


def plain_json(value: Any) -> Any:
    """A mutable deep copy of an immutable message JSON value (FrozenDict/tuple -> dict/list)."""
    return thaw_json(value)


def details_or_none(values: Mapping[str, Any]) -> ProviderDetails | None:
    """``values`` frozen as ProviderDetails; None when there is nothing to keep."""
    return ProviderDetails.from_value(values) if values else None


def effective_request(request: ModelRequest, settings: ModelSettings | None) -> ModelRequest:
    """``request`` with the client's settings merged *below* the request's own settings."""
    if settings is None:
        return request
    merged = settings.merged(request.settings)
    if merged == request.settings:
        return request
    return replace(request, settings=merged)


class AdapterClient:
    """The Model-protocol plumbing every adapter ``Client`` shares.

    A subclass sets ``_model_name``, ``_profile`` and ``settings`` in its ``__init__`` and
    defines ``provider_name`` (each adapter knows where its identity comes from).
    """

    __slots__ = ()

    _model_name: str
    _profile: ModelProfile
    settings: ModelSettings | None

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def profile(self) -> ModelProfile:
        return self._profile

    def model(self) -> Self:
        """The borrowed Model view: this client (keep it and its provider alive)."""
        return self

    def with_profile(self, profile: ModelProfile) -> Self:
        """A copy of this client that declares ``profile`` (same provider, name and settings);
        what :func:`zigai.models.infer_model` returns for a profile override."""
        if not isinstance(profile, ModelProfile):
            raise TypeError("with_profile needs a ModelProfile")
        clone = copy.copy(self)
        object.__setattr__(clone, "_profile", profile)  # the slot each adapter declares
        return clone

    def checked_request(self, request: ModelRequest) -> ModelRequest:
        """``request`` with this client's settings merged below its own, checked before I/O."""
        request = effective_request(request, self.settings)
        check_request_supported(request, self._profile)
        return request


def media_urls(request: ModelRequest) -> tuple[str, ...]:
    """Every ``UrlSource`` URL in ``request``'s messages (user media, speech prompts, files
    and speech in earlier responses): what an encoded body may ask the provider to fetch.
    One structural walk (:mod:`zigai.messages.media`), shared with the agent's checks."""
    return media_urls_of(request.messages)


#: OpenAI's documented client correlation header, which OpenAI-compatible APIs share.
CLIENT_REQUEST_ID = ("x-client-request-id",)


def request_id_headers(
    request: ModelRequest, names: tuple[str, ...] = CLIENT_REQUEST_ID
) -> tuple[tuple[str, str], ...]:
    """The application's correlation id (``RunOptions.request_id``) under each header of
    ``names`` — the provider's documented client request-id header(s) — or nothing."""
    request_id = request.request_id
    return () if request_id is None else tuple((name, request_id) for name in names)


def http_request(
    request: ModelRequest,
    profile: ModelProfile,
    *,
    path: str,
    json_body: Any,
    headers: tuple[tuple[str, str], ...],
    deadline: float | None,
    idempotency_key: str | None,
) -> ProviderHttpRequest:
    """The provider request carrying an encoded body and the run-time fields of ``request``.

    ``deadline`` and ``idempotency_key`` are explicit because adapters choose them
    differently (the Responses client falls back to the run control's deadline; the Chat
    Completions client sends a key only under a header its profile names).
    """
    return ProviderHttpRequest(
        path=path,
        json_body=json_body,
        headers=headers,
        deadline=deadline,
        control=request.control,
        idempotency_key=idempotency_key,
        idempotency_header=profile.idempotency_header,
        error_observer=request.error_observer,
        capture_error_body=request.capture_error_body,
        max_error_body_bytes=request.max_error_body_bytes,
        media_urls=media_urls(request),
        url_policy=request.url_policy,
    )


class LazyHttpTransport:
    """Creates the standard ``HttpTransport`` (with the provider's URL policy) on first use.

    Constructing a provider therefore does no I/O and imports no third-party module; the
    transport is built once, under a lock, by the first request.
    """

    def __init__(self, url_policy: UrlPolicy | None = None) -> None:
        self._policy = url_policy
        self._transport: Transport | None = None
        self._lock = threading.Lock()

    def _get(self) -> Transport:
        with self._lock:
            if self._transport is None:
                from zigai.transport.http import HttpTransport

                self._transport = HttpTransport(url_policy=self._policy)
            return self._transport

    def send(self, request: Any) -> Any:
        return self._get().send(request)

    def stream_lines(self, request: Any) -> Any:
        return self._get().stream_lines(request)


class JsonReader:
    """Typed access to a decoded JSON document; failures raise ``error(message, path=...)``."""

    __slots__ = ("_error",)

    def __init__(self, error: type[ProviderResponseDecodeError]) -> None:
        self._error = error

    def fail(self, path: str, message: str) -> ProviderResponseDecodeError:
        return self._error(f"{path}: {message}", path=path)  # type: ignore[call-arg]

    def obj(self, value: Any, path: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, f"expected an object, got {type_name(value)}")
        return value

    def arr(self, value: Any, path: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(path, f"expected an array, got {type_name(value)}")
        return value

    def field_obj(self, container: dict[str, Any], key: str, path: str) -> dict[str, Any]:
        return self.obj(container.get(key), f"{path}.{key}")

    def opt_obj(self, container: dict[str, Any], key: str, path: str) -> dict[str, Any] | None:
        value = container.get(key)
        return None if value is None else self.obj(value, f"{path}.{key}")

    def opt_arr(self, container: dict[str, Any], key: str, path: str) -> list[Any] | None:
        value = container.get(key)
        return None if value is None else self.arr(value, f"{path}.{key}")

    def str_(self, container: dict[str, Any], key: str, path: str) -> str:
        value = container.get(key)
        if not isinstance(value, str):
            raise self.fail(f"{path}.{key}", f"expected a string, got {type_name(value)}")
        return value

    def opt_str(self, container: dict[str, Any], key: str, path: str) -> str | None:
        value = container.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.fail(f"{path}.{key}", f"expected a string, got {type_name(value)}")
        return value

    def opt_int(self, container: dict[str, Any], key: str, path: str) -> int | None:
        value = container.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(f"{path}.{key}",
                            f"expected a non-negative integer, got {type_name(value)}")
        return value

    def parse(self, data: str | bytes, path: str = "$") -> Any:
        try:
            return parse_provider_json(data)
        except ProviderResponseDecodeError as exc:
            raise self.fail(path, str(exc)) from None


class StreamStateMachine(Protocol):
    """What :class:`SseModelStream` needs from an adapter's stream decoder."""

    usage: Any
    finish_reason: Any
    raw_finish_reason: str | None
    response_id: str | None
    model_name: str | None
    @property
    def provider_details(self) -> ProviderDetails | None:
        """What the buffered decode keeps in ``ResponseMessage.provider_details``."""
        ...

    def feed(self, event: SseEvent) -> list[ModelStreamEvent]: ...

    def finish(self) -> list[ModelStreamEvent]: ...


class DecodedLineStream(StreamedResponse):
    """A streamed model response read from one open provider line stream through a decoder.

    ``context`` is the already entered ``stream_lines`` context manager and ``lines`` what
    entering it returned; the context is exited exactly once, when the response is closed.
    """

    def __init__(
        self,
        context: AbstractContextManager[ProviderLineStream],
        lines: ProviderLineStream,
        decoder: StreamStateMachine,
        *,
        model_name: str,
        provider_name: str,
    ) -> None:
        super().__init__(model_name=model_name, provider_name=provider_name)
        self._context = context
        self._lines = lines
        self._decoder = decoder
        self._open = True

    def _sync(self) -> None:
        """Copy the decoder's summary (usage, finish reason, ids) onto this response."""
        decoder = self._decoder
        self.usage = decoder.usage
        self.finish_reason = decoder.finish_reason
        self.raw_finish_reason = decoder.raw_finish_reason
        self.provider_response_id = decoder.response_id
        self.provider_details = decoder.provider_details
        if decoder.model_name:
            self.model_name = decoder.model_name

    def _events(self) -> Iterator[ModelStreamEvent]:
        feed = self._decoder.feed
        for batch in iter_sse_batches(self._lines.chunks()):
            for event in batch:
                produced = feed(event)
                self._sync()
                yield from produced
        produced = self._decoder.finish()
        self._sync()
        yield from produced

    def _release(self) -> None:
        if self._open:
            self._open = False
            self._context.__exit__(None, None, None)


class SseModelStream(DecodedLineStream):
    """A :class:`DecodedLineStream` that opens ``context`` itself."""

    def __init__(
        self,
        context: AbstractContextManager[ProviderLineStream],
        decoder: StreamStateMachine,
        *,
        model_name: str,
        provider_name: str,
    ) -> None:
        # Entering raises the provider's normalized HTTP error before any event exists.
        super().__init__(context, context.__enter__(), decoder, model_name=model_name,
                         provider_name=provider_name)


def open_stream(
    context: AbstractContextManager[ProviderLineStream],
    build: Callable[[AbstractContextManager[ProviderLineStream], ProviderLineStream], _Stream],
) -> _Stream:
    """Enter ``context`` (HTTP errors raise here) and wrap it; exit it if wrapping fails."""
    lines = context.__enter__()
    try:
        return build(context, lines)
    except BaseException:
        context.__exit__(None, None, None)
        raise
