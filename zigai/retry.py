"""Agent-side, provider-neutral retry policy for model requests.

Job
    :func:`classify` puts a failure into one of five independent categories (``rate_limit``,
    ``server_error``, ``timeout``, ``connection``, ``decode``) or None.
    :func:`run_with_retries` runs one *logical* request, retrying the categories a
    :class:`RetryPolicy` names, with optional exponential backoff and full jitter, honouring
    ``Retry-After``, under the run's deadline and cancellation token.

Invariants
    * Never retried: anything :func:`classify` maps to None — cancellation, ``RunTimedOut``,
      size failures (``ResponseTooLarge``, ``StreamLineTooLarge``, JSON limit errors), 4xx
      other than 429, redirects, adapter encoding errors and application exceptions.
    * Delays: attempt *k* (the k-th failure) plans ``min(max_delay, initial * multiplier**(k-1))``
      ms, or a uniform draw from ``[0, that]`` with full jitter.  A server ``Retry-After``
      replaces the backoff when ``honor_retry_after`` is set (it is not capped by
      ``max_delay_ms``; the server knows best).
    * Budget: the sum of planned waits never exceeds ``max_total_delay_ms``; exactly reaching it
      is allowed.  When the next wait would exceed it, the last error is raised unchanged.  A
      :class:`RetryBudget` passed by the caller carries that sum across calls, so the agent
      spends one budget over every logical request of a run.
    * Deadline: a wait that would end after the run deadline is not started; ``RunTimedOut``
      (chained to the last error) is raised at once.  Waits use ``RunControl.sleep`` and so end
      early with ``Cancelled`` when the token is set.
    * Idempotency: one ``uuid4`` key per call of :func:`run_with_retries` (one logical request),
      passed unchanged to every attempt; None when no idempotency header is named.  A caller
      that already made the logical request's key passes it as ``idempotency_key``.
    * Streams: once a :class:`StreamRetryGuard` is marked delivered, no retry happens — events
      already handed to the application cannot be taken back.
    * The ``before_retry`` hook is fallible: whatever it raises propagates and ends the run.
      ``on_retry`` (the agent's lifecycle-hook bridge) sees the same value first.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, TypeVar

from zigai.control import RunControl, RunTimedOut
from zigai.provider._errors import (
    ProviderConnectionError,
    ProviderResponseDecodeError,
    ProviderServerError,
    RateLimited,
)
from zigai.transport.base import (
    TransportConnectionFailed,
    TransportDecodeFailed,
    TransportTimedOut,
)

__all__ = [
    "RETRY_CATEGORIES",
    "RetryAttempt",
    "RetryCategory",
    "RetryBudget",
    "RetryPolicy",
    "StreamRetryGuard",
    "backoff_delay_ms",
    "classify",
    "run_with_retries",
]

RetryCategory = Literal["rate_limit", "server_error", "timeout", "connection", "decode"]
RETRY_CATEGORIES: frozenset[str] = frozenset(
    {"rate_limit", "server_error", "timeout", "connection", "decode"}
)

T = TypeVar("T")

_DEFAULT_RNG = random.Random()


@dataclass(frozen=True, slots=True)
class RetryAttempt:
    """What the ``before_retry`` hook sees before a wait.

    ``attempt`` is the 1-based number of the attempt that just failed (the next one is
    ``attempt + 1``).  ``planned_delay_s`` is the wait about to start; ``cumulative_delay_s``
    is the total planned waiting *including* this one — of this logical request, or of the
    whole run when the caller passed a :class:`RetryBudget` (the agent always does).
    ``request_id``, ``retry_after_s`` and ``rate_limits`` (the response's rate-limit counts
    as plain integers, keyed by lowercased header name, e.g.
    ``{"x-ratelimit-remaining-requests": 0}``; empty when none were sent) are copied from the
    error when it carries them.
    """

    attempt: int
    category: str
    error: BaseException
    planned_delay_s: float
    cumulative_delay_s: float
    request_id: str | None
    retry_after_s: float | None = None
    rate_limits: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How one logical model request is retried.  ``max_attempts=1`` disables retries.

    Defaults: 3 attempts, every category, 500 ms initial delay doubling up to 30 s with full
    jitter, Retry-After honoured, at most 60 s of cumulative waiting.
    """

    max_attempts: int = 3
    retry_on: frozenset[str] = RETRY_CATEGORIES
    initial_delay_ms: int = 500
    max_delay_ms: int = 30_000
    multiplier: float = 2.0
    jitter: bool = True
    honor_retry_after: bool = True
    max_total_delay_ms: int = 60_000
    before_retry: Callable[[RetryAttempt], None] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "retry_on", frozenset(self.retry_on))
        unknown = self.retry_on - RETRY_CATEGORIES
        if unknown:
            raise ValueError(f"unknown retry categories: {sorted(unknown)}")
        for name in ("max_attempts", "initial_delay_ms", "max_delay_ms", "max_total_delay_ms"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"RetryPolicy.{name} must be a non-negative int")
        if self.max_attempts < 1:
            raise ValueError("RetryPolicy.max_attempts must be >= 1 (1 means no retry)")
        if not isinstance(self.multiplier, (int, float)) or not self.multiplier >= 1.0:
            raise ValueError("RetryPolicy.multiplier must be >= 1")
        if self.before_retry is not None and not callable(self.before_retry):
            raise ValueError("RetryPolicy.before_retry must be callable")

    @classmethod
    def no_retry(cls) -> RetryPolicy:
        return cls(max_attempts=1)


