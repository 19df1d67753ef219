"""Gemini embeddings: ``models/{model}:batchEmbedContents`` through any Google provider.

The wire contract (Gemini API, ``v1beta``)::

    request  {"requests": [{"model": "models/M", "content": {"parts": [{"text": T}]},
                            "taskType"?: "RETRIEVAL_QUERY" | "RETRIEVAL_DOCUMENT" | ...,
                            "title"?: S, "outputDimensionality"?: N}, ...]}
    response {"embeddings": [{"values": [float, ...]}, ...],
              "usageMetadata"?: {"promptTokenCount": n}}

Gemini returns embeddings in request order (there is no index field), so the only order
check is the count.  The Gemini-only options stay here, outside the neutral request:

* ``task_type`` overrides the mapping of the neutral ``input_type`` (``query`` →
  ``RETRIEVAL_QUERY``, ``document`` → ``RETRIEVAL_DOCUMENT``);
* ``titles(source_index, text)`` gives a document title, sent only with
  ``RETRIEVAL_DOCUMENT`` (the only task type that accepts one);
* the neutral ``dimensions`` becomes ``outputDimensionality``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
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

__all__ = ["GeminiEmbeddingModel", "GEMINI_TASK_TYPES", "decode_batch_embeddings"]

GEMINI_TASK_TYPES = frozenset({
    "RETRIEVAL_QUERY", "RETRIEVAL_DOCUMENT", "SEMANTIC_SIMILARITY", "CLASSIFICATION",
    "CLUSTERING", "QUESTION_ANSWERING", "FACT_VERIFICATION", "CODE_RETRIEVAL_QUERY",
})
_NEUTRAL_TASKS = {"query": "RETRIEVAL_QUERY", "document": "RETRIEVAL_DOCUMENT"}
_MODEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")

GEMINI_EMBEDDING_PROFILE = EmbeddingProfile(
    max_batch_size=100, max_input_bytes=8 * 2048, default_dimensions=3072,
    supports_dimensions=True, max_dimensions=3072,
)
"""``gemini-embedding-001``: 100 requests per batch, 2048 input tokens, up to 3072 values."""

TitleLookup = Callable[[int, str], "str | None"]


class GeminiEmbeddingModel:
    """An :class:`~zigai.embeddings.EmbeddingModel` over a Gemini provider."""

    __slots__ = ("_provider", "_model_name", "_profile", "_task_type", "_titles")

    def __init__(
        self, provider: Provider, model_name: str = "gemini-embedding-001", *,
        profile: EmbeddingProfile | None = None, task_type: str | None = None,
        titles: TitleLookup | None = None,
    ) -> None:
        if not callable(getattr(provider, "send", None)):
            raise TypeError("provider must implement the Provider protocol (send)")
        if not isinstance(model_name, str) or not _MODEL.match(model_name):
            raise ValueError(f"invalid Gemini model name {model_name!r}")
        if task_type is not None and task_type not in GEMINI_TASK_TYPES:
            raise ValueError(f"unknown Gemini task type {task_type!r}; one of {sorted(GEMINI_TASK_TYPES)}")
        if titles is not None and not callable(titles):
            raise TypeError("titles must be a callable (source_index, text) -> str | None")
        self._provider = provider
        self._model_name = model_name
        self._profile = profile or GEMINI_EMBEDDING_PROFILE
        self._task_type = task_type
        self._titles = titles

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def provider_name(self) -> str:
        return str(getattr(self._provider, "name", "gcp.gen_ai"))

    @property
    def profile(self) -> EmbeddingProfile:
        return self._profile

    def __repr__(self) -> str:
        return f"GeminiEmbeddingModel({self._model_name!r}, provider={self.provider_name!r})"

    def encode(self, request: EmbeddingRequest) -> dict[str, Any]:
        task = self._task_type or (
            _NEUTRAL_TASKS[request.input_type] if request.input_type is not None else None
        )
        items = []
        for position, text in enumerate(request.inputs):
            item: dict[str, Any] = {
                "model": f"models/{self._model_name}", "content": {"parts": [{"text": text}]},
            }
            if task is not None:
                item["taskType"] = task
            if task == "RETRIEVAL_DOCUMENT" and self._titles is not None:
                title = self._titles(request.source_offset + position, text)
                if title is not None:
                    if not isinstance(title, str):
                        raise TypeError("a document title must be a str or None")
                    item["title"] = title
            if request.dimensions is not None:
                item["outputDimensionality"] = request.dimensions
            items.append(item)
        return {"requests": items}

    def embed(self, request: EmbeddingRequest) -> EmbeddingBatch:
        response = self._provider.send(ProviderHttpRequest(
            path=f"models/{self._model_name}:batchEmbedContents", json_body=self.encode(request),
            deadline=request.deadline, control=request.control,
            idempotency_key=request.idempotency_key, url_policy=request.url_policy,
        ))
        batch = decode_batch_embeddings(response.json(), len(request.inputs),
                                        status=response.status, request_id=response.request_id)
        return EmbeddingBatch(batch.vectors, batch.usage, self._model_name)


def decode_batch_embeddings(
    document: Any, expected: int, *, status: int | None = None, request_id: str | None = None
) -> EmbeddingBatch:
    """A ``batchEmbedContents`` answer as an :class:`EmbeddingBatch` (request order)."""

    def fail(message: str) -> InvalidEmbeddingResponse:
        return InvalidEmbeddingResponse(message, status=status, request_id=request_id)

    if not isinstance(document, dict) or not isinstance(document.get("embeddings"), list):
        raise fail('a batchEmbedContents response must be an object with an "embeddings" array')
    items = document["embeddings"]
    if len(items) != expected:
        raise fail(f"the response has {len(items)} embeddings for {expected} requests")
    vectors = []
    for position, item in enumerate(items):
        if not isinstance(item, dict):
            raise fail(f"embeddings[{position}] must be an object")
        try:
            vectors.append(check_vector(item.get("values"), f"embeddings[{position}].values"))
        except InvalidEmbeddingResponse as exc:
            raise fail(str(exc)) from None
    usage = RequestUsage()
    metadata = document.get("usageMetadata")
    if metadata is not None:
        tokens = metadata.get("promptTokenCount", 0) if isinstance(metadata, dict) else None
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            raise fail("usageMetadata.promptTokenCount must be a non-negative integer")
        usage = RequestUsage(input_tokens=tokens)
    return EmbeddingBatch(tuple(vectors), usage)
