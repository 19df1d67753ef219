"""zigai.embeddings: text embeddings with the same model/executor split as generation (layer 6).

Job
    :class:`EmbeddingModel` is the provider vtable (one batch in, one vector per input out);
    :class:`Embedder` owns everything provider-neutral: input and dimension validation,
    source-order batching, one run control across batches and retries, usage aggregation
    and the owned :class:`EmbeddingResult`.  Two adapters reuse the existing Provider
    boundary (credentials, API root, URL policy, transport): :class:`OpenAIEmbeddingModel`
    (``POST embeddings``, also served by compatible local servers) and
    :class:`GeminiEmbeddingModel` (``batchEmbedContents``).

Invariants
    * Every input and dimension bound is checked before provider I/O; exactly-at-limit
      passes, one byte more raises :class:`EmbeddingInputTooLarge`.
    * Partial batches are never observable: a failure in any batch raises and no result
      is built; vectors are published in source order only when every batch succeeded.
    * OpenAI ``index`` fields are validated (range, uniqueness) and restored to source order.
    * Provider extensions (Gemini task types and titles, wire names) stay in their adapter.

Submodules: ``base`` (contract, values, errors), ``embedder`` (Embedder, limits, result),
``openai`` (OpenAI-compatible adapter), ``gemini`` (Gemini adapter).
"""

from __future__ import annotations

from zigai.embeddings.base import (
    EmbeddingBatch,
    EmbeddingInputTooLarge,
    EmbeddingModel,
    EmbeddingProfile,
    EmbeddingRequest,
    EmbeddingResultClosed,
    InputType,
    InvalidEmbeddingDimensions,
    InvalidEmbeddingInput,
    InvalidEmbeddingResponse,
    TooManyEmbeddingInputs,
)
from zigai.embeddings.embedder import Embedder, EmbeddingLimits, EmbeddingResult
from zigai.embeddings.gemini import GeminiEmbeddingModel
from zigai.embeddings.openai import OpenAIEmbeddingModel

__all__ = [
    "EmbeddingModel",
    "EmbeddingProfile",
    "EmbeddingRequest",
    "EmbeddingBatch",
    "InputType",
    "Embedder",
    "EmbeddingLimits",
    "EmbeddingResult",
    "OpenAIEmbeddingModel",
    "GeminiEmbeddingModel",
    "InvalidEmbeddingInput",
    "EmbeddingInputTooLarge",
    "TooManyEmbeddingInputs",
    "InvalidEmbeddingDimensions",
    "InvalidEmbeddingResponse",
    "EmbeddingResultClosed",
]
