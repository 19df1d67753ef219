"""Gemini adapter for Google AI Studio: ``Provider`` (x-goog-api-key) and ``Client`` (the Model).

Job
    :class:`Provider` wraps :class:`~zigai.providers.http.Configured` with the API root
    ``https://generativelanguage.googleapis.com/v1beta``, the stable ``gcp.gen_ai`` identity and
    ``x-goog-api-key`` auth.  :class:`Client` implements :class:`~zigai.model.Model` over the
    model-bound endpoints ``models/{model}:generateContent`` and
    ``models/{model}:streamGenerateContent?alt=sse``.  The same client works with
    :class:`zigai.providers.vertex_ai.Provider`, which maps those relative operations onto Vertex
    resource paths.

Invariants
    * Profile checks and the model-name check run before any I/O; the body is encoded once
      (:func:`encode_request`) and decoded with pure functions.
    * Thought signatures stay on the neutral parts and are replayed unchanged to the same
      provider identity.
    * Malformed 2xx answers raise :class:`GoogleDecodeError` (retry category ``decode``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from zigai.control import RunControl
from zigai.messages import ResponseMessage
from zigai.model import COMMON_SETTINGS, ModelProfile, ModelRequest, StreamedResponse
from zigai.provider import ProviderHttpRequest, ProviderResponseDecodeError
from zigai.provider.discovery import DiscoveryLimits, OwnedProviderModels
from zigai.provider.files import (
    OwnedProviderFile,
    OwnedProviderFileDownload,
    ProviderFileInput,
    ProviderFileLimits,
)
from zigai.providers._discovery import list_models_with
from zigai.providers._wire import AdapterClient, LazyHttpTransport, SseModelStream, http_request
from zigai.providers.google import _files
from zigai.providers.google._decode import (
    PartBuilder,
    StreamDecoder,
    decode_response,
    decode_usage,
    finish_reason,
)
from zigai.providers.google._discovery import GeminiModelListing
from zigai.providers.google._encode import (
    EXTRA_BODY_TAG,
    RESERVED_KEYS,
    encode_contents,
    encode_request,
)
from zigai.providers.google._errors import GoogleDecodeError, GoogleEncodeError
from zigai.providers.google._schema import SUPPORTED_KEYWORDS, gemini_schema
from zigai.providers.http import AuthStyle, Configured, InvalidProviderConfiguration
from zigai.security import UrlPolicy, local_policy_for
from zigai.settings import ModelSettings

__all__ = [
    "API_BASE",
    "EXTRA_BODY_TAG",
    "PROVIDER_NAME",
    "RESERVED_KEYS",
    "SUPPORTED_KEYWORDS",
    "upload_root_for",
    "Client",
    "GoogleDecodeError",
    "GoogleEncodeError",
    "PartBuilder",
    "Provider",
    "StreamDecoder",
    "decode_response",
    "decode_usage",
    "default_profile",
    "encode_contents",
    "encode_request",
    "finish_reason",
    "gemini_schema",
    "model_path",
]

API_BASE = "https://generativelanguage.googleapis.com/v1beta"
PROVIDER_NAME = "gcp.gen_ai"
_MODEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_GEMINI_SETTINGS = (COMMON_SETTINGS - {"parallel_tool_calls"}) | {"top_k", "logprobs",
                                                                   "top_logprobs"}


def model_path(model_name: str, operation: str) -> str:
    """The relative endpoint for one model operation; rejects unsafe model names before I/O."""
    name = model_name[len("models/"):] if model_name.startswith("models/") else model_name
    if not _MODEL.match(name):
        raise GoogleEncodeError(f"model name {model_name!r} is not a plain Gemini model id")
    if operation == "generateContent":
        return f"models/{name}:generateContent"
    if operation == "streamGenerateContent":
        return f"models/{name}:streamGenerateContent?alt=sse"
    raise GoogleEncodeError(f"unknown Gemini operation {operation!r}")


def default_profile(model_name: str) -> ModelProfile:
    """The built-in profile: Gemini 2.x takes thinking budgets, later models thinking levels."""
    name = model_name.removeprefix("models/")
    levels = frozenset() if name.startswith(("gemini-1", "gemini-2")) else frozenset(
        {"minimal", "low", "medium", "high"})
    return ModelProfile(
        supports_tools=True,
        supports_parallel_tool_calls=True,
        supports_system_messages=True,
        json_object_output=True,
        json_schema_output=True,
        supports_thinking=not name.startswith(("gemini-1", "gemini-2.0")),
        provider_managed_tools=frozenset({"web_search", "web_fetch", "code_execution"}),
        content_kinds=frozenset({"text", "tagged-text", "image", "audio", "video", "document",
                                 "binary", "uploaded-file"}),
        reasoning_efforts=levels,
        settings=_GEMINI_SETTINGS,
    )


def upload_root_for(base_url: str) -> str:
    """Google's resumable-upload root for an API root: the same host, ``/upload`` before the path.

    ``https://generativelanguage.googleapis.com/v1beta`` uploads to
    ``https://generativelanguage.googleapis.com/upload/v1beta``; a local or proxy base URL
    keeps its own host, so one policy covers both.
    """
    if not isinstance(base_url, str):
        return _files.UPLOAD_BASE  # Configured reports the bad base URL itself
    parts = urlsplit(base_url)
    return f"{parts.scheme}://{parts.netloc}/upload/{parts.path.strip('/')}".rstrip("/")


class Provider(Configured):
    """The Google AI Studio provider boundary (``x-goog-api-key``, identity ``gcp.gen_ai``).

    ``discovery_limits`` bounds :meth:`list_models`.  Files use a second authenticated
    configuration on ``upload_base_url`` (the resumable-upload root, see ``._files``; by
    default :func:`upload_root_for` the base URL, so a proxy or local base URL is the only host);
    ``file_limits`` bounds uploads (default: Google's documented 2 GB per file).
    """

    __slots__ = ("discovery_limits", "file_limits", "_upload", "_upload_root", "_upload_prefix")

    def __init__(
        self,
        api_key: str,
        transport: Any = None,
        *,
        base_url: str = API_BASE,
        headers: Iterable[tuple[str, str]] = (),
        url_policy: UrlPolicy | None = None,
        profile_lookup: Callable[[str], ModelProfile | None] | None = None,
        request_timeout_ms: int | None = None,
        discovery_limits: DiscoveryLimits | None = None,
        upload_base_url: str | None = None,
        file_limits: ProviderFileLimits | None = None,
    ) -> None:
        if url_policy is None:
            url_policy = local_policy_for(base_url)  # a loopback base URL: that host only
        if upload_base_url is None:
            upload_base_url = upload_root_for(base_url)
        if transport is None:
            transport = LazyHttpTransport(url_policy)  # built on first request
        headers = tuple(headers)
        super().__init__(
            PROVIDER_NAME, base_url, transport, credential=api_key,
            auth=AuthStyle.header("x-goog-api-key"), headers=headers, url_policy=url_policy,
            request_timeout_ms=request_timeout_ms, profile_lookup=profile_lookup,
        )
        self.discovery_limits = discovery_limits
        self.file_limits = file_limits if file_limits is not None else _files.DEFAULT_FILE_LIMITS
        if not isinstance(upload_base_url, str) or "?" in upload_base_url or "#" in upload_base_url:
            raise InvalidProviderConfiguration("upload_base_url must be a URL without query")
        parts = urlsplit(upload_base_url)
        self._upload = Configured(
            PROVIDER_NAME, f"{parts.scheme}://{parts.netloc}/", transport, credential=api_key,
            auth=AuthStyle.header("x-goog-api-key"), headers=headers, url_policy=url_policy,
            request_timeout_ms=request_timeout_ms,
        )
        prefix = parts.path.strip("/")
        self._upload_root = upload_base_url
        self._upload_prefix = prefix + "/" if prefix else ""

    def list_models(
        self,
        *,
        limits: DiscoveryLimits | None = None,
        control: RunControl | None = None,
        deadline: float | None = None,
    ) -> OwnedProviderModels:
        """``GET models`` page by page (``pageToken``); ids lose their ``models/`` prefix."""
        return list_models_with(
            self, lambda bounds: GeminiModelListing(bounds.page_size), limits=limits,
            default_limits=self.discovery_limits, control=control, deadline=deadline,
        )

    # -- files (see ._files) -------------------------------------------------------------

    def upload_file(self, file: ProviderFileInput, *, control: RunControl | None = None,
                    deadline: float | None = None) -> OwnedProviderFile:
        """Resumable upload; the handle's id is the file URI Gemini requests take."""
        return _files.upload_file(self, self._upload, self._upload_root, self._upload_prefix,
                                  file, self.file_limits, control=control, deadline=deadline)

    def inspect_file(self, handle: Any, *, control: RunControl | None = None,
                     deadline: float | None = None) -> OwnedProviderFile:
        return _files.inspect_file(self, handle, control=control, deadline=deadline)

    def download_file(self, handle: Any, *, control: RunControl | None = None,
                      deadline: float | None = None) -> OwnedProviderFileDownload:
        raise self._unsupported(
            "download_file", "the Gemini Files API does not let clients download stored files"
        )

    def delete_file(self, handle: Any, *, control: RunControl | None = None,
                    deadline: float | None = None) -> None:
        _files.delete_file(self, handle, control=control, deadline=deadline)


class Client(AdapterClient):
    """A Gemini model over GenerateContent; implements :class:`~zigai.model.Model`.

    ``include_thoughts`` sets ``thinkingConfig.includeThoughts`` (None leaves it unset).
    """

    __slots__ = ("_model_name", "_provider", "settings", "include_thoughts", "_profile")

    def __init__(
        self,
        model_name: str,
        provider: Any,
        settings: ModelSettings | None = None,
        *,
        include_thoughts: bool | None = None,
        profile: ModelProfile | None = None,
    ) -> None:
        model_path(model_name, "generateContent")  # validate early
        self._model_name = model_name
        self._provider = provider
        self.settings = settings
        self.include_thoughts = include_thoughts
        if profile is None:
            profile = provider.profile_for(model_name) or default_profile(model_name)
        self._profile = profile

    @property
    def provider_name(self) -> str:
        return str(getattr(self._provider, "name", PROVIDER_NAME))

    def _prepare(self, request: ModelRequest, operation: str) -> ProviderHttpRequest:
        request = self.checked_request(request)
        body = encode_request(request, provider_name=self.provider_name,
                              include_thoughts=self.include_thoughts)
        return http_request(request, self._profile, path=model_path(self._model_name, operation),
                            json_body=body, headers=tuple(request.settings.extra_headers or ()),
                            deadline=request.deadline, idempotency_key=request.idempotency_key)

    def request(self, request: ModelRequest) -> ResponseMessage:
        response = self._provider.send(self._prepare(request, "generateContent"))
        try:
            return decode_response(response.json(), provider_name=self.provider_name,
                                   model_name=self._model_name)
        except GoogleDecodeError as exc:
            exc.status, exc.request_id = response.status, response.request_id
            exc.provider_name = self.provider_name
            raise
        except ProviderResponseDecodeError as exc:
            raise GoogleDecodeError(str(exc), status=response.status,
                                    request_id=response.request_id,
                                    provider_name=self.provider_name) from None

    def stream(self, request: ModelRequest) -> StreamedResponse:
        http_request = self._prepare(request, "streamGenerateContent")
        return SseModelStream(
            self._provider.stream_lines(http_request),
            StreamDecoder(self.provider_name, self._model_name),
            model_name=self._model_name,
            provider_name=self.provider_name,
        )
