"""The shape the native adapters share (Bedrock Converse, Cohere v2, Mistral Conversations).

Job
    * :class:`NativeProvider` is a :class:`~zigai.providers.http.Configured` whose identity,
      default API root and authentication style are class attributes, so each native route
      declares them once and gets the same constructor (credential, transport, root, headers,
      URL policy, profile lookup, per-attempt timeout).
    * :class:`NativeClient` is the client half: the model name, default settings and the
      profile resolved once in the four layers of :func:`zigai.providers.profiles.resolve`
      (explicit profile, else the provider's ``profile_lookup``, the route's built-in family
      table, the route's fail-closed fallback, then ``profile_override``).  It sends encoded
      JSON through the provider and turns every malformed 2xx answer into the route's named
      decode error carrying the HTTP status and request id.
    * :class:`NativeStreamDecoder` is the part bookkeeping every native stream state machine
      shares: indexes in order of first appearance, start / delta / end events, one JSON
      object per event dispatched to the route's handler table, and a terminal-event check
      in :meth:`~NativeStreamDecoder.finish`.
    * :class:`NativeDecodeError` / :class:`NativeEncodeError` are the bases of each route's
      named errors (``path`` names the JSON location that broke the contract).

Invariants: nothing here knows a wire format; clients never see the credential; every
request is checked against the resolved profile before it is encoded.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import replace
from typing import Any, ClassVar

from zigai.errors import ProviderError
from zigai.messages import (
    CapabilityLoadReturnPart,
    FinishReason,
    ProviderDetails,
    ResponseMessage,
    ResponsePart,
    TextPart,
    ThinkingPart,
    ToolAvailabilityPart,
    ToolCallPart,
    ToolOutcome,
)
from zigai.model import (
    ModelProfile,
    ModelRequest,
    ModelStreamEvent,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    TextPartDelta,
    ThinkingPartDelta,
    ToolCallPartDelta,
)
from zigai.model.stream import GrowingParts
from zigai.provider import (
    ProviderHttpRequest,
    ProviderHttpResponse,
    ProviderResponseDecodeError,
)
from zigai.providers import profiles
from zigai.providers._wire import (
    AdapterClient,
    JsonReader,
    LazyHttpTransport,
    SseModelStream,
    StreamStateMachine,
    http_request,
)
from zigai.providers.http import AuthStyle, Configured
from zigai.providers.sse import SseEvent
from zigai.security import UrlPolicy
from zigai.settings import ModelSettings
from zigai.transport.base import Transport
from zigai.usage import RequestUsage

__all__ = [
    "NativeClient", "NativeDecodeError", "NativeEncodeError", "NativeProvider",
    "NativeStreamDecoder", "availability_text", "capability_result",
]


def availability_text(part: ToolAvailabilityPart) -> str:
    """The user-visible note a tool availability change becomes on routes without one."""
    lines = []
    if part.added:
        lines.append("Tools now available: " + ", ".join(part.added))
    if part.removed:
        lines.append("Tools no longer available: " + ", ".join(part.removed))
    return "\n".join(lines)


def capability_result(part: CapabilityLoadReturnPart) -> tuple[Any, bool]:
    """A capability load's tool result (a JSON object on success, else text) and success."""
    if part.outcome is ToolOutcome.success:
        return {"loaded": list(part.loaded), "instructions": list(part.instructions)}, True
    return part.content or part.outcome.value, False


class NativeDecodeError(ProviderResponseDecodeError, ProviderError):
    """A 2xx answer (or one stream event) of a native route broke its wire contract."""

    path: str

    def __init__(self, message: str, *, path: str = "$", **fields: Any) -> None:
        super().__init__(message, **fields)
        self.path = path


class NativeEncodeError(ProviderError):
    """The neutral request cannot be expressed on a native route; nothing was sent."""

    def __init__(self, message: str, *, path: str = "") -> None:
        super().__init__(message)
        self.path = path


