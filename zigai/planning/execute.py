"""Plan execution: approvals first, then ready steps one at a time in declaration order.

:func:`execute_plan` runs a validated :class:`Plan` through application callbacks:

1. every approval is checked -- each step that requires one has a decision, no decision names
   another step, the decisions belong to this plan revision -- *before* any advisor, observer
   or step callback runs (:class:`ApprovalMissing`, :class:`UnexpectedApproval`,
   :class:`StaleRevision`);
2. steps run in :attr:`Plan.order` (repeatedly the first declared step whose dependencies are
   done).  A denied step, and every step depending on one that did not succeed, is recorded
   and not run;
3. for a step that runs: the run control is checked, the optional advisor gives advice, the
   observer hears ``step_started``, the step callback returns its output (or a
   :class:`StepOutput` with usage), the output is bounded and copied, the observer hears the
   outcome.

Invariants: one :class:`RunControl` is shared by every callback (through :class:`StepContext`
and :class:`PlanEvent`); a callback's own exception propagates unwrapped and ends the
execution; outputs, advice and the aggregate usage are owned by the returned
:class:`PlanExecution` (frozen copies; plain copies handed out on read); every output and
advice is bounded JSON (:class:`ExecutionLimits`), checked before it is kept.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from zigai import json as zjson
from zigai._owner import Owner
from zigai.control import RunControl
from zigai.json import defaults as json_defaults
from zigai.planning.errors import (
    ApprovalMissing,
    InvalidStepOutput,
    PlanExecutionClosed,
    StaleRevision,
    StepOutputTooLarge,
    UnexpectedApproval,
)
from zigai.planning.plan import Plan, PlanStep, freeze_json, thaw_json
from zigai.usage import RunUsage

__all__ = [
    "Approvals",
    "ExecutionLimits",
    "StepStatus",
    "StepContext",
    "StepOutput",
    "StepResult",
    "PlanEvent",
    "PlanExecution",
    "execute_plan",
]

_MIB = 1024 * 1024


class StepStatus(enum.Enum):
    succeeded = "succeeded"
    denied = "denied"
    skipped = "skipped"


@dataclass(frozen=True, slots=True)
class Approvals:
    """Decisions for the approval-requiring steps of one plan revision.

    ``approved`` holds step ids; ``denied`` maps step ids to a reason (may be empty).
    """

    plan_id: str
    revision: int
    approved: frozenset[str] = frozenset()
    denied: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        object.__setattr__(self, "approved", frozenset(self.approved))
        object.__setattr__(self, "denied", MappingProxyType(dict(self.denied)))
        both = sorted(self.approved & set(self.denied))
        if both:
            raise UnexpectedApproval(f"steps {both} are both approved and denied", step_ids=tuple(both))

    @classmethod
    def for_plan(cls, plan: Plan, *, approved: Iterable[str] = (), denied: Mapping[str, str] | None = None) -> Approvals:
        return cls(plan.plan_id, plan.revision, frozenset(approved), dict(denied or {}))

    @classmethod
    def approve_all(cls, plan: Plan) -> Approvals:
        """Approve every step of ``plan`` that requires approval."""
        return cls.for_plan(plan, approved=(s.id for s in plan.steps if s.requires_approval))


@dataclass(frozen=True, slots=True)
class ExecutionLimits:
    """Bounds of what an execution keeps.  Exactly-at-limit is accepted; one more fails."""

    step_output: zjson.Limits = json_defaults.tool_payload
    advice: zjson.Limits = json_defaults.tool_payload
    max_total_output_bytes: int = 16 * _MIB

    def __post_init__(self) -> None:
        if not isinstance(self.step_output, zjson.Limits) or not isinstance(self.advice, zjson.Limits):
            raise ValueError("ExecutionLimits.step_output and .advice must be zigai.json.Limits")
        if type(self.max_total_output_bytes) is not int or self.max_total_output_bytes <= 0:
            raise ValueError("ExecutionLimits.max_total_output_bytes must be an int > 0")


@dataclass(frozen=True, slots=True)
class StepOutput:
    """What a step callback may return instead of a bare value: the value and its usage."""

    value: Any = None
    usage: RunUsage = field(default_factory=RunUsage)


@dataclass(frozen=True, slots=True)
class StepContext:
    """What the advisor and the step callback see.

    ``inputs`` maps each dependency id to a plain copy of its output; ``advice`` is the
    advisor's answer (``None`` while the advisor runs); ``trace_parent`` and ``scope`` (a
    multi-agent scope) are carried explicitly from :func:`execute_plan`.
    """

    plan: Plan
    step: PlanStep
    control: RunControl
    inputs: Mapping[str, Any]
    usage: RunUsage
    advice: Any = None
    trace_parent: str | None = None
    scope: str | None = None


@dataclass(frozen=True, slots=True)
class PlanEvent:
    """An observer notification: ``kind`` and the step it concerns (``None`` for the plan)."""

    kind: Literal["step_started", "step_succeeded", "step_denied", "step_skipped", "plan_finished"]
    plan_id: str
    revision: int
    step_id: str | None
    control: RunControl


@dataclass(frozen=True, slots=True)
class StepResult:
    """One step's record: status, frozen output and advice, its usage, why it did not run."""

    step_id: str
    status: StepStatus
    output: Any = None
    advice: Any = None
    usage: RunUsage = field(default_factory=RunUsage)
    reason: str = ""

    def output_copy(self) -> Any:
        return thaw_json(self.output)


