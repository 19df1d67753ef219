"""Shared plumbing of the Anthropic and Gemini adapters: path-checked JSON reading and SSE streams.

Job
    * :class:`JsonReader` reads a decoded provider JSON document with a JSON path attached to
      every failure, so malformed responses raise the adapter's *named* decode error (never a
      ``KeyError``/``TypeError`` from deep inside a decoder).
    * :class:`SseModelStream` is the ``StreamedResponse`` both adapters return: it owns one open
      :class:`~zigai.provider.ProviderLineStream`, frames server-sent events with
      :func:`~zigai.providers.sse.iter_sse_events` and hands each event to a pure, adapter-specific
      state machine (``feed(event) -> list[ModelStreamEvent]``, ``finish()``), copying usage and
      finish reason from it as they arrive.
    * :func:`effective_request` applies a client's model-level settings under the request's.

Invariants: nothing here knows a wire format; the stream is released on exhaustion, on error
and on ``close()``; HTTP errors surface when the stream is opened, before any event.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import Any, Protocol

from zigai.messages.json_value import thaw_json
from zigai.model import ModelRequest, ModelStreamEvent, StreamedResponse
from zigai.provider import ProviderLineStream, ProviderResponseDecodeError, parse_provider_json
from zigai.providers.sse import SseEvent, iter_sse_events
from zigai.settings import ModelSettings

__all__ = ["JsonReader", "SseModelStream", "StreamStateMachine", "effective_request", "plain_json"]


def plain_json(value: Any) -> Any:
    """A mutable deep copy of an immutable message JSON value (FrozenDict/tuple -> dict/list)."""
    return thaw_json(value)


def effective_request(request: ModelRequest, settings: ModelSettings | None) -> ModelRequest:
    """``request`` with the client's settings merged *below* the request's own settings."""
    if settings is None:
        return request
    merged = settings.merged(request.settings)
    if merged == request.settings:
        return request
    return replace(request, settings=merged)


class JsonReader:
    """Typed access to a decoded JSON document; failures raise ``error(message, path=...)``."""

    __slots__ = ("_error",)

    def __init__(self, error: type[ProviderResponseDecodeError]) -> None:
        self._error = error

    def fail(self, path: str, message: str) -> ProviderResponseDecodeError:
        return self._error(f"{path}: {message}", path=path)  # type: ignore[call-arg]

    def obj(self, value: Any, path: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, f"expected an object, got {_kind(value)}")
        return value

    def arr(self, value: Any, path: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(path, f"expected an array, got {_kind(value)}")
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
            raise self.fail(f"{path}.{key}", f"expected a string, got {_kind(value)}")
        return value

    def opt_str(self, container: dict[str, Any], key: str, path: str) -> str | None:
        value = container.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.fail(f"{path}.{key}", f"expected a string, got {_kind(value)}")
        return value

    def opt_int(self, container: dict[str, Any], key: str, path: str) -> int | None:
        value = container.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(f"{path}.{key}", f"expected a non-negative integer, got {_kind(value)}")
        return value

    def parse(self, data: str | bytes, path: str = "$") -> Any:
        try:
            return parse_provider_json(data)
        except ProviderResponseDecodeError as exc:
            raise self.fail(path, str(exc)) from None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


class StreamStateMachine(Protocol):
    """What :class:`SseModelStream` needs from an adapter's stream decoder."""

    usage: Any
    finish_reason: Any
    raw_finish_reason: str | None
    response_id: str | None
    model_name: str | None

    def feed(self, event: SseEvent) -> list[ModelStreamEvent]: ...

    def finish(self) -> list[ModelStreamEvent]: ...


class SseModelStream(StreamedResponse):
    """A streamed model response read from one provider line stream through a decoder."""

    def __init__(
        self,
        context: AbstractContextManager[ProviderLineStream],
        decoder: StreamStateMachine,
        *,
        model_name: str,
        provider_name: str,
    ) -> None:
        super().__init__(model_name=model_name, provider_name=provider_name)
        self._decoder = decoder
        self._context = context
        # Entering raises the provider's normalized HTTP error before any event exists.
        self._lines = context.__enter__()
        self._open = True

    def _sync(self) -> None:
        decoder = self._decoder
        self.usage = decoder.usage
        self.finish_reason = decoder.finish_reason
        self.raw_finish_reason = decoder.raw_finish_reason
        self.provider_response_id = decoder.response_id
        if decoder.model_name:
            self.model_name = decoder.model_name

    def _events(self) -> Iterator[ModelStreamEvent]:
        for event in iter_sse_events(self._lines):
            produced = self._decoder.feed(event)
            self._sync()
            yield from produced
        produced = self._decoder.finish()
        self._sync()
        yield from produced

    def _release(self) -> None:
        if self._open:
            self._open = False
            self._context.__exit__(None, None, None)
