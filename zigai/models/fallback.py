"""``Fallback``: one Model over an ordered candidate list, tried only for transient failures.

Job
    :class:`Fallback` implements :class:`zigai.model.Model`.  ``request`` and ``stream`` try the
    candidates in order; a candidate that fails with a *transient* error (classified exactly
    like the retry policy, :func:`zigai.retry.classify`) hands the request to the next one.
    The agent sees one model, so routing adds no branch to the agent loop.

Invariants
    * ``profile`` is the intersection of the candidates' profiles, computed once; every request
      is checked against it before the first candidate is called, so a feature one candidate
      lacks fails before any I/O.
    * Falls back only for the categories in ``fallback_on`` (default: ``rate_limit``,
      ``server_error``, ``timeout``, ``connection``).  Bad requests, authentication, size limits,
      encoding errors, cancellation, run timeouts and application exceptions propagate at once.
    * The run control is checked before each next candidate; an expired attempt deadline ends
      the chain with the last error.
    * A stream falls back only while no event has been delivered: once the first event was
      yielded, any failure propagates (what the application saw cannot be taken back).
    * When every candidate failed, the last error is raised unchanged (so an outer retry policy
      classifies it as usual) with a note naming each earlier failure.
    * The answering candidate is recorded: the response keeps that candidate's ``model_name``
      and ``provider_name``, and ``metadata["fallback"]`` holds its index and the categories
      of the candidates skipped before it (metadata is application-only, never sent).
    * ``provider_name`` is the candidates' common provider name, or ``"fallback"`` when they
      differ; the agent's uploaded-file ownership check then refuses every provider file,
      because no single provider could own it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from zigai.errors import ModelError
from zigai.messages import Metadata, ResponseMessage
from zigai.model import (
    ModelProfile,
    ModelRequest,
    ModelStreamEvent,
    StreamedResponse,
    check_request_supported,
)
from zigai.retry import RETRY_CATEGORIES, classify

__all__ = [
    "DEFAULT_FALLBACK_ON",
    "Fallback",
    "FallbackAttempt",
    "InvalidFallback",
    "FallbackStreamedResponse",
]

#: The transient categories a Fallback moves on for by default.
DEFAULT_FALLBACK_ON: frozenset[str] = frozenset(
    {"rate_limit", "server_error", "timeout", "connection"}
)
MAX_CANDIDATES = 16
"""The most candidates one Fallback accepts."""


class InvalidFallback(ModelError):
    """A Fallback was built from no candidates, a non-Model, or unknown categories."""


@dataclass(frozen=True, slots=True)
class FallbackAttempt:
    """What ``on_fallback`` sees when a candidate failed and the next one is about to run.

    ``candidate`` is the 0-based index of the candidate that failed, ``category`` its
    transient category, ``error`` the exception and ``next_candidate`` the index tried next.
    """

    candidate: int
    model_name: str | None
    provider_name: str | None
    category: str
    error: BaseException
    next_candidate: int


def _is_model(value: Any) -> bool:
    return isinstance(getattr(value, "profile", None), ModelProfile) and callable(
        getattr(value, "request", None)
    ) and callable(getattr(value, "stream", None))


def _name(model: Any, attribute: str) -> str | None:
    value = getattr(model, attribute, None)
    return value if isinstance(value, str) else None


class Fallback:
    """Try ``candidates`` in order; move on only for the transient ``fallback_on`` categories.

    ``on_fallback`` (optional) is called synchronously with a :class:`FallbackAttempt` before
    each move to the next candidate; whatever it raises propagates and ends the request.
    """

    __slots__ = ("candidates", "fallback_on", "on_fallback", "_profile", "_provider_name")

    def __init__(
        self,
        candidates: Sequence[Any],
        *,
        fallback_on: frozenset[str] | set[str] = DEFAULT_FALLBACK_ON,
        on_fallback: Callable[[FallbackAttempt], None] | None = None,
    ) -> None:
        if isinstance(candidates, (str, bytes)) or not isinstance(candidates, Sequence):
            raise InvalidFallback("candidates must be a sequence of Model values")
        models = tuple(candidates)
        if not models:
            raise InvalidFallback("a Fallback needs at least one candidate model")
        if len(models) > MAX_CANDIDATES:
            raise InvalidFallback(f"a Fallback takes at most {MAX_CANDIDATES} candidates")
        for index, model in enumerate(models):
            if not _is_model(model):
                raise InvalidFallback(
                    f"candidate {index} ({type(model).__name__}) is not a Model: it needs a "
                    "ModelProfile 'profile', 'request' and 'stream'"
                )
        categories = frozenset(fallback_on)
        unknown = categories - RETRY_CATEGORIES
        if unknown:
            raise InvalidFallback(
                f"unknown fallback categories {sorted(unknown)}; choose from "
                f"{sorted(RETRY_CATEGORIES)}"
            )
        if on_fallback is not None and not callable(on_fallback):
            raise InvalidFallback("on_fallback must be callable")
        profile = models[0].profile
        for model in models[1:]:
            profile = profile.intersection(model.profile)
        names = {_name(model, "provider_name") for model in models}
        self.candidates = models
        self.fallback_on = categories
        self.on_fallback = on_fallback
        self._profile = profile
        only = names.pop() if len(names) == 1 else None
        self._provider_name = only if only is not None else "fallback"

    # -- Model protocol -----------------------------------------------------------------

    @property
    def profile(self) -> ModelProfile:
        """The intersection of every candidate's profile."""
        return self._profile

    @property
    def provider_name(self) -> str:
        return self._provider_name

    @property
    def model_name(self) -> str:
        names = ", ".join(_name(m, "model_name") or type(m).__name__ for m in self.candidates)
        return f"fallback({names})"

    def model(self) -> Fallback:
        return self

    def __repr__(self) -> str:
        return f"Fallback({self.model_name}, fallback_on={sorted(self.fallback_on)})"

    def request(self, request: ModelRequest) -> ResponseMessage:
        check_request_supported(request, self._profile)
        skipped: list[tuple[int, str]] = []
        for index, candidate in enumerate(self.candidates):
            try:
                response = candidate.request(request)
            except Exception as exc:
                self._move_on(request, index, exc, skipped)
                continue
            return _mark(response, index, skipped)
        raise AssertionError("unreachable: the last candidate's error is raised")  # pragma: no cover

    def stream(self, request: ModelRequest) -> StreamedResponse:
        check_request_supported(request, self._profile)
        skipped: list[tuple[int, str]] = []
        for index, candidate in enumerate(self.candidates):
            try:
                inner = candidate.stream(request)
            except Exception as exc:
                self._move_on(request, index, exc, skipped)
                continue
            return FallbackStreamedResponse(self, request, index, inner, skipped)
        raise AssertionError("unreachable: the last candidate's error is raised")  # pragma: no cover

    # -- the decision -------------------------------------------------------------------

    def _move_on(
        self, request: ModelRequest, index: int, exc: Exception, skipped: list[tuple[int, str]]
    ) -> None:
        """Return when candidate ``index + 1`` should run; otherwise raise ``exc``."""
        category = classify(exc)
        last = index == len(self.candidates) - 1
        if category is None or category not in self.fallback_on or last:
            if skipped:
                earlier = "; ".join(f"candidate {i}: {c}" for i, c in skipped)
                exc.add_note(f"zigai.models.Fallback: earlier candidates failed ({earlier})")
            raise exc
        request.control.check()
        if request.deadline is not None and time.monotonic() >= request.deadline:
            raise exc
        skipped.append((index, category))
        if self.on_fallback is not None:
            failed = self.candidates[index]
            self.on_fallback(FallbackAttempt(
                candidate=index, model_name=_name(failed, "model_name"),
                provider_name=_name(failed, "provider_name"), category=category, error=exc,
                next_candidate=index + 1,
            ))


