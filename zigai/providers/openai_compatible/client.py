"""``Provider`` and ``Client`` for Chat Completions endpoints, generic and named.

Job
    :class:`Provider` wraps :class:`~zigai.providers.http.Configured`: it owns the API root,
    provider identity, authentication style, configured headers, URL policy, transport and
    the application's profile callbacks.  :class:`Client` owns only the model name, model
    settings, the Chat Completions dialect (:class:`ChatOptions`), the fallback profile and
    an optional gateway idempotency header; it implements the :class:`~zigai.model.Model`
    protocol.

    Named modules (``zigai.providers.groq`` ...) subclass both and set the class-level
    defaults (:class:`NamedDefaults`): API root, identity, auth style, built-in family lookup,
    fail-closed fallback and dialect.

Invariants
    * ``request``/``stream`` merge the client settings under the request settings, then call
      :func:`~zigai.model.check_request_supported` with the resolved profile before any I/O,
      then encode once.
    * The profile is resolved once per client in four layers (see
      :mod:`zigai.providers.profiles`).
    * The client never sees the credential: it hands relative ``chat/completions`` requests
      to the provider.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from zigai.control import RunControl
from zigai.messages import ResponseMessage
from zigai.model import ModelProfile, ModelRequest, StreamedResponse
from zigai.provider import ProviderHttpRequest, ProviderOperations, ProviderResponseDecodeError
from zigai.provider.discovery import DiscoveryLimits, OwnedProviderModels
from zigai.providers import profiles
from zigai.providers._discovery import OpenAIStyleListing, list_models_with
from zigai.providers._wire import (
    CLIENT_REQUEST_ID,
    AdapterClient,
    LazyHttpTransport,
    http_request,
    open_stream,
    request_id_headers,
)
from zigai.providers.http import AuthStyle, Configured
from zigai.providers.openai_compatible.decode import decode_response
from zigai.providers.openai_compatible.encode import ChatOptions, encode_request
from zigai.providers.openai_compatible.stream import ChatStreamedResponse
from zigai.security import UrlPolicy, local_policy_for
from zigai.settings import ModelSettings
from zigai.transport.base import Transport

__all__ = ["NamedDefaults", "Provider", "Client", "LazyHttpTransport", "ENDPOINT"]

ENDPOINT = "chat/completions"


@dataclass(frozen=True, slots=True)
class NamedDefaults:
    """Compile-time defaults shared by a named module's Provider and Client."""

    name: str
    api_base: str | None = None
    auth: AuthStyle = field(default_factory=AuthStyle.bearer)
    builtin_lookup: Callable[[str], ModelProfile | None] | None = None
    fallback: ModelProfile = profiles.UNKNOWN
    options: ChatOptions = field(default_factory=ChatOptions)
    url_policy: UrlPolicy | None = None


