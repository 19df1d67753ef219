"""Amazon Bedrock Converse: the regional ``Provider`` and the Converse ``Client``.

``runtime_api_base(region)`` builds ``https://bedrock-runtime.{region}.amazonaws.com`` after
validating the region label.  ``Provider(region=...)`` signs every request with AWS Signature
Version 4 from the SDK credential chain (:mod:`.credentials`, :mod:`.aws_auth`);
``Provider(api_key, region)`` authenticates with a Bedrock API key as a bearer token instead
(``base_url`` replaces the regional root, e.g. a VPC endpoint).
``Client`` implements :class:`~zigai.model.Model` over ``POST model/{id}/converse`` (the id
percent-encoded, see :func:`~._encode.model_path`) and ``model/{id}/converse-stream``, whose
body is binary AWS EventStream (:mod:`zigai.providers.eventstream`) read from the transport's
raw chunks: each ``event`` message becomes one ConverseStream event for
:class:`~._decode.StreamDecoder`; ``exception`` and ``error`` messages raise the normalized
provider error (throttling → :class:`~zigai.provider.RateLimited`, validation →
:class:`~zigai.provider.ProviderBadRequest`, anything else →
:class:`~zigai.provider.ProviderServerError`).

Profiles come from :func:`~.profiles.converse_profile` in the four-layer resolution; unknown
families (and ARNs that name none) fail closed unless the application supplies a
``profile_lookup`` (provider) or ``profile`` / ``profile_override`` (client).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from typing import Any

from zigai.control import RunControl
from zigai.messages import ResponseMessage
from zigai.model import ModelProfile, ModelRequest, ModelStreamEvent, StreamedResponse
from zigai.provider import (
    ProviderBadRequest,
    ProviderHttpRequest,
    ProviderLineStream,
    ProviderServerError,
    RateLimited,
)
from zigai.provider.discovery import DiscoveryLimits, OwnedProviderModels
from zigai.providers._discovery import list_models_with
from zigai.providers._native import NativeClient, NativeProvider
from zigai.providers._wire import DecodedLineStream, open_stream
from zigai.providers.bedrock._decode import StreamDecoder, decode_response
from zigai.providers.bedrock._encode import (
    PROVIDER_NAME,
    check_model_id,
    encode_request,
    model_path,
)
from zigai.providers.bedrock._errors import BedrockDecodeError, EventStreamNeedsChunks
from zigai.providers.bedrock.aws_auth import SigV4Signer, resolve_region
from zigai.providers.bedrock.credentials import AwsCredentialChain, AwsCredentials
from zigai.providers.bedrock.discovery import FoundationModelListing, control_api_base
from zigai.providers.bedrock.mantle import AUTH, InvalidBedrockRegion, check_region
from zigai.providers.bedrock.profiles import converse_profile
from zigai.providers.eventstream import DEFAULT_MAX_MESSAGE_BYTES, EventStreamMessage, iter_messages
from zigai.providers.http import AuthStyle, InvalidProviderConfiguration
from zigai.providers.sse import SseEvent
from zigai.security import Redactor, UrlPolicy
from zigai.settings import ModelSettings
from zigai.transport.base import Transport, TransportRequest

__all__ = ["Client", "ConverseStreamedResponse", "Provider", "runtime_api_base"]

_EVENT_STREAM = "application/vnd.amazon.eventstream"


def runtime_api_base(region: str) -> str:
    """The Bedrock runtime root of ``region``."""
    return f"https://bedrock-runtime.{check_region(region)}.amazonaws.com"


class Provider(NativeProvider):
    """Bedrock runtime provider state: credentials (SigV4 or a bearer API key), regional root,
    headers, policy.

    With ``api_key`` every request carries it as a bearer token and exactly one of ``region``
    and ``base_url`` is required.  Without it every request is signed with AWS Signature
    Version 4 using ``credentials`` (an :class:`~.credentials.AwsCredentials` or a configured
    :class:`~.credentials.AwsCredentialChain`; default: the SDK chain over ``env``, which
    defaults to ``os.environ``); the region defaults as :func:`~.aws_auth.resolve_region`
    describes and also names the signing scope when ``base_url`` replaces the root.
    :meth:`list_models` reads the control plane (``https://bedrock.{region}.amazonaws.com``,
    or ``discovery_base_url``) within ``discovery_limits``.
    """

    __slots__ = ("region", "signer", "_base_secrets", "_control", "discovery_limits")

    provider_name = PROVIDER_NAME
    api_base = None
    auth_style = AUTH
    encoded_slash_in_paths = True  # model ARNs are one percent-encoded path segment

    def __init__(
        self,
        api_key: str | None = None,
        region: str | None = None,
        transport: Transport | None = None,
        *,
        credentials: AwsCredentials | AwsCredentialChain | None = None,
        env: Mapping[str, str] | None = None,
        base_url: str | None = None,
        headers: Iterable[tuple[str, str]] = (),
        url_policy: UrlPolicy | None = None,
        profile_lookup: Callable[[str], ModelProfile | None] | None = None,
        request_timeout_ms: int | None = None,
        discovery_base_url: str | None = None,
        discovery_limits: DiscoveryLimits | None = None,
    ) -> None:
        signer: SigV4Signer | None = None
        if api_key is not None:
            if credentials is not None:
                raise InvalidProviderConfiguration(
                    "pass api_key (bearer) or credentials (SigV4), not both")
            if (region is None) == (base_url is None):
                raise InvalidBedrockRegion("pass exactly one of region and base_url")
        else:
            chain = (credentials if isinstance(credentials, AwsCredentialChain)
                     else AwsCredentialChain(credentials, env=env))
            region = resolve_region(region=region, env=env, chain=chain)
            signer = SigV4Signer(chain, region)
        root = base_url if base_url is not None else runtime_api_base(str(region))
        super().__init__(api_key, transport, base_url=root, headers=headers,
                         url_policy=url_policy, profile_lookup=profile_lookup,
                         request_timeout_ms=request_timeout_ms,
                         auth=None if signer is None else AuthStyle.none())
        self.region = region
        self.signer = signer
        self._base_secrets = self._redactor.secrets
        self.discovery_limits = discovery_limits
        control = discovery_base_url
        if control is None and base_url is None:
            control = control_api_base(str(region))
        self._control: Provider | None = None
        if control is not None:
            # the control plane: same credential (or the same chain) and signing region
            self._control = Provider(
                api_key, None if signer is None else region, self.transport,
                base_url=control, headers=headers, url_policy=url_policy,
                request_timeout_ms=request_timeout_ms,
                credentials=None if signer is None else signer.chain, env=env,
            )

    def list_models(
        self,
        *,
        limits: DiscoveryLimits | None = None,
        control: RunControl | None = None,
        deadline: float | None = None,
        by_provider: str | None = None,
        by_output_modality: str | None = None,
    ) -> OwnedProviderModels:
        """Bedrock's foundation models (``ListFoundationModels`` on the control plane),
        authenticated like every runtime call; ``by_provider`` / ``by_output_modality`` filter
        server side.  With ``base_url`` set, pass ``discovery_base_url`` too."""
        if self._control is None:
            raise self._unsupported(
                "list_models", "base_url replaces the runtime root; pass discovery_base_url")
        return list_models_with(
            self._control, lambda bounds: FoundationModelListing(by_provider, by_output_modality),
            limits=limits, default_limits=self.discovery_limits, control=control,
            deadline=deadline,
        )

    def _authenticate(self, request: TransportRequest) -> TransportRequest:
        if self.signer is None:
            return request
        signed, credentials = self.signer.sign(request)
        secrets = (*self._base_secrets, *credentials.secrets())
        if self._redactor.secrets != secrets:
            self._redactor = Redactor(secrets=secrets)
        return signed


def _raise_for_message(message: EventStreamMessage, provider_name: str) -> None:
    kind = message.header(":message-type") or "event"
    if kind == "event":
        return
    if kind == "exception":
        name = message.header(":exception-type") or "exception"
        text = message.payload.decode("utf-8", "replace")[:512]
        lowered = name.lower()
        error: type[ProviderServerError] | type[RateLimited] | type[ProviderBadRequest]
        if "throttling" in lowered:
            error = RateLimited
        elif "validation" in lowered:
            error = ProviderBadRequest
        else:
            error = ProviderServerError
        raise error(f"{provider_name} stream {name}: {text}", code=name,
                    provider_message=text, provider_name=provider_name)
    code = message.header(":error-code") or kind
    text = message.header(":error-message") or ""
    raise ProviderServerError(f"{provider_name} stream error {code}: {text}", code=code,
                              provider_message=text, provider_name=provider_name)


class ConverseStreamedResponse(DecodedLineStream):
    """A ConverseStream answer: EventStream messages from the raw chunks, decoded as events."""

    def __init__(self, context: AbstractContextManager[ProviderLineStream],
                 lines: ProviderLineStream, decoder: StreamDecoder, *, model_name: str,
                 provider_name: str, max_message_bytes: int) -> None:
        if not lines.has_raw_chunks:
            raise EventStreamNeedsChunks(
                "ConverseStream is binary AWS EventStream; use a transport whose stream "
                "response offers chunks() (both built-in transports do)"
            )
        super().__init__(context, lines, decoder, model_name=model_name,
                         provider_name=provider_name)
        self._max_message_bytes = max_message_bytes

    def _events(self) -> Iterator[ModelStreamEvent]:
        feed = self._decoder.feed
        for message in iter_messages(self._lines.chunks(), self._max_message_bytes):
            _raise_for_message(message, str(self.provider_name))
            event_type = message.header(":event-type") or ""
            produced = feed(SseEvent(event_type, message.payload.decode("utf-8", "replace")))
            self._sync()
            yield from produced
        produced = self._decoder.finish()
        self._sync()
        yield from produced


class Client(NativeClient):
    """A Bedrock model over Converse; implements :class:`~zigai.model.Model`.

    ``max_event_bytes`` bounds one ConverseStream EventStream message.
    """

    decode_error = BedrockDecodeError
    builtin_profile = staticmethod(converse_profile)

    def __init__(
        self,
        model_name: str,
        provider: Any,
        settings: ModelSettings | None = None,
        *,
        profile: ModelProfile | None = None,
        profile_override: Callable[[str, ModelProfile], ModelProfile | None] | None = None,
        max_event_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        check_model_id(model_name)
        super().__init__(model_name, provider, settings, profile=profile,
                         profile_override=profile_override)
        if isinstance(max_event_bytes, bool) or not isinstance(max_event_bytes, int) or (
            max_event_bytes < 16
        ):
            raise ValueError("max_event_bytes must be an int of at least 16")
        self.max_event_bytes = max_event_bytes

    def _http(self, request: ModelRequest, *, stream: bool) -> ProviderHttpRequest:
        request = self.checked_request(request)
        body = encode_request(request, model_id=self._model_name)
        headers = (("Accept", _EVENT_STREAM),) if stream else ()
        return self.http_request(request, model_path(self._model_name, stream=stream), body,
                                 headers)

    def request(self, request: ModelRequest) -> ResponseMessage:
        """One buffered Converse call."""
        response = self.provider.send(self._http(request, stream=False))
        return self.decoded(response, lambda value: decode_response(
            value, model_name=self._model_name, provider_name=self.provider_name))

    def stream(self, request: ModelRequest) -> StreamedResponse:
        """One ConverseStream call; HTTP errors raise before the first event."""
        http = self._http(request, stream=True)
        return open_stream(
            self.provider.stream_lines(http),
            lambda context, lines: ConverseStreamedResponse(
                context, lines, StreamDecoder(self._model_name, self.provider_name),
                model_name=self._model_name, provider_name=self.provider_name,
                max_message_bytes=self.max_event_bytes,
            ),
        )
