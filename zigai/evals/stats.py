"""Summary statistics over case results: pass rates and per-evaluator score statistics.

Invariants: every helper is a pure function of the results it is given (source order in,
source order out); non-finite scores (NaN, +/-inf) are excluded from score statistics and
counted in ``excluded``; a statistic over no finite score is None, never NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["CasePassRate", "ScoreStats", "pass_rate", "case_pass_rates", "score_stats", "all_score_stats"]


@dataclass(frozen=True, slots=True)
class CasePassRate:
    """How often one source case passed across its repetitions."""

    case_index: int
    name: str
    runs: int
    passed: int

    @property
    def rate(self) -> float:
        return self.passed / self.runs


@dataclass(frozen=True, slots=True)
class ScoreStats:
    """Finite-score statistics of one evaluator (``stdev`` is the population deviation)."""

    evaluator: str
    count: int
    excluded: int
    mean: float | None
    minimum: float | None
    maximum: float | None
    stdev: float | None


def pass_rate(cases: Sequence[Any]) -> float:
    """Passed results divided by all results (0.0 for no results)."""
    return sum(case.passed for case in cases) / len(cases) if cases else 0.0


def case_pass_rates(cases: Sequence[Any]) -> tuple[CasePassRate, ...]:
    """One :class:`CasePassRate` per source case, in source order."""
    runs: dict[int, list[Any]] = {}
    for case in cases:
        runs.setdefault(case.case_index, []).append(case)
    return tuple(
        CasePassRate(index, group[0].name, len(group), sum(item.passed for item in group))
        for index, group in runs.items()
    )


def score_stats(cases: Sequence[Any], evaluator: str, case_index: int | None = None) -> ScoreStats:
    """Statistics of ``evaluator``'s scores over every result (or one source case's)."""
    finite: list[float] = []
    excluded = 0
    for case in cases:
        if case_index is not None and case.case_index != case_index:
            continue
        for item in case.evaluations:
            if item.name != evaluator or item.score is None:
                continue
            if math.isfinite(item.score):
                finite.append(item.score)
            else:
                excluded += 1
    if not finite:
        return ScoreStats(evaluator, 0, excluded, None, None, None, None)
    mean = math.fsum(finite) / len(finite)
    spread = math.sqrt(math.fsum((value - mean) ** 2 for value in finite) / len(finite))
    return ScoreStats(evaluator, len(finite), excluded, mean, min(finite), max(finite), spread)


def all_score_stats(cases: Sequence[Any]) -> tuple[ScoreStats, ...]:
    """:func:`score_stats` of every evaluator that produced a score, in first-seen order."""
    names: dict[str, None] = {}
    for case in cases:
        for item in case.evaluations:
            if item.score is not None:
                names.setdefault(item.name)
    return tuple(score_stats(cases, name) for name in names)
