"""zigai.evals: run agents (or any task) over named cases and judge the outputs (layer 6).

Job
    A :class:`Dataset` holds named :class:`Case` values (inputs, expected output, metadata)
    and the evaluators applied to each.  ``Dataset.evaluate(task)`` runs an ordinary
    :class:`~zigai.agent.Agent` -- or any callable -- over every case on a bounded thread
    pool, runs every evaluator on a read-only :class:`EvalContext`, and returns one owned
    :class:`Report`.

Invariants
    * Source order: ``report.cases[i]`` belongs to ``dataset.cases[i]``; concurrent and
      sequential runs of a deterministic task give equal reports.
    * Bounds: at most ``MAX_CASES`` cases per dataset, ``max_concurrency`` between 1 and
      ``MAX_CONCURRENCY``, case names at most ``MAX_CASE_NAME_BYTES``; exactly-at-limit
      is accepted, one more raises a named error.
    * Nothing lost: task and evaluator exceptions are recorded per case and per evaluator;
      the run continues.
    * Ownership: :class:`Report` is a context manager; use after ``close()`` raises
      :class:`ReportClosed`.

Submodules: ``errors``, ``evaluators`` (EvalContext, Grade, EvaluationResult, Evaluator,
Check and the built-ins), ``case`` (Case), ``dataset`` (Dataset), ``report`` (CaseResult, Report),
``run`` (the bounded runner, Progress).
"""

from __future__ import annotations

from zigai.evals.case import MAX_CASE_NAME_BYTES, Case
from zigai.evals.dataset import MAX_CASES, Dataset
from zigai.evals.errors import (
    EvalsError,
    InvalidDataset,
    InvalidEvalOptions,
    InvalidEvaluator,
    InvalidEvaluatorResult,
    ReportClosed,
)
from zigai.evals.evaluators import (
    Check,
    Contains,
    EvalContext,
    EvaluationResult,
    Evaluator,
    ExactMatch,
    Grade,
    IsJson,
    MatchesSchema,
)
from zigai.evals.report import CaseResult, Report
from zigai.evals.run import MAX_CONCURRENCY, Progress

__all__ = [
    "Case",
    "Dataset",
    "Report",
    "CaseResult",
    "Progress",
    "EvalContext",
    "Grade",
    "EvaluationResult",
    "Evaluator",
    "Check",
    "ExactMatch",
    "Contains",
    "IsJson",
    "MatchesSchema",
    "MAX_CASES",
    "MAX_CASE_NAME_BYTES",
    "MAX_CONCURRENCY",
    "EvalsError",
    "InvalidDataset",
    "InvalidEvaluator",
    "InvalidEvaluatorResult",
    "InvalidEvalOptions",
    "ReportClosed",
]