class PlanExecution(Owner):
    """The owned outcome of one :func:`execute_plan`: step results in execution order, usage."""

    __slots__ = ("_plan_id", "_revision", "_results", "_usage")
    _closed_error = PlanExecutionClosed

    def __init__(self, plan: Plan, results: tuple[StepResult, ...], usage: RunUsage) -> None:
        super().__init__()
        self._plan_id = plan.plan_id
        self._revision = plan.revision
        self._results: tuple[StepResult, ...] | None = results
        self._usage = usage

    def _release(self) -> None:
        self._results = None

    @property
    def plan_id(self) -> str:
        return self._plan_id

    @property
    def revision(self) -> int:
        return self._revision

    @property
    def results(self) -> tuple[StepResult, ...]:
        self._check()
        assert self._results is not None
        return self._results

    @property
    def usage(self) -> RunUsage:
        self._check()
        return self._usage

    def result(self, step_id: str) -> StepResult:
        for item in self.results:
            if item.step_id == step_id:
                return item
        raise KeyError(step_id)

    def output(self, step_id: str) -> Any:
        """A plain copy of ``step_id``'s output (``None`` when it did not run)."""
        return self.result(step_id).output_copy()

    def to_json_value(self) -> dict[str, Any]:
        steps = []
        for item in self.results:
            entry: dict[str, Any] = {"id": item.step_id, "status": item.status.value}
            if item.status is StepStatus.succeeded:
                entry["output"] = item.output_copy()
                if item.advice is not None:
                    entry["advice"] = thaw_json(item.advice)
            else:
                entry["reason"] = item.reason
            steps.append(entry)
        return {"plan_id": self._plan_id, "revision": self._revision, "steps": steps}


StepCallback = Callable[[StepContext], Any]
Advisor = Callable[[StepContext], Any]
Observer = Callable[[PlanEvent], None]


