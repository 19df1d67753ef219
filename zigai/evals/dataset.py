"""Datasets: the immutable, validated set of cases and evaluators an evaluation runs.

Invariants:

* a :class:`Case` is immutable; its ``metadata`` is a read-only copy of the mapping given;
* case names are non-empty, at most :data:`MAX_CASE_NAME_BYTES` UTF-8 bytes, and unique
  within a dataset; evaluator names are unique within a dataset (reports and later
  comparisons join results by these names);
* a dataset holds 1 to :data:`MAX_CASES` cases; case order is the source order of every
  report the dataset produces.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from zigai.evals.case import MAX_CASE_NAME_BYTES, Case, check_name
from zigai.evals.errors import InvalidDataset
from zigai.evals.evaluators import Evaluator
from zigai.evals.report import Report
from zigai.evals.run import Progress, run_cases

__all__ = ["Case", "Dataset", "MAX_CASES", "MAX_CASE_NAME_BYTES"]  # Case re-exported

MAX_CASES = 10_000


class Dataset:
    """An ordered, immutable set of named cases plus the evaluators applied to every case."""

    __slots__ = ("_name", "_cases", "_evaluators")

    def __init__(
        self,
        cases: Iterable[Case],
        evaluators: Iterable[Evaluator] = (),
        *,
        name: str = "dataset",
    ) -> None:
        self._name = check_name("dataset", name)
        owned = tuple(cases)
        if not owned:
            raise InvalidDataset("a dataset needs at least one case")
        if len(owned) > MAX_CASES:
            raise InvalidDataset(
                f"a dataset holds at most {MAX_CASES} cases, got {len(owned)}; split it"
            )
        seen: set[str] = set()
        for case in owned:
            if not isinstance(case, Case):
                raise InvalidDataset(f"dataset cases must be Case values, got {type(case).__name__}")
            if case.name in seen:
                raise InvalidDataset(f"case name {case.name!r} appears twice; case names must be unique")
            seen.add(case.name)
        checks = tuple(evaluators)
        names: set[str] = set()
        for evaluator in checks:
            if not isinstance(evaluator, Evaluator):
                raise InvalidDataset(
                    f"dataset evaluators must be Evaluator values, got {type(evaluator).__name__}"
                )
            if evaluator.name in names:
                raise InvalidDataset(
                    f"evaluator name {evaluator.name!r} appears twice; pass name= to tell them apart"
                )
            names.add(evaluator.name)
        self._cases = owned
        self._evaluators = checks

    @property
    def name(self) -> str:
        return self._name

    @property
    def cases(self) -> tuple[Case, ...]:
        return self._cases

    @property
    def evaluators(self) -> tuple[Evaluator, ...]:
        return self._evaluators

    def __len__(self) -> int:
        return len(self._cases)

    def evaluate(
        self,
        task: Any,
        *,
        max_concurrency: int = 1,
        progress: Callable[[Progress], None] | None = None,
    ) -> Report:
        """Run ``task`` over every case, apply every evaluator, and return the owned report.

        ``task`` is an :class:`~zigai.agent.Agent` (run with the case inputs as prompt) or
        any callable ``task(inputs) -> output``.  See :func:`zigai.evals.run.run_cases`.
        """
        return run_cases(
            self._name, self._cases, self._evaluators, task,
            max_concurrency=max_concurrency, progress=progress,
        )

    def __repr__(self) -> str:
        return f"Dataset(name={self._name!r}, cases={len(self._cases)}, evaluators={len(self._evaluators)})"
