"""``zigai.providers.bedrock``: Amazon Bedrock's native Converse route and its Mantle route.

Job
    :class:`Provider` / :class:`Client` speak Converse and ConverseStream on the regional
    runtime (``https://bedrock-runtime.{region}.amazonaws.com``), signed with AWS Signature
    Version 4 from the SDK credential chain (:mod:`.credentials`) or with a Bedrock API key as
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
``_decode``, ``_errors``, ``mantle`` (the Chat Completions route), ``sigv4`` (the signature),
``aws_auth`` (signer, region), ``credentials`` (chain, refresh), ``aws_config`` (shared
files), ``aws_process`` (``credential_process``), ``aws_metadata`` (container and IMDSv2).

    provider = Provider(region="eu-west-1")          # SigV4, SDK credential chain
    provider = Provider(api_key, "eu-west-1")        # Bedrock API key
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
from zigai.providers.bedrock.aws_auth import (
    MissingAwsRegion,
    SigV4Signer,
    region_from_model,
    resolve_region,
)
from zigai.providers.bedrock.aws_config import AwsConfigError
from zigai.providers.bedrock.aws_metadata import MetadataCredentialsError
from zigai.providers.bedrock.aws_process import CredentialProcessFailed
from zigai.providers.bedrock.converse import (
    Client,
    ConverseStreamedResponse,
    Provider,
    runtime_api_base,
)
from zigai.providers.bedrock.credentials import (
    AwsCredentialChain,
    AwsCredentials,
    AwsCredentialsError,
    AwsProfileNotFound,
    IncompleteAwsCredentials,
    NoAwsCredentials,
    UnsupportedAwsCredentialSource,
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
    "AwsConfigError",
    "AwsCredentialChain",
    "AwsCredentials",
    "AwsCredentialsError",
    "AwsProfileNotFound",
    "BedrockDecodeError",
    "BedrockEncodeError",
    "Client",
    "CredentialProcessFailed",
    "ConverseStreamedResponse",
    "EventStreamNeedsChunks",
    "IncompleteAwsCredentials",
    "InvalidBedrockModelId",
    "InvalidBedrockRegion",
    "MantleClient",
    "MetadataCredentialsError",
    "MissingAwsRegion",
    "NoAwsCredentials",
    "MantleProvider",
    "Provider",
    "SigV4Signer",
    "StreamDecoder",
    "UnsupportedAwsCredentialSource",
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
    "region_from_model",
    "resolve_region",
    "runtime_api_base",
]