class RetryBudget:
    """The planned retry waiting spent so far by one run (``spent_ms``), shared by its requests.

    Not thread-safe: one run's thread owns it.
    """

    __slots__ = ("spent_ms",)

    def __init__(self) -> None:
        self.spent_ms = 0.0

    def __repr__(self) -> str:
        return f"RetryBudget(spent_ms={self.spent_ms})"


class StreamRetryGuard:
    """Marks the point of no return for a streamed request.

    The streaming caller calls :meth:`mark_delivered` right before handing the first event to
    the application; :func:`run_with_retries` then never retries that logical request again.
    """

    __slots__ = ("_delivered",)

    def __init__(self) -> None:
        self._delivered = False

    def mark_delivered(self) -> None:
        self._delivered = True

    @property
    def delivered(self) -> bool:
        return self._delivered

    def __repr__(self) -> str:
        return f"StreamRetryGuard(delivered={self._delivered})"


def classify(exc: BaseException) -> str | None:
    """The retry category of ``exc``, or None when it must never be retried."""
    if isinstance(exc, RateLimited):
        return "rate_limit"
    if isinstance(exc, ProviderServerError):
        return "server_error"
    if isinstance(exc, TransportTimedOut):
        return "timeout"
    if isinstance(exc, (TransportConnectionFailed, ProviderConnectionError)):
        return "connection"
    if isinstance(exc, (TransportDecodeFailed, ProviderResponseDecodeError)):
        return "decode"
    return None


def backoff_delay_ms(policy: RetryPolicy, failures: int, rng: random.Random) -> float:
    """The planned backoff (ms) after the ``failures``-th failure (1-based), jitter applied."""
    if failures < 1:
        raise ValueError("failures must be >= 1")
    ceiling = float(policy.max_delay_ms)
    base = float(policy.initial_delay_ms)
    # Grow step by step so a large attempt count cannot overflow a float power.
    for _ in range(failures - 1):
        if base >= ceiling:
            break
        base *= policy.multiplier
    cap = min(ceiling, base)
    if policy.jitter:
        return rng.uniform(0.0, cap)
    return cap


def _retry_after_s(exc: BaseException) -> float | None:
    value = getattr(exc, "retry_after_s", None)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def _rate_limits(exc: BaseException) -> Mapping[str, int]:
    value = getattr(exc, "rate_limits", None)
    return MappingProxyType(dict(value) if isinstance(value, Mapping) else {})


def _request_id(exc: BaseException) -> str | None:
    value = getattr(exc, "request_id", None)
    return value if isinstance(value, str) else None


def run_with_retries(
    fn: Callable[[int, str | None], T],
    *,
    policy: RetryPolicy,
    control: RunControl,
    idempotency_header: str | None = None,
    rng: random.Random | None = None,
    stream_guard: StreamRetryGuard | None = None,
    idempotency_key: str | None = None,
    budget: RetryBudget | None = None,
    on_retry: Callable[[RetryAttempt], None] | None = None,
) -> T:
    """Call ``fn(attempt, idempotency_key)`` until it succeeds or the policy stops retrying.

    ``attempt`` starts at 1.  The key (``idempotency_key``, else generated here when an
    ``idempotency_header`` is named) is reused for every attempt of this logical request.
    Raises the last error when retrying is not allowed, ``RunTimedOut`` or ``Cancelled`` from
    the run control, or whatever ``on_retry`` or the ``before_retry`` hook raises.
    """
    generator = rng if rng is not None else _DEFAULT_RNG
    key = idempotency_key
    if key is None and idempotency_header:
        key = str(uuid.uuid4())
    cumulative_ms = budget.spent_ms if budget is not None else 0.0
    attempt = 1
    while True:
        control.check()
        try:
            return fn(attempt, key)
        except Exception as exc:
            if isinstance(exc, TransportTimedOut) and control.expired():
                # the run's own deadline cut the request: report the run's error, not the I/O's
                raise RunTimedOut("run deadline exceeded during a model request") from exc
            category = classify(exc)
            if (
                category is None
                or category not in policy.retry_on
                or attempt >= policy.max_attempts
                or (stream_guard is not None and stream_guard.delivered)
            ):
                raise
            retry_after = _retry_after_s(exc)
            if policy.honor_retry_after and retry_after is not None:
                planned_ms = retry_after * 1000.0
            else:
                planned_ms = backoff_delay_ms(policy, attempt, generator)
            if cumulative_ms + planned_ms > policy.max_total_delay_ms:
                raise
            remaining = control.remaining()
            if remaining is not None and planned_ms / 1000.0 > remaining:
                raise RunTimedOut(
                    "run deadline would pass during the retry wait "
                    f"({planned_ms / 1000.0:.3f}s planned, {remaining:.3f}s left)"
                ) from exc
            cumulative_ms += planned_ms
            if budget is not None:
                budget.spent_ms = cumulative_ms
            if on_retry is not None or policy.before_retry is not None:
                planned = RetryAttempt(
                    attempt=attempt,
                    category=category,
                    error=exc,
                    planned_delay_s=planned_ms / 1000.0,
                    cumulative_delay_s=cumulative_ms / 1000.0,
                    request_id=_request_id(exc),
                    retry_after_s=retry_after,
                    rate_limits=_rate_limits(exc),
                )
                if on_retry is not None:
                    on_retry(planned)
                if policy.before_retry is not None:
                    policy.before_retry(planned)
            if planned_ms > 0:
                control.sleep(planned_ms / 1000.0)
            attempt += 1