class NativeProvider(Configured):
    """Provider state of one native route; subclasses set the three class attributes."""

    __slots__ = ()

    provider_name: ClassVar[str]
    api_base: ClassVar[str | None]
    auth_style: ClassVar[AuthStyle] = AuthStyle.bearer()

    def __init__(
        self,
        api_key: str | None,
        transport: Transport | None = None,
        *,
        base_url: str | None = None,
        headers: Iterable[tuple[str, str]] = (),
        url_policy: UrlPolicy | None = None,
        profile_lookup: Callable[[str], ModelProfile | None] | None = None,
        request_timeout_ms: int | None = None,
        auth: AuthStyle | None = None,
    ) -> None:
        root = base_url if base_url is not None else self.api_base
        if root is None:
            raise ValueError(f"{type(self).__name__} needs base_url")
        super().__init__(
            self.provider_name,
            root,
            transport if transport is not None else LazyHttpTransport(url_policy),
            credential=api_key,
            auth=self.auth_style if auth is None else auth,
            headers=headers,
            url_policy=url_policy,
            request_timeout_ms=request_timeout_ms,
            profile_lookup=profile_lookup,
        )


class NativeClient(AdapterClient):
    """Model name, settings and resolved profile of one native route, plus its send helpers.

    Subclasses set ``decode_error`` (their named decode error), ``fallback_profile`` (the
    fail-closed profile for unknown families) and ``builtin_profile`` (their family table).
    """

    decode_error: ClassVar[type[NativeDecodeError]] = NativeDecodeError
    fallback_profile: ClassVar[ModelProfile] = profiles.UNKNOWN

    def __init__(
        self,
        model_name: str,
        provider: Any,
        settings: ModelSettings | None = None,
        *,
        profile: ModelProfile | None = None,
        profile_override: Callable[[str, ModelProfile], ModelProfile | None] | None = None,
    ) -> None:
        if not isinstance(model_name, str) or not model_name:
            raise ValueError("model_name must be a non-empty string")
        if settings is not None and not isinstance(settings, ModelSettings):
            raise TypeError("settings must be a ModelSettings")
        self._model_name = model_name
        self.provider = provider
        self.settings = settings
        if profile is None:
            profile = profiles.resolve(
                model_name, fallback=self.fallback_profile, lookup=provider.profile_for,
                builtin=type(self).builtin_profile, override=profile_override,
            )
        elif not isinstance(profile, ModelProfile):
            raise TypeError("profile must be a ModelProfile")
        self._profile = profile

    @staticmethod
    def builtin_profile(model_name: str) -> ModelProfile | None:
        """The route's built-in profile for a model family (None: unknown family)."""
        return None

    @property
    def provider_name(self) -> str:
        return str(self.provider.name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_name={self._model_name!r}, provider={self.provider_name!r})"

    # -- sending ----------------------------------------------------------------------------

    def http_request(
        self, request: ModelRequest, path: str, body: Any, headers: Iterable[tuple[str, str]] = ()
    ) -> ProviderHttpRequest:
        """The provider request for an encoded body (request-scoped headers appended)."""
        merged = (*headers, *(request.settings.extra_headers or ()))
        return http_request(request, self._profile, path=path, json_body=body,
                            headers=tuple(merged), deadline=request.effective_deadline,
                            idempotency_key=request.idempotency_key)

    def decoded(self, response: ProviderHttpResponse,
                decode: Callable[[Any], ResponseMessage]) -> ResponseMessage:
        """``decode(response JSON)``; any decode failure becomes the route's named error."""
        try:
            return decode(response.json())
        except NativeDecodeError as exc:
            exc.status, exc.request_id = response.status, response.request_id
            raise
        except ProviderResponseDecodeError as exc:
            raise self.decode_error(str(exc), status=response.status,
                                    request_id=response.request_id,
                                    provider_name=self.provider_name) from None

    def sse_stream(self, http: ProviderHttpRequest, decoder: StreamStateMachine) -> SseModelStream:
        """Open the request as server-sent events read by ``decoder`` (HTTP errors raise here)."""
        return SseModelStream(self.provider.stream_lines(http), decoder,
                              model_name=self._model_name, provider_name=self.provider_name)


Handler = Callable[[Any, dict[str, Any], str, list[ModelStreamEvent]], None]


