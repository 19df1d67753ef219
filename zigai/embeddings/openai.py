"""OpenAI-compatible embeddings: ``POST embeddings`` through any :class:`~zigai.provider.Provider`.

The wire contract (OpenAI's Embeddings API, which compatible servers such as llama.cpp's
``llama-server``, vLLM and Ollama also serve)::

    request  {"model": M, "input": [text, ...], "encoding_format": "float", "dimensions"?: N}
    response {"object": "list", "model": M,
              "data": [{"object": "embedding", "index": i, "embedding": [float, ...]}, ...],
              "usage": {"prompt_tokens": n, "total_tokens": n}}

Invariants:

* the provider owns the credential, the API root and the transport; this adapter only
  builds the body and decodes the answer;
* every ``index`` must be an int in ``0..len(input)-1`` and appear exactly once; vectors
  are returned in input order whatever order ``data`` arrives in;
* ``dimensions`` is sent only when the caller asked for it (the profile says whether
  the model accepts it).
"""

from __future__ import annotations

from typing import Any

from zigai.embeddings.base import (
    EmbeddingBatch,
    EmbeddingProfile,
    EmbeddingRequest,
    InvalidEmbeddingResponse,
    check_vector,
)
from zigai.provider import Provider, ProviderHttpRequest
from zigai.usage import RequestUsage

__all__ = ["OpenAIEmbeddingModel", "OPENAI_EMBEDDING_PROFILES", "decode_embeddings"]

EMBEDDINGS_PATH = "embeddings"

OPENAI_EMBEDDING_PROFILES: dict[str, EmbeddingProfile] = {
    "text-embedding-3-small": EmbeddingProfile(
        max_batch_size=2048, max_input_bytes=32_768, default_dimensions=1536,
        supports_dimensions=True, max_dimensions=1536,
    ),
    "text-embedding-3-large": EmbeddingProfile(
        max_batch_size=2048, max_input_bytes=32_768, default_dimensions=3072,
        supports_dimensions=True, max_dimensions=3072,
    ),
    "text-embedding-ada-002": EmbeddingProfile(
        max_batch_size=2048, max_input_bytes=32_768, default_dimensions=1536,
    ),
}
"""Known OpenAI models; other names get a conservative profile (or pass ``profile=``)."""

_DEFAULT_PROFILE = EmbeddingProfile(max_batch_size=64, max_input_bytes=32_768)


class OpenAIEmbeddingModel:
    """An :class:`~zigai.embeddings.EmbeddingModel` over an OpenAI-wire provider."""

    __slots__ = ("_provider", "_model_name", "_profile")

    def __init__(self, provider: Provider, model_name: str, *,
                 profile: EmbeddingProfile | None = None) -> None:
        if not callable(getattr(provider, "send", None)):
            raise TypeError("provider must implement the Provider protocol (send)")
        if not isinstance(model_name, str) or not model_name.strip():
            raise ValueError("model_name must be a non-empty string")
        self._provider = provider
        self._model_name = model_name
        self._profile = profile or OPENAI_EMBEDDING_PROFILES.get(model_name, _DEFAULT_PROFILE)

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def provider_name(self) -> str:
        return str(getattr(self._provider, "name", "openai"))

    @property
    def profile(self) -> EmbeddingProfile:
        return self._profile

    def __repr__(self) -> str:
        return f"OpenAIEmbeddingModel({self._model_name!r}, provider={self.provider_name!r})"

    def encode(self, request: EmbeddingRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self._model_name, "input": list(request.inputs), "encoding_format": "float",
        }
        if request.dimensions is not None:
            body["dimensions"] = request.dimensions
        return body

    def embed(self, request: EmbeddingRequest) -> EmbeddingBatch:
        response = self._provider.send(ProviderHttpRequest(
            path=EMBEDDINGS_PATH, json_body=self.encode(request), deadline=request.deadline,
            control=request.control, idempotency_key=request.idempotency_key, url_policy=request.url_policy,
        ))
        return decode_embeddings(response.json(), len(request.inputs),
                                 status=response.status, request_id=response.request_id)


def _count(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidEmbeddingResponse(f"{where} must be a non-negative integer")
    return value


def decode_embeddings(
    document: Any, expected: int, *, status: int | None = None, request_id: str | None = None
) -> EmbeddingBatch:
    """An OpenAI embeddings answer as an :class:`EmbeddingBatch` in input order."""

    def fail(message: str) -> InvalidEmbeddingResponse:
        return InvalidEmbeddingResponse(message, status=status, request_id=request_id)

    if not isinstance(document, dict) or not isinstance(document.get("data"), list):
        raise fail('an embeddings response must be an object with a "data" array')
    data = document["data"]
    if len(data) != expected:
        raise fail(f"the response has {len(data)} embeddings for {expected} inputs")
    slots: list[tuple[float, ...] | None] = [None] * expected
    for position, item in enumerate(data):
        where = f"data[{position}]"
        if not isinstance(item, dict):
            raise fail(f"{where} must be an object")
        if item.get("object", "embedding") != "embedding":
            raise fail(f"{where}.object is {item.get('object')!r}, not 'embedding'")
        index = item.get("index")
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < expected:
            raise fail(f"{where}.index must be an integer in 0..{expected - 1}, got {index!r}")
        if slots[index] is not None:
            raise fail(f"{where}.index {index} appears twice")
        try:
            slots[index] = check_vector(item.get("embedding"), f"{where}.embedding")
        except InvalidEmbeddingResponse as exc:
            raise fail(str(exc)) from None
    usage = RequestUsage()
    raw_usage = document.get("usage")
    if raw_usage is not None:
        if not isinstance(raw_usage, dict):
            raise fail("usage must be an object")
        try:
            usage = RequestUsage(input_tokens=_count(raw_usage.get("prompt_tokens", 0),
                                                     "usage.prompt_tokens"))
        except InvalidEmbeddingResponse as exc:
            raise fail(str(exc)) from None
    model = document.get("model")
    vectors = tuple(v for v in slots if v is not None)
    return EmbeddingBatch(vectors, usage, model if isinstance(model, str) else None)
