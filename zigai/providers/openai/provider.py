"""OpenAI ``Provider`` (credential, API root, policy) and the Responses API ``Client`` model.

``Provider`` is a :class:`~zigai.providers.http.Configured` with OpenAI's identity
(``"openai"``), default root ``https://api.openai.com/v1`` and bearer authentication.  Its
transport defaults to a lazily created :class:`~zigai.transport.HttpTransport` (built on the
first request, with the provider's URL policy), so constructing a provider does no I/O and
imports no third-party module.

``Client`` implements the :class:`~zigai.model.Model` protocol over ``POST responses``:

1. ``check_request_supported(request, profile)`` — unsupported features fail before I/O;
2. :func:`~.encode.encode_request` once (settings translated at this boundary);
3. one provider call (buffered, or ``stream: true`` read as server-sent events);
4. :func:`~.decode.decode_response` or :class:`~.stream.StreamDecoder`.

The profile is resolved once per client: an explicit ``profile`` wins, then the provider's
``profile_lookup``, then the built-in family table (:mod:`.profiles`).  ``client.model()``
returns the client itself (the spec's borrowed model view).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from typing import Any

from zigai.control import RunControl
from zigai.messages import ResponseMessage
from zigai.model import ModelProfile, ModelRequest, ModelStreamEvent
from zigai.provider import Provider as ProviderProtocol
from zigai.provider import ProviderHttpRequest, ProviderLineStream
from zigai.provider.discovery import DiscoveryLimits, OwnedProviderModels
from zigai.provider.files import (
    OwnedProviderFile,
    OwnedProviderFileDownload,
    ProviderFileInput,
    ProviderFileLimits,
)
from zigai.providers._discovery import OpenAIStyleListing, list_models_with
from zigai.providers._wire import (
    CLIENT_REQUEST_ID,
    AdapterClient,
    DecodedLineStream,
    LazyHttpTransport,
    http_request,
    open_stream,
    request_id_headers,
)
from zigai.providers.http import AuthStyle, Configured
from zigai.providers.openai import files
from zigai.providers.openai.decode import decode_response
from zigai.providers.openai.encode import EncodeOptions, encode_request
from zigai.providers.openai.errors import OpenAIDecodeError
from zigai.providers.openai.profiles import profile_for_model
from zigai.providers.openai.stream import StreamDecoder
from zigai.providers.sse import iter_sse_batches
from zigai.security import UrlPolicy, local_policy_for
from zigai.settings import ModelSettings
from zigai.transport.base import Transport

__all__ = ["API_BASE", "Client", "OpenAIStreamedResponse", "Provider", "ResponsesClient"]

API_BASE = "https://api.openai.com/v1"
RESPONSES_PATH = "responses"


class _LazyHttpTransport(LazyHttpTransport):
    """The shared lazy transport under the name OpenAI providers have always reported."""


class Provider(Configured):
    """OpenAI's provider boundary: bearer ``api_key``, API root, headers, policy, transport.

    ``organization`` / ``project`` become the ``OpenAI-Organization`` / ``OpenAI-Project``
    configured headers.  ``name`` lets OpenAI-wire services reuse this class with their own
    identity.  ``discovery_limits`` bounds :meth:`list_models`; ``file_limits`` bounds
    uploads (default: OpenAI's documented 512 MB per file).
    """

    __slots__ = ("discovery_limits", "file_limits")

    def __init__(
        self,
        api_key: str,
        *,
        transport: Transport | None = None,
        base_url: str = API_BASE,
        headers: Iterable[tuple[str, str]] = (),
        url_policy: UrlPolicy | None = None,
        profile_lookup: Callable[[str], ModelProfile | None] | None = None,
        request_timeout_ms: int | None = None,
        organization: str | None = None,
        project: str | None = None,
        name: str = "openai",
        auth: AuthStyle | None = None,
        discovery_limits: DiscoveryLimits | None = None,
        file_limits: ProviderFileLimits | None = None,
    ) -> None:
        if url_policy is None:
            url_policy = local_policy_for(base_url)  # a loopback base URL: that host only
        configured = list(headers)
        if organization is not None:
            configured.append(("OpenAI-Organization", organization))
        if project is not None:
            configured.append(("OpenAI-Project", project))
        super().__init__(
            name,
            base_url,
            transport if transport is not None else _LazyHttpTransport(url_policy),
            credential=api_key,
            auth=auth or AuthStyle.bearer(),
            headers=configured,
            url_policy=url_policy,
            request_timeout_ms=request_timeout_ms,
            profile_lookup=profile_lookup,
        )
        self.discovery_limits = discovery_limits
        self.file_limits = file_limits if file_limits is not None else files.DEFAULT_FILE_LIMITS

    def list_models(
        self,
        *,
        limits: DiscoveryLimits | None = None,
        control: RunControl | None = None,
        deadline: float | None = None,
    ) -> OwnedProviderModels:
        """``GET models`` (every page), bounded by ``limits`` or ``discovery_limits``."""
        return list_models_with(self, lambda bounds: OpenAIStyleListing(), limits=limits,
                                default_limits=self.discovery_limits, control=control,
                                deadline=deadline)

    # -- files (see .files) --------------------------------------------------------------

    def upload_file(self, file: ProviderFileInput, *, control: RunControl | None = None,
                    deadline: float | None = None) -> OwnedProviderFile:
        """``POST files``; the purpose defaults to ``user_data``."""
        return files.upload_file(self, file, self.file_limits, control=control, deadline=deadline)

    def inspect_file(self, handle: Any, *, control: RunControl | None = None,
                     deadline: float | None = None) -> OwnedProviderFile:
        return files.inspect_file(self, handle, control=control, deadline=deadline)

    def download_file(self, handle: Any, *, control: RunControl | None = None,
                      deadline: float | None = None) -> OwnedProviderFileDownload:
        return files.download_file(self, handle, control=control, deadline=deadline)

    def delete_file(self, handle: Any, *, control: RunControl | None = None,
                    deadline: float | None = None) -> None:
        files.delete_file(self, handle, control=control, deadline=deadline)


class OpenAIStreamedResponse(DecodedLineStream):
    """A streamed Responses API answer; the HTTP stream is already open (status checked).

    Unlike the other adapters' streams, the summary (usage, finish reason, ids) is copied
    once, after the terminal event, and decode errors get the HTTP status and request id.
    """

    def __init__(
        self,
        context: AbstractContextManager[ProviderLineStream],
        lines: ProviderLineStream,
        *,
        model_name: str,
        provider_name: str,
    ) -> None:
        super().__init__(context, lines, StreamDecoder(provider_name), model_name=model_name,
                         provider_name=provider_name)

    def _events(self) -> Iterator[ModelStreamEvent]:
        decoder = self._decoder
        try:
            feed = decoder.feed
            for batch in iter_sse_batches(self._lines.chunks()):
                for event in batch:
                    yield from feed(event)
            tail = decoder.finish()
        except OpenAIDecodeError as exc:
            exc.status = self._lines.status
            exc.request_id = self._lines.request_id
            raise
        self._sync()
        yield from tail


class Client(AdapterClient):
    """The OpenAI Responses API as a :class:`~zigai.model.Model`.

    ``settings`` are this model's defaults (merged below the request's settings);
    ``profile`` overrides profile resolution.  ``replay_reasoning``,
    ``include_encrypted_reasoning``, ``reasoning_summary`` and ``store`` are the typed
    Responses-only options described in :mod:`.encode`.
    """

    #: The client correlation header(s) ``RunOptions.request_id`` is sent under.
    request_id_header_names: tuple[str, ...] = CLIENT_REQUEST_ID

    _extra_body_tag = "openai"

    def __init__(
        self,
        model_name: str,
        provider: ProviderProtocol,
        settings: ModelSettings | None = None,
        *,
        profile: ModelProfile | None = None,
        replay_reasoning: bool = False,
        include_encrypted_reasoning: bool = False,
        reasoning_summary: str | None = None,
        store: bool | None = None,
    ) -> None:
        if not isinstance(model_name, str) or not model_name:
            raise ValueError("model_name must be a non-empty string")
        self._model_name = model_name
        self.provider = provider
        self.settings = settings
        resolved = profile
        if resolved is None:
            resolved = provider.profile_for(model_name)
        if resolved is None:
            resolved = profile_for_model(model_name)
        self._profile = resolved
        self.options = EncodeOptions(
            provider_name=provider.name,
            extra_body_tag=self._extra_body_tag,
            replay_reasoning=replay_reasoning,
            include_encrypted_reasoning=include_encrypted_reasoning,
            reasoning_summary=reasoning_summary,
            store=store,
        )

    # -- Model protocol -----------------------------------------------------------------------

    @property
    def provider_name(self) -> str:
        return self.provider.name

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_name={self._model_name!r}, provider={self.provider.name!r})"

    # -- requests -----------------------------------------------------------------------------

    def _prepare(self, request: ModelRequest, *, stream: bool) -> ProviderHttpRequest:
        request = self.checked_request(request)
        body = encode_request(request, self._model_name, stream=stream, profile=self._profile,
                              options=self.options)
        return http_request(request, self._profile, path=RESPONSES_PATH, json_body=body,
                            headers=(*(request.settings.extra_headers or ()),
                                     *request_id_headers(request, self.request_id_header_names)),
                            deadline=request.effective_deadline,
                            idempotency_key=request.idempotency_key)

    def request(self, request: ModelRequest) -> ResponseMessage:
        """One buffered Responses API call."""
        response = self.provider.send(self._prepare(request, stream=False))
        value = response.json()
        try:
            return decode_response(value, provider_name=self.provider.name,
                                   model_name=self._model_name)
        except OpenAIDecodeError as exc:
            exc.status = response.status
            exc.request_id = response.request_id
            raise

    def stream(self, request: ModelRequest) -> OpenAIStreamedResponse:
        """One streamed call; the connection is open and its status checked on return."""
        return open_stream(
            self.provider.stream_lines(self._prepare(request, stream=True)),
            lambda context, lines: OpenAIStreamedResponse(
                context, lines, model_name=self._model_name, provider_name=self.provider.name
            ),
        )


#: The spec's name for the Responses client when a module offers several routes.
ResponsesClient = Client
