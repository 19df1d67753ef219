"""Evaluation run options: retry policies, retry notices and the lifecycle events of a run.

Invariants:

* the task and the evaluators have separate :class:`Retry` policies; the default policy
  makes one attempt (no retry), so the default run is one repetition, one attempt;
* ``retryable(error)`` (optional) restricts which exceptions are retried; without it every
  ``Exception`` is; ``BaseException`` is never caught;
* ``before_retry(notice)`` (optional) runs before each retry and owns backoff or
  rate-limit waiting; whatever it raises ends the run and propagates;
* events are immutable values; a run delivers them to one ``on_event`` callback whose
  exception ends the run and propagates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from zigai.evals.errors import InvalidEvalOptions

if TYPE_CHECKING:
    from zigai.evals.report import CaseResult

__all__ = [
    "Retry",
    "RetryNotice",
    "EvalEvent",
    "CaseStarted",
    "TaskAttempted",
    "EvaluatorAttempted",
    "CaseErrored",
    "CaseFinished",
    "MAX_ATTEMPTS",
    "MAX_REPETITIONS",
]

MAX_ATTEMPTS = 100
MAX_REPETITIONS = 1_000

Stage = Literal["task", "evaluator"]


@dataclass(frozen=True, slots=True)
class RetryNotice:
    """What ``before_retry`` sees: the failed ``attempt`` (1-based) and its ``error``.

    ``evaluator`` is the evaluator's name for an evaluator retry, None for a task retry.
    """

    stage: Stage
    case_index: int
    case_name: str
    repetition: int
    evaluator: str | None
    attempt: int
    error: BaseException


@dataclass(frozen=True, slots=True)
class Retry:
    """How often one task run or one evaluator call is attempted (``max_attempts=1``: once)."""

    max_attempts: int = 1
    retryable: Callable[[BaseException], bool] | None = None
    before_retry: Callable[[RetryNotice], None] | None = None

    def __post_init__(self) -> None:
        value = self.max_attempts
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_ATTEMPTS:
            raise InvalidEvalOptions(
                f"Retry.max_attempts must be an int from 1 to {MAX_ATTEMPTS}, got {value!r}", limit=MAX_ATTEMPTS
            )
        if self.retryable is not None and not callable(self.retryable):
            raise InvalidEvalOptions("Retry.retryable must be callable(error) -> bool or None")
        if self.before_retry is not None and not callable(self.before_retry):
            raise InvalidEvalOptions("Retry.before_retry must be callable(notice) or None")

    def allows(self, attempt: int, error: BaseException) -> bool:
        """Whether the failure of ``attempt`` (1-based) with ``error`` is retried."""
        if attempt >= self.max_attempts:
            return False
        return self.retryable is None or bool(self.retryable(error))


NO_RETRY = Retry()


@dataclass(frozen=True, slots=True)
class CaseStarted:
    """A case repetition is about to run its task."""

    case_index: int
    case_name: str
    repetition: int
    kind: Literal["case_started"] = "case_started"


@dataclass(frozen=True, slots=True)
class TaskAttempted:
    """One task attempt ended; ``error_type`` is None when it returned."""

    case_index: int
    case_name: str
    repetition: int
    attempt: int
    error_type: str | None
    error_message: str | None
    will_retry: bool
    kind: Literal["task_attempted"] = "task_attempted"


@dataclass(frozen=True, slots=True)
class EvaluatorAttempted:
    """One evaluator call ended; ``error_type`` is None when it gave a valid verdict."""

    case_index: int
    case_name: str
    repetition: int
    evaluator: str
    attempt: int
    error_type: str | None
    error_message: str | None
    will_retry: bool
    kind: Literal["evaluator_attempted"] = "evaluator_attempted"


@dataclass(frozen=True, slots=True)
class CaseErrored:
    """The task, or one evaluator, failed for good (its last attempt raised)."""

    case_index: int
    case_name: str
    repetition: int
    stage: Stage
    evaluator: str | None
    attempts: int
    error_type: str
    error_message: str
    kind: Literal["case_errored"] = "case_errored"


@dataclass(frozen=True, slots=True)
class CaseFinished:
    """A case repetition is complete; ``result`` is what the report holds for it."""

    result: CaseResult
    kind: Literal["case_finished"] = "case_finished"


EvalEvent = CaseStarted | TaskAttempted | EvaluatorAttempted | CaseErrored | CaseFinished


def check_callback(name: str, value: Any) -> None:
    if value is not None and not callable(value):
        raise InvalidEvalOptions(f"{name} must be callable, got {type(value).__name__}")
