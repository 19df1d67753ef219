"""Cohere native v2 Chat: ``ChatProvider`` (credential, root) and ``ChatClient`` (the Model).

``ChatProvider`` is the bearer-authenticated provider for ``https://api.cohere.com/v2``;
``ChatClient`` implements :class:`~zigai.model.Model` over ``POST chat``: it merges its
settings below the request's, checks the request against its profile before any I/O, encodes
once (:func:`~._encode.encode_request`), and decodes with the pure functions of
:mod:`._decode` (buffered, or ``stream: true`` read as server-sent events).

Profiles (:func:`chat_profile`): Command A / R / R7B families get function tools (parallel
calls, no switch to turn them off), JSON-object and JSON-schema output and Cohere's sampling
controls; ``command-a-reasoning*`` adds thinking (``thinking="high"`` or a token budget);
vision families (``command-a-vision*``, ``c4ai-aya-vision*``) accept images and no tools.
Unknown families get the fail-closed :data:`zigai.providers.profiles.UNKNOWN` unless the
application passes a ``profile_lookup`` (provider) or ``profile``/``profile_override``
(client).
"""

from __future__ import annotations

from zigai.messages import ResponseMessage
from zigai.model import ModelProfile, ModelRequest, StreamedResponse
from zigai.provider import ProviderHttpRequest
from zigai.providers._native import NativeClient, NativeProvider
from zigai.providers.cohere._decode import StreamDecoder, decode_response
from zigai.providers.cohere._encode import PROVIDER_NAME, encode_request
from zigai.providers.cohere._errors import CohereDecodeError

__all__ = ["CHAT_API_BASE", "CHAT_PATH", "ChatClient", "ChatProvider", "chat_profile"]

CHAT_API_BASE = "https://api.cohere.com/v2"
CHAT_PATH = "chat"

_SAMPLING = frozenset({"max_tokens", "temperature", "top_p", "top_k", "seed", "stop_sequences",
                       "presence_penalty", "frequency_penalty", "logprobs"})
_TEXT = frozenset({"text", "tagged-text", "cache-point"})


def chat_profile(model_name: str) -> ModelProfile | None:
    """The built-in v2 Chat profile of a Cohere model family (None: unknown family)."""
    name = model_name.lower()
    if name.startswith(("command-a-vision", "c4ai-aya-vision")):
        return ModelProfile(supports_tools=False, supports_parallel_tool_calls=False,
                            content_kinds=_TEXT | {"image"}, settings=_SAMPLING)
    if name.startswith("c4ai-aya-expanse") or name.startswith("command-a-translate"):
        return ModelProfile(supports_tools=False, supports_parallel_tool_calls=False,
                            content_kinds=_TEXT, settings=_SAMPLING)
    if not name.startswith(("command-a", "command-r")):
        return None
    reasoning = name.startswith("command-a-reasoning")
    return ModelProfile(
        supports_tools=True,
        supports_parallel_tool_calls=True,
        json_object_output=True,
        json_schema_output=True,
        supports_thinking=reasoning,
        reasoning_efforts=frozenset({"high"}) if reasoning else frozenset(),
        content_kinds=_TEXT | {"document"},
        settings=_SAMPLING | {"tool_choice"},
    )


class ChatProvider(NativeProvider):
    """Cohere v2 provider state: bearer credential, API root, headers, policy, transport."""

    __slots__ = ()

    provider_name = PROVIDER_NAME
    api_base = CHAT_API_BASE


class ChatClient(NativeClient):
    """A Cohere model over the native v2 Chat API; implements :class:`~zigai.model.Model`."""

    decode_error = CohereDecodeError
    builtin_profile = staticmethod(chat_profile)

    def _http(self, request: ModelRequest, *, stream: bool) -> ProviderHttpRequest:
        request = self.checked_request(request)
        body = encode_request(request, model_name=self._model_name, stream=stream)
        return self.http_request(request, CHAT_PATH, body)

    def request(self, request: ModelRequest) -> ResponseMessage:
        """One buffered ``POST chat``."""
        http = self._http(request, stream=False)
        response = self.provider.send(http)
        return self.decoded(response, lambda value: decode_response(
            value, model_name=self._model_name, provider_name=self.provider_name))

    def stream(self, request: ModelRequest) -> StreamedResponse:
        """One streamed ``POST chat``; HTTP errors raise before the first event."""
        http = self._http(request, stream=True)
        return self.sse_stream(http, StreamDecoder(self._model_name, self.provider_name))
