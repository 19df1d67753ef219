"""zigai.planning: immutable plans and their approval-first execution (layer 6).

Job
    Let an application (or a model, through :func:`plan_tool`) describe work as a plan -- steps
    with dependencies -- and run it deterministically under the agent's own policies.

Invariants
    * Plans are immutable value graphs (:class:`Plan`, :class:`PlanStep`); a plan is validated
      (ids, duplicates, unknown dependencies, cycles, bounds) when it is constructed, so a
      revision becomes visible (:class:`PlanBoard`) only after it passed.
    * Revisions are optimistic: publishing needs the revision the writer saw
      (:class:`StaleRevision` otherwise); approvals belong to one revision.
    * :func:`execute_plan` checks every approval before any advisor, observer or step callback
      runs, then runs ready steps one at a time in declaration order; denied steps and their
      dependents are recorded, not run.
    * One :class:`zigai.control.RunControl` spans observers, advisors and step callbacks;
      application exceptions propagate unwrapped.
    * Outputs, advice and aggregate usage are bounded JSON owned by :class:`PlanExecution`.
    * The capability adapter is an ordinary approval-gated function tool, not another loop.

Submodules: ``errors``, ``plan`` (values, limits, validation, JSON form), ``board`` (visible
revisions), ``execute`` (approvals, contexts, results, :func:`execute_plan`), ``tool``.
"""

from __future__ import annotations

from zigai.planning.board import PlanBoard
from zigai.planning.errors import (
    ApprovalMissing,
    DuplicateStepId,
    InvalidPlan,
    InvalidStepOutput,
    PlanCycle,
    PlanExecutionClosed,
    PlanTooLarge,
    StaleRevision,
    StepOutputTooLarge,
    UnexpectedApproval,
    UnknownDependency,
    UnknownPlan,
)
from zigai.planning.execute import (
    Approvals,
    ExecutionLimits,
    PlanEvent,
    PlanExecution,
    StepContext,
    StepOutput,
    StepResult,
    StepStatus,
    execute_plan,
)
from zigai.planning.plan import Plan, PlanLimits, PlanStep
from zigai.planning.tool import plan_tool

__all__ = [
    "Plan",
    "PlanStep",
    "PlanLimits",
    "PlanBoard",
    "Approvals",
    "ExecutionLimits",
    "StepContext",
    "StepOutput",
    "StepResult",
    "StepStatus",
    "PlanEvent",
    "PlanExecution",
    "execute_plan",
    "plan_tool",
    "InvalidPlan",
    "DuplicateStepId",
    "UnknownDependency",
    "PlanCycle",
    "PlanTooLarge",
    "UnknownPlan",
    "StaleRevision",
    "ApprovalMissing",
    "UnexpectedApproval",
    "InvalidStepOutput",
    "StepOutputTooLarge",
    "PlanExecutionClosed",
]
