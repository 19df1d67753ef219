"""``Embedder``: provider-neutral validation, source-order batching, control, retries, usage.

One :meth:`Embedder.embed` call is one invocation:

1. every input and the requested dimensions are checked against :class:`EmbeddingLimits`
   and the model's :class:`~zigai.embeddings.EmbeddingProfile` — before any I/O;
2. one :class:`~zigai.control.RunControl` (``timeout_ms`` and the cancellation token) spans
   every batch, every retry and every retry wait;
3. inputs are cut into consecutive batches of at most ``batch_size``; each batch is one
   logical request under :func:`zigai.retry.run_with_retries` (one idempotency key per
   batch) and its answer is checked (one vector per input, one consistent length);
4. only when every batch succeeded are the vectors published, in source order, in an
   owned :class:`EmbeddingResult`; any failure raises and no partial result exists.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from zigai._owner import Owner
from zigai.control import CancellationToken, RunControl
from zigai.embeddings.base import (
    EmbeddingBatch,
    EmbeddingInputTooLarge,
    EmbeddingModel,
    EmbeddingRequest,
    EmbeddingResultClosed,
    InputType,
    InvalidEmbeddingDimensions,
    InvalidEmbeddingInput,
    InvalidEmbeddingResponse,
    TooManyEmbeddingInputs,
)
from zigai.retry import RetryPolicy, run_with_retries
from zigai.security import UrlPolicy
from zigai.usage import RunUsage

__all__ = ["EmbeddingLimits", "Embedder", "EmbeddingResult"]

_INPUT_TYPES = ("query", "document")


@dataclass(frozen=True, slots=True)
class EmbeddingLimits:
    """Embedder-side ceilings (exactly-at-limit passes; one more fails before I/O).

    ``max_inputs`` per call, ``max_input_bytes`` UTF-8 bytes per input (the model's profile
    may be stricter), ``max_total_bytes`` across the call, ``max_dimensions`` per vector.
    """

    max_inputs: int = 10_000
    max_input_bytes: int = 256 * 1024
    max_total_bytes: int = 64 * 1024 * 1024
    max_dimensions: int = 65_536

    def __post_init__(self) -> None:
        for name in ("max_inputs", "max_input_bytes", "max_total_bytes", "max_dimensions"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"EmbeddingLimits.{name} must be a positive int")


class EmbeddingResult(Owner):
    """The owned vectors of one ``embed`` call, in source order, with aggregate usage."""

    __slots__ = ("_vectors", "_usage", "_model_name", "_provider_name")

    _closed_error = EmbeddingResultClosed

    def __init__(
        self, vectors: tuple[tuple[float, ...], ...], usage: RunUsage, model_name: str,
        provider_name: str,
    ) -> None:
        self._vectors = vectors
        self._usage = usage
        self._model_name = model_name
        self._provider_name = provider_name
        super().__init__()

    @property
    def vectors(self) -> tuple[tuple[float, ...], ...]:
        self._check()
        return self._vectors

    @property
    def usage(self) -> RunUsage:
        """Tokens summed over every batch; ``requests`` counts successful provider calls."""
        self._check()
        return self._usage

    @property
    def dimensions(self) -> int:
        self._check()
        return len(self._vectors[0])

    @property
    def model_name(self) -> str:
        self._check()
        return self._model_name

    @property
    def provider_name(self) -> str:
        self._check()
        return self._provider_name

    def __len__(self) -> int:
        return len(self.vectors)

    def __getitem__(self, index: int) -> tuple[float, ...]:
        return self.vectors[index]

    def _release(self) -> None:
        self._vectors = ()

    def __repr__(self) -> str:
        if self._closed:
            return "EmbeddingResult(closed)"
        return f"EmbeddingResult({len(self._vectors)} vectors x {len(self._vectors[0])})"


@dataclass(frozen=True, slots=True)
class Embedder:
    """Embeds text with one :class:`~zigai.embeddings.EmbeddingModel` (see module docs).

    ``batch_size`` defaults to the model profile's ``max_batch_size`` and may not exceed
    it.  ``retry_policy`` None means one attempt per batch.  ``timeout_ms`` bounds a whole
    call; ``request_timeout_ms`` each attempt.
    """

    model: EmbeddingModel
    batch_size: int | None = None
    limits: EmbeddingLimits = EmbeddingLimits()
    retry_policy: RetryPolicy | None = None
    timeout_ms: int | None = None
    request_timeout_ms: int | None = None
    idempotency_header: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.model, EmbeddingModel):
            raise TypeError("Embedder.model must implement the EmbeddingModel protocol")
        limit = self.model.profile.max_batch_size
        if self.batch_size is not None and (
            isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int)
            or not 1 <= self.batch_size <= limit
        ):
            raise ValueError(f"Embedder.batch_size must be an int in 1..{limit} (the model's limit)")
        for name in ("timeout_ms", "request_timeout_ms"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise ValueError(f"Embedder.{name} must be None or an int >= 0 (milliseconds)")

    def embed(
        self,
        inputs: Sequence[str],
        *,
        input_type: InputType | None = None,
        dimensions: int | None = None,
        timeout_ms: int | None = None,
        cancellation: CancellationToken | None = None,
        url_policy: UrlPolicy | None = None,
    ) -> EmbeddingResult:
        """One vector per input, in source order (see module docs for the guarantees).

        ``url_policy`` (a tool passes ``ctx.url_policy``, its agent's) must allow the
        provider's endpoint as well as the provider's own policy, checked before any request.
        """
        if url_policy is not None and not isinstance(url_policy, UrlPolicy):
            raise TypeError("url_policy must be a zigai.security.UrlPolicy or None")
        texts = self._validated(inputs, input_type, dimensions)
        control = RunControl.start(self.timeout_ms, timeout_ms, token=cancellation)
        size = self.batch_size or self.model.profile.max_batch_size
        vectors: list[tuple[float, ...]] = []
        usage = RunUsage()
        length = dimensions
        for offset in range(0, len(texts), size):
            control.check()
            request = EmbeddingRequest(
                texts[offset: offset + size], input_type=input_type, dimensions=dimensions,
                source_offset=offset, control=control, url_policy=url_policy,
            )
            batch = self._call(request, control)
            length = _checked(batch, request, length)
            vectors.extend(batch.vectors)
            usage = usage.incr(batch.usage)
        return EmbeddingResult(
            tuple(vectors), usage, self.model.model_name, self.model.provider_name
        )

    def embed_one(self, text: str, *, input_type: InputType | None = None,
                  dimensions: int | None = None, timeout_ms: int | None = None,
                  cancellation: CancellationToken | None = None,
                  url_policy: UrlPolicy | None = None) -> tuple[float, ...]:
        """The vector of one text (a one-input :meth:`embed` whose result is released)."""
        with self.embed([text], input_type=input_type, dimensions=dimensions,
                        timeout_ms=timeout_ms, cancellation=cancellation, url_policy=url_policy) as result:
            return result[0]

    def _validated(
        self, inputs: Sequence[str], input_type: object, dimensions: object
    ) -> tuple[str, ...]:
        if isinstance(inputs, (str, bytes)) or not isinstance(inputs, Sequence):
            raise InvalidEmbeddingInput("embed takes a sequence of strings (wrap one text in a list)")
        texts = tuple(inputs)
        limits = self.limits
        profile = self.model.profile
        if not texts:
            raise InvalidEmbeddingInput("embed needs at least one input")
        if len(texts) > limits.max_inputs:
            raise TooManyEmbeddingInputs(
                f"{len(texts)} inputs exceed the limit of {limits.max_inputs}; split the call"
            )
        per_input = min(limits.max_input_bytes, profile.max_input_bytes)
        total = 0
        for index, text in enumerate(texts):
            if not isinstance(text, str):
                raise InvalidEmbeddingInput(f"input {index} is a {type(text).__name__}, not a str")
            if not text.strip():
                raise InvalidEmbeddingInput(f"input {index} is empty; providers reject blank inputs")
            size = len(text.encode("utf-8"))
            if size > per_input:
                raise EmbeddingInputTooLarge(
                    f"input {index} is {size} UTF-8 bytes; the limit is {per_input} (chunk it first)"
                )
            total += size
        if total > limits.max_total_bytes:
            raise EmbeddingInputTooLarge(
                f"the inputs total {total} UTF-8 bytes; the limit is {limits.max_total_bytes}"
            )
        if input_type is not None and input_type not in _INPUT_TYPES:
            raise InvalidEmbeddingInput(f"input_type must be 'query', 'document' or None, not {input_type!r}")
        if dimensions is not None:
            if isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 1:
                raise InvalidEmbeddingDimensions(f"dimensions must be a positive int, got {dimensions!r}")
            if not profile.supports_dimensions:
                raise InvalidEmbeddingDimensions(
                    f"model {self.model.model_name!r} does not accept a dimensions request"
                )
            ceiling = min(limits.max_dimensions, profile.max_dimensions or limits.max_dimensions)
            if dimensions > ceiling:
                raise InvalidEmbeddingDimensions(f"dimensions {dimensions} exceed the limit of {ceiling}")
        return texts

    def _call(self, request: EmbeddingRequest, control: RunControl) -> EmbeddingBatch:
        model = self.model

        def attempt(number: int, key: str | None) -> EmbeddingBatch:
            current = replace(
                request, idempotency_key=key,
                deadline=control.attempt_deadline(self.request_timeout_ms),
            )
            return model.embed(current)

        if self.retry_policy is None:
            return attempt(1, None)
        return run_with_retries(
            attempt, policy=self.retry_policy, control=control,
            idempotency_header=self.idempotency_header,
        )


def _checked(batch: Any, request: EmbeddingRequest, length: int | None) -> int:
    """Prove a batch answers its request; returns the vector length every batch must share."""
    if not isinstance(batch, EmbeddingBatch):
        raise InvalidEmbeddingResponse(f"the model returned {type(batch).__name__}, not an EmbeddingBatch")
    if len(batch.vectors) != len(request.inputs):
        raise InvalidEmbeddingResponse(
            f"the batch at input {request.source_offset} has {len(batch.vectors)} vectors for "
            f"{len(request.inputs)} inputs"
        )
    for position, vector in enumerate(batch.vectors):
        expected = len(vector) if length is None else length
        if not vector or len(vector) != expected:
            raise InvalidEmbeddingDimensions(
                f"vector {request.source_offset + position} has {len(vector)} dimensions; "
                f"expected {expected}"
            )
        length = expected
    assert length is not None
    return length