class Provider(ProviderOperations):
    """An authenticated Chat Completions endpoint (wraps ``providers.http.Configured``).

    ``api_key`` is required unless the defaults' auth style is ``none``.  ``transport``
    defaults to a lazily created ``HttpTransport`` that applies the same URL policy.
    ``profile_lookup`` and ``profile_override`` are layers 1 and 4 of profile resolution.
    ``discovery_limits`` bounds :meth:`list_models` (OpenAI's ``GET models`` contract).
    """

    defaults: ClassVar[NamedDefaults] = NamedDefaults(
        name="openai_compatible", fallback=profiles.COMPATIBLE_FULL
    )

    def __init__(
        self,
        api_key: str | None = None,
        transport: Transport | None = None,
        *,
        base_url: str | None = None,
        headers: Iterable[tuple[str, str]] = (),
        url_policy: UrlPolicy | None = None,
        request_timeout_ms: int | None = None,
        profile_lookup: Callable[[str], ModelProfile | None] | None = None,
        profile_override: Callable[[str, ModelProfile], ModelProfile | None] | None = None,
        idempotency_header: str | None = None,
        name: str | None = None,
        auth: AuthStyle | None = None,
        discovery_limits: DiscoveryLimits | None = None,
    ) -> None:
        defaults = self.defaults
        root = base_url if base_url is not None else defaults.api_base
        if root is None:
            raise ValueError(f"{type(self).__module__}.Provider needs base_url")
        policy = url_policy if url_policy is not None else defaults.url_policy
        if policy is None:
            policy = local_policy_for(root)  # a loopback root: that host only (zigai.security)
            if policy is not None and api_key is None and auth is None:
                auth = AuthStyle.none()  # a local server needs no key, as through the variable
        auth = auth if auth is not None else defaults.auth
        self.profile_lookup = profile_lookup
        self.profile_override = profile_override
        self.builtin_lookup = defaults.builtin_lookup
        self.idempotency_header = idempotency_header
        self.discovery_limits = discovery_limits
        self._configured = Configured(
            name if name is not None else defaults.name,
            root,
            transport if transport is not None else LazyHttpTransport(policy),
            credential=api_key,
            auth=auth,
            headers=tuple(headers),
            url_policy=policy,
            request_timeout_ms=request_timeout_ms,
            profile_lookup=self._layers_one_and_two,
            idempotency_header=idempotency_header,
        )

    @classmethod
    def init_with_options(cls, api_key: str | None, transport: Transport | None = None,
                          **options: Any) -> Provider:
        """Runtime endpoint or identity: ``base_url``, ``name``, ``auth``, headers, policy..."""
        return cls(api_key, transport, **options)

    def _layers_one_and_two(self, model_name: str) -> ModelProfile | None:
        if self.profile_lookup is not None:
            found = self.profile_lookup(model_name)
            if found is not None:
                return found
        return self.builtin_lookup(model_name) if self.builtin_lookup is not None else None

    # -- the Provider protocol, delegated ------------------------------------------------

    @property
    def name(self) -> str:
        return self._configured.name

    @property
    def api_root(self) -> str:
        return self._configured.api_root

    @property
    def auth(self) -> AuthStyle:
        return self._configured.auth

    def provider(self) -> Configured:
        return self._configured

    def send(self, request: ProviderHttpRequest) -> Any:
        return self._configured.send(request)

    def stream_lines(self, request: ProviderHttpRequest) -> Any:
        return self._configured.stream_lines(request)

    def profile_for(self, model_name: str) -> ModelProfile | None:
        return self._configured.profile_for(model_name)

    def list_models(
        self,
        *,
        limits: DiscoveryLimits | None = None,
        control: RunControl | None = None,
        deadline: float | None = None,
    ) -> OwnedProviderModels:
        """``GET models`` in OpenAI's shape (every page), bounded by ``limits`` or
        ``discovery_limits``."""
        return list_models_with(self._configured, lambda bounds: OpenAIStyleListing(),
                                limits=limits, default_limits=self.discovery_limits,
                                control=control, deadline=deadline)

    def resolve_profile(self, model_name: str, fallback: ModelProfile) -> ModelProfile:
        """All four layers for ``model_name`` with the client's ``fallback``."""
        return profiles.resolve(
            model_name, fallback=fallback, lookup=self.profile_lookup,
            builtin=self.builtin_lookup, override=self.profile_override,
        )

    def __repr__(self) -> str:
        return f"{type(self).__module__}.Provider({self._configured!r})"


