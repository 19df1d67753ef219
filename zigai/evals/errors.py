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
    "InvalidEvalDocument",
    "UnsupportedEvalDocumentVersion",
    "UnknownEvaluatorName",
    "AmbiguousEvaluatorName",
    "UnpicklableEvalObject",
    "DaskNotInstalled",
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


class InvalidEvalDocument(EvalsError):
    """A dataset or report document is malformed: syntax, size beyond its limit profile, a
    wrong ``format``, an unknown or missing field, a wrong type, per-case run options.

    ``path`` is the location of the offending value (``$.cases[2].name``; ``$`` for the whole
    document) and the message starts with it.
    """

    def __init__(self, message: str, *, path: str = "$") -> None:
        super().__init__(message)
        self.path = path


class UnsupportedEvalDocumentVersion(InvalidEvalDocument):
    """A document's ``version`` is not one this zigai reads; ``version`` holds what it said."""

    def __init__(self, message: str, *, path: str = "$.version", version: object = None) -> None:
        super().__init__(message, path=path)
        self.version = version


class UnknownEvaluatorName(InvalidEvalDocument):
    """A dataset document names an evaluator the application registry does not hold."""

    def __init__(self, message: str, *, path: str = "$", name: str = "") -> None:
        super().__init__(message, path=path)
        self.name = name


class AmbiguousEvaluatorName(InvalidEvalDocument):
    """A dataset document names an evaluator the registry holds more than once."""

    def __init__(self, message: str, *, path: str = "$", name: str = "") -> None:
        super().__init__(message, path=path)
        self.name = name


class UnpicklableEvalObject(EvalsError):
    """A run on a Dask cluster needs an object that does not pickle (a lambda, a closure, a
    lock, an open client); raised before any work is submitted.  ``what`` names the object
    (``task``, ``evaluator 'judge'``, ``case 'q3' inputs``).
    """

    def __init__(self, message: str, *, what: str = "") -> None:
        super().__init__(message)
        self.what = what


class DaskNotInstalled(EvalsError):
    """The Dask executor was asked for but ``distributed`` is not installed
    (``pip install 'zigai[dask]'``)."""
