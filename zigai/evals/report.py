"""The owned outcome of one evaluation run: per-unit results in source order, analyses.

Invariants:

* ``Report.cases`` lists every case repetition in source order -- case ``i`` repetition
  ``r`` is ``cases[i * repetitions + r]`` -- whatever order the runs completed in, so a
  concurrent run yields a report equal to the sequential one (``duration_s`` is timing,
  excluded from equality);
* a case fails when its task raised (``error_type`` set, no evaluations ran) or when any
  evaluation failed (assertion ``False`` or a recorded evaluator error); score-only
  evaluations never fail a case;
* ``Report.usage`` is the sum of every case's usage; ``analyses`` are the report
  evaluators' results, in dataset order;
* the report is an owner (``zigai._owner``): ``close()`` releases every result and later
  use raises :class:`~zigai.evals.ReportClosed`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from zigai._owner import Owner
from zigai.evals import stats
from zigai.evals.analysis import Analysis
from zigai.evals.errors import ReportClosed
from zigai.evals.evaluators import EvaluationResult
from zigai.telemetry import Span
from zigai.usage import RunUsage

__all__ = ["CaseResult", "Report"]


@dataclass(frozen=True, slots=True)
class CaseResult:
    """One case repetition: the case, the task's output or error, usage, evaluations, spans.

    ``evaluations`` holds the ordinary evaluators' results, then the trace evaluators'.
    ``task_attempts`` counts task attempts (retries included); ``spans`` are owned copies
    of the spans the agent exported (only with trace evaluators).
    """

    case_index: int
    name: str
    inputs: Any
    expected_output: Any
    metadata: Mapping[str, Any]
    output: Any
    usage: RunUsage
    evaluations: tuple[EvaluationResult, ...]
    error_type: str | None = None
    error_message: str | None = None
    repetition: int = 0
    task_attempts: int = 1
    spans: tuple[Span, ...] = ()
    duration_s: float = field(default=0.0, compare=False)

    @property
    def passed(self) -> bool:
        return self.error_type is None and not any(item.failed for item in self.evaluations)

    def evaluation(self, name: str) -> EvaluationResult:
        """The result of the evaluator called ``name``; KeyError when there is none."""
        for item in self.evaluations:
            if item.name == name:
                return item
        raise KeyError(f"case {self.name!r} has no evaluation named {name!r}")


class Report(Owner):
    """The owned results of ``Dataset.evaluate``: a context manager, closed with ``close()``."""

    __slots__ = ("_dataset_name", "_cases", "_usage", "_repetitions", "_analyses")

    _closed_error = ReportClosed

    def __init__(
        self, dataset_name: str, cases: tuple[CaseResult, ...], *, repetitions: int = 1,
        analyses: tuple[Analysis, ...] = (),
    ) -> None:
        super().__init__()
        self._dataset_name = dataset_name
        self._cases = cases
        self._repetitions = repetitions
        self._analyses = analyses
        usage = RunUsage()
        for case in cases:
            usage = usage + case.usage
        self._usage = usage

    @property
    def dataset_name(self) -> str:
        self._check()
        return self._dataset_name

    @property
    def cases(self) -> tuple[CaseResult, ...]:
        self._check()
        return self._cases

    @property
    def repetitions(self) -> int:
        self._check()
        return self._repetitions

    @property
    def analyses(self) -> tuple[Analysis, ...]:
        """The report evaluators' results, in dataset order."""
        self._check()
        return self._analyses

    def analysis(self, name: str) -> Analysis:
        """The analysis of the report evaluator called ``name``; KeyError when there is none."""
        self._check()
        for item in self._analyses:
            if item.name == name:
                return item
        raise KeyError(f"report has no analysis named {name!r}")

    def case_pass_rates(self) -> tuple[stats.CasePassRate, ...]:
        """How often each source case passed across its repetitions, in source order."""
        self._check()
        return stats.case_pass_rates(self._cases)

    def score_stats(self, evaluator: str, case_index: int | None = None) -> stats.ScoreStats:
        """Finite-score statistics of ``evaluator`` over every result, or one source case's."""
        self._check()
        return stats.score_stats(self._cases, evaluator, case_index)

    def all_score_stats(self) -> tuple[stats.ScoreStats, ...]:
        """:meth:`score_stats` of every evaluator that scored, in first-seen order."""
        self._check()
        return stats.all_score_stats(self._cases)

    @property
    def usage(self) -> RunUsage:
        """The usage of every case run, summed."""
        self._check()
        return self._usage

    @property
    def failures(self) -> tuple[CaseResult, ...]:
        self._check()
        return tuple(case for case in self._cases if not case.passed)

    @property
    def pass_rate(self) -> float:
        """Passed results divided by all results (every repetition counts)."""
        self._check()
        return stats.pass_rate(self._cases)

    def case(self, name: str, repetition: int = 0) -> CaseResult:
        """The result of the case called ``name`` (its ``repetition``); KeyError when none."""
        self._check()
        for case in self._cases:
            if case.name == name and case.repetition == repetition:
                return case
        raise KeyError(f"report has no case named {name!r} with repetition {repetition}")

    def __len__(self) -> int:
        self._check()
        return len(self._cases)

    def __iter__(self) -> Iterator[CaseResult]:
        self._check()
        return iter(self._cases)

    def summary(self) -> str:
        """A short readable table: one line per case run, the analyses, then the pass rate."""
        self._check()
        lines = []
        for case in self._cases:
            if case.error_type is not None:
                detail = f"task error {case.error_type}: {case.error_message}"
            else:
                detail = ", ".join(_describe(item) for item in case.evaluations) or "no evaluators"
            label = case.name if self._repetitions == 1 else f"{case.name}#{case.repetition}"
            lines.append(f"{'PASS' if case.passed else 'FAIL'} {label}: {detail}")
        for item in self._analyses:
            lines.append(f"{'FAIL' if item.failed else 'OK  '} [{item.name}] {_describe_analysis(item)}")
        passed = sum(case.passed for case in self._cases)
        lines.append(f"{passed}/{len(self._cases)} cases passed")
        return "\n".join(lines)

    def _release(self) -> None:
        self._cases = ()
        self._analyses = ()

    def __repr__(self) -> str:
        if self._closed:
            return "Report(closed)"
        return f"Report(dataset={self._dataset_name!r}, cases={len(self._cases)})"


def _describe(item: EvaluationResult) -> str:
    if item.error_type is not None:
        return f"{item.name} error {item.error_type}"
    parts = []
    if item.passed is not None:
        parts.append("ok" if item.passed else "failed")
    if item.score is not None:
        parts.append(f"score={item.score:g}")
    text = f"{item.name} {' '.join(parts)}"
    return f"{text} ({item.reason})" if item.reason and item.failed else text


def _describe_analysis(item: Analysis) -> str:
    if item.error_type is not None:
        return f"error {item.error_type}: {item.error_message}"
    parts = []
    if item.passed is not None:
        parts.append("ok" if item.passed else "failed")
    if item.value is not None:
        parts.append(f"{item.value:g}" + (f" {item.unit}" if item.unit else ""))
    text = " ".join(parts)
    return f"{text} ({item.reason})" if item.reason else text
