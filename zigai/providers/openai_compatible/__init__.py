"""``zigai.providers.openai_compatible``: the OpenAI Chat Completions wire protocol.

Submodules, one concern each: ``encode`` (request body, :class:`ChatOptions`), ``decode``
(buffered responses, usage, finish reasons, :class:`OpenAICompatibleDecodeError`),
``stream`` (SSE state machine), ``client`` (:class:`Provider`, :class:`Client`,
:class:`NamedDefaults`).  Capability knowledge lives in :mod:`zigai.providers.profiles`.

Use the generic pair for an arbitrary endpoint (its compatibility presets are
``profiles.PRESETS``; the default fallback is ``full``)::

    provider = openai_compatible.Provider(key, base_url="https://gateway.example/v1")
    client = openai_compatible.Client("some-model", provider, fallback_profile="basic")

Named modules (``zigai.providers.groq`` ...) export the same pair with their API root,
identity, auth style, built-in family profiles and the fail-closed ``profiles.UNKNOWN``.
"""

from __future__ import annotations

from zigai.providers.openai_compatible.client import (
    ENDPOINT,
    Client,
    LazyHttpTransport,
    NamedDefaults,
    Provider,
)
from zigai.providers.openai_compatible.decode import (
    OpenAICompatibleDecodeError,
    decode_response,
    decode_usage,
    finish_reason,
)
from zigai.providers.openai_compatible.encode import (
    RESERVED_KEYS,
    ChatOptions,
    encode_messages,
    encode_request,
    encode_tool,
)
from zigai.providers.openai_compatible.stream import ChatStreamedResponse, StreamDecoder

Error = OpenAICompatibleDecodeError

__all__ = [
    "ENDPOINT",
    "RESERVED_KEYS",
    "ChatOptions",
    "ChatStreamedResponse",
    "Client",
    "Error",
    "LazyHttpTransport",
    "NamedDefaults",
    "OpenAICompatibleDecodeError",
    "Provider",
    "StreamDecoder",
    "decode_response",
    "decode_usage",
    "encode_messages",
    "encode_request",
    "encode_tool",
    "finish_reason",
]
