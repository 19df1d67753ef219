"""``zigai.providers.mistral``: Mistral Conversations (native) and Chat Completions aliases.

Job
    Two explicit routes.  :class:`ConversationsProvider` / :class:`ConversationsClient` speak
    the Conversations API (``POST https://api.mistral.ai/v1/conversations``); the client's
    model is stateless (``store: false``, the full history each call) and
    :meth:`ConversationsClient.start` with :class:`Session` is the deliberate stored route
    (append, history, delete).  :class:`Provider` / :class:`Client` remain the Chat
    Completions compatibility aliases.

Invariants
    * Portable ``web_search`` / ``code_execution`` map to Mistral's built-in tools;
      Mistral-only tools are typed values passed as ``managed_tools`` (:mod:`.tools`), each
      at most once (connectors keyed by id).
    * Mistral-only body fields travel only in a ``ProviderExtraBody`` tagged ``mistral``.
    * Conversation ids are validated before any path is built (``InvalidConversationId``).
    * Malformed 2xx answers raise :class:`MistralDecodeError` with the JSON path.

Submodules: ``conversations`` (provider, stateless client, profiles), ``session`` (stored
conversations and their owned history), ``tools`` (managed tools), ``_encode``,
``_decode``, ``_errors``, ``compat`` (Chat Completions aliases).

    provider = ConversationsProvider(api_key)
    client = ConversationsClient("mistral-small-latest", provider)
"""

from __future__ import annotations

from zigai.providers.mistral._decode import StreamDecoder, decode_response, decode_usage
from zigai.providers.mistral._encode import (
    EXTENSION_TAG,
    RESERVED_KEYS,
    encode_append,
    encode_inputs,
    encode_request,
)
from zigai.providers.mistral._errors import (
    InvalidConversationId,
    MistralDecodeError,
    MistralEncodeError,
)
from zigai.providers.mistral.compat import (
    API_BASE,
    AUTH,
    DEFAULTS,
    Client,
    Provider,
    profile_lookup,
)
from zigai.providers.mistral.conversations import (
    CONVERSATIONS_API_BASE,
    CONVERSATIONS_PATH,
    ConversationsClient,
    ConversationsProvider,
    StartedConversation,
    conversations_profile,
)
from zigai.providers.mistral.session import (
    ConversationEntry,
    ConversationHistory,
    ConversationHistoryClosed,
    EntryFamily,
    Session,
)
from zigai.providers.mistral.tools import (
    Connector,
    DocumentLibrary,
    ImageGeneration,
    WebSearchPremium,
)

__all__ = [
    "API_BASE",
    "AUTH",
    "CONVERSATIONS_API_BASE",
    "CONVERSATIONS_PATH",
    "DEFAULTS",
    "EXTENSION_TAG",
    "RESERVED_KEYS",
    "Client",
    "Connector",
    "ConversationEntry",
    "ConversationHistory",
    "ConversationHistoryClosed",
    "ConversationsClient",
    "ConversationsProvider",
    "DocumentLibrary",
    "EntryFamily",
    "ImageGeneration",
    "InvalidConversationId",
    "MistralDecodeError",
    "MistralEncodeError",
    "Provider",
    "Session",
    "StartedConversation",
    "StreamDecoder",
    "WebSearchPremium",
    "conversations_profile",
    "decode_response",
    "decode_usage",
    "encode_append",
    "encode_inputs",
    "encode_request",
    "profile_lookup",
]
