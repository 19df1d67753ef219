"""Comparing two evaluation reports: regressions, improvements and usage deltas, as pure data.

Invariants:

* join: case runs are joined by ``(case_index, repetition)``, then evaluations (ordinary and
  trace) by evaluator name and analyses by report-evaluator name; baseline order is kept
  and candidate-only entries follow in candidate order, so the result never depends on the
  order the runs completed in;
* rules: a check present in the baseline but missing from the candidate (including every
  check of a case run the candidate lost, or whose task failed) is a regression; pass ->
  fail is a regression and fail -> pass an improvement (a recorded evaluator error counts as
  fail); analyses rank ``False < None < True`` and a drop is a regression;
* the :class:`Comparison` owns copies of its labels and values and its CI JSON
  (:meth:`Comparison.to_json`) is versioned and byte-stable for identical inputs: no
  clocks, paths, timings or random identifiers; non-finite scores are written as the
  strings ``"nan"``, ``"inf"``, ``"-inf"``;
* the library reports ``regressed``; process exit codes are the caller's policy.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from zigai.evals.analysis import Analysis
from zigai.evals.errors import InvalidEvalOptions
from zigai.evals.evaluators import EvaluationResult
from zigai.evals.report import CaseResult, Report

__all__ = ["compare", "Comparison", "CheckChange", "CaseChange", "COMPARE_FORMAT", "COMPARE_VERSION",
           "USAGE_FIELDS"]

COMPARE_FORMAT = "zigai.evals.compare"
COMPARE_VERSION = 1
USAGE_FIELDS = ("requests", "tool_calls", "input_tokens", "output_tokens", "cache_write_tokens",
                "cache_read_tokens", "reasoning_tokens")

Change = Literal["regression", "improvement", "unchanged", "added"]
Outcome = Literal["pass", "fail", "none"]


@dataclass(frozen=True, slots=True)
class CheckChange:
    """One evaluator (or report evaluator) joined by name: each side's outcome and value."""

    name: str
    baseline: Outcome | None  # None: absent on that side
    candidate: Outcome | None
    baseline_value: float | None
    candidate_value: float | None
    change: Change


@dataclass(frozen=True, slots=True)
class CaseChange:
    """One case run joined by ``(case_index, repetition)``."""

    case_index: int
    repetition: int
    name: str
    baseline_passed: bool | None  # None: absent on that side
    candidate_passed: bool | None
    checks: tuple[CheckChange, ...]

    @property
    def change(self) -> Change:
        return _overall(item.change for item in self.checks)


def _overall(changes: Iterable[Change]) -> Change:
    seen = set(changes)
    for change in ("regression", "improvement", "added"):
        if change in seen:
            return change
    return "unchanged"


def _outcome(item: EvaluationResult | Analysis) -> Outcome:
    if item.failed:
        return "fail"
    return "none" if item.passed is None else "pass"


def _value(item: EvaluationResult | Analysis) -> float | None:
    return item.score if isinstance(item, EvaluationResult) else item.value


_RANK = {"fail": 0, "none": 1, "pass": 2}


def _check(name: str, before: Any, after: Any, *, ranked: bool) -> CheckChange:
    old = None if before is None else _outcome(before)
    new = None if after is None else _outcome(after)
    if old is None:
        change: Change = "added"
    elif new is None:
        change = "regression"
    elif ranked:
        delta = _RANK[new] - _RANK[old]
        change = "regression" if delta < 0 else "improvement" if delta > 0 else "unchanged"
    elif old == "pass" and new == "fail":
        change = "regression"
    elif old == "fail" and new == "pass":
        change = "improvement"
    else:
        change = "unchanged"
    return CheckChange(name, old, new, None if before is None else _value(before),
                       None if after is None else _value(after), change)


def _joined(before: Iterable[Any], after: Iterable[Any], key: Any) -> list[tuple[Any, Any, Any]]:
    old = {key(item): item for item in before}
    new = {key(item): item for item in after}
    keys = list(old) + [k for k in new if k not in old]
    return [(k, old.get(k), new.get(k)) for k in keys]


def _case(key: tuple[int, int], before: CaseResult | None, after: CaseResult | None) -> CaseChange:
    checks = tuple(
        _check(name, old, new, ranked=False)
        for name, old, new in _joined(before.evaluations if before else (), after.evaluations if after else (),
                                      lambda item: item.name)
    )
    name = (before or after).name  # type: ignore[union-attr]
    return CaseChange(key[0], key[1], name, None if before is None else before.passed,
                      None if after is None else after.passed, checks)


