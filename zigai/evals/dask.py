"""Running evaluation units on a Dask ``distributed`` cluster (the optional ``dask`` extra).

Job
    :class:`DaskExecutor` is a :class:`zigai.evals.run.Executor`: ``Dataset.evaluate(task,
    executor=DaskExecutor(client))`` sends every case repetition to the cluster and the
    runner writes each returned result to its source-order slot, so the report equals the
    thread-pool one for a deterministic task.

Invariants
    * nothing is submitted before everything a unit needs -- the task, every evaluator, both
      retry policies and every case (inputs, expected output, metadata, per-case options) --
      has been serialized with Dask's own pickler; the first object that fails raises
      :class:`~zigai.evals.UnpicklableEvalObject` naming it;
    * the plan is serialized once and scattered to the workers; each unit returns its
      :class:`~zigai.evals.CaseResult` and its lifecycle events, which the runner replays in
      the calling thread; ``before_retry`` and ``retryable`` callbacks run on the worker;
    * at most ``max_concurrency`` units are in flight (the runner's bound); cancelling the
      run cancels the submitted futures;
    * trace evaluators are refused (:class:`~zigai.evals.InvalidEvalOptions`): their spans
      and the agent's exporter live in the worker process; run them on the thread pool;
    * ``distributed`` is imported only here, when an executor is built; without it
      :class:`~zigai.evals.DaskNotInstalled` says what to install;
    * an executor built from a scheduler ``address`` owns its client (``close()`` /
      context manager); a ``client`` passed in stays the caller's.
"""

from __future__ import annotations

import pickle
from typing import Any

from zigai.evals.errors import DaskNotInstalled, InvalidEvalOptions, UnpicklableEvalObject
from zigai.evals.options import EvalEvent
from zigai.evals.report import CaseResult
from zigai.evals.run import Plan, Unit, run_unit

__all__ = ["DaskExecutor"]


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise DaskNotInstalled(
            "the Dask executor needs the 'distributed' package: pip install 'zigai[dask]'") from None
    return distributed


def run_remote(plan: Plan, unit: Unit) -> tuple[CaseResult, tuple[EvalEvent, ...]]:
    """One unit on a worker: its result and the events it emitted, in order."""
    events: list[EvalEvent] = []
    result = run_unit(plan, unit, events.append)
    return result, tuple(events)


def _advice(what: str) -> str:
    return (f"{what} cannot be sent to the Dask cluster; use module-level functions and picklable "
            "objects (an Agent with a TestModel, a FunctionModel of a module-level function, or a "
            "model built from a model string pickle), or run on the thread pool (max_concurrency=) instead")


def _check(dumps: Any, value: Any, what: str) -> None:
    try:
        dumps(value)
    except Exception as error:  # every pickling failure becomes one named error
        raise UnpicklableEvalObject(f"{_advice(what)} ({type(error).__name__}: {error})", what=what) from None


class DaskExecutor:
    """Runs case repetitions on a ``distributed`` cluster: pass a ``Client`` or an ``address``."""

    def __init__(self, client: Any = None, *, address: str | None = None) -> None:
        distributed = _distributed()
        if (client is None) == (address is None):
            raise InvalidEvalOptions("DaskExecutor needs exactly one of client= or address=")
        if client is not None and not isinstance(client, distributed.Client):
            raise InvalidEvalOptions(f"client must be a distributed.Client, got {type(client).__name__}")
        if address is not None and not isinstance(address, str):
            raise InvalidEvalOptions(f"address must be a scheduler address string, got {type(address).__name__}")
        self._owns = client is None
        self._client = client if client is not None else distributed.Client(address)
        self._plan: Any = None
        self._dumps = distributed.protocol.pickle.dumps

    @property
    def client(self) -> Any:
        return self._client

    def prepare(self, plan: Plan, units: tuple[Unit, ...]) -> None:
        """Check that the plan and every case serialize, then scatter the plan to the workers."""
        if plan.trace_evaluators:
            raise InvalidEvalOptions(
                "trace evaluators cannot run on the Dask executor (spans and the agent's exporter stay in "
                "the worker process); run them on the thread pool")
        _check(self._dumps, plan.task, f"the task ({type(plan.task).__name__})")
        for evaluator in plan.evaluators:
            _check(self._dumps, evaluator, f"evaluator {evaluator.name!r}")
        _check(self._dumps, plan.task_retry, "task_retry (its callbacks)")
        _check(self._dumps, plan.evaluator_retry, "evaluator_retry (its callbacks)")
        for unit in units:
            case = unit.case
            for part in ("inputs", "expected_output", "options"):
                _check(self._dumps, getattr(case, part), f"case {case.name!r} {part}")
            _check(self._dumps, dict(case.metadata), f"case {case.name!r} metadata")
        self._plan = self._client.scatter(plan, broadcast=True, hash=False)

    def submit(self, plan: Plan, unit: Unit) -> Any:
        if self._plan is None:
            raise InvalidEvalOptions("DaskExecutor.submit before prepare(); pass the executor to Dataset.evaluate")
        return self._client.submit(run_remote, self._plan, unit, pure=False)

    def close(self) -> None:
        """Close the client this executor opened from an address (a passed-in client is left open)."""
        self._plan = None
        if self._owns:
            self._client.close()

    def __enter__(self) -> DaskExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __reduce__(self) -> Any:
        raise pickle.PicklingError("a DaskExecutor stays in the process that built it")
