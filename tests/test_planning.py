"""zigai.planning: plan validation, visible revisions, approval-first execution, the plan tool."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from zigai import json as zjson
from zigai.agent import Agent, ResumeDecision
from zigai.control import CancellationToken, Cancelled, RunControl
from zigai.json import Limits
from zigai.messages import (
    RequestMessage,
    ResponseMessage,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from zigai.planning import (
    ApprovalMissing,
    Approvals,
    DuplicateStepId,
    ExecutionLimits,
    InvalidPlan,
    InvalidStepOutput,
    Plan,
    PlanBoard,
    PlanCycle,
    PlanEvent,
    PlanExecutionClosed,
    PlanLimits,
    PlanStep,
    PlanTooLarge,
    StaleRevision,
    StepContext,
    StepOutput,
    StepOutputTooLarge,
    StepStatus,
    UnexpectedApproval,
    UnknownDependency,
    UnknownPlan,
    execute_plan,
    plan_tool,
)
from zigai.testing import FunctionModel
from zigai.tool import ToolExecution
from zigai.usage import RunUsage


def _steps(*specs: tuple[str, tuple[str, ...]]) -> list[PlanStep]:
    return [PlanStep(step_id, depends_on=deps) for step_id, deps in specs]


def _echo(ctx: StepContext) -> dict[str, Any]:
    return {"step": ctx.step.id, "inputs": dict(ctx.inputs)}


# -- plan values and validation ---------------------------------------------------------------


def test_order_is_the_first_declared_ready_step_each_time() -> None:
    plan = Plan.create("p", _steps(("report", ("fetch", "parse")), ("parse", ("fetch",)), ("fetch", ()),
                                   ("notify", ())))
    assert plan.order == ("fetch", "parse", "report", "notify")
    assert plan.revision == 1 and plan.step("parse").depends_on == ("fetch",)
    with pytest.raises(KeyError):
        plan.step("missing")


@pytest.mark.parametrize(("steps", "error", "attribute", "value"), [
    (_steps(("a", ()), ("a", ())), DuplicateStepId, "step_id", "a"),
    (_steps(("a", ("ghost",))), UnknownDependency, "dependency", "ghost"),
    (_steps(("a", ("a",))), PlanCycle, "cycle", ("a", "a")),
    (_steps(("x", ()), ("a", ("c",)), ("b", ("a",)), ("c", ("b",))), PlanCycle, "cycle", ("a", "c", "b", "a")),
])
def test_invalid_graphs_are_refused_with_the_offending_ids(steps: list[PlanStep], error: type[Exception],
                                                          attribute: str, value: Any) -> None:
    with pytest.raises(error) as info:
        Plan.create("p", steps)
    assert isinstance(info.value, InvalidPlan)
    assert getattr(info.value, attribute) == value


@pytest.mark.parametrize("make", [
    lambda: PlanStep(""),
    lambda: PlanStep("has space"),
    lambda: PlanStep("a", description=3),  # type: ignore[arg-type]
    lambda: PlanStep("a", depends_on="b"),  # type: ignore[arg-type]
    lambda: PlanStep("a", depends_on=("b", "b")),
    lambda: PlanStep("a", depends_on=("bad id",)),
    lambda: PlanStep("a", requires_approval=1),  # type: ignore[arg-type]
    lambda: PlanStep("a", input={1: "x"}),
    lambda: PlanStep("a", input={"x": {1, 2}}),
    lambda: PlanStep("a", input=float("nan")),
    lambda: Plan.create("p", []),
    lambda: Plan.create("bad id", _steps(("a", ()))),
    lambda: Plan("p", _steps(("a", ())), 0),
    lambda: Plan("p", "ab"),  # type: ignore[arg-type]
    lambda: Plan("p", _steps(("a", ())), 1, "limits"),  # type: ignore[arg-type]
    lambda: Plan.create("p", ["a"]),  # type: ignore[list-item]
])
def test_malformed_steps_and_plans_are_invalid(make: Any) -> None:
    with pytest.raises(InvalidPlan):
        make()


def test_limits_hold_at_the_limit_and_fail_one_past() -> None:
    limits = PlanLimits(max_steps=3, max_dependencies=2, max_id_chars=4, max_description_chars=5,
                        step_input=Limits(12, 12, 4, 4))
    ok = [PlanStep("aaaa", description="12345", input="1234567890"), PlanStep("b"),
          PlanStep("c", depends_on=("aaaa", "b"))]
    assert Plan.create("p", ok, limits=limits).order == ("aaaa", "b", "c")
    too_many = [PlanStep(x) for x in "abcd"]
    cases = [
        too_many,
        [PlanStep("aaaaa")],
        [PlanStep("a", description="123456")],
        [PlanStep("a"), PlanStep("b"), PlanStep("c", depends_on=("a", "b", "c"))],
        [PlanStep("a", input="12345678901")],
    ]
    for steps in cases:
        with pytest.raises(PlanTooLarge) as info:
            Plan.create("p", steps, limits=limits)
        assert info.value.limit in (3, 4, 5, 2, 12)
    with pytest.raises(PlanTooLarge):
        Plan.create("ppppp", [PlanStep("a")], limits=limits)
    for bad in ({"max_steps": 0}, {"max_id_chars": True}, {"step_input": 5}):
        with pytest.raises(ValueError):
            PlanLimits(**bad)  # type: ignore[arg-type]


def test_step_inputs_are_frozen_copies() -> None:
    source = {"urls": ["a"], "opts": {"depth": 1}}
    step = PlanStep("fetch", input=source)
    source["urls"].append("b")
    assert step.input["urls"] == ("a",)
    with pytest.raises(TypeError):
        step.input["opts"]["depth"] = 2  # type: ignore[index]
    copy = step.input_copy()
    copy["urls"].append("c")
    assert step.input_copy() == {"urls": ["a"], "opts": {"depth": 1}}


def test_revise_validates_before_the_new_revision_exists() -> None:
    plan = Plan.create("p", _steps(("a", ())))
    second = plan.revise(_steps(("a", ()), ("b", ("a",))))
    assert (second.revision, second.order) == (2, ("a", "b"))
    assert plan.revision == 1 and plan.order == ("a",)
    with pytest.raises(UnknownDependency):
        second.revise(_steps(("a", ("zzz",))))


def test_json_round_trip_and_refusals() -> None:
    plan = Plan.create("p", [PlanStep("a", "fetch", (), True, {"n": 1}), PlanStep("b", depends_on=("a",))])
    again = Plan.from_json(plan.to_json())
    assert again == plan and again.step("a").requires_approval
    assert json.loads(plan.to_json())["steps"][1] == {"id": "b", "depends_on": ["a"]}
    for bad in ('{"plan_id":"p","steps":[],"extra":1}', '{"plan_id":"p","steps":{}}', "[1]",
                '{"plan_id":"p","steps":[3]}', '{"plan_id":"p","steps":[{"id":"a","x":1}]}',
                '{"plan_id":"p","steps":[{"id":"a","depends_on":"b"}]}', '{"plan_id":'):
        with pytest.raises(InvalidPlan):
            Plan.from_json(bad)
    with pytest.raises(PlanTooLarge):
        Plan.from_json(json.dumps({"plan_id": "p", "steps": [{"id": "a"}, {"id": "b"}]}),
                       limits=PlanLimits(max_steps=1))


# -- the board: visible revisions ---------------------------------------------------------------


def test_board_publishes_optimistic_revisions() -> None:
    board = PlanBoard()
    first = board.create("p", _steps(("a", ())))
    assert board.current("p") is first and board.plan_ids() == ("p",)
    with pytest.raises(StaleRevision):
        board.create("p", _steps(("a", ())))
    second = board.revise("p", _steps(("a", ()), ("b", ())), expected_revision=1)
    assert board.current("p") is second
    with pytest.raises(StaleRevision) as info:
        board.revise("p", _steps(("c", ())), expected_revision=1)
    assert (info.value.expected, info.value.actual) == (1, 2)
    with pytest.raises(PlanCycle):
        board.revise("p", _steps(("a", ("a",))), expected_revision=2)
    assert board.current("p") is second  # an invalid revision never became visible
    with pytest.raises(UnknownPlan):
        board.current("q")


def test_board_refuses_a_revision_overtaken_while_it_was_validated() -> None:
    board = PlanBoard()
    board.create("p", _steps(("a", ())))

    class Racing(list[PlanStep]):
        def __iter__(self) -> Iterator[PlanStep]:
            board.revise("p", _steps(("other", ())), expected_revision=1)
            return super().__iter__()

    with pytest.raises(StaleRevision) as info:
        board.revise("p", Racing(_steps(("mine", ()))), expected_revision=1)
    assert info.value.actual == 2
    assert board.current("p").order == ("other",)


# -- execution --------------------------------------------------------------------------------


def _gated() -> Plan:
    return Plan.create("deploy", [
        PlanStep("build"),
        PlanStep("migrate", depends_on=("build",), requires_approval=True),
        PlanStep("release", depends_on=("migrate",)),
        PlanStep("announce", requires_approval=True),
    ])


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def step(self, ctx: StepContext) -> Any:
        self.calls.append(f"step:{ctx.step.id}")
        return _echo(ctx)

    def advisor(self, ctx: StepContext) -> Any:
        self.calls.append(f"advice:{ctx.step.id}")
        return f"careful with {ctx.step.id}"

    def observer(self, event: PlanEvent) -> None:
        self.calls.append(f"{event.kind}:{event.step_id}")


@pytest.mark.parametrize(("approvals", "error"), [
    (None, ApprovalMissing),
    (Approvals("deploy", 1, frozenset({"migrate"})), ApprovalMissing),
    (Approvals("deploy", 1, frozenset({"migrate", "announce", "build"})), UnexpectedApproval),
    (Approvals("deploy", 1, frozenset({"migrate", "announce", "ghost"})), UnexpectedApproval),
    (Approvals("deploy", 2, frozenset({"migrate", "announce"})), StaleRevision),
    (Approvals("other", 1, frozenset({"migrate", "announce"})), UnexpectedApproval),
])
def test_every_approval_is_checked_before_any_callback(approvals: Approvals | None, error: type[Exception]) -> None:
    recorder = _Recorder()
    with pytest.raises(error):
        execute_plan(_gated(), recorder.step, approvals=approvals, advisor=recorder.advisor,
                     observer=recorder.observer)
    assert recorder.calls == []


def test_missing_approvals_are_named_in_declaration_order() -> None:
    with pytest.raises(ApprovalMissing) as info:
        execute_plan(_gated(), _echo)
    assert info.value.step_ids == ("migrate", "announce")
    with pytest.raises(UnexpectedApproval):
        Approvals("deploy", 1, frozenset({"migrate"}), {"migrate": "no"})
    with pytest.raises(TypeError):
        execute_plan(_gated(), _echo, approvals={"migrate": True})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        execute_plan({"plan_id": "p"}, _echo)  # type: ignore[arg-type]


def test_denied_steps_and_their_dependents_do_not_run() -> None:
    recorder = _Recorder()
    plan = _gated()
    approvals = Approvals.for_plan(plan, approved={"announce"}, denied={"migrate": "not on a Friday"})
    with execute_plan(plan, recorder.step, approvals=approvals, advisor=recorder.advisor,
                      observer=recorder.observer) as execution:
        assert [(r.step_id, r.status, r.reason) for r in execution.results] == [
            ("build", StepStatus.succeeded, ""),
            ("migrate", StepStatus.denied, "not on a Friday"),
            ("release", StepStatus.skipped, "dependency 'migrate' was denied"),
            ("announce", StepStatus.succeeded, ""),
        ]
        assert execution.output("release") is None
        assert execution.result("announce").advice == "careful with announce"
        assert execution.to_json_value()["steps"][1] == {"id": "migrate", "status": "denied",
                                                         "reason": "not on a Friday"}
        with pytest.raises(KeyError):
            execution.result("ghost")
    assert recorder.calls == [
        "advice:build", "step_started:build", "step:build", "step_succeeded:build",
        "step_denied:migrate", "step_skipped:release",
        "advice:announce", "step_started:announce", "step:announce", "step_succeeded:announce",
        "plan_finished:None",
    ]
    skipped_after_skip = Plan.create("p", [PlanStep("a", requires_approval=True), PlanStep("b", depends_on=("a",)),
                                           PlanStep("c", depends_on=("b",))])
    with execute_plan(skipped_after_skip, _echo, approvals=Approvals.for_plan(skipped_after_skip,
                                                                              denied={"a": ""})) as execution:
        assert [r.reason for r in execution.results] == ["denied", "dependency 'a' was denied",
                                                         "dependency 'b' was skipped"]


def test_steps_see_copies_of_their_dependencies_outputs_and_the_advice() -> None:
    seen: dict[str, Any] = {}

    def step(ctx: StepContext) -> Any:
        seen[ctx.step.id] = (dict(ctx.inputs), ctx.advice, ctx.trace_parent, ctx.scope)
        for value in ctx.inputs.values():
            value["tampered"] = True
        return {"made_by": ctx.step.id}

    plan = Plan.create("p", _steps(("a", ()), ("b", ("a",))))
    with execute_plan(plan, step, advisor=lambda ctx: {"hint": ctx.step.id}, trace_parent="00-trace-01",
                      scope="team/researcher") as execution:
        assert execution.output("a") == {"made_by": "a"}
        copy = execution.output("a")
        copy["x"] = 1
        assert execution.output("a") == {"made_by": "a"}
    assert seen["b"] == ({"a": {"made_by": "a", "tampered": True}}, {"hint": "b"}, "00-trace-01",
                         "team/researcher")
    assert seen["a"][0] == {}


def test_one_run_control_spans_every_callback_and_stops_between_steps() -> None:
    token = CancellationToken()
    control = RunControl(token=token)
    controls: list[RunControl] = []
    ran: list[str] = []

    def step(ctx: StepContext) -> str:
        controls.append(ctx.control)
        ran.append(ctx.step.id)
        if ctx.step.id == "a":
            token.cancel("operator stopped the plan")
        return "ok"

    def observer(event: PlanEvent) -> None:
        controls.append(event.control)

    plan = Plan.create("p", _steps(("a", ()), ("b", ())))
    with pytest.raises(Cancelled, match="operator stopped the plan"):
        execute_plan(plan, step, observer=observer, advisor=lambda ctx: controls.append(ctx.control),
                     control=control)
    assert ran == ["a"]
    assert controls and all(c is control for c in controls)


def test_cancellation_during_advice_stops_before_the_step() -> None:
    token = CancellationToken()
    ran: list[str] = []
    plan = Plan.create("p", _steps(("a", ())))
    with pytest.raises(Cancelled):
        execute_plan(plan, lambda ctx: ran.append("a"), advisor=lambda ctx: token.cancel(),
                     control=RunControl(token=token))
    assert ran == []


def test_callback_exceptions_propagate_unwrapped() -> None:
    class Boom(Exception):
        pass

    def step(ctx: StepContext) -> Any:
        raise Boom(ctx.step.id)

    with pytest.raises(Boom, match="a"):
        execute_plan(Plan.create("p", _steps(("a", ()))), step)


def test_outputs_are_bounded_at_the_limit_and_one_past() -> None:
    plan = Plan.create("p", _steps(("a", ())))
    limits = ExecutionLimits(step_output=Limits(12, 12, 4, 4))
    with execute_plan(plan, lambda ctx: "x" * 10, limits=limits) as execution:  # '"xxxxxxxxxx"' = 12 bytes
        assert execution.output("a") == "x" * 10
    with pytest.raises(StepOutputTooLarge) as info:
        execute_plan(plan, lambda ctx: "x" * 11, limits=limits)
    assert (info.value.step_id, info.value.limit) == ("a", 12)
    with pytest.raises(StepOutputTooLarge):
        execute_plan(plan, lambda ctx: "ok", advisor=lambda ctx: "y" * 11,
                     limits=ExecutionLimits(advice=Limits(12, 12, 4, 4)))
    two = Plan.create("p", _steps(("a", ()), ("b", ())))
    total = ExecutionLimits(max_total_output_bytes=24)
    with execute_plan(two, lambda ctx: "x" * 10, limits=total) as execution:
        assert len(execution.results) == 2
    with pytest.raises(StepOutputTooLarge) as info:
        execute_plan(two, lambda ctx: "x" * 10 if ctx.step.id == "a" else "x" * 11, limits=total)
    assert info.value.step_id == "b"
    for bad in ({"max_total_output_bytes": 0}, {"step_output": 3}):
        with pytest.raises(ValueError):
            ExecutionLimits(**bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("produced", [object(), {"x": float("inf")}, StepOutput("v", usage=3)])  # type: ignore[arg-type]
def test_non_json_outputs_are_refused(produced: Any) -> None:
    with pytest.raises(InvalidStepOutput):
        execute_plan(Plan.create("p", _steps(("a", ()))), lambda ctx: produced)


def test_usage_is_aggregated_and_owned_by_the_execution() -> None:
    plan = Plan.create("p", _steps(("a", ()), ("b", ("a",))))
    seen: list[RunUsage] = []

    def step(ctx: StepContext) -> StepOutput:
        seen.append(ctx.usage)
        return StepOutput(ctx.step.id, RunUsage(requests=1, input_tokens=10, output_tokens=2))

    execution = execute_plan(plan, step)
    with execution:
        assert execution.usage == RunUsage(requests=2, input_tokens=20, output_tokens=4)
        assert execution.result("b").usage.requests == 1
        assert (execution.plan_id, execution.revision) == ("p", 1)
    assert seen[1].requests == 1
    assert execution.closed
    for use in (lambda: execution.results, lambda: execution.usage, lambda: execution.output("a")):
        with pytest.raises(PlanExecutionClosed):
            use()


# -- the capability adapter: an approval-gated tool in a real agent ------------------------------


PLAN_ARGS = json.dumps({"plan_id": "trip", "steps": [
    {"id": "flights", "input": {"to": "Lisbon"}},
    {"id": "hotel", "depends_on": ["flights"], "requires_approval": True},
]})


def _planner(args: str) -> Any:
    def model(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        parts = [p for m in messages if isinstance(m, RequestMessage) for p in m.parts]
        returns = [p for p in parts if isinstance(p, ToolReturnPart)]
        retries = [p for p in parts if isinstance(p, RetryPromptPart)]
        if returns:
            return ResponseMessage((TextPart(zjson.dumps(returns[-1].content)),))
        if retries:
            return ResponseMessage((ToolCallPart("run_plan", PLAN_ARGS, "call-2"),))
        return ResponseMessage((ToolCallPart("run_plan", args, "call-1"),))

    return model


def test_plan_tool_waits_for_approval_then_runs_under_the_agent_run() -> None:
    ran: list[tuple[str, Any, str | None]] = []

    def step(ctx: StepContext) -> str:
        ran.append((ctx.step.id, ctx.step.input_copy(), ctx.trace_parent))
        return f"booked {ctx.step.id}"

    tool = plan_tool(step)
    assert tool.execution is ToolExecution.requires_approval
    agent = Agent(FunctionModel(_planner(PLAN_ARGS)), tools=[tool])
    with agent.run_until_pause("plan my trip") as outcome:
        assert outcome.kind == "paused"
        assert [json.loads(c.args)["plan_id"] for c in outcome.paused.calls] == ["trip"]
        state = outcome.paused.state_json
    assert ran == []
    with agent.resume_run(state, [ResumeDecision.approve("call-1")]) as outcome:
        assert json.loads(outcome.result.output) == {"plan_id": "trip", "revision": 1, "steps": [
            {"id": "flights", "status": "succeeded", "output": "booked flights"},
            {"id": "hotel", "status": "succeeded", "output": "booked hotel"},
        ]}
    assert ran == [("flights", {"to": "Lisbon"}, "call-1"), ("hotel", None, "call-1")]


def test_a_denied_plan_call_runs_no_step() -> None:
    ran: list[str] = []
    agent = Agent(FunctionModel(_planner(PLAN_ARGS)), tools=[plan_tool(lambda ctx: ran.append(ctx.step.id))])
    with agent.run_until_pause("plan") as outcome:
        state = outcome.paused.state_json
    with agent.resume_run(state, [ResumeDecision.deny("call-1", "too expensive")]) as outcome:
        assert "too expensive" in outcome.result.output
    assert ran == []


def test_an_invalid_plan_goes_back_to_the_model_as_a_retry() -> None:
    cyclic = json.dumps({"plan_id": "trip", "steps": [{"id": "a", "depends_on": ["a"]}]})
    ran: list[str] = []
    agent = Agent(FunctionModel(_planner(cyclic)), tools=[plan_tool(lambda ctx: ran.append(ctx.step.id) or "ok")])
    with agent.run_until_pause("plan") as outcome:
        state = outcome.paused.state_json
    with agent.resume_run(state, [ResumeDecision.approve("call-1")]) as outcome:
        paused = outcome.paused
        assert outcome.kind == "paused" and [c.tool_call_id for c in paused.calls] == ["call-2"]
        retry = [p for m in paused.messages for p in getattr(m, "parts", ()) if isinstance(p, RetryPromptPart)]
        assert "cycle" in str(retry[0].content)
    assert ran == []


def test_plan_tool_stops_with_the_agent_run_control() -> None:
    started = threading.Event()

    def step(ctx: StepContext) -> str:
        started.set()
        ctx.control.token.cancel("run cancelled by the user")
        return "done"

    agent = Agent(FunctionModel(_planner(PLAN_ARGS)), tools=[plan_tool(step)])
    with agent.run_until_pause("plan") as outcome:
        state = outcome.paused.state_json
    with pytest.raises(Cancelled):
        agent.resume_run(state, [ResumeDecision.approve("call-1")])
    assert started.is_set()