def _fallback_metadata(index: int, skipped: list[tuple[int, str]]) -> dict[str, Any]:
    return {
        "candidate": index,
        "skipped": [{"candidate": i, "category": c} for i, c in skipped],
    }


def _mark(response: ResponseMessage, index: int, skipped: list[tuple[int, str]]) -> ResponseMessage:
    values = response.metadata.to_value() if response.metadata is not None else {}
    values["fallback"] = _fallback_metadata(index, skipped)
    return replace(response, metadata=Metadata.from_value(values))


class FallbackStreamedResponse(StreamedResponse):
    """The stream of whichever candidate answers; falls back only before the first event."""

    def __init__(
        self,
        owner: Fallback,
        request: ModelRequest,
        index: int,
        inner: StreamedResponse,
        skipped: list[tuple[int, str]],
    ) -> None:
        super().__init__(model_name=inner.model_name, provider_name=inner.provider_name)
        self._owner = owner
        self._request = request
        self._index = index
        self._inner: StreamedResponse | None = inner
        self._skipped = skipped

    @property
    def candidate(self) -> int:
        """The index of the candidate whose stream is (or was last) being read."""
        return self._index

    def _events(self) -> Iterator[ModelStreamEvent]:
        while True:
            inner = self._inner
            assert inner is not None
            delivered = False
            try:
                for event in inner:
                    delivered = True
                    yield event
            except Exception as exc:
                inner.close()
                if delivered:
                    raise
                self._next_candidate(exc)
                continue
            self._copy_summary(inner)
            return

    def _next_candidate(self, exc: Exception) -> None:
        owner, index = self._owner, self._index
        while True:
            owner._move_on(self._request, index, exc, self._skipped)
            index += 1
            self._index = index
            self._inner = None
            try:
                self._inner = owner.candidates[index].stream(self._request)
            except Exception as failure:
                exc = failure
                continue
            return

    def _copy_summary(self, inner: StreamedResponse) -> None:
        self.model_name = inner.model_name
        self.provider_name = inner.provider_name
        self.usage = inner.usage
        self.finish_reason = inner.finish_reason
        self.raw_finish_reason = inner.raw_finish_reason
        self.provider_response_id = inner.provider_response_id
        self.provider_details = inner.provider_details

    def response(self) -> ResponseMessage:
        return _mark(super().response(), self._index, self._skipped)

    def _release(self) -> None:
        if self._inner is not None:
            self._inner.close()
