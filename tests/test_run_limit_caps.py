"""Cumulative token limits are caps: once a run's tokens reach a limit, no further model
request is made, also when the usage was carried over from a pause; and a session's budgets
bound each run inside it, not only the start of the next (issue 31, defect 2's class).
Token counts are only known from a response, so the response that crosses a limit is paid
for; the next one never is.
"""

from __future__ import annotations

import pytest
from support.agent_script import Script, call, reply

from zigai.agent import (
    Agent,
    ResumeDecision,
    RunLimits,
    RunOptions,
    TokenLimitExceeded,
    UsageLimitExceeded,
)
from zigai.messages import ResponseMessage, ToolCallPart
from zigai.multi_agent import Session, SessionBudgetExceeded, SessionLimits
from zigai.planning import ExecutionLimits, Plan, PlanStep, StepOutputTooLarge, execute_plan
from zigai.reflect import tool
from zigai.testing import FunctionModel
from zigai.usage import RequestUsage

USAGE = RequestUsage(input_tokens=10, output_tokens=5)  # 15 in total
REACHED = {"max_input_tokens": 10, "max_output_tokens": 5, "max_total_tokens": 15}


def _echo(text: str) -> str:
    """Echo the text."""
    return text


@pytest.mark.parametrize("name", sorted(REACHED))
def test_a_reached_token_limit_refuses_the_next_model_request(name: str) -> None:
    script = Script([reply(call("echo", {"text": "a"}, "1"), usage=USAGE), reply("done", usage=USAGE)])
    agent = Agent(script.model, tools=[tool("echo", None, _echo)], limits=RunLimits(**{name: REACHED[name]}))
    with pytest.raises(TokenLimitExceeded) as caught:
        agent.run("go")
    assert len(script.requests) == 1  # the second, paid request is never sent
    assert (caught.value.limit_name, caught.value.limit, caught.value.value) == (name, REACHED[name], REACHED[name])
    assert "next model request" in str(caught.value)
    assert isinstance(caught.value, UsageLimitExceeded)


@pytest.mark.parametrize("name", sorted(REACHED))
def test_one_token_of_headroom_allows_the_next_request_and_crossing_still_raises(name: str) -> None:
    script = Script([reply(call("echo", {"text": "a"}, "1"), usage=USAGE), reply("done", usage=USAGE)])
    agent = Agent(script.model, tools=[tool("echo", None, _echo)], limits=RunLimits(**{name: REACHED[name] + 1}))
    with pytest.raises(TokenLimitExceeded) as caught:
        agent.run("go")
    assert len(script.requests) == 2
    assert "exceeded" in str(caught.value) and caught.value.value == 2 * REACHED[name]


def test_a_final_answer_at_exactly_the_limit_still_completes() -> None:
    script = Script([reply("done", usage=USAGE)])
    with Agent(script.model, limits=RunLimits(max_total_tokens=15)).run("go") as result:
        assert result.output == "done" and result.usage.total_tokens == 15


def test_a_resumed_run_whose_carried_usage_reached_the_limit_makes_no_request() -> None:
    approve = tool("approve_me", None, _echo, execution="requires_approval")
    script = Script([reply(call("approve_me", {"text": "a"}, "1"), usage=USAGE), reply("done", usage=USAGE)])
    agent = Agent(script.model, tools=[approve])
    with agent.run_until_pause("go") as outcome:
        assert outcome.is_paused
        state_json = outcome.paused.state_json
    with pytest.raises(TokenLimitExceeded) as caught:
        agent.resume_run(state_json, [ResumeDecision.approve("1")],
                         options=RunOptions(limits=RunLimits(max_total_tokens=15)))
    assert len(script.requests) == 1
    assert caught.value.value == 15


def _looping_agent(requests: list[int]) -> Agent:
    def model(messages, info):  # type: ignore[no-untyped-def]
        requests.append(len(requests))
        return ResponseMessage((ToolCallPart("echo", {"text": "again"}, f"c{len(requests)}"),), usage=USAGE)

    return Agent(FunctionModel(model), tools=[tool("echo", None, _echo)])


@pytest.mark.parametrize(("budget", "expected_requests"),
                         [({"max_requests": 3}, 3), ({"max_total_tokens": 30}, 2), ({"max_total_tokens": 31}, 3)],
                         ids=["requests", "tokens_reached", "tokens_crossed"])
def test_one_session_run_cannot_pass_the_session_budget(budget: dict[str, int], expected_requests: int) -> None:
    requests: list[int] = []
    session = Session("budget", limits=SessionLimits(**budget))
    with pytest.raises(SessionBudgetExceeded, match="stopped at the session budget") as caught:
        session.scope().run(_looping_agent(requests), "go")
    assert len(requests) == expected_requests  # not the agent's own 50
    assert isinstance(caught.value.__cause__, UsageLimitExceeded)
    with pytest.raises(SessionBudgetExceeded, match="the budget is"):  # nothing is left for a next run
        session.scope().run(_looping_agent(requests), "go")
    assert len(requests) == expected_requests


def test_a_runs_own_tighter_limit_is_kept_and_is_not_reported_as_the_session_budget() -> None:
    requests: list[int] = []
    session = Session("budget", limits=SessionLimits(max_requests=10))
    with pytest.raises(UsageLimitExceeded) as caught:
        session.scope().run(_looping_agent(requests), "go", options=RunOptions(limits=RunLimits(max_requests=2)))
    assert type(caught.value).__name__ == "RequestLimitExceeded" and len(requests) == 2



def _plan_steps(ran: list[str]):  # type: ignore[no-untyped-def]
    def run_step(ctx):  # type: ignore[no-untyped-def]
        ran.append(ctx.step.id)
        return "x" * 22 if ctx.step.id == "a" else 0  # 24 bytes encoded, then 1 byte
    return run_step


def test_a_plan_whose_outputs_reached_the_total_does_not_start_another_step() -> None:
    plan = Plan.create("p", [PlanStep("a", "first"), PlanStep("b", "second")])
    ran: list[str] = []
    with pytest.raises(StepOutputTooLarge, match="it was not run") as caught:
        execute_plan(plan, _plan_steps(ran), limits=ExecutionLimits(max_total_output_bytes=24))
    assert ran == ["a"] and caught.value.step_id == "b"
    ran.clear()
    with execute_plan(plan, _plan_steps(ran), limits=ExecutionLimits(max_total_output_bytes=25)) as execution:
        assert ran == ["a", "b"] and execution.output("b") == 0  # exactly at the total: fine
