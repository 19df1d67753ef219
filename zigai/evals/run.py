"""Running a dataset: case repetitions with retries and events, on a bounded pool.

Invariants:

* units: every case runs ``repetitions`` times; unit ``(case i, repetition r)`` owns slot
  ``i * repetitions + r`` of the report, so ``report.cases`` is in source order (case,
  then repetition) whatever order the units completed in, and a deterministic task gives
  the same report sequentially, on a thread pool or on a Dask cluster;
* at most ``max_concurrency`` units are in flight (1 to :data:`MAX_CONCURRENCY`);
  ``max_concurrency=1`` without an executor runs every unit in the calling thread;
* a task attempt that raises (``Exception``) is retried under ``task_retry``; an evaluator
  call under ``evaluator_retry``; attempt counts are recorded in the report
  (``CaseResult.task_attempts``, ``EvaluationResult.attempts``); a final failure is recorded,
  never raised, and the run continues; ``BaseException`` is never swallowed;
* ``on_event`` receives every lifecycle event of a unit in order; on the local pool it runs
  in the worker thread as the event happens (it must be thread-safe when
  ``max_concurrency > 1``); on an executor the unit's events are replayed in the calling
  thread when the unit returns;
* ``progress`` runs in the calling thread once per finished unit, in completion order;
  an exception from ``progress``, ``on_event`` or a ``before_retry`` callback cancels the
  units not yet started, waits for the running ones and propagates unchanged (waiting is by
  design: a started unit always finishes, so an Agent task is bounded by its own
  ``run_timeout_ms``, whose abandoned tool threads never hold the process);
* report evaluators run after every unit joined, over an immutable :class:`ReportView`.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from zigai.agent import Agent, Result
from zigai.evals.analysis import ReportEvaluator, ReportView, analyse
from zigai.evals.case import Case
from zigai.evals.errors import InvalidEvalOptions
from zigai.evals.evaluators import EvalContext, EvaluationResult, Evaluator, verdict_of
from zigai.evals.options import (
    MAX_REPETITIONS,
    CaseErrored,
    CaseFinished,
    CaseStarted,
    EvalEvent,
    EvaluatorAttempted,
    Retry,
    RetryNotice,
    TaskAttempted,
    check_callback,
)
from zigai.evals.report import CaseResult, Report
from zigai.evals.trace import TraceEvaluator, check_traceable, teed_agent
from zigai.usage import RunUsage

__all__ = ["Progress", "Plan", "Unit", "run_cases", "run_unit", "Executor", "MAX_CONCURRENCY"]

MAX_CONCURRENCY = 64

Emit = Callable[[EvalEvent], None]


@dataclass(frozen=True, slots=True)
class Progress:
    """One progress report: ``done`` of ``total`` units finished, ``failed`` of them failing."""

    done: int
    total: int
    failed: int
    case: CaseResult


@dataclass(frozen=True, slots=True)
class Unit:
    """One repetition of one case: what a worker needs besides the :class:`Plan`."""

    case_index: int
    repetition: int
    case: Case


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything shared by every unit of a run (application-owned objects, never copied)."""

    task: Any
    evaluators: tuple[Evaluator, ...]
    trace_evaluators: tuple[TraceEvaluator, ...]
    task_retry: Retry
    evaluator_retry: Retry


class _Pending(Protocol):
    def add_done_callback(self, fn: Callable[[Any], None]) -> None: ...

    def cancel(self) -> Any: ...

    def result(self) -> Any: ...


class Executor(Protocol):
    """Runs units somewhere else (see :class:`zigai.evals.dask.DaskExecutor`).

    ``prepare(plan, units)`` runs once before any submission and may refuse the run (e.g. an
    object that cannot be sent); ``submit(plan, unit)`` returns a future whose result is
    ``(CaseResult, events)``.
    """

    def prepare(self, plan: Plan, units: tuple[Unit, ...]) -> None: ...

    def submit(self, plan: Plan, unit: Unit) -> _Pending: ...


def _silent(event: EvalEvent) -> None:
    pass


def _call_task(task: Any, case: Case) -> tuple[Any, RunUsage]:
    if isinstance(task, Agent):
        with task.run(case.inputs, options=case.options) as result:
            return result.output, result.usage
    output = task(case.inputs)
    if isinstance(output, Result):  # a callable that wraps an agent run hands us the owner
        with output:
            return output.output, output.usage
    return output, RunUsage()