class NativeStreamDecoder:
    """Part bookkeeping and event dispatch shared by the native stream decoders.

    A subclass sets ``reader`` (its :class:`JsonReader`), ``handlers`` (event type ->
    ``handler(self, payload, path, out)``) and ``terminal`` (the event that must have been
    seen, named in the error when a stream ends early), and sets ``self._complete`` when it
    handles that event.  :meth:`_final_part` may adjust a part as it ends.
    """

    reader: ClassVar[JsonReader]
    handlers: ClassVar[dict[str, Handler]] = {}
    terminal: ClassVar[str] = "the final event"
    #: SSE events without data carry nothing; EventStream events may have an empty payload.
    skip_empty: ClassVar[bool] = True

    def __init__(self, model_name: str | None, provider_name: str) -> None:
        self.provider_name = provider_name
        self.model_name = model_name
        self.usage = RequestUsage()
        self.finish_reason: FinishReason | None = None
        self.raw_finish_reason: str | None = None
        self.response_id: str | None = None
        self._complete = False
        self._events = 0
        self._next = 0
        self._parts = GrowingParts()
        self._open: set[int] = set()
        self._keys: dict[Hashable, int] = {}

    @property
    def provider_details(self) -> ProviderDetails | None:
        return None

    # -- parts ------------------------------------------------------------------------------

    def _start(self, part: ResponsePart, out: list[ModelStreamEvent], key: Hashable = None) -> int:
        index = self._next
        self._next += 1
        self._parts[index] = part
        self._open.add(index)
        if key is not None:
            self._keys[key] = index
        out.append(PartStartEvent(index, part))
        return index

    def _final_part(self, index: int, part: ResponsePart) -> ResponsePart:
        """The part as it ends; function calls without arguments end with ``{}``."""
        if isinstance(part, ToolCallPart) and not part.args.strip():
            return replace(part, args="{}")
        return part

    def _end(self, index: int, out: list[ModelStreamEvent]) -> None:
        if index in self._open:
            self._open.discard(index)
            part = self._parts[index] = self._final_part(index, self._parts[index])
            out.append(PartEndEvent(index, part))

    def _grow(self, index: int, text: str, out: list[ModelStreamEvent]) -> None:
        """Append ``text`` to a text, thinking or tool-call part and report the delta."""
        if not text:
            return
        part = self._parts.base(index)
        if isinstance(part, ToolCallPart):
            self._parts.grow(index, text)
            out.append(PartDeltaEvent(index, ToolCallPartDelta(args_delta=text)))
        elif isinstance(part, ThinkingPart):
            self._parts.grow(index, text)
            out.append(PartDeltaEvent(index, ThinkingPartDelta(text)))
        elif isinstance(part, TextPart):
            self._parts.grow(index, text)
            out.append(PartDeltaEvent(index, TextPartDelta(text)))

    # -- events -----------------------------------------------------------------------------

    def _kind(self, event: SseEvent, payload: dict[str, Any]) -> Any:
        return payload.get("type", event.event)

    def feed(self, event: SseEvent) -> list[ModelStreamEvent]:
        """Decode one event (a JSON object); returns the model stream events it completed."""
        data = event.data.strip()
        if data == "[DONE]" or (not data and self.skip_empty):
            return []
        self._events += 1
        path = f"$event[{self._events}]"
        payload = self.reader.obj(self.reader.parse(data or "{}", path), path)
        kind = self._kind(event, payload)
        out: list[ModelStreamEvent] = []
        handler = self.handlers.get(kind) if isinstance(kind, str) else None
        if handler is not None:
            handler(self, payload, path, out)
        return out

    def _finished(self) -> None:
        """Called once the stream ended completely (set a derived finish reason here)."""

    def finish(self) -> list[ModelStreamEvent]:
        """End of stream: the terminal event must have arrived; open parts end in order."""
        if not self._complete:
            raise self.reader.fail("$", f"stream ended before {self.terminal}")
        out: list[ModelStreamEvent] = []
        for index in sorted(self._open):
            self._end(index, out)
        self._finished()
        return out
