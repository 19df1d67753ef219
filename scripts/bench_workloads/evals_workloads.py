"""``evals_cases_per_s``: one dataset of 1000 cases run over a test-model agent, 8 in flight.

zigai: ``Dataset.evaluate(Agent(TestModel()), max_concurrency=8)`` with an exact-match
evaluator against the expected output.  The peer is ``pydantic_evals`` (the same version as
the ``pydantic-ai`` peer) running the same 1000 cases over ``pydantic_ai.Agent(TestModel())``
with ``EqualsExpected`` and ``max_concurrency=8``, progress display off, in the same process.
Both count cases per second of wall time, report built.
"""

from __future__ import annotations

import importlib.util
import statistics
import time
from collections.abc import Callable
from typing import Any

__all__ = ["WORKLOADS", "CASES"]

CASES = 1000
CONCURRENCY = 8
_ANSWER = "success (no tool calls)"  # what both test models answer


def _median(reps: int, once: Callable[[], float]) -> float:
    return statistics.median(once() for _ in range(max(1, reps)))


def zigai_evals_cases_per_s(reps: int, cases: int = CASES) -> float:
    from zigai.agent import Agent
    from zigai.evals import Case, Dataset, ExactMatch
    from zigai.testing import TestModel

    dataset = Dataset([Case(f"case{n:04}", f"question {n}", _ANSWER) for n in range(cases)], [ExactMatch()])
    agent = Agent(TestModel())

    def once() -> float:
        start = time.perf_counter()
        with dataset.evaluate(agent, max_concurrency=CONCURRENCY) as report:
            assert report.pass_rate == 1.0 and len(report) == cases, report.summary()
        return cases / (time.perf_counter() - start)

    return _median(reps, once)


def peer_evals_cases_per_s(reps: int, cases: int = CASES) -> float:
    """pydantic_evals 2.31 ``Dataset.evaluate_sync`` over a ``pydantic_ai`` TestModel agent."""
    from pydantic_ai import Agent
    from pydantic_ai.models.test import TestModel
    from pydantic_evals import Case, Dataset
    from pydantic_evals.evaluators import EqualsExpected

    dataset: Any = Dataset(name="bench", cases=[Case(name=f"case{n:04}", inputs=f"question {n}", expected_output=_ANSWER)
                                  for n in range(cases)], evaluators=[EqualsExpected()])
    agent = Agent(TestModel())

    async def task(inputs: str) -> str:
        return (await agent.run(inputs)).output

    def once() -> float:
        start = time.perf_counter()
        report = dataset.evaluate_sync(task, max_concurrency=CONCURRENCY, progress=False)
        elapsed = time.perf_counter() - start
        passed = sum(1 for case in report.cases if all(r.value for r in case.assertions.values()))
        assert passed == cases and not report.failures, (passed, report.failures[:1])
        return cases / elapsed

    return _median(reps, once)


WORKLOADS: list[dict[str, Any]] = [
    {"name": "evals_cases_per_s", "unit": "cases/s", "lower_is_better": False,
     "run": zigai_evals_cases_per_s,
     "peer": peer_evals_cases_per_s if importlib.util.find_spec("pydantic_evals") is not None else None},
]