class Client(AdapterClient):
    """A Chat Completions model bound to one provider (implements ``zigai.model.Model``).

    ``profile`` replaces resolution entirely; otherwise the provider's layers are used with
    ``fallback_profile`` (a ModelProfile or a preset name from ``profiles.PRESETS``).
    ``idempotency_header`` names a gateway header for ``ModelRequest.idempotency_key``.
    """

    #: The client correlation header(s) ``RunOptions.request_id`` is sent under.
    request_id_header_names: tuple[str, ...] = CLIENT_REQUEST_ID

    defaults: ClassVar[NamedDefaults] = Provider.defaults
    extra_body_reserved: ClassVar[frozenset[str]] = frozenset()

    def __init__(
        self,
        model_name: str,
        provider: Any,
        settings: ModelSettings | None = None,
        *,
        profile: ModelProfile | None = None,
        fallback_profile: ModelProfile | str | None = None,
        options: ChatOptions | None = None,
        idempotency_header: str | None = None,
    ) -> None:
        if not isinstance(model_name, str) or not model_name:
            raise ValueError("model_name must be a non-empty string")
        if settings is not None and not isinstance(settings, ModelSettings):
            raise TypeError("settings must be a ModelSettings")
        if isinstance(fallback_profile, str):
            fallback_profile = profiles.PRESETS[fallback_profile]
        self._model_name = model_name
        self._provider = provider
        self.settings = settings
        self.options = options if options is not None else self.defaults.options
        self.idempotency_header = idempotency_header
        fallback = fallback_profile if fallback_profile is not None else self.defaults.fallback
        if profile is None:
            if isinstance(provider, Provider):
                profile = provider.resolve_profile(model_name, fallback)
            else:
                found = provider.profile_for(model_name)
                profile = found if found is not None else fallback
        # The client's header wins; otherwise a gateway header configured on the provider
        # applies, so the agent generates keys for it (it only does when the profile names one).
        if idempotency_header is None:
            idempotency_header = getattr(provider, "idempotency_header", None)
        if idempotency_header is not None:
            profile = profile.with_changes(idempotency_header=idempotency_header)
        self._profile = profile

    # -- Model protocol -------------------------------------------------------------------

    @property
    def provider_name(self) -> str:
        return str(self._provider.name)

    @property
    def provider(self) -> Any:
        return self._provider

    def prepare(self, request: ModelRequest) -> ModelRequest:
        """Merge settings and reject unsupported features (no I/O)."""
        request = self.checked_request(request)
        self.check_typed(request)
        return request

    def check_typed(self, request: ModelRequest) -> None:
        """Named clients validate their typed options against the request here."""

    def extra_fields(self, request: ModelRequest) -> Mapping[str, Any]:
        """Body fields owned by a named client's typed API (none for the generic client)."""
        return {}

    def extra_headers(self, request: ModelRequest) -> tuple[tuple[str, str], ...]:
        return ()

    def encode(self, request: ModelRequest, *, stream: bool = False) -> dict[str, Any]:
        """The exact wire body for an already prepared request."""
        options = self.options
        if self.extra_body_reserved:
            options = replace(options, reserved_keys=options.reserved_keys | self.extra_body_reserved)
        return encode_request(
            request, self._model_name, options, stream=stream,
            provider_name=self.provider_name, extra=self.extra_fields(request),
        )

    def _http_request(self, request: ModelRequest, body: dict[str, Any]) -> ProviderHttpRequest:
        headers = (
            tuple(request.settings.extra_headers or ()) + self.extra_headers(request)
            + request_id_headers(request, self.request_id_header_names)
        )
        key = request.idempotency_key if self._profile.idempotency_header else None
        return http_request(request, self._profile, path=ENDPOINT, json_body=body,
                            headers=headers, deadline=request.deadline, idempotency_key=key)

    def decode(self, value: Any) -> ResponseMessage:
        return decode_response(value, provider_name=self.provider_name, model_name=self._model_name)

    def request(self, request: ModelRequest) -> ResponseMessage:
        request = self.prepare(request)
        body = self.encode(request)
        response = self._provider.send(self._http_request(request, body))
        try:
            return self.decode(response.json())
        except ProviderResponseDecodeError as exc:
            if exc.status is None:
                exc.status = response.status
            if exc.request_id is None:
                exc.request_id = response.request_id
            raise

    def stream(self, request: ModelRequest) -> StreamedResponse:
        request = self.prepare(request)
        body = self.encode(request, stream=True)
        opened = self._provider.stream_lines(self._http_request(request, body))
        return open_stream(opened, self.streamed_response)

    def streamed_response(self, opened: Any, line_stream: Any) -> StreamedResponse:
        return ChatStreamedResponse(
            opened, line_stream, model_name=self._model_name, provider_name=self.provider_name
        )

    def __repr__(self) -> str:
        return f"{type(self).__module__}.Client(model_name={self._model_name!r})"
