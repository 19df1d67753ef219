"""Datasets: the immutable, validated set of cases and evaluators an evaluation runs.

Invariants:

* a :class:`Case` is immutable; its ``metadata`` is a read-only copy of the mapping given;
* case names are non-empty, at most :data:`MAX_CASE_NAME_BYTES` UTF-8 bytes, and unique
  within a dataset; evaluator names -- ordinary, trace and report evaluators together --
  are unique within a dataset (reports and comparisons join results by these names);
* a dataset holds 1 to :data:`MAX_CASES` cases; case order is the source order of every
  report the dataset produces.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from zigai.evals.analysis import ReportEvaluator
from zigai.evals.case import MAX_CASE_NAME_BYTES, Case, check_name
from zigai.evals.errors import InvalidDataset
from zigai.evals.evaluators import Evaluator
from zigai.evals.options import NO_RETRY, EvalEvent, Retry
from zigai.evals.report import Report
from zigai.evals.run import Executor, Plan, Progress, run_cases
from zigai.evals.trace import TraceEvaluator

__all__ = ["Case", "Dataset", "MAX_CASES", "MAX_CASE_NAME_BYTES"]  # Case re-exported

MAX_CASES = 10_000


class Dataset:
    """An ordered, immutable set of named cases plus the evaluators applied to every case."""

    __slots__ = ("_name", "_cases", "_evaluators", "_trace_evaluators", "_report_evaluators")

    def __init__(
        self,
        cases: Iterable[Case],
        evaluators: Iterable[Evaluator] = (),
        *,
        trace_evaluators: Iterable[TraceEvaluator] = (),
        report_evaluators: Iterable[ReportEvaluator] = (),
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
        names: set[str] = set()
        self._cases = owned
        self._evaluators = _checked(evaluators, Evaluator, "evaluators", names)
        self._trace_evaluators = _checked(trace_evaluators, TraceEvaluator, "trace_evaluators", names)
        self._report_evaluators = _checked(report_evaluators, ReportEvaluator, "report_evaluators", names)

    @property
    def name(self) -> str:
        return self._name

    @property
    def cases(self) -> tuple[Case, ...]:
        return self._cases

    @property
    def evaluators(self) -> tuple[Evaluator, ...]:
        return self._evaluators

    @property
    def trace_evaluators(self) -> tuple[TraceEvaluator, ...]:
        return self._trace_evaluators

    @property
    def report_evaluators(self) -> tuple[ReportEvaluator, ...]:
        return self._report_evaluators

    def __len__(self) -> int:
        return len(self._cases)

    def evaluate(
        self,
        task: Any,
        *,
        repetitions: int = 1,
        max_concurrency: int = 1,
        task_retry: Retry = NO_RETRY,
        evaluator_retry: Retry = NO_RETRY,
        on_event: Callable[[EvalEvent], None] | None = None,
        progress: Callable[[Progress], None] | None = None,
        executor: Executor | None = None,
    ) -> Report:
        """Run ``task`` over every case ``repetitions`` times and return the owned report.

        ``task`` is an :class:`~zigai.agent.Agent` (run with the case inputs as prompt and
        the case's ``options``) or any callable ``task(inputs) -> output``.  ``task_retry``
        and ``evaluator_retry`` are separate :class:`Retry` policies.  ``executor`` runs the
        units elsewhere (any :class:`zigai.evals.run.Executor`).  See
        :mod:`zigai.evals.run` for ordering, events and progress.
        """
        plan = Plan(task, self._evaluators, self._trace_evaluators, task_retry, evaluator_retry)
        return run_cases(
            self._name, self._cases, plan, self._report_evaluators, repetitions=repetitions,
            max_concurrency=max_concurrency, progress=progress, on_event=on_event, executor=executor,
        )

    def __repr__(self) -> str:
        return f"Dataset(name={self._name!r}, cases={len(self._cases)}, evaluators={len(self._evaluators)})"


def _checked(values: Iterable[Any], kind: type, what: str, names: set[str]) -> tuple[Any, ...]:
    owned = tuple(values)
    for evaluator in owned:
        if not isinstance(evaluator, kind):
            raise InvalidDataset(f"dataset {what} must be {kind.__name__} values, got {type(evaluator).__name__}")
        name: str = getattr(evaluator, "name")  # noqa: B009 - every evaluator kind has one
        if name in names:
            raise InvalidDataset(f"evaluator name {name!r} appears twice; pass name= to tell them apart")
        names.add(name)
    return owned
