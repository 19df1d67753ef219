"""zigai.evals: run agents (or any task) over named cases and judge the outputs (layer 6).

Job
    A :class:`Dataset` holds named :class:`Case` values (inputs, expected output, metadata,
    per-case agent options) and the evaluators applied to each: ordinary, trace (over the
    spans the agent exported) and report evaluators (over the whole finished run).
    ``Dataset.evaluate(task)`` runs an ordinary :class:`~zigai.agent.Agent` -- or any
    callable -- over every case and repetition on a bounded thread pool (or a Dask cluster),
    with separate task / evaluator retry policies and lifecycle events, and returns one
    owned :class:`Report`.  ``zigai.evals.io`` reads and writes dataset / report documents,
    ``zigai.evals.compare`` compares two reports, :class:`ModelGrader` grades with an agent.

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
``options`` (Retry, RetryNotice, the lifecycle events), ``run`` (the bounded runner, Progress),
``stats`` (pass rates, score statistics), ``analysis`` (report evaluators, ReportView,
Metric, Analysis), ``trace`` (trace evaluators and the span tee), ``grader``
(ModelGrader: an Agent as judge), ``compare`` (joining two reports into regressions,
improvements and usage deltas), ``io`` (dataset and report documents in JSON or YAML) and
``dask`` (the Dask executor; the ``dask`` extra); these three are imported explicitly
(``zigai.evals.io``).
"""

from __future__ import annotations

from zigai.evals.analysis import (
    Analysis,
    MeanScore,
    Metric,
    PassRate,
    ReportCheck,
    ReportEvaluator,
    ReportView,
)
from zigai.evals.case import MAX_CASE_NAME_BYTES, Case
from zigai.evals.dataset import MAX_CASES, Dataset
from zigai.evals.errors import (
    AmbiguousEvaluatorName,
    DaskNotInstalled,
    EvalsError,
    InvalidDataset,
    InvalidEvalDocument,
    InvalidEvalOptions,
    InvalidEvaluator,
    InvalidEvaluatorResult,
    InvalidGraderVerdict,
    ReportClosed,
    TraceTelemetryMissing,
    UnknownEvaluatorName,
    UnpicklableEvalObject,
    UnsupportedEvalDocumentVersion,
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
from zigai.evals.grader import GraderVerdict, ModelGrader
from zigai.evals.options import (
    MAX_ATTEMPTS,
    MAX_REPETITIONS,
    CaseErrored,
    CaseFinished,
    CaseStarted,
    EvalEvent,
    EvaluatorAttempted,
    Retry,
    RetryNotice,
    TaskAttempted,
)
from zigai.evals.report import CaseResult, Report
from zigai.evals.run import MAX_CONCURRENCY, Progress
from zigai.evals.stats import CasePassRate, ScoreStats
from zigai.evals.trace import SpanTee, TraceCheck, TraceEvaluator

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
    "Retry",
    "RetryNotice",
    "EvalEvent",
    "CaseStarted",
    "TaskAttempted",
    "EvaluatorAttempted",
    "CaseErrored",
    "CaseFinished",
    "ReportView",
    "ReportEvaluator",
    "ReportCheck",
    "PassRate",
    "MeanScore",
    "Metric",
    "Analysis",
    "CasePassRate",
    "ScoreStats",
    "TraceEvaluator",
    "TraceCheck",
    "SpanTee",
    "ModelGrader",
    "GraderVerdict",
    "MAX_CASES",
    "MAX_CASE_NAME_BYTES",
    "MAX_CONCURRENCY",
    "MAX_REPETITIONS",
    "MAX_ATTEMPTS",
    "EvalsError",
    "InvalidDataset",
    "InvalidEvaluator",
    "InvalidEvaluatorResult",
    "InvalidEvalOptions",
    "ReportClosed",
    "TraceTelemetryMissing",
    "InvalidGraderVerdict",
    "InvalidEvalDocument",
    "UnsupportedEvalDocumentVersion",
    "UnknownEvaluatorName",
    "AmbiguousEvaluatorName",
    "UnpicklableEvalObject",
    "DaskNotInstalled",
]
