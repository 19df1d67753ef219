"""The embeddings contract: the provider-facing ``EmbeddingModel``, its values and errors.

An :class:`EmbeddingModel` owns one provider's request and response semantics for *one
batch*: it gets an :class:`EmbeddingRequest` whose inputs are already validated and returns
an :class:`EmbeddingBatch` with exactly one vector per input, in input order.  Everything
provider-neutral (validation, batching, retries, the run deadline, usage, result lifetime)
belongs to :class:`zigai.embeddings.Embedder`.

Invariants:

* :class:`EmbeddingProfile` states the model's bounds (batch size, input bytes,
  dimensions); the embedder checks them before any I/O;
* an ``EmbeddingBatch`` holds immutable tuples of floats; a model never returns a
  provider-owned mutable structure;
* provider extensions (task types, titles, wire names) never enter these values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from zigai.control import RunControl
from zigai.errors import EmbeddingsError
from zigai.provider import ProviderResponseDecodeError
from zigai.security import UrlPolicy
from zigai.usage import RequestUsage

__all__ = [
    "InputType",
    "EmbeddingProfile",
    "EmbeddingRequest",
    "EmbeddingBatch",
    "EmbeddingModel",
    "InvalidEmbeddingInput",
    "EmbeddingInputTooLarge",
    "TooManyEmbeddingInputs",
    "InvalidEmbeddingDimensions",
    "InvalidEmbeddingResponse",
    "EmbeddingResultClosed",
    "check_vector",
]

InputType = Literal["query", "document"]
"""What the inputs are for; adapters map it to their own task names (or ignore it)."""


class InvalidEmbeddingInput(EmbeddingsError):
    """An input is not a non-empty string, or the input list is empty."""


class EmbeddingInputTooLarge(InvalidEmbeddingInput):
    """One input, or all inputs together, exceed the byte limits (checked before I/O)."""


class TooManyEmbeddingInputs(InvalidEmbeddingInput):
    """More inputs than the embedder's ``max_inputs``."""


class InvalidEmbeddingDimensions(EmbeddingsError):
    """A requested dimension count is not accepted, or a vector has the wrong length."""


class InvalidEmbeddingResponse(ProviderResponseDecodeError, EmbeddingsError):
    """A provider's 2xx embedding answer does not have the documented shape (retry: decode)."""


class EmbeddingResultClosed(EmbeddingsError):
    """An EmbeddingResult was used after close()."""


def _positive(name: str, value: object, *, optional: bool = False) -> None:
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")


@dataclass(frozen=True, slots=True)
class EmbeddingProfile:
    """What one embedding model accepts.

    ``max_batch_size`` inputs per provider request; ``max_input_bytes`` UTF-8 bytes per
    input; ``default_dimensions`` the vector length without a request (None: unknown
    until the first answer); ``supports_dimensions`` whether a shorter vector can be
    requested, up to ``max_dimensions``.
    """

    max_batch_size: int = 64
    max_input_bytes: int = 32_768
    default_dimensions: int | None = None
    supports_dimensions: bool = False
    max_dimensions: int | None = None

    def __post_init__(self) -> None:
        _positive("EmbeddingProfile.max_batch_size", self.max_batch_size)
        _positive("EmbeddingProfile.max_input_bytes", self.max_input_bytes)
        _positive("EmbeddingProfile.default_dimensions", self.default_dimensions, optional=True)
        _positive("EmbeddingProfile.max_dimensions", self.max_dimensions, optional=True)


@dataclass(frozen=True, slots=True)
class EmbeddingRequest:
    """One provider batch: validated inputs, optional neutral options and the run control.

    ``source_offset`` is the index of ``inputs[0]`` in the caller's whole input list (an
    adapter that looks up per-input extensions, such as document titles, uses it).
    ``deadline`` is this attempt's absolute monotonic deadline; ``idempotency_key`` is
    shared by every attempt of the batch.  ``url_policy`` is the caller's own URL policy
    (an agent's, for an embedding made during its run): the provider refuses, before
    anything is sent, an endpoint that it or its own policy refuses (the stricter wins).
    """

    inputs: tuple[str, ...]
    input_type: InputType | None = None
    dimensions: int | None = None
    source_offset: int = 0
    deadline: float | None = None
    control: RunControl | None = None
    idempotency_key: str | None = None
    url_policy: UrlPolicy | None = None

    def __post_init__(self) -> None:
        if self.url_policy is not None and not isinstance(self.url_policy, UrlPolicy):
            raise TypeError("EmbeddingRequest.url_policy must be a zigai.security.UrlPolicy or None")


@dataclass(frozen=True, slots=True)
class EmbeddingBatch:
    """One provider answer: a vector per input in input order, and the batch's usage."""

    vectors: tuple[tuple[float, ...], ...]
    usage: RequestUsage = field(default_factory=RequestUsage)
    model_name: str | None = None


@runtime_checkable
class EmbeddingModel(Protocol):
    """The embeddings vtable: identity, profile and one-batch execution."""

    @property
    def model_name(self) -> str: ...

    @property
    def provider_name(self) -> str: ...

    @property
    def profile(self) -> EmbeddingProfile: ...

    def embed(self, request: EmbeddingRequest) -> EmbeddingBatch: ...


def check_vector(values: object, where: str) -> tuple[float, ...]:
    """A provider vector as a tuple of finite floats, or :class:`InvalidEmbeddingResponse`."""
    if not isinstance(values, list) or not values:
        raise InvalidEmbeddingResponse(f"{where} must be a non-empty array of numbers")
    vector = []
    for item in values:
        if isinstance(item, bool) or not isinstance(item, (int, float)) or not math.isfinite(item):
            raise InvalidEmbeddingResponse(f"{where} holds a non-numeric or non-finite value")
        vector.append(float(item))
    return tuple(vector)
