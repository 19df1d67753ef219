"""The owned outcome of one evaluation run: per-case results in source order.

Invariants:

* ``Report.cases[i]`` is the result of ``dataset.cases[i]`` whatever order the runs
  completed in, so a concurrent run yields a report equal to the sequential one;
* a case fails when its task raised (``error_type`` set, no evaluations ran) or when any
  evaluation failed (assertion ``False`` or a recorded evaluator error); score-only
  evaluations never fail a case;
* ``Report.usage`` is the sum of every case's usage;
* the report is an owner (``zigai._owner``): ``close()`` releases every result and later
  use raises :class:`~zigai.evals.ReportClosed`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from zigai._owner import Owner
from zigai.evals.errors import ReportClosed
from zigai.evals.evaluators import EvaluationResult
from zigai.usage import RunUsage

__all__ = ["CaseResult", "Report"]


@dataclass(frozen=True, slots=True)
class CaseResult:
    """One case run: the case, the task's output or error, its usage and its evaluations."""

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

    __slots__ = ("_dataset_name", "_cases", "_usage")

    _closed_error = ReportClosed

    def __init__(self, dataset_name: str, cases: tuple[CaseResult, ...]) -> None:
        super().__init__()
        self._dataset_name = dataset_name
        self._cases = cases
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
        """Passed cases divided by all cases (a report always holds at least one case)."""
        self._check()
        return sum(case.passed for case in self._cases) / len(self._cases)

    def case(self, name: str) -> CaseResult:
        """The result of the case called ``name``; KeyError when there is none."""
        self._check()
        for case in self._cases:
            if case.name == name:
                return case
        raise KeyError(f"report has no case named {name!r}")

    def __len__(self) -> int:
        self._check()
        return len(self._cases)

    def __iter__(self) -> Iterator[CaseResult]:
        self._check()
        return iter(self._cases)

    def summary(self) -> str:
        """A short readable table: one line per case, then the pass rate."""
        self._check()
        lines = []
        for case in self._cases:
            if case.error_type is not None:
                detail = f"task error {case.error_type}: {case.error_message}"
            else:
                detail = ", ".join(_describe(item) for item in case.evaluations) or "no evaluators"
            lines.append(f"{'PASS' if case.passed else 'FAIL'} {case.name}: {detail}")
        passed = sum(case.passed for case in self._cases)
        lines.append(f"{passed}/{len(self._cases)} cases passed")
        return "\n".join(lines)

    def _release(self) -> None:
        self._cases = ()

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
