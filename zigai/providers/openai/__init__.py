"""``zigai.providers.openai``: the neutral model contract on the OpenAI Responses API.

Modules, one concept each: ``provider`` (Provider, Client), ``encode`` (request body),
``decode`` (buffered response, usage, finish reasons), ``stream`` (SSE state machine),
``profiles`` (model families), ``errors``.

    provider = Provider(api_key)
    client = Client("gpt-5-mini", provider)
    response = client.request(ModelRequest(messages=(RequestMessage.user("hi"),)))
"""

from __future__ import annotations

from zigai.providers.openai.decode import decode_response, decode_usage
from zigai.providers.openai.encode import (
    RESERVED_BODY_KEYS,
    EncodeOptions,
    encode_request,
    encode_tool_output,
)
from zigai.providers.openai.errors import OpenAIDecodeError, OpenAIEncodeError
from zigai.providers.openai.profiles import UNKNOWN_PROFILE, profile_for_model
from zigai.providers.openai.provider import (
    API_BASE,
    Client,
    OpenAIStreamedResponse,
    Provider,
    ResponsesClient,
)
from zigai.providers.openai.stream import StreamDecoder

__all__ = [
    "API_BASE",
    "Client",
    "EncodeOptions",
    "OpenAIDecodeError",
    "OpenAIEncodeError",
    "OpenAIStreamedResponse",
    "Provider",
    "RESERVED_BODY_KEYS",
    "ResponsesClient",
    "StreamDecoder",
    "UNKNOWN_PROFILE",
    "decode_response",
    "decode_usage",
    "encode_request",
    "encode_tool_output",
    "profile_for_model",
]
