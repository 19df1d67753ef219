"""Anthropic Messages API adapter: ``Provider`` (credentials, root) and ``Client`` (the Model).

Job
    :class:`Provider` wraps :class:`~zigai.providers.http.Configured` with the Anthropic API root
    (``https://api.anthropic.com/v1``), the ``anthropic`` identity and ``x-api-key`` auth.
    :class:`Client` implements the :class:`~zigai.model.Model` protocol over ``POST messages``:
    it checks the request against its profile *before* any I/O, encodes it once
    (:func:`encode_request`), sends the adapter-owned ``anthropic-version`` (and, when needed,
    ``anthropic-beta``) header, and decodes with pure functions (:func:`decode_response`,
    :class:`StreamDecoder`).

Invariants
    * The client never sees the API key; HTTP errors are normalized by the provider.
    * ``max_tokens`` is always sent (the API requires it): the merged setting, else
      ``Client.max_tokens`` (default 4096).
    * Malformed 2xx answers raise :class:`AnthropicDecodeError` (retry category ``decode``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from zigai.control import RunControl
from zigai.messages import ResponseMessage
from zigai.model import ALL_CONTENT_KINDS, ModelProfile, ModelRequest, StreamedResponse
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
from zigai.providers.anthropic import _files
from zigai.providers.anthropic._decode import (
    FINISH_REASONS,
    StreamDecoder,
    decode_response,
    decode_usage,
    finish_reason,
)
from zigai.providers.anthropic._discovery import AnthropicModelListing
from zigai.providers.anthropic._encode import (
    FILES_BETA,
    PROVIDER_NAME,
    RESERVED_KEYS,
    beta_features,
    encode_messages,
    encode_request,
)
from zigai.providers.anthropic._errors import AnthropicDecodeError, AnthropicEncodeError
from zigai.providers.http import AuthStyle, Configured
from zigai.security import UrlPolicy, local_policy_for
from zigai.settings import ModelSettings

__all__ = [
    "API_BASE",
    "API_VERSION",
    "DEFAULT_MAX_TOKENS",
    "FINISH_REASONS",
    "PROVIDER_NAME",
    "RESERVED_KEYS",
    "AnthropicDecodeError",
    "AnthropicEncodeError",
    "Client",
    "Provider",
    "StreamDecoder",
    "decode_response",
    "decode_usage",
    "default_profile",
    "encode_messages",
    "encode_request",
    "finish_reason",
]

API_BASE = "https://api.anthropic.com/v1"
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096

_ANTHROPIC_SETTINGS = frozenset(
    {"max_tokens", "temperature", "top_p", "top_k", "stop_sequences", "parallel_tool_calls",
     "tool_choice", "allowed_tools"}
)
_VERSIONED = re.compile(r"^claude-(opus|sonnet|haiku)-(\d+)(?:-(\d))?(?:$|-)")


def _effort_levels(model_name: str) -> frozenset[str]:
    """Effort (``output_config.effort``) is documented for Opus 4.5 and for 4.6+ models."""
    match = _VERSIONED.match(model_name)
    if model_name.startswith(("claude-3", "claude-2", "claude-instant")):
        return frozenset()
    if match is not None:
        family, major, minor = match.group(1), int(match.group(2)), int(match.group(3) or 0)
        if (major, minor) < (4, 5) or ((major, minor) == (4, 5) and family != "opus"):
            return frozenset()
    return frozenset({"low", "medium", "high", "xhigh"})


def _managed_kinds(model_name: str, legacy: bool) -> frozenset[str]:
    """Web search and fetch everywhere; code execution from Claude 3.5 Haiku / 3.7 Sonnet on;
    the MCP connector on the 4.5 and later models Anthropic lists for it."""
    tools = {"web_search", "web_fetch"}
    if not legacy or model_name.startswith(("claude-3-7", "claude-3-5-haiku")):
        tools.add("code_execution")
    match = _VERSIONED.match(model_name)
    if match is not None and (int(match.group(2)), int(match.group(3) or 0)) >= (4, 5):
        tools.add("mcp_server")
    return frozenset(tools)


def default_profile(model_name: str) -> ModelProfile:
    """The built-in profile for an Anthropic model name (conservative for Claude 3)."""
    legacy = model_name.startswith(("claude-3", "claude-2", "claude-instant"))
    return ModelProfile(
        supports_tools=True,
        supports_parallel_tool_calls=True,
        supports_system_messages=True,
        json_object_output=False,
        json_schema_output=not legacy,
        supports_thinking=not legacy or model_name.startswith("claude-3-7"),
        provider_managed_tools=_managed_kinds(model_name, legacy),
        content_kinds=frozenset({"text", "tagged-text", "image", "document", "uploaded-file",
                                 "cache-point"}) & ALL_CONTENT_KINDS,
        reasoning_efforts=_effort_levels(model_name),
        service_tiers=frozenset({"auto", "standard_only"}),
        settings=_ANTHROPIC_SETTINGS,
    )


class Provider(Configured):
    """The Anthropic provider boundary: API root, ``x-api-key`` credential, transport, policy.

    ``discovery_limits`` bounds :meth:`list_models`; ``file_limits`` bounds uploads (default:
    Anthropic's documented 500 MB per file).  File requests always carry the Files API beta
    header.
    """

    __slots__ = ("discovery_limits", "file_limits")

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
        file_limits: ProviderFileLimits | None = None,
    ) -> None:
        if url_policy is None:
            url_policy = local_policy_for(base_url)  # a loopback base URL: that host only
        if transport is None:
            transport = LazyHttpTransport(url_policy)  # built on first request
        super().__init__(
            PROVIDER_NAME,
            base_url,
            transport,
            credential=api_key,
            auth=AuthStyle.header("x-api-key"),
            headers=headers,
            url_policy=url_policy,
            request_timeout_ms=request_timeout_ms,
            profile_lookup=profile_lookup,
        )
        self.discovery_limits = discovery_limits
        self.file_limits = file_limits if file_limits is not None else _files.DEFAULT_FILE_LIMITS

    def list_models(
        self,
        *,
        limits: DiscoveryLimits | None = None,
        control: RunControl | None = None,
        deadline: float | None = None,
    ) -> OwnedProviderModels:
        """``GET models`` page by page (``after_id``), bounded by ``limits`` or
        ``discovery_limits``."""
        return list_models_with(
            self, lambda bounds: AnthropicModelListing(bounds.page_size, API_VERSION),
            limits=limits, default_limits=self.discovery_limits, control=control,
            deadline=deadline,
        )

    # -- files (see ._files) -------------------------------------------------------------

    _FILE_HEADERS = (("anthropic-version", API_VERSION), ("anthropic-beta", FILES_BETA))

    def upload_file(self, file: ProviderFileInput, *, control: RunControl | None = None,
                    deadline: float | None = None) -> OwnedProviderFile:
        """``POST files`` (no purpose); the descriptor reports ``downloadable``."""
        return _files.upload_file(self, file, self.file_limits, self._FILE_HEADERS,
                                  control=control, deadline=deadline)

    def inspect_file(self, handle: Any, *, control: RunControl | None = None,
                     deadline: float | None = None) -> OwnedProviderFile:
        return _files.inspect_file(self, handle, self._FILE_HEADERS, control=control,
                                   deadline=deadline)

    def download_file(self, handle: Any, *, control: RunControl | None = None,
                      deadline: float | None = None) -> OwnedProviderFileDownload:
        """Content of a ``downloadable`` file (tool outputs; caller uploads are not)."""
        return _files.download_file(self, handle, self._FILE_HEADERS, control=control,
                                    deadline=deadline)

    def delete_file(self, handle: Any, *, control: RunControl | None = None,
                    deadline: float | None = None) -> None:
        _files.delete_file(self, handle, self._FILE_HEADERS, control=control, deadline=deadline)


class Client(AdapterClient):
    """A Claude model over the Messages API; implements :class:`~zigai.model.Model`."""

    __slots__ = ("_model_name", "_provider", "settings", "max_tokens", "_profile")

    def __init__(
        self,
        model_name: str,
        provider: Any,
        settings: ModelSettings | None = None,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        profile: ModelProfile | None = None,
    ) -> None:
        if not isinstance(model_name, str) or not model_name:
            raise ValueError("model_name must be a non-empty string")
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError("max_tokens must be a positive int")
        self._model_name = model_name
        self._provider = provider
        self.settings = settings
        self.max_tokens = max_tokens
        if profile is None:
            profile = provider.profile_for(model_name) or default_profile(model_name)
        self._profile = profile

    @property
    def provider_name(self) -> str:
        return str(getattr(self._provider, "name", PROVIDER_NAME))

    def _prepare(self, request: ModelRequest, stream: bool) -> ProviderHttpRequest:
        request = self.checked_request(request)
        body = encode_request(
            request, model_name=self._model_name, max_tokens=self.max_tokens, stream=stream
        )
        headers: list[tuple[str, str]] = [("anthropic-version", API_VERSION)]
        betas = beta_features(request)
        if betas:
            headers.append(("anthropic-beta", ",".join(betas)))
        headers.extend(request.settings.extra_headers or ())
        return http_request(request, self._profile, path="messages", json_body=body,
                            headers=tuple(headers), deadline=request.deadline,
                            idempotency_key=request.idempotency_key)

    def request(self, request: ModelRequest) -> ResponseMessage:
        http_request = self._prepare(request, stream=False)
        response = self._provider.send(http_request)
        try:
            value = response.json()
            return decode_response(value, model_name=self._model_name)
        except AnthropicDecodeError as exc:
            exc.status, exc.request_id = response.status, response.request_id
            raise
        except ProviderResponseDecodeError as exc:
            raise AnthropicDecodeError(str(exc), status=response.status,
                                       request_id=response.request_id) from None

    def stream(self, request: ModelRequest) -> StreamedResponse:
        http_request = self._prepare(request, stream=True)
        return SseModelStream(
            self._provider.stream_lines(http_request),
            StreamDecoder(self._model_name),
            model_name=self._model_name,
            provider_name=self.provider_name,
        )