def _notice(retry: Retry, notice: RetryNotice) -> None:
    if retry.before_retry is not None:
        retry.before_retry(notice)


def _evaluate(
    plan: Plan, evaluator: Evaluator | TraceEvaluator, context: EvalContext, spans: tuple[Any, ...] | None,
    emit: Emit,
) -> EvaluationResult:
    retry = plan.evaluator_retry
    attempt = 0
    while True:
        attempt += 1
        try:
            if spans is None:
                raw = evaluator.evaluate(context)  # type: ignore[call-arg]
            else:
                raw = evaluator.evaluate(context, spans)  # type: ignore[call-arg]
            grade = verdict_of(evaluator.name, raw)
        except Exception as error:  # recorded below, or retried
            again = retry.allows(attempt, error)
            emit(EvaluatorAttempted(context.case_index, context.case_name, context.repetition, evaluator.name,
                                    attempt, type(error).__name__, str(error), again))
            if again:
                _notice(retry, RetryNotice("evaluator", context.case_index, context.case_name,
                                           context.repetition, evaluator.name, attempt, error))
                continue
            emit(CaseErrored(context.case_index, context.case_name, context.repetition, "evaluator",
                             evaluator.name, attempt, type(error).__name__, str(error)))
            return EvaluationResult(evaluator.name, error_type=type(error).__name__, error_message=str(error),
                                    attempts=attempt)
        emit(EvaluatorAttempted(context.case_index, context.case_name, context.repetition, evaluator.name,
                                attempt, None, None, False))
        return EvaluationResult(evaluator.name, grade.passed, grade.score, grade.reason, attempts=attempt)


def run_unit(plan: Plan, unit: Unit, emit: Emit = _silent) -> CaseResult:
    """Run one case repetition: the task (with retries), then every evaluator (with retries)."""
    case, index, repetition = unit.case, unit.case_index, unit.repetition
    emit(CaseStarted(index, case.name, repetition))
    attempt = 0
    started = time.perf_counter()
    while True:
        attempt += 1
        task, tee = plan.task, None
        if plan.trace_evaluators:
            task, tee = teed_agent(plan.task)
        try:
            output, usage = _call_task(task, case)
        except Exception as error:  # recorded below, or retried
            again = plan.task_retry.allows(attempt, error)
            emit(TaskAttempted(index, case.name, repetition, attempt, type(error).__name__, str(error), again))
            if again:
                _notice(plan.task_retry, RetryNotice("task", index, case.name, repetition, None, attempt, error))
                continue
            emit(CaseErrored(index, case.name, repetition, "task", None, attempt, type(error).__name__, str(error)))
            result = CaseResult(
                index, case.name, case.inputs, case.expected_output, case.metadata, None, RunUsage(), (),
                error_type=type(error).__name__, error_message=str(error), repetition=repetition,
                task_attempts=attempt, spans=tee.spans if tee is not None else (),
                duration_s=time.perf_counter() - started,
            )
            emit(CaseFinished(result))
            return result
        emit(TaskAttempted(index, case.name, repetition, attempt, None, None, False))
        break
    duration = time.perf_counter() - started
    context = EvalContext(case.name, index, case.inputs, case.expected_output, case.metadata, output, usage,
                          repetition)
    spans = tee.spans if tee is not None else ()
    evaluations = [_evaluate(plan, evaluator, context, None, emit) for evaluator in plan.evaluators]
    evaluations += [_evaluate(plan, evaluator, context, spans, emit) for evaluator in plan.trace_evaluators]
    result = CaseResult(
        index, case.name, case.inputs, case.expected_output, case.metadata, output, usage, tuple(evaluations),
        repetition=repetition, task_attempts=attempt, spans=spans, duration_s=duration,
    )
    emit(CaseFinished(result))
    return result


