"""xAI's native Responses API: ``Provider`` and ``Client`` (OpenAI's Responses codec, xAI's tools).

``Provider`` is the bearer-authenticated ``https://api.x.ai/v1`` root with the ``xai``
identity.  ``Client`` sends ``POST responses`` through the shared Responses codec
(:mod:`zigai.providers.openai.encode` / ``decode`` / ``stream``) with three differences:

* server-side tools come from :mod:`.tools` — the client's typed tools (``WebSearch``,
  ``XSearch``, ``CodeExecution``, ``CollectionSearch``, any number of ``McpServer``) and the
  request's portable ``web_search`` / ``code_execution``;
* provider-executed tool items xAI returned (``web_search_call``, ``x_search_call``,
  ``code_interpreter_call``, ``mcp_call`` ...) are decoded as native tool parts and replayed
  as the items they came from;
* extension bodies use the ``xai`` tag (an ``openai`` body cannot cross over).

Profiles (:func:`xai_profile`): Grok 4 and Grok Code families reason on their own (so there is
no thinking control), Grok 3 Mini takes ``low`` / ``high`` effort; all of them
take function tools, structured output, web search and code execution; Grok 4 and the vision
models accept images.  Unknown families fail closed unless the application supplies a
``profile_lookup`` (provider) or a ``profile`` (client).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from zigai.model import ModelProfile, ModelRequest
from zigai.provider import Provider as ProviderProtocol
from zigai.provider import ProviderHttpRequest
from zigai.providers._wire import http_request, request_id_headers
from zigai.providers.openai import provider as _openai
from zigai.providers.openai.encode import encode_request
from zigai.providers.openai.profiles import BASE_SETTINGS
from zigai.providers.xai.tools import XaiTool, check_tools, encode_tools
from zigai.security import UrlPolicy
from zigai.settings import ModelSettings
from zigai.transport.base import Transport

__all__ = ["API_BASE", "EXTENSION_TAG", "PROVIDER_NAME", "Client", "Provider", "xai_profile"]

API_BASE = "https://api.x.ai/v1"
PROVIDER_NAME = "xai"
EXTENSION_TAG = "xai"

_SETTINGS = (BASE_SETTINGS - {"allowed_tools", "truncation"}) | {"temperature", "top_p"}
_TEXT = frozenset({"text", "tagged-text", "cache-point"})
_VISION = _TEXT | {"image"}
_MANAGED = frozenset({"web_search", "code_execution"})


def xai_profile(model_name: str) -> ModelProfile | None:
    """The built-in Responses profile of a Grok family (None: unknown family)."""
    name = model_name.lower()
    if not name.startswith("grok-"):
        return None
    vision = name.startswith("grok-4") or "vision" in name
    base = ModelProfile(
        supports_tools=True, supports_parallel_tool_calls=True, json_object_output=True,
        json_schema_output=True, provider_managed_tools=_MANAGED,
        content_kinds=_VISION if vision else _TEXT, settings=_SETTINGS,
    )
    if name.startswith("grok-3-mini"):
        return base.with_changes(supports_thinking=True, reasoning_efforts=frozenset({"low", "high"}))
    # Grok 4 and Grok Code reason on their own and reject an effort: no thinking control
    return base


class Provider(_openai.Provider):
    """xAI provider state: bearer API key, ``https://api.x.ai/v1`` root, headers, policy."""

    __slots__ = ()

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
    ) -> None:
        super().__init__(api_key, transport=transport, base_url=base_url, headers=headers,
                         url_policy=url_policy, profile_lookup=profile_lookup,
                         request_timeout_ms=request_timeout_ms, name=PROVIDER_NAME)


class Client(_openai.Client):
    """A Grok model over xAI's Responses API; ``tools`` are xAI's server-side tools."""

    _extra_body_tag = EXTENSION_TAG

    def __init__(
        self,
        model_name: str,
        provider: ProviderProtocol,
        settings: ModelSettings | None = None,
        *,
        tools: Iterable[XaiTool] = (),
        profile: ModelProfile | None = None,
        **options: Any,
    ) -> None:
        configured = check_tools(tools)
        if profile is None:
            profile = provider.profile_for(model_name) or xai_profile(model_name)
        if profile is None:
            from zigai.providers import profiles

            profile = profiles.UNKNOWN
        super().__init__(model_name, provider, settings, profile=profile, **options)
        self.tools = configured
        self.options = replace(self.options, replay_native_items=True)

    def _prepare(self, request: ModelRequest, *, stream: bool) -> ProviderHttpRequest:
        request = self.checked_request(request)
        body = encode_request(replace(request, managed_tools=()), self._model_name,
                              stream=stream, profile=self._profile, options=self.options)
        server_tools = encode_tools(request.managed_tools, self.tools)
        if server_tools:
            body["tools"] = [*server_tools, *body.get("tools", [])]
        return http_request(request, self._profile, path=_openai.RESPONSES_PATH, json_body=body,
                            headers=(*(request.settings.extra_headers or ()),
                                     *request_id_headers(request, self.request_id_header_names)),
                            deadline=request.effective_deadline,
                            idempotency_key=request.idempotency_key)
