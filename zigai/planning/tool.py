"""``plan_tool``: dynamic workflows as an ordinary approval-gated function tool.

The model proposes a plan as the tool's arguments; because the tool's execution is
``requires_approval``, the agent pauses before running it, and the person (or policy) who
approves the call approves the plan exactly as shown -- every step that asks for approval is
covered by that one decision.  The plan then runs through :func:`execute_plan` under the
agent run's own :class:`RunControl`, so the run's deadline and cancellation reach every step;
each step context's ``trace_parent`` is the tool call id, which ties the steps to the call in
history and in traces.

Invariants: no new orchestration path -- approvals, UI handoff, durable tool semantics and
history are the agent's; a malformed plan goes back to the model as :class:`ModelRetry`
(nothing runs); the result is the bounded JSON of :meth:`PlanExecution.to_json_value`.
"""

from __future__ import annotations

from typing import Any

from zigai.planning.errors import InvalidPlan
from zigai.planning.execute import Advisor, Approvals, ExecutionLimits, StepCallback, execute_plan
from zigai.planning.plan import Plan, PlanLimits
from zigai.tool import ModelRetry, Tool, ToolExecution, ToolRunContext

__all__ = ["plan_tool", "PLAN_PARAMETERS_SCHEMA"]

PLAN_PARAMETERS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "plan_id": {"type": "string", "minLength": 1},
        "steps": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "minLength": 1},
                    "description": {"type": "string"},
                    "depends_on": {"type": "array", "items": {"type": "string"}},
                    "requires_approval": {"type": "boolean"},
                    "input": {},
                },
                "required": ["id"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["plan_id", "steps"],
    "additionalProperties": False,
}


def plan_tool(
    run_step: StepCallback,
    *,
    name: str = "run_plan",
    description: str = "Propose a plan of steps with dependencies; it runs once approved.",
    advisor: Advisor | None = None,
    plan_limits: PlanLimits | None = None,
    execution_limits: ExecutionLimits | None = None,
    scope: str | None = None,
) -> Tool:
    """An approval-gated tool ``name(plan_id, steps)`` running the approved plan step by step."""

    def run(args: dict[str, Any], ctx: ToolRunContext) -> dict[str, Any]:
        try:
            plan = Plan.from_json_value({"plan_id": args["plan_id"], "steps": args["steps"]}, limits=plan_limits)
        except InvalidPlan as exc:
            raise ModelRetry(f"the plan is invalid: {exc}") from None
        with execute_plan(plan, run_step, approvals=Approvals.approve_all(plan), advisor=advisor,
                          control=ctx.control, trace_parent=ctx.tool_call_id or None, scope=scope,
                          limits=execution_limits) as execution:
            return execution.to_json_value()

    return Tool.manual(name, description, PLAN_PARAMETERS_SCHEMA, run, takes_context=True,
                       execution=ToolExecution.requires_approval)