def _check_options(max_concurrency: object, repetitions: object, progress: object, on_event: object) -> None:
    if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int):
        raise InvalidEvalOptions(
            f"max_concurrency must be an int, got {type(max_concurrency).__name__}", limit=MAX_CONCURRENCY
        )
    if not 1 <= max_concurrency <= MAX_CONCURRENCY:
        raise InvalidEvalOptions(
            f"max_concurrency must be between 1 and {MAX_CONCURRENCY}, got {max_concurrency}",
            limit=MAX_CONCURRENCY,
        )
    if isinstance(repetitions, bool) or not isinstance(repetitions, int) or not 1 <= repetitions <= MAX_REPETITIONS:
        raise InvalidEvalOptions(
            f"repetitions must be an int from 1 to {MAX_REPETITIONS}, got {repetitions!r}", limit=MAX_REPETITIONS
        )
    check_callback("progress", progress)
    check_callback("on_event", on_event)


def _units(cases: tuple[Case, ...], repetitions: int) -> Iterator[Unit]:
    for index, case in enumerate(cases):
        for repetition in range(repetitions):
            yield Unit(index, repetition, case)


def run_cases(
    dataset_name: str,
    cases: tuple[Case, ...],
    plan: Plan,
    report_evaluators: tuple[ReportEvaluator, ...] = (),
    *,
    repetitions: int = 1,
    max_concurrency: int = 1,
    progress: Callable[[Progress], None] | None = None,
    on_event: Callable[[EvalEvent], None] | None = None,
    executor: Executor | None = None,
) -> Report:
    """Run every unit of ``cases`` under ``plan`` and return the owned :class:`Report`."""
    _check_options(max_concurrency, repetitions, progress, on_event)
    task = plan.task
    if not isinstance(task, Agent) and not callable(task):
        raise InvalidEvalOptions(f"task must be an Agent or a callable, got {type(task).__name__}")
    for retry, what in ((plan.task_retry, "task_retry"), (plan.evaluator_retry, "evaluator_retry")):
        if not isinstance(retry, Retry):
            raise InvalidEvalOptions(f"{what} must be a zigai.evals.Retry, got {type(retry).__name__}")
    if not isinstance(task, Agent) and any(case.options is not None for case in cases):
        raise InvalidEvalOptions("cases with options= need an Agent task; a callable receives only the inputs")
    check_traceable(task, plan.trace_evaluators)
    if executor is not None:
        executor.prepare(plan, tuple(Unit(index, 0, case) for index, case in enumerate(cases)))
    emit = on_event if on_event is not None else _silent
    total = len(cases) * repetitions
    slots: list[CaseResult | None] = [None] * total
    done = 0
    failed = 0

    def finished(result: CaseResult) -> None:
        nonlocal done, failed
        slots[result.case_index * repetitions + result.repetition] = result
        done += 1
        failed += not result.passed
        if progress is not None:
            progress(Progress(done, total, failed, result))

    units = _units(cases, repetitions)
    if executor is None and max_concurrency == 1:
        for unit in units:
            finished(run_unit(plan, unit, emit))
    elif executor is None:
        with ThreadPoolExecutor(max_workers=max_concurrency, thread_name_prefix="zigai-evals") as pool:
            _admit(lambda unit: pool.submit(run_unit, plan, unit, emit), units, max_concurrency, finished)
    else:
        def replayed(outcome: tuple[CaseResult, tuple[EvalEvent, ...]]) -> None:
            result, events = outcome
            for event in events:
                emit(event)
            finished(result)

        _admit(lambda unit: executor.submit(plan, unit), units, max_concurrency, replayed)
    results = tuple(slot for slot in slots if slot is not None)
    view = ReportView(dataset_name, results, repetitions)
    analyses = tuple(analyse(evaluator, view) for evaluator in report_evaluators)
    return Report(dataset_name, results, repetitions=repetitions, analyses=analyses)


def _admit(
    submit: Callable[[Unit], _Pending], units: Iterator[Unit], limit: int, finished: Callable[[Any], None]
) -> None:
    """Keep at most ``limit`` units in flight; hand each outcome to ``finished`` as it completes."""
    completions: queue.SimpleQueue[_Pending] = queue.SimpleQueue()
    in_flight: list[_Pending] = []

    def launch(unit: Unit) -> None:
        pending = submit(unit)
        in_flight.append(pending)
        pending.add_done_callback(completions.put)

    try:
        for unit in units:
            launch(unit)
            if len(in_flight) == limit:
                break
        while in_flight:
            pending = completions.get()
            in_flight.remove(pending)
            finished(pending.result())
            following = next(units, None)
            if following is not None:
                launch(following)
    except BaseException:
        for pending in in_flight:
            pending.cancel()
        raise
