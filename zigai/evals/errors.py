"""The named errors of :mod:`zigai.evals`, all under :class:`zigai.errors.EvalsError`."""

from __future__ import annotations

from zigai.errors import EvalsError

__all__ = [
    "EvalsError",
    "InvalidDataset",
    "InvalidEvaluator",
    "InvalidEvaluatorResult",
    "InvalidEvalOptions",
    "ReportClosed",
    "TraceTelemetryMissing",
    "InvalidGraderVerdict",
]


class InvalidDataset(EvalsError):
    """A dataset or case is malformed: empty or duplicate names, too many cases, bad metadata."""


class InvalidEvaluator(EvalsError):
    """An evaluator was built wrongly: empty name, a callback that is not callable, bad options."""


class InvalidEvaluatorResult(EvalsError):
    """An evaluator returned something other than a bool, a number or a Grade / Metric, or a
    report evaluator returned a non-finite value.

    It is recorded in the evaluator's result (``error_type``), never raised out of a run.
    """


class InvalidEvalOptions(EvalsError):
    """An evaluation run option is out of range (``max_concurrency``) or of the wrong type."""

    def __init__(self, message: str, *, limit: int = 0) -> None:
        super().__init__(message)
        self.limit = limit


class ReportClosed(EvalsError):
    """A :class:`~zigai.evals.Report` was used after ``close()``."""


class TraceTelemetryMissing(EvalsError):
    """A dataset has trace evaluators but the task is not an Agent with a ``Telemetry`` hook.

    Raised before any case runs.
    """


class InvalidGraderVerdict(EvalsError):
    """A :class:`~zigai.evals.ModelGrader` agent answered a non-finite or out-of-range score.

    Recorded in the grader's evaluation result, like any evaluator failure.
    """
