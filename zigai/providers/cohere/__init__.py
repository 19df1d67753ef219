"""``zigai.providers.cohere``: Cohere's native v2 Chat API and its Compatibility API aliases.

Job
    Two explicit routes.  :class:`ChatProvider` / :class:`ChatClient` speak the native v2
    Chat API (``POST https://api.cohere.com/v2/chat``): chronological system, user, assistant
    and tool messages, buffered and streamed text, thinking, tool plans, parallel tool calls,
    structured output, normalized usage, citations and log probabilities.  :class:`Provider` /
    :class:`Client` remain the Compatibility API (OpenAI Chat Completions) aliases.

Invariants
    * Cohere-only request fields (``strict_tools``, ``documents``, ``citation_options``,
      ``safety_mode``, ``priority`` ...) travel only in a ``ProviderExtraBody`` tagged
      ``cohere``; another tag, or a key the encoder owns, is refused before I/O.
    * Unknown model families fail closed (no tools, no structured output, only
      ``max_tokens``) unless the application supplies a profile lookup or override.
    * Malformed 2xx answers raise :class:`CohereDecodeError` with the JSON path.

Submodules: ``chat`` (native provider, client, profiles), ``_encode``, ``_decode`` (buffered
and stream decoding), ``_errors``, ``compat`` (the Compatibility API aliases).

    provider = ChatProvider(api_key)
    client = ChatClient("command-a-03-2025", provider)
"""

from __future__ import annotations

from zigai.providers.cohere._decode import (
    FINISH_REASONS,
    StreamDecoder,
    decode_response,
    decode_usage,
    finish_reason,
)
from zigai.providers.cohere._encode import EXTENSION_TAG, RESERVED_KEYS, encode_request
from zigai.providers.cohere._errors import CohereDecodeError, CohereEncodeError
from zigai.providers.cohere.chat import (
    CHAT_API_BASE,
    CHAT_PATH,
    ChatClient,
    ChatProvider,
    chat_profile,
)
from zigai.providers.cohere.compat import API_BASE, AUTH, DEFAULTS, Client, Provider, profile_lookup

__all__ = [
    "API_BASE",
    "AUTH",
    "CHAT_API_BASE",
    "CHAT_PATH",
    "DEFAULTS",
    "EXTENSION_TAG",
    "FINISH_REASONS",
    "RESERVED_KEYS",
    "ChatClient",
    "ChatProvider",
    "Client",
    "CohereDecodeError",
    "CohereEncodeError",
    "Provider",
    "StreamDecoder",
    "chat_profile",
    "decode_response",
    "decode_usage",
    "encode_request",
    "finish_reason",
    "profile_lookup",
]