class Comparison:
    """The joined result of :func:`compare`: immutable data plus its CI JSON."""

    __slots__ = ("baseline_label", "candidate_label", "cases", "analyses", "usage_delta")

    def __init__(self, baseline_label: str, candidate_label: str, cases: tuple[CaseChange, ...],
                 analyses: tuple[CheckChange, ...], usage_delta: dict[str, int]) -> None:
        self.baseline_label = baseline_label
        self.candidate_label = candidate_label
        self.cases = cases
        self.analyses = analyses
        self.usage_delta = dict(usage_delta)

    def _all(self) -> list[tuple[CaseChange | None, CheckChange]]:
        found: list[tuple[CaseChange | None, CheckChange]] = [
            (case, check) for case in self.cases for check in case.checks]
        return found + [(None, check) for check in self.analyses]

    @property
    def regressions(self) -> tuple[tuple[CaseChange | None, CheckChange], ...]:
        """``(case, check)`` pairs that regressed (``case`` is None for an analysis)."""
        return tuple(pair for pair in self._all() if pair[1].change == "regression")

    @property
    def improvements(self) -> tuple[tuple[CaseChange | None, CheckChange], ...]:
        return tuple(pair for pair in self._all() if pair[1].change == "improvement")

    @property
    def regressed(self) -> bool:
        return bool(self.regressions)

    @property
    def conclusion(self) -> str:
        """``"regressed"``, ``"improved"`` or ``"unchanged"``: the deterministic verdict."""
        if self.regressed:
            return "regressed"
        return "improved" if self.improvements else "unchanged"

    def to_document(self) -> dict[str, Any]:
        return {
            "format": COMPARE_FORMAT,
            "version": COMPARE_VERSION,
            "baseline": self.baseline_label,
            "candidate": self.candidate_label,
            "conclusion": self.conclusion,
            "regressions": len(self.regressions),
            "improvements": len(self.improvements),
            "usage_delta": dict(self.usage_delta),
            "cases": [
                {"case_index": case.case_index, "repetition": case.repetition, "name": case.name,
                 "baseline_passed": case.baseline_passed, "candidate_passed": case.candidate_passed,
                 "change": case.change, "checks": [_check_document(check) for check in case.checks]}
                for case in self.cases
            ],
            "analyses": [_check_document(check) for check in self.analyses],
        }

    def to_json(self) -> str:
        """Stable indented CI JSON (ends with a newline); identical inputs give identical bytes."""
        return json.dumps(self.to_document(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"

    def summary(self) -> str:
        """A readable table of the regressions and improvements, then the conclusion."""
        lines = []
        for title, pairs in (("REGRESSION", self.regressions), ("IMPROVEMENT", self.improvements)):
            for case, check in pairs:
                where = "report" if case is None else f"{case.name}#{case.repetition}"
                lines.append(f"{title} {where} {check.name}: {check.baseline or 'absent'} -> "
                             f"{check.candidate or 'absent'}")
        delta = ", ".join(f"{name} {value:+d}" for name, value in self.usage_delta.items() if value)
        lines.append(f"{self.conclusion}: {len(self.regressions)} regressions, {len(self.improvements)} "
                     f"improvements; usage {delta or 'unchanged'}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Comparison({self.conclusion}, cases={len(self.cases)})"


def _number(value: float | None) -> float | str | None:
    if value is None or math.isfinite(value):
        return value
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")


def _check_document(check: CheckChange) -> dict[str, Any]:
    return {"name": check.name, "baseline": check.baseline, "candidate": check.candidate,
            "baseline_value": _number(check.baseline_value), "candidate_value": _number(check.candidate_value),
            "change": check.change}


def compare(baseline: Report, candidate: Report, *, baseline_label: str = "baseline",
            candidate_label: str = "candidate") -> Comparison:
    """Compare ``candidate`` against ``baseline`` (both open reports)."""
    for value, what in ((baseline, "baseline"), (candidate, "candidate")):
        if not isinstance(value, Report):
            raise InvalidEvalOptions(f"{what} must be a zigai.evals.Report, got {type(value).__name__}")
    for label, what in ((baseline_label, "baseline_label"), (candidate_label, "candidate_label")):
        if not isinstance(label, str):
            raise InvalidEvalOptions(f"{what} must be a str, got {type(label).__name__}")
    cases = tuple(
        _case(key, old, new)
        for key, old, new in _joined(baseline.cases, candidate.cases, lambda c: (c.case_index, c.repetition))
    )
    analyses = tuple(
        _check(name, old, new, ranked=True)
        for name, old, new in _joined(baseline.analyses, candidate.analyses, lambda item: item.name)
    )
    usage = {name: getattr(candidate.usage, name) - getattr(baseline.usage, name) for name in USAGE_FIELDS}
    usage["total_tokens"] = candidate.usage.total_tokens - baseline.usage.total_tokens
    return Comparison(baseline_label, candidate_label, cases, analyses, usage)
