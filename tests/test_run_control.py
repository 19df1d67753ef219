"""Run control in the agent loop: deadlines, per-attempt timeouts, cancellation, retries."""

from __future__ import annotations

import time

import pytest
from support.agent_script import Script, call, reply
from support.timing import StallMeter, assert_ended_within

from zigai.agent import Agent, CancellationToken, Cancelled, RunTimedOut
from zigai.messages import RetryPromptPart, ToolReturnPart
from zigai.model import ModelProfile
from zigai.output import OutputResult
from zigai.provider import RateLimited
from zigai.reflect import tool
from zigai.retry import RetryPolicy
from zigai.testing import FunctionModel
from zigai.tool import ToolLimits, ToolRunContext


def _slow_tool(seconds: float, finished: list[str]):  # type: ignore[no-untyped-def]
    def slow(ctx: ToolRunContext, label: str) -> str:
        ctx.sleep(seconds)
        finished.append(label)
        return "late " + label

    return tool("slow", "Slow.", slow)


def test_run_deadline_interrupts_a_tool_and_returns_on_time() -> None:
    finished: list[str] = []
    script = Script([reply(call("slow", {"label": "a"}))])
    agent = Agent(script.model, tools=[_slow_tool(5.0, finished)], run_timeout_ms=100)
    with StallMeter() as meter:
        start = time.monotonic()
        with pytest.raises(RunTimedOut):
            agent.run("go")
        assert_ended_within(start + 0.1, 1.4, meter)  # the 100 ms deadline, not the 5 s tool
    assert finished == []


def test_tool_timeout_becomes_a_recoverable_retry_and_the_late_result_is_discarded() -> None:
    finished: list[str] = []
    slow = _slow_tool(0.3, finished).replace(limits=ToolLimits(timeout_ms=30))
    script = Script([reply(call("slow", {"label": "a"}, "1")), reply("done")])
    with Agent(script.model, tools=[slow]).run("go") as result:
        part = result.messages[2].parts[0]
        assert isinstance(part, RetryPromptPart) and part.tool_call_id == "1"
        # the same words whether the scheduler or the tool's own context noticed the deadline
        assert part.content == (
            "ToolTimedOut: tool 'slow' timed out: it did not finish within 30 ms; the call was "
            "cancelled and any late result is discarded."
        )
        snapshot = result.messages
        time.sleep(0.35)
        assert result.messages == snapshot
        assert not any(isinstance(p, ToolReturnPart) for m in result.messages
                       for p in getattr(m, "parts", ()) if isinstance(p, ToolReturnPart))


def test_a_model_response_after_the_deadline_is_discarded() -> None:
    def late(messages, info):  # type: ignore[no-untyped-def]
        time.sleep(0.08)
        return reply("too late")

    model = FunctionModel(late)
    with pytest.raises(RunTimedOut):
        Agent(model, run_timeout_ms=30).run("go")


def test_run_options_timeout_tightens_the_agent_budget() -> None:
    deadlines = []

    def answer(messages, info):  # type: ignore[no-untyped-def]
        deadlines.append((info.request.deadline, info.request.control.deadline))
        return reply("ok")

    agent = Agent(FunctionModel(answer), run_timeout_ms=60_000, request_timeout_ms=120_000)
    before = time.monotonic()
    with agent.run("go", timeout_ms=5_000):
        pass
    attempt, run_deadline = deadlines[0]
    assert run_deadline is not None and before + 4.9 < run_deadline <= time.monotonic() + 5.0
    assert attempt == run_deadline  # the per-attempt ceiling is looser than the run's


def test_request_timeout_bounds_each_attempt() -> None:
    deadlines = []

    def answer(messages, info):  # type: ignore[no-untyped-def]
        deadlines.append((info.request.deadline, info.request.control.deadline))
        return reply("ok")

    before = time.monotonic()
    with Agent(FunctionModel(answer), request_timeout_ms=1_000).run("go"):
        pass
    attempt, run_deadline = deadlines[0]
    assert run_deadline is None
    assert attempt is not None and before + 0.9 < attempt <= time.monotonic() + 1.0


def test_cancellation_before_the_run_never_calls_the_model() -> None:
    token = CancellationToken()
    token.cancel("user stop")
    script = Script([reply("x")])
    with pytest.raises(Cancelled, match="user stop"):
        Agent(script.model).run("go", cancellation=token)
    assert script.requests == []


def test_cancellation_during_a_tool_stops_the_run() -> None:
    token = CancellationToken()

    def cancel_then_wait(ctx: ToolRunContext, label: str) -> str:
        token.cancel("stop now")
        ctx.sleep(5.0)
        return label

    script = Script([reply(call("c", {"label": "a"}, "1"), call("c", {"label": "b"}, "2"))])
    with StallMeter() as meter:
        start = time.monotonic()
        with pytest.raises(Cancelled):
            Agent(script.model, tools=[tool("c", "C.", cancel_then_wait)]).run("go", cancellation=token)
        assert_ended_within(start, 1.5, meter)  # the cancel, not the 5 s sleep


def test_validators_run_under_the_run_control() -> None:
    token = CancellationToken()

    def validator(name, ctx, value):  # type: ignore[no-untyped-def]
        assert ctx.control.token is token
        token.cancel()
        return OutputResult.output(value)

    script = Script([reply("x")])
    with pytest.raises(Cancelled):
        Agent(script.model, output_validators=[validator]).run("go", cancellation=token)


def test_retry_policy_retries_rate_limits_with_one_idempotency_key() -> None:
    attempts = []

    def flaky(messages, info):  # type: ignore[no-untyped-def]
        attempts.append(info.request.idempotency_key)
        if len(attempts) == 1:
            raise RateLimited("slow down", status=429, retry_after_s=0.0)
        return reply("ok")

    model = FunctionModel(flaky, profile=ModelProfile(idempotency_header="Idempotency-Key"))
    policy = RetryPolicy(max_attempts=2, initial_delay_ms=0, jitter=False)
    with Agent(model, retry_policy=policy).run("go") as result:
        assert result.output == "ok"
        assert result.usage.requests == 1
    assert len(attempts) == 2 and attempts[0] is not None and attempts[0] == attempts[1]


def test_without_a_retry_policy_provider_errors_propagate() -> None:
    def fail(messages, info):  # type: ignore[no-untyped-def]
        raise RateLimited("slow down", status=429)

    with pytest.raises(RateLimited):
        Agent(FunctionModel(fail)).run("go")
