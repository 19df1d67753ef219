"""Mistral Conversations: ``ConversationsProvider`` and the stateless ``ConversationsClient``.

``ConversationsProvider`` is the bearer-authenticated provider for
``https://api.mistral.ai/v1`` (identity ``mistral``).  ``ConversationsClient`` implements
:class:`~zigai.model.Model` over ``POST conversations`` with ``store: false``: every call sends
the complete neutral history, so retries, fallback and ordinary agent runs never change
remote state.  Portable ``web_search`` / ``code_execution`` map to Mistral's built-in tools;
Mistral-only tools are passed once, as ``managed_tools`` (see :mod:`.tools`).

:meth:`ConversationsClient.start` is the deliberate exception: it stores the conversation
(``store: true``) and returns a :class:`StartedConversation` whose ``conversation_id``
opens a :class:`~.session.Session`.

Profiles (:func:`conversations_profile`): Mistral, Ministral, Magistral, Codestral, Devstral
and Pixtral families get function tools, JSON-object and JSON-schema output, web search and
code execution and the completion-argument settings; vision families (Pixtral and the
Mistral Small / Medium / Large lines) accept images.  Unknown families fail closed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from zigai.messages import ResponseMessage
from zigai.model import ModelProfile, ModelRequest, StreamedResponse
from zigai.provider import ProviderHttpRequest
from zigai.providers._native import NativeClient, NativeProvider
from zigai.providers.mistral._decode import StreamDecoder, decode_response
from zigai.providers.mistral._encode import PROVIDER_NAME, encode_request
from zigai.providers.mistral._errors import MistralDecodeError
from zigai.providers.mistral.tools import MistralTool, check_managed_tools
from zigai.settings import ModelSettings

__all__ = [
    "CONVERSATIONS_API_BASE",
    "CONVERSATIONS_PATH",
    "ConversationsClient",
    "ConversationsProvider",
    "StartedConversation",
    "conversations_profile",
]

CONVERSATIONS_API_BASE = "https://api.mistral.ai/v1"
CONVERSATIONS_PATH = "conversations"

_SETTINGS = frozenset({"max_tokens", "temperature", "top_p", "seed", "stop_sequences",
                       "presence_penalty", "frequency_penalty", "tool_choice"})
_TEXT = frozenset({"text", "tagged-text", "cache-point"})
_FAMILIES = ("mistral", "ministral", "magistral", "codestral", "devstral", "pixtral",
             "open-mistral", "open-mixtral")
_VISION = ("pixtral", "mistral-small", "mistral-medium", "mistral-large")


def conversations_profile(model_name: str) -> ModelProfile | None:
    """The built-in Conversations profile of a Mistral model family (None: unknown)."""
    name = model_name.lower()
    if not name.startswith(_FAMILIES):
        return None
    content = _TEXT | {"image", "document"} if name.startswith(_VISION) else _TEXT
    return ModelProfile(
        supports_tools=True,
        supports_parallel_tool_calls=True,
        json_object_output=True,
        json_schema_output=True,
        provider_managed_tools=frozenset({"web_search", "code_execution"}),
        content_kinds=content,
        settings=_SETTINGS,
    )


@dataclass(frozen=True, slots=True)
class StartedConversation:
    """The answer to :meth:`ConversationsClient.start` and the id of the stored conversation."""

    conversation_id: str | None
    response: ResponseMessage


class ConversationsProvider(NativeProvider):
    """Mistral Conversations provider state: bearer credential, root, headers, policy."""

    __slots__ = ()

    provider_name = PROVIDER_NAME
    api_base = CONVERSATIONS_API_BASE


class ConversationsClient(NativeClient):
    """A Mistral model over the Conversations API; :meth:`model` is stateless (``store: false``)."""

    decode_error = MistralDecodeError
    builtin_profile = staticmethod(conversations_profile)

    def __init__(
        self,
        model_name: str,
        provider: Any,
        settings: ModelSettings | None = None,
        *,
        managed_tools: Iterable[MistralTool] = (),
        profile: ModelProfile | None = None,
        profile_override: Callable[[str, ModelProfile], ModelProfile | None] | None = None,
    ) -> None:
        super().__init__(model_name, provider, settings, profile=profile,
                         profile_override=profile_override)
        self.managed_tools = check_managed_tools(managed_tools)

    def _http(self, request: ModelRequest, *, stream: bool, store: bool) -> ProviderHttpRequest:
        request = self.checked_request(request)
        body = encode_request(request, model_name=self._model_name, stream=stream, store=store,
                              managed=self.managed_tools)
        return self.http_request(request, CONVERSATIONS_PATH, body)

    def _decode(self, value: Any) -> ResponseMessage:
        return decode_response(value, model_name=self._model_name,
                               provider_name=self.provider_name)

    def request(self, request: ModelRequest) -> ResponseMessage:
        """One stateless buffered call (``store: false``, the whole history sent)."""
        response = self.provider.send(self._http(request, stream=False, store=False))
        return self.decoded(response, self._decode)

    def stream(self, request: ModelRequest) -> StreamedResponse:
        """One stateless streamed call; HTTP errors raise before the first event."""
        return self.sse_stream(self._http(request, stream=True, store=False),
                               StreamDecoder(self._model_name, self.provider_name))

    def start(self, request: ModelRequest) -> StartedConversation:
        """Store a new conversation (``store: true``) and return its first answer and id."""
        response = self.provider.send(self._http(request, stream=False, store=True))
        message = self.decoded(response, self._decode)
        return StartedConversation(message.provider_response_id, message)
