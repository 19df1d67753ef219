"""Report evaluators: aggregate judgements over a finished run, seen through a read-only view.

Invariants:

* report evaluators run only after every unit joined, on a :class:`ReportView` — frozen
  results in source order, the summed usage and the summary helpers — so they cannot change
  a case outcome or race a worker;
* an analysis is scalar: an optional assertion, value, unit and reason; a non-finite value
  is rejected (recorded as ``InvalidEvaluatorResult``), like any exception a report evaluator
  raises: recorded in its :class:`Analysis`, never raised out of the run.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from zigai.evals import stats
from zigai.evals.errors import InvalidEvaluator, InvalidEvaluatorResult
from zigai.usage import RunUsage

__all__ = ["ReportView", "Metric", "Analysis", "ReportEvaluator", "ReportCheck", "PassRate", "MeanScore", "analyse"]


@dataclass(frozen=True, slots=True)
class ReportView:
    """The immutable joined view a report evaluator reads."""

    dataset_name: str
    cases: tuple[Any, ...]  # CaseResult values (report.py imports this module, not the reverse)
    repetitions: int

    @property
    def usage(self) -> RunUsage:
        total = RunUsage()
        for case in self.cases:
            total = total + case.usage
        return total

    @property
    def pass_rate(self) -> float:
        return stats.pass_rate(self.cases)

    def case_pass_rates(self) -> tuple[stats.CasePassRate, ...]:
        return stats.case_pass_rates(self.cases)

    def score_stats(self, evaluator: str, case_index: int | None = None) -> stats.ScoreStats:
        return stats.score_stats(self.cases, evaluator, case_index)


@dataclass(frozen=True, slots=True)
class Metric:
    """A report evaluator's verdict: an assertion and/or a finite value, a unit, a reason."""

    passed: bool | None = None
    value: float | None = None
    unit: str | None = None
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.passed is None and self.value is None:
            raise InvalidEvaluatorResult("a Metric needs passed=, value= or both")
        if self.passed is not None and not isinstance(self.passed, bool):
            raise InvalidEvaluatorResult(f"Metric.passed must be a bool, got {type(self.passed).__name__}")
        if self.value is not None:
            if isinstance(self.value, bool) or not isinstance(self.value, int | float):
                raise InvalidEvaluatorResult(f"Metric.value must be a number, got {type(self.value).__name__}")
            if not math.isfinite(self.value):
                raise InvalidEvaluatorResult(f"Metric.value must be finite, got {self.value!r}")
            object.__setattr__(self, "value", float(self.value))
        for name in ("unit", "reason"):
            text = getattr(self, name)
            if text is not None and not isinstance(text, str):
                raise InvalidEvaluatorResult(f"Metric.{name} must be a str, got {type(text).__name__}")


@dataclass(frozen=True, slots=True)
class Analysis:
    """One report evaluator's outcome (``error_type`` set when it raised or answered wrongly)."""

    name: str
    passed: bool | None = None
    value: float | None = None
    unit: str | None = None
    reason: str | None = None
    error_type: str | None = None
    error_message: str | None = None

    @property
    def failed(self) -> bool:
        return self.error_type is not None or self.passed is False


class ReportEvaluator:
    """Base of every report evaluator: a unique ``name`` and :meth:`evaluate`."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise InvalidEvaluator(f"a report evaluator name must be a non-empty str, got {name!r}")
        self.name = name

    def evaluate(self, view: ReportView) -> bool | int | float | Metric:
        raise NotImplementedError  # pragma: no cover - abstract

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class ReportCheck(ReportEvaluator):
    """A report evaluator from ``function(view) -> bool | number | Metric``."""

    __slots__ = ("_function",)

    def __init__(self, name: str, function: Callable[[ReportView], bool | int | float | Metric]) -> None:
        super().__init__(name)
        if not callable(function):
            raise InvalidEvaluator(f"ReportCheck {name!r} needs a callable, got {type(function).__name__}")
        self._function = function

    def evaluate(self, view: ReportView) -> bool | int | float | Metric:
        return self._function(view)


def _minimum(owner: str, minimum: object) -> float | None:
    if minimum is None:
        return None
    if isinstance(minimum, bool) or not isinstance(minimum, int | float) or not math.isfinite(minimum):
        raise InvalidEvaluator(f"{owner} minimum must be a finite number or None, got {minimum!r}")
    return float(minimum)


class PassRate(ReportEvaluator):
    """The run's pass rate as a ``ratio`` value; asserts ``rate >= minimum`` when given."""

    __slots__ = ("_minimum",)

    def __init__(self, minimum: float | None = None, *, name: str = "pass_rate") -> None:
        super().__init__(name)
        self._minimum = _minimum("PassRate", minimum)

    def evaluate(self, view: ReportView) -> Metric:
        rate = view.pass_rate
        if self._minimum is None:
            return Metric(value=rate, unit="ratio")
        ok = rate >= self._minimum
        return Metric(ok, rate, "ratio", None if ok else f"pass rate {rate:g} is below {self._minimum:g}")


class MeanScore(ReportEvaluator):
    """The mean finite score of ``evaluator``; asserts ``mean >= minimum`` when given."""

    __slots__ = ("_evaluator", "_minimum")

    def __init__(self, evaluator: str, minimum: float | None = None, *, name: str | None = None) -> None:
        super().__init__(name if name is not None else f"mean_{evaluator}")
        if not isinstance(evaluator, str) or not evaluator:
            raise InvalidEvaluator("MeanScore needs the name of a scoring evaluator")
        self._evaluator = evaluator
        self._minimum = _minimum("MeanScore", minimum)

    def evaluate(self, view: ReportView) -> Metric:
        mean = view.score_stats(self._evaluator).mean
        if mean is None:
            return Metric(passed=False, reason=f"{self._evaluator!r} produced no finite score")
        if self._minimum is None:
            return Metric(value=mean, unit="score")
        ok = mean >= self._minimum
        return Metric(ok, mean, "score", None if ok else f"mean {mean:g} is below {self._minimum:g}")


def analyse(evaluator: ReportEvaluator, view: ReportView) -> Analysis:
    """Run one report evaluator; record its metric, or why it has none."""
    try:
        raw: Any = evaluator.evaluate(view)
        if isinstance(raw, bool):
            raw = Metric(passed=raw)
        elif isinstance(raw, int | float):
            raw = Metric(value=raw)
        elif not isinstance(raw, Metric):
            raise InvalidEvaluatorResult(
                f"report evaluator {evaluator.name!r} returned {type(raw).__name__}; "
                "return a bool, a finite number or a Metric"
            )
    except Exception as error:  # an aggregate failure is a recorded analysis, not a crash
        return Analysis(evaluator.name, error_type=type(error).__name__, error_message=str(error))
    return Analysis(evaluator.name, raw.passed, raw.value, raw.unit, raw.reason)
