"""RunUsage's attempts, provider time and run time, as the agent records them.

Every provider attempt counts (failed and retried ones too); provider time is only the time
spent waiting on the provider (never tool work, retry delays or the stream consumer); run
time spans the invocation; a resumed run continues the paused run's usage.  Durations are
checked structurally (``provider <= run - time known to be outside the provider``), so the
assertions hold however loaded the machine is.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from support.agent_script import Script, call, reply

from zigai.agent import Agent, InvalidPausedState, ResumeDecision
from zigai.agent.paused_state import decode_paused_state
from zigai.hooks import HookEvent, RunError
from zigai.messages import ResponseMessage
from zigai.provider import ProviderServerError
from zigai.reflect import tool
from zigai.retry import RetryPolicy
from zigai.testing import FunctionModel
from zigai.tool import ToolExecution
from zigai.usage import RequestUsage, RunUsage

MS = 1_000_000


def _digest(state: dict[str, Any]) -> str:
    """The unkeyed digest of a paused state, as any writer computes it (canonical JSON)."""
    text = json.dumps(state, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_every_attempt_counts_and_only_provider_waits_are_provider_time() -> None:
    failures = [ProviderServerError("busy", status=503), ProviderServerError("busy", status=503)]

    def answer(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        time.sleep(0.02)
        if failures:
            raise failures.pop()
        return reply("ok", usage=RequestUsage(input_tokens=3, output_tokens=1))

    policy = RetryPolicy(max_attempts=3, initial_delay_ms=40, multiplier=1.0, jitter=False)
    with Agent(FunctionModel(answer), retry_policy=policy).run("x") as result:
        usage = result.usage
    assert usage == RunUsage(requests=1, input_tokens=3, output_tokens=1, attempts=3)
    assert usage.provider_time_ns >= 3 * 20 * MS  # three attempts of 20 ms each
    assert usage.run_time_ns - usage.provider_time_ns >= 2 * 40 * MS  # the two retry delays
    assert usage.provider_time_s == usage.provider_time_ns / 1e9 and usage.run_time_s == usage.run_time_ns / 1e9


def test_a_tool_step_is_run_time_but_not_provider_time() -> None:
    def slow() -> str:
        time.sleep(0.06)
        return "done"

    script = Script([reply(call("slow", {})), reply("ok")])
    with Agent(script.model, tools=[tool("slow", "Slow.", slow)]).run("x") as result:
        usage = result.usage
    assert (usage.requests, usage.attempts, usage.tool_calls) == (2, 2, 1)
    assert 0 < usage.provider_time_ns <= usage.run_time_ns - 60 * MS


def test_a_streamed_run_counts_the_waits_for_events_not_the_consumer() -> None:
    def streamed(messages: tuple[Any, ...], info: Any) -> Iterator[str]:
        for word in ("a", "b", "c"):
            time.sleep(0.015)
            yield word

    agent = Agent(FunctionModel(stream_function=streamed))
    slept = 0
    with agent.run_stream("x") as stream:
        for event in stream:
            if event.event_kind in ("part_start", "part_delta"):  # the stream's end comes later
                time.sleep(0.02)  # the application's own work between events
                slept += 1
        result = stream.result()
    with result:
        usage = result.usage
    assert (usage.requests, usage.attempts, slept) == (1, 1, 3)
    assert usage.provider_time_ns >= 3 * 15 * MS
    assert usage.provider_time_ns <= usage.run_time_ns - slept * 20 * MS


def test_a_resumed_run_continues_the_paused_usage_across_a_json_round_trip() -> None:
    gated = tool("publish", "Publish.", lambda: "published", execution=ToolExecution.requires_approval)
    script = Script([
        reply(call("publish", {}, "p1"), usage=RequestUsage(input_tokens=5, output_tokens=2)),
        reply("done", usage=RequestUsage(input_tokens=7, output_tokens=1)),
    ])
    agent = Agent(script.model, tools=[gated])
    with agent.run_until_pause("go") as outcome:
        assert outcome.paused is not None
        paused_usage = outcome.paused.usage
        state_json = outcome.paused.state_json
    assert paused_usage == RunUsage(requests=1, input_tokens=5, output_tokens=2, attempts=1)
    assert 0 < paused_usage.provider_time_ns <= paused_usage.run_time_ns
    saved = json.loads(state_json)["state"]["usage"]
    assert (saved["attempts"], saved["provider_time_ns"], saved["run_time_ns"]) == (
        1, paused_usage.provider_time_ns, paused_usage.run_time_ns,
    )
    decoded = decode_paused_state(json.dumps(json.loads(state_json))).usage
    assert (decoded.provider_time_ns, decoded.run_time_ns) == (paused_usage.provider_time_ns, paused_usage.run_time_ns)
    time.sleep(0.03)  # time between the invocations is nobody's run time
    started = time.perf_counter_ns()
    with agent.resume_run(state_json, [ResumeDecision.approve("p1")]) as outcome:
        assert outcome.result is not None
        usage = outcome.result.usage
    resumed_ns = time.perf_counter_ns() - started
    assert usage == RunUsage(requests=2, tool_calls=1, input_tokens=12, output_tokens=3, attempts=2)
    assert usage.provider_time_ns > paused_usage.provider_time_ns
    assert paused_usage.run_time_ns < usage.run_time_ns <= paused_usage.run_time_ns + resumed_ns


def test_a_failed_run_reports_its_failed_attempts_and_time_to_run_error() -> None:
    events: list[HookEvent] = []

    def answer(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        time.sleep(0.01)
        raise ProviderServerError("down", status=503)

    policy = RetryPolicy(max_attempts=2, initial_delay_ms=0, jitter=False)
    agent = Agent(FunctionModel(answer), retry_policy=policy, hooks=[events.append])
    with pytest.raises(ProviderServerError):
        agent.run("x")
    error = events[-1]
    assert isinstance(error, RunError)
    assert error.usage == RunUsage(attempts=2)
    assert 2 * 10 * MS <= error.usage.provider_time_ns <= error.usage.run_time_ns


def test_a_failed_single_attempt_without_hooks_or_policy_still_ends_the_run_cleanly() -> None:
    def answer(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        raise ProviderServerError("down", status=500)

    with pytest.raises(ProviderServerError):
        Agent(FunctionModel(answer)).run("x")


def test_a_paused_state_written_before_usage_timing_reads_as_zero_timing() -> None:
    gated = tool("publish", "Publish.", lambda: "published", execution=ToolExecution.requires_approval)
    script = Script([reply(call("publish", {}, "p1"))])
    with Agent(script.model, tools=[gated]).run_until_pause("go") as outcome:
        assert outcome.paused is not None
        document = json.loads(outcome.paused.state_json)
    for name in ("attempts", "provider_time_ns", "run_time_ns"):
        del document["state"]["usage"][name]
    document["digest"] = _digest(document["state"])
    usage = decode_paused_state(json.dumps(document)).usage
    assert (usage.requests, usage.attempts, usage.provider_time_ns, usage.run_time_ns) == (1, 0, 0, 0)
    document["state"]["usage"]["wall_clock"] = 1
    document["digest"] = _digest(document["state"])
    with pytest.raises(InvalidPausedState, match="wall_clock"):
        decode_paused_state(json.dumps(document))
