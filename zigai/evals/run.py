"""Running a dataset: one task run plus its evaluations per case, on a bounded thread pool.

Invariants:

* at most ``max_concurrency`` case runs are in flight (1 to :data:`MAX_CONCURRENCY`);
  ``max_concurrency=1`` runs every case in the calling thread, in source order;
* each finished case is written to its source-order slot, so the report does not depend
  on completion order;
* ``progress`` is called in the calling thread, once per finished case, in completion
  order, with a running count; an exception it raises cancels the cases not yet started,
  waits for the running ones, and propagates unchanged;
* a task exception (``Exception`` subclasses) is recorded in that case's result;
  ``BaseException`` (KeyboardInterrupt, SystemExit) is never swallowed;
* the task, its model and the evaluators are application-owned; with
  ``max_concurrency > 1`` they must be thread-safe (an ``Agent`` is).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from zigai.agent import Agent, Result
from zigai.evals.case import Case
from zigai.evals.errors import InvalidEvalOptions
from zigai.evals.evaluators import EvalContext, Evaluator, grade_of
from zigai.evals.report import CaseResult, Report
from zigai.usage import RunUsage

__all__ = ["Progress", "run_cases", "MAX_CONCURRENCY"]

MAX_CONCURRENCY = 64


@dataclass(frozen=True, slots=True)
class Progress:
    """One progress report: ``done`` of ``total`` cases finished, ``failed`` of them failing."""

    done: int
    total: int
    failed: int
    case: CaseResult


def _check_options(max_concurrency: object, progress: object) -> None:
    if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int):
        raise InvalidEvalOptions(
            f"max_concurrency must be an int, got {type(max_concurrency).__name__}", limit=MAX_CONCURRENCY
        )
    if not 1 <= max_concurrency <= MAX_CONCURRENCY:
        raise InvalidEvalOptions(
            f"max_concurrency must be between 1 and {MAX_CONCURRENCY}, got {max_concurrency}",
            limit=MAX_CONCURRENCY,
        )
    if progress is not None and not callable(progress):
        raise InvalidEvalOptions(f"progress must be callable, got {type(progress).__name__}")


def _call_task(task: Any, inputs: Any) -> tuple[Any, RunUsage]:
    if isinstance(task, Agent):
        with task.run(inputs) as result:
            return result.output, result.usage
    output = task(inputs)
    if isinstance(output, Result):  # a callable that wraps an agent run hands us the owner
        with output:
            return output.output, output.usage
    return output, RunUsage()


def _run_case(evaluators: tuple[Evaluator, ...], index: int, case: Case, task: Any) -> CaseResult:
    try:
        output, usage = _call_task(task, case.inputs)
    except Exception as error:  # recorded in the case result; other cases keep running
        return CaseResult(
            index, case.name, case.inputs, case.expected_output, case.metadata, None, RunUsage(), (),
            error_type=type(error).__name__, error_message=str(error),
        )
    context = EvalContext(case.name, index, case.inputs, case.expected_output, case.metadata, output, usage)
    evaluations = tuple(grade_of(evaluator, context) for evaluator in evaluators)
    return CaseResult(
        index, case.name, case.inputs, case.expected_output, case.metadata, output, usage, evaluations
    )


def run_cases(
    dataset_name: str,
    cases: tuple[Case, ...],
    evaluators: tuple[Evaluator, ...],
    task: Any,
    *,
    max_concurrency: int = 1,
    progress: Callable[[Progress], None] | None = None,
) -> Report:
    """Run ``task`` over every case, apply every evaluator, return the owned :class:`Report`."""
    _check_options(max_concurrency, progress)
    if not isinstance(task, Agent) and not callable(task):
        raise InvalidEvalOptions(f"task must be an Agent or a callable, got {type(task).__name__}")
    slots: list[CaseResult | None] = [None] * len(cases)
    done = 0
    failed = 0

    def finished(result: CaseResult) -> None:
        nonlocal done, failed
        slots[result.case_index] = result
        done += 1
        failed += not result.passed
        if progress is not None:
            progress(Progress(done, len(cases), failed, result))

    if max_concurrency == 1:
        for index, case in enumerate(cases):
            finished(_run_case(evaluators, index, case, task))
    else:
        with ThreadPoolExecutor(max_workers=max_concurrency, thread_name_prefix="zigai-evals") as pool:
            pending: set[Future[CaseResult]] = set()
            upcoming = iter(enumerate(cases))
            try:
                # Admit at most max_concurrency cases; the next one starts as one finishes.
                for index, case in upcoming:
                    pending.add(pool.submit(_run_case, evaluators, index, case, task))
                    if len(pending) == max_concurrency:
                        break
                while pending:
                    complete, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for future in complete:
                        finished(future.result())
                        following = next(upcoming, None)
                        if following is not None:
                            pending.add(pool.submit(_run_case, evaluators, following[0], following[1], task))
            except BaseException:
                for future in pending:
                    future.cancel()
                raise
    return Report(dataset_name, tuple(slot for slot in slots if slot is not None))
