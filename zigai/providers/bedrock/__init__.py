"""``zigai.providers.bedrock``: Amazon Bedrock's native Converse route and its Mantle route.

Job
    :class:`Provider` / :class:`Client` speak Converse and ConverseStream on the regional
    runtime (``https://bedrock-runtime.{region}.amazonaws.com``) with a Bedrock API key as
    bearer token: instructions, system and text history, images and documents, function tools
    and results, structured output on recognized profiles, inference settings, service tiers,
    reasoning replay, normalized finish reasons and cache-aware usage.  ConverseStream's binary
    AWS EventStream framing is decoded with CRC checks and bounded messages.
    :class:`MantleProvider` / :class:`MantleClient` remain the OpenAI-compatible Chat
    Completions route (``mantle_api_base``).

Invariants
    * Regions and model ids are validated before any URL is built; the model id is one
      percent-encoded path segment.
    * Converse-only fields travel only in a ``ProviderExtraBody`` tagged ``bedrock``.
    * Unknown model families fail closed unless a profile lookup or override is supplied.
    * Malformed 2xx answers raise :class:`BedrockDecodeError` with the JSON path.

Submodules: ``converse`` (provider, client, stream), ``profiles`` (families), ``_encode``,
``_decode``, ``_errors``, ``mantle`` (the Chat Completions route).

    provider = Provider(api_key, "eu-west-1")
    client = Client("eu.anthropic.claude-sonnet-4-6", provider)
"""

from __future__ import annotations

from zigai.providers.bedrock._decode import (
    FINISH_REASONS,
    StreamDecoder,
    decode_response,
    decode_usage,
    finish_reason,
)
from zigai.providers.bedrock._encode import (
    EXTENSION_TAG,
    RESERVED_KEYS,
    check_model_id,
    encode_request,
    model_path,
)
from zigai.providers.bedrock._errors import (
    BedrockDecodeError,
    BedrockEncodeError,
    EventStreamNeedsChunks,
    InvalidBedrockModelId,
)
from zigai.providers.bedrock.converse import (
    Client,
    ConverseStreamedResponse,
    Provider,
    runtime_api_base,
)
from zigai.providers.bedrock.mantle import (
    AUTH,
    MANTLE_DEFAULTS,
    InvalidBedrockRegion,
    MantleClient,
    MantleProvider,
    check_region,
    mantle_api_base,
    mantle_profile_lookup,
)
from zigai.providers.bedrock.profiles import converse_profile, model_family

__all__ = [
    "AUTH",
    "EXTENSION_TAG",
    "FINISH_REASONS",
    "MANTLE_DEFAULTS",
    "RESERVED_KEYS",
    "BedrockDecodeError",
    "BedrockEncodeError",
    "Client",
    "ConverseStreamedResponse",
    "EventStreamNeedsChunks",
    "InvalidBedrockModelId",
    "InvalidBedrockRegion",
    "MantleClient",
    "MantleProvider",
    "Provider",
    "StreamDecoder",
    "check_model_id",
    "check_region",
    "converse_profile",
    "decode_response",
    "decode_usage",
    "encode_request",
    "finish_reason",
    "mantle_api_base",
    "mantle_profile_lookup",
    "model_family",
    "model_path",
    "runtime_api_base",
]