def execute_plan(
    plan: Plan,
    run_step: StepCallback,
    *,
    approvals: Approvals | None = None,
    advisor: Advisor | None = None,
    observer: Observer | None = None,
    control: RunControl | None = None,
    trace_parent: str | None = None,
    scope: str | None = None,
    limits: ExecutionLimits | None = None,
) -> PlanExecution:
    """Run ``plan``'s steps through ``run_step``; see the module docstring for the order of events."""
    if not isinstance(plan, Plan):
        raise TypeError(f"execute_plan expects a Plan, got {type(plan).__name__}")
    denied = _check_approvals(plan, approvals)
    control = control if control is not None else RunControl()
    bounds = limits if limits is not None else ExecutionLimits()
    steps = {step.id: step for step in plan.steps}
    results: dict[str, StepResult] = {}
    usage = RunUsage()
    total_bytes = 0

    def notify(kind: Any, step_id: str | None) -> None:
        if observer is not None:
            observer(PlanEvent(kind, plan.plan_id, plan.revision, step_id, control))

    for step_id in plan.order:
        step = steps[step_id]
        if step_id in denied:
            results[step_id] = StepResult(step_id, StepStatus.denied, reason=denied[step_id] or "denied")
            notify("step_denied", step_id)
            continue
        blocked = next((dep for dep in step.depends_on if results[dep].status is not StepStatus.succeeded), None)
        if blocked is not None:
            results[step_id] = StepResult(step_id, StepStatus.skipped,
                                          reason=f"dependency {blocked!r} was {results[blocked].status.value}")
            notify("step_skipped", step_id)
            continue
        control.check()
        if total_bytes >= bounds.max_total_output_bytes:  # any JSON output takes at least one byte
            raise StepOutputTooLarge(f"plan {plan.plan_id!r}: outputs reached {bounds.max_total_output_bytes} "
                                     f"bytes in total before step {step_id!r}; it was not run", step_id=step_id,
                                     limit=bounds.max_total_output_bytes)
        context = StepContext(plan, step, control,
                              MappingProxyType({dep: results[dep].output_copy() for dep in step.depends_on}),
                              usage, None, trace_parent, scope)
        advice = None
        if advisor is not None:
            advice = _bounded(advisor(context), bounds.advice, step_id, "advice")[0]
            context = StepContext(plan, step, control, context.inputs, usage, thaw_json(advice),
                                  trace_parent, scope)
            control.check()
        notify("step_started", step_id)
        produced = run_step(context)
        step_usage = RunUsage()
        if isinstance(produced, StepOutput):
            if not isinstance(produced.usage, RunUsage):
                raise InvalidStepOutput(f"step {step_id!r}: StepOutput.usage must be a RunUsage", step_id=step_id)
            step_usage, produced = produced.usage, produced.value
        output, size = _bounded(produced, bounds.step_output, step_id, "output")
        total_bytes += size
        if total_bytes > bounds.max_total_output_bytes:
            raise StepOutputTooLarge(f"plan {plan.plan_id!r}: outputs exceed {bounds.max_total_output_bytes} "
                                     f"bytes in total at step {step_id!r}", step_id=step_id,
                                     limit=bounds.max_total_output_bytes)
        usage = usage + step_usage
        results[step_id] = StepResult(step_id, StepStatus.succeeded, output, advice, step_usage)
        notify("step_succeeded", step_id)
    notify("plan_finished", None)
    return PlanExecution(plan, tuple(results[step_id] for step_id in plan.order), usage)


def _check_approvals(plan: Plan, approvals: Approvals | None) -> Mapping[str, str]:
    needed = {step.id for step in plan.steps if step.requires_approval}
    if approvals is None:
        approvals = Approvals(plan.plan_id, plan.revision)
    elif not isinstance(approvals, Approvals):
        raise TypeError(f"approvals must be Approvals, got {type(approvals).__name__}")
    if approvals.plan_id != plan.plan_id:
        raise UnexpectedApproval(f"approvals are for plan {approvals.plan_id!r}, not {plan.plan_id!r}")
    if approvals.revision != plan.revision:
        raise StaleRevision(f"approvals were given for revision {approvals.revision} of plan {plan.plan_id!r}, "
                            f"which is now at revision {plan.revision}; approve the current revision",
                            expected=approvals.revision, actual=plan.revision)
    decided = approvals.approved | set(approvals.denied)
    unexpected = tuple(sorted(decided - needed))
    if unexpected:
        raise UnexpectedApproval(f"plan {plan.plan_id!r}: decisions for steps that do not require approval "
                                 f"or do not exist: {list(unexpected)}", step_ids=unexpected)
    missing = tuple(step.id for step in plan.steps if step.id in needed - decided)
    if missing:
        raise ApprovalMissing(f"plan {plan.plan_id!r}: steps {list(missing)} require approval; decide each "
                              "before executing", step_ids=missing)
    return approvals.denied


def _bounded(value: Any, limits: zjson.Limits, step_id: str, what: str) -> tuple[Any, int]:
    """Check ``value`` is JSON within ``limits``; return a frozen copy and its encoded size."""
    try:
        text = zjson.dumps(value)
    except zjson.ValidationError as exc:
        raise InvalidStepOutput(f"step {step_id!r}: {what} is not a JSON value ({exc})", step_id=step_id) from None
    try:
        copy = zjson.parse(text, limits)
    except zjson.JsonLimitExceeded as exc:
        raise StepOutputTooLarge(f"step {step_id!r}: {what} exceeds its limits ({exc})", step_id=step_id,
                                 limit=exc.limit or 0) from None
    return freeze_json(copy, f"step {step_id!r} {what}"), len(text.encode("utf-8"))
