"""Lifecycle hooks: the exact event order of every kind of run, and run_error exactly once.

Each test records a compact trace of the hook stream and pins it completely, so an event
that appears, disappears or moves is a failure.  Scripted models (``FunctionModel``) cover
every branch; a real loopback HTTP provider (the OpenAI-compatible adapter over a socket)
proves the same order with decoded provider JSON.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from support.agent_script import Script, call, reply
from support.loopback import LoopbackServer, Received, Reply

from zigai.agent import Agent, RequestLimitExceeded, RunLimits, RunOptions
from zigai.control import CancellationToken, Cancelled, RunTimedOut
from zigai.hooks import (
    HOOK_EVENT_KINDS,
    Correlation,
    HookEvent,
    RequestError,
    RunEnd,
    RunError,
    RunStart,
    ToolExecuteEnd,
    ToolExecuteStart,
)
from zigai.messages import ResponseMessage
from zigai.messages.json_value import FrozenDict
from zigai.output import OutputResult
from zigai.provider import ProviderBadRequest, ProviderServerError
from zigai.providers import openai_compatible as oc
from zigai.reflect import tool
from zigai.retry import RetryPolicy
from zigai.security import UrlPolicy
from zigai.testing import FunctionModel
from zigai.tool import ModelRetry, Tool, ToolExecution
from zigai.transport import HttpTransport

NO_WAIT = RetryPolicy(max_attempts=3, initial_delay_ms=0, jitter=False)


class Recorder:
    """A hook that keeps every event and a compact, comparable trace of it."""

    def __init__(self) -> None:
        self.events: list[HookEvent] = []
        self.trace: list[tuple[Any, ...]] = []
        self.threads: set[int] = set()

    def __call__(self, event: HookEvent) -> None:
        self.events.append(event)
        self.threads.add(threading.get_ident())
        self.trace.append(_compact(event))

    def kinds(self) -> list[str]:
        return [t[0] for t in self.trace]


def _compact(event: Any) -> tuple[Any, ...]:
    kind = event.kind
    if kind == "run_start":
        return (kind, event.message_count)
    if kind == "run_end":
        return (kind, event.outcome)
    if kind == "run_error":
        return (kind, type(event.error).__name__)
    if kind in ("request_start", "request_end"):
        return (kind, event.request_number, event.attempt)
    if kind == "request_error":
        return (kind, event.request_number, event.attempt, event.category, event.will_retry)
    if kind == "tool_dispatch_start":
        return (kind, event.call.tool_call_id, event.route)
    if kind == "tool_dispatch_end":
        return (kind, event.call.tool_call_id, event.outcome)
    if kind == "tool_execute_end":
        return (kind, event.call.tool_call_id, event.status)
    if kind == "tool_execute_error":
        return (kind, event.call.tool_call_id, type(event.error).__name__, event.origin)
    if kind in ("tool_execute_start", "tool_dispatch_error"):
        return (kind, event.call.tool_call_id)
    if kind == "output_validator_end":
        return (kind, event.validator_index, event.outcome)
    if kind in ("output_validator_start", "output_validator_error"):
        return (kind, event.validator_index)
    if kind in ("stream_event_before", "stream_event_after"):
        return (kind, type(event.event).__name__)
    raise AssertionError(f"unknown event kind {kind}")


def _add_tool() -> Tool:
    def add(a: int, b: int) -> int:
        return a + b

    return tool("add", "Add.", add)


def _sleep_tool(name: str = "nap", seconds: float = 0.05) -> Tool:
    def nap() -> str:
        time.sleep(seconds)
        return name

    return tool(name, "Nap.", nap)


# ------------------------------------------------------------------------- scripted models


def test_a_text_run_delivers_start_request_and_end() -> None:
    hook = Recorder()
    agent = Agent(Script([reply("hi")]).model, hooks=[hook])
    with agent.run("Hello") as result:
        assert result.output == "hi"
    assert hook.trace == [
        ("run_start", 0), ("request_start", 1, 1), ("request_end", 1, 1), ("run_end", "complete"),
    ]
    start, request_start, request_end, end = hook.events
    assert isinstance(start, RunStart) and isinstance(end, RunEnd)
    assert request_start.run is start.run is end.run  # one identity per run
    assert end.output == "hi" and end.usage.requests == 1 and len(end.new_messages) == 2
    assert request_end.response.text == "hi"  # type: ignore[attr-defined]
    assert len(start.run.run_id) == 32 and start.run.model_name == "function"


def test_a_two_tool_parallel_step_delivers_per_call_events_in_call_order() -> None:
    hook = Recorder()
    script = Script([reply(call("slow", {}, "c1"), call("fast", {}, "c2")), reply("done")])
    agent = Agent(script.model, tools=[_sleep_tool("slow", 0.15), _sleep_tool("fast", 0.0)],
                  hooks=[hook])
    agent.run("go").close()
    assert hook.trace == [
        ("run_start", 0),
        ("request_start", 1, 1), ("request_end", 1, 1),
        ("tool_dispatch_start", "c1", "function"), ("tool_dispatch_start", "c2", "function"),
        ("tool_execute_start", "c1"), ("tool_execute_start", "c2"),
        ("tool_execute_end", "c1", "success"), ("tool_execute_end", "c2", "success"),
        ("tool_dispatch_end", "c1", "return"), ("tool_dispatch_end", "c2", "return"),
        ("request_start", 2, 1), ("request_end", 2, 1),
        ("run_end", "complete"),
    ]
    assert hook.threads == {threading.get_ident()}  # delivered on the driving thread only
    ends = [e for e in hook.events if isinstance(e, ToolExecuteEnd)]
    assert ends[0].duration_s is not None and ends[0].duration_s >= 0.14
    assert ends[1].duration_s is not None and ends[1].duration_s < 0.14
    starts = [e for e in hook.events if isinstance(e, ToolExecuteStart)]
    assert dict(starts[0].arguments) == {}
    with pytest.raises(TypeError):
        starts[0].arguments["x"] = 1  # type: ignore[index]


def test_tool_arguments_reach_hooks_as_immutable_snapshots() -> None:
    def record(tags: list[str], depth: int) -> str:
        tags.append("changed by the tool")
        return "ok"

    hook = Recorder()
    script = Script([reply(call("record", {"tags": ["a"], "depth": 1}, "n1"), call("add", {"a": 1, "b": 2}, "f1")),
                     reply("done")])
    agent = Agent(script.model, tools=[tool("record", "Record.", record), _add_tool()], hooks=[hook])
    agent.run("x").close()
    nested, flat = [e.arguments for e in hook.events if isinstance(e, ToolExecuteStart)]
    assert isinstance(nested, FrozenDict) and nested["tags"] == ("a",)  # a deep frozen copy
    assert dict(flat) == {"a": 1, "b": 2}
    with pytest.raises(TypeError):
        flat["a"] = 5  # type: ignore[index]


def test_a_retried_provider_request_reports_each_attempt_with_category_and_delay() -> None:
    failures = [ProviderServerError("boom", status=503)]

    def answer(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        if failures:
            raise failures.pop()
        return reply("ok")

    hook = Recorder()
    policy = RetryPolicy(max_attempts=3, initial_delay_ms=10, jitter=False)
    agent = Agent(FunctionModel(answer), retry_policy=policy, hooks=[hook])
    agent.run("x").close()
    assert hook.trace == [
        ("run_start", 0),
        ("request_start", 1, 1), ("request_error", 1, 1, "server_error", True),
        ("request_start", 1, 2), ("request_end", 1, 2),
        ("run_end", "complete"),
    ]
    error = hook.events[2]
    assert isinstance(error, RequestError)
    assert error.delay_s == pytest.approx(0.01) and error.cumulative_delay_s == pytest.approx(0.01)
    assert isinstance(error.error, ProviderServerError)


def _streaming_model() -> FunctionModel:
    def streamed(messages: tuple[Any, ...], info: Any) -> Iterator[str]:
        yield from ("He", "llo")

    return FunctionModel(stream_function=streamed)


STREAMED_TEXT_RUN = [
    ("run_start", 0),
    ("stream_event_before", "ToolAvailabilityEvent"), ("stream_event_after", "ToolAvailabilityEvent"),
    ("request_start", 1, 1),
    ("stream_event_before", "PartStartEvent"), ("stream_event_after", "PartStartEvent"),
    ("stream_event_before", "PartialOutputEvent"), ("stream_event_after", "PartialOutputEvent"),
    ("stream_event_before", "PartDeltaEvent"), ("stream_event_after", "PartDeltaEvent"),
    ("stream_event_before", "PartialOutputEvent"), ("stream_event_after", "PartialOutputEvent"),
    ("stream_event_before", "PartEndEvent"), ("stream_event_after", "PartEndEvent"),
    ("request_end", 1, 1),
    ("stream_event_before", "ModelResponseEvent"), ("stream_event_after", "ModelResponseEvent"),
    ("stream_event_before", "FinalResultEvent"), ("stream_event_after", "FinalResultEvent"),
    ("run_end", "complete"),
]


def test_a_streamed_run_through_a_sink_brackets_every_delivered_event() -> None:
    hook = Recorder()
    seen: list[str] = []
    agent = Agent(_streaming_model(), hooks=[hook])

    def sink(event: Any) -> None:
        seen.append(type(event).__name__)
        hook.trace.append(("sink", type(event).__name__))

    agent.run_stream_events("x", sink=sink).close()
    without_sink = [t for t in hook.trace if t[0] != "sink"]
    assert without_sink == STREAMED_TEXT_RUN
    # the sink call sits exactly between before and after
    index = hook.trace.index(("sink", "PartStartEvent"))
    assert hook.trace[index - 1] == ("stream_event_before", "PartStartEvent")
    assert hook.trace[index + 1] == ("stream_event_after", "PartStartEvent")


def test_a_streamed_run_through_the_iterator_brackets_each_yield() -> None:
    hook = Recorder()
    agent = Agent(_streaming_model(), hooks=[hook])
    with agent.run_stream("x") as stream:
        for event in stream:
            hook.trace.append(("consumer", type(event).__name__))
        stream.result().close()
    trace = hook.trace
    index = trace.index(("consumer", "PartDeltaEvent"))
    assert trace[index - 1] == ("stream_event_before", "PartDeltaEvent")
    assert trace[index + 1] == ("stream_event_after", "PartDeltaEvent")
    assert [t for t in trace if t[0] != "consumer"] == STREAMED_TEXT_RUN


def test_a_paused_and_resumed_run_ends_each_invocation_and_resumes_with_the_call() -> None:
    hook = Recorder()

    def publish() -> str:
        return "published"

    gated = tool("publish", "Publish.", publish, execution=ToolExecution.requires_approval)
    script = Script([reply(call("publish", {}, "p1")), reply("done")])
    agent = Agent(script.model, tools=[gated], hooks=[hook])
    with agent.run_until_pause("go") as outcome:
        assert outcome.paused is not None
        state = outcome.paused.state_json
    assert hook.trace == [
        ("run_start", 0), ("request_start", 1, 1), ("request_end", 1, 1), ("run_end", "paused"),
    ]
    first_run = hook.events[0].run
    hook.trace.clear()
    hook.events.clear()
    from zigai.agent import ResumeDecision

    with agent.resume_run(state, [ResumeDecision.approve("p1")]) as outcome:
        assert outcome.result is not None and outcome.result.output == "done"
    assert hook.trace == [
        ("run_start", 2),
        ("tool_dispatch_start", "p1", "function"),
        ("tool_execute_start", "p1"), ("tool_execute_end", "p1", "success"),
        ("tool_dispatch_end", "p1", "return"),
        ("request_start", 2, 1), ("request_end", 2, 1),
        ("run_end", "complete"),
    ]
    assert hook.events[0].run.resumed and not first_run.resumed
    assert hook.events[0].run.run_id != first_run.run_id


def test_a_validator_retry_is_bracketed_and_the_next_request_follows() -> None:
    hook = Recorder()
    verdicts = [OutputResult.retry("again"), None]

    def validator(label: str, ctx: Any, value: Any) -> OutputResult:
        verdict = verdicts.pop(0)
        return verdict if verdict is not None else OutputResult.output(value.upper())

    agent = Agent(Script([reply("a"), reply("b")]).model, output_validators=[validator], hooks=[hook])
    with agent.run("x") as result:
        assert result.output == "B"
    assert hook.trace == [
        ("run_start", 0),
        ("request_start", 1, 1), ("request_end", 1, 1),
        ("output_validator_start", 0), ("output_validator_end", 0, "retry"),
        ("request_start", 2, 1), ("request_end", 2, 1),
        ("output_validator_start", 0), ("output_validator_end", 0, "accepted"),
        ("run_end", "complete"),
    ]
    assert hook.events[-2].value == "B"  # type: ignore[attr-defined]


def test_output_tool_calls_dispatch_as_output_and_unknown_calls_as_unknown() -> None:
    hook = Recorder()
    from zigai.output import OutputChoice, OutputSpec

    spec = OutputSpec.tool([OutputChoice("answer", {"type": "object", "properties": {"v": {"type": "integer"}}})])
    script = Script([reply(call("nope", {}, "u1"), call("answer", {"v": 1}, "o1"))])
    agent = Agent(script.model, output=spec, hooks=[hook], max_tool_retries=1)
    agent.run("x").close()
    assert hook.trace[3:7] == [
        ("tool_dispatch_start", "u1", "unknown"), ("tool_dispatch_start", "o1", "output"),
        ("tool_dispatch_end", "u1", "retry"), ("tool_dispatch_end", "o1", "final"),
    ]


# ---------------------------------------------------------------- terminal failures: run_error once


def _error_runs(hook: Recorder) -> list[RunError]:
    return [e for e in hook.events if isinstance(e, RunError)]


def test_a_provider_error_that_is_never_retried_ends_with_request_error_and_run_error() -> None:
    def answer(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        raise ProviderBadRequest("bad", status=400)

    hook = Recorder()
    agent = Agent(FunctionModel(answer), retry_policy=NO_WAIT, hooks=[hook])
    with pytest.raises(ProviderBadRequest):
        agent.run("x")
    assert hook.trace == [
        ("run_start", 0), ("request_start", 1, 1), ("request_error", 1, 1, None, False),
        ("run_error", "ProviderBadRequest"),
    ]
    assert hook.events[-1].state == "model_request"  # type: ignore[attr-defined]


def test_retries_exhausted_report_the_last_attempt_as_final() -> None:
    def answer(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        raise ProviderServerError("down", status=500)

    hook = Recorder()
    agent = Agent(FunctionModel(answer), retry_policy=RetryPolicy(max_attempts=2, initial_delay_ms=0),
                  hooks=[hook])
    with pytest.raises(ProviderServerError):
        agent.run("x")
    assert hook.trace == [
        ("run_start", 0),
        ("request_start", 1, 1), ("request_error", 1, 1, "server_error", True),
        ("request_start", 1, 2), ("request_error", 1, 2, "server_error", False),
        ("run_error", "ProviderServerError"),
    ]


def test_a_fatal_tool_error_reports_execute_and_dispatch_errors_then_run_error() -> None:
    def explode() -> str:
        raise KeyError("application bug")

    hook = Recorder()
    script = Script([reply(call("boom", {}, "c1"), call("nap", {}, "c2"))])
    agent = Agent(script.model, tools=[tool("boom", "Boom.", explode), _sleep_tool("nap", 0.0)], hooks=[hook])
    with pytest.raises(KeyError):
        agent.run("x")
    assert hook.trace[3:] == [
        ("tool_dispatch_start", "c1", "function"), ("tool_dispatch_start", "c2", "function"),
        ("tool_execute_start", "c1"), ("tool_execute_start", "c2"),
        ("tool_execute_error", "c1", "KeyError", True), ("tool_execute_error", "c2", "KeyError", False),
        ("tool_dispatch_error", "c1"), ("tool_dispatch_error", "c2"),
        ("run_error", "KeyError"),
    ]


def test_a_tool_retry_is_an_execute_end_with_retry_status() -> None:
    attempts = []

    def flaky() -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise ModelRetry("try again")
        return "ok"

    hook = Recorder()
    script = Script([reply(call("flaky", {}, "c1")), reply(call("flaky", {}, "c2")), reply("done")])
    agent = Agent(script.model, tools=[tool("flaky", "Flaky.", flaky)], hooks=[hook])
    agent.run("x").close()
    assert ("tool_execute_end", "c1", "retry") in hook.trace
    assert ("tool_dispatch_end", "c1", "retry") in hook.trace
    assert ("tool_execute_end", "c2", "success") in hook.trace


def test_a_limit_failure_delivers_run_error_once() -> None:
    hook = Recorder()
    script = Script([reply(call("add", {"a": 1, "b": 2}, "c1")), reply("never")])
    agent = Agent(script.model, tools=[_add_tool()], limits=RunLimits(max_requests=1), hooks=[hook])
    with pytest.raises(RequestLimitExceeded):
        agent.run("x")
    assert hook.kinds()[-2:] == ["tool_dispatch_end", "run_error"]
    assert len(_error_runs(hook)) == 1 and hook.events[-1].state == "prepare_request"  # type: ignore[attr-defined]


def test_a_hook_that_raises_stops_the_run_and_still_gets_run_error() -> None:
    class Stop(Exception):
        pass

    seen: list[str] = []

    def hook(event: HookEvent) -> None:
        seen.append(event.kind)
        if event.kind == "request_start":
            raise Stop("no requests today")

    script = Script([reply("never")])
    agent = Agent(script.model, hooks=[hook])
    with pytest.raises(Stop):
        agent.run("x")
    assert seen == ["run_start", "request_start", "run_error"]
    assert script.requests == []  # the model was never called


def test_a_run_error_hook_that_raises_does_not_replace_the_original_error() -> None:
    def hook(event: HookEvent) -> None:
        if event.kind == "run_error":
            raise RuntimeError("hook broke")

    second = Recorder()

    def answer(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        raise ProviderBadRequest("bad", status=400)

    agent = Agent(FunctionModel(answer), hooks=[hook, second])
    with pytest.raises(ProviderBadRequest) as caught:
        agent.run("x")
    assert any("hook broke" in note for note in caught.value.__notes__)
    assert second.kinds()[-1] == "run_error"  # later hooks still see it


def test_a_run_end_hook_that_raises_propagates_without_run_error() -> None:
    seen: list[str] = []

    def hook(event: HookEvent) -> None:
        seen.append(event.kind)
        if event.kind == "run_end":
            raise RuntimeError("refused")

    agent = Agent(Script([reply("ok")]).model, hooks=[hook])
    with pytest.raises(RuntimeError, match="refused"):
        agent.run("x")
    assert seen == ["run_start", "request_start", "request_end", "run_end"]


# Deadline tests give the run a budget no loaded machine spends before the step under test,
# then make that step outlast the deadline by waiting for it, not by sleeping a fixed time.
BUDGET_MS = 1000


def _outlast_the_deadline(hook: Recorder) -> None:
    control = hook.events[0].run.control  # from run_start
    give_up = time.monotonic() + 30
    while not control.expired() and time.monotonic() < give_up:
        time.sleep(0.005)


def test_a_deadline_during_the_model_call_discards_the_response_and_reports_it() -> None:
    def slow(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        _outlast_the_deadline(hook)
        return reply("late")

    hook = Recorder()
    agent = Agent(FunctionModel(slow), run_timeout_ms=BUDGET_MS, hooks=[hook])
    with pytest.raises(RunTimedOut):
        agent.run("x")
    assert hook.trace == [
        ("run_start", 0), ("request_start", 1, 1), ("request_error", 1, 1, None, False),
        ("run_error", "RunTimedOut"),
    ]


def test_cancellation_inside_a_tool_delivers_run_error_cancelled_once() -> None:
    token = CancellationToken()

    def cancel() -> str:
        token.cancel("user pressed stop")
        return "done"

    hook = Recorder()
    script = Script([reply(call("cancel", {}, "c1")), reply("never")])
    agent = Agent(script.model, tools=[tool("cancel", "Cancel.", cancel)], hooks=[hook])
    with pytest.raises(Cancelled):
        agent.run("x", cancellation=token)
    assert [k for k in hook.kinds() if k == "run_error"] == ["run_error"]
    assert hook.trace[-1] == ("run_error", "Cancelled")


def test_a_validator_that_raises_reports_validator_error_then_run_error() -> None:
    def validator(label: str, ctx: Any, value: Any) -> OutputResult:
        raise ValueError("validator bug")

    hook = Recorder()
    agent = Agent(Script([reply("a")]).model, output_validators=[validator], hooks=[hook])
    with pytest.raises(ValueError):
        agent.run("x")
    assert hook.trace[-2:] == [("output_validator_error", 0), ("run_error", "ValueError")]


def test_an_abandoned_stream_delivers_run_error_cancelled() -> None:
    hook = Recorder()
    agent = Agent(_streaming_model(), hooks=[hook])
    with agent.run_stream("x") as stream:
        for _event in stream:
            break
    assert hook.trace[-1] == ("run_error", "Cancelled")
    assert hook.kinds().count("run_error") == 1 and "run_end" not in hook.kinds()


def test_a_stream_that_fails_midway_reports_request_error_and_run_error() -> None:
    def streamed(messages: tuple[Any, ...], info: Any) -> Iterator[str]:
        yield "He"
        raise ProviderServerError("dropped", status=502)

    hook = Recorder()
    agent = Agent(FunctionModel(stream_function=streamed), retry_policy=NO_WAIT, hooks=[hook])
    with pytest.raises(ProviderServerError), agent.run_stream("x") as stream:
        list(stream)
    assert hook.trace[-2:] == [("request_error", 1, 1, "server_error", False), ("run_error", "ProviderServerError")]


def test_hooks_stop_at_a_passed_deadline_and_only_run_error_follows() -> None:
    seen: list[str] = []

    def slow_hook(event: HookEvent) -> None:
        seen.append(event.kind)
        recorder(event)
        if event.kind == "request_end":
            _outlast_the_deadline(recorder)

    recorder = Recorder()
    agent = Agent(Script([reply("x")]).model, hooks=[slow_hook], run_timeout_ms=BUDGET_MS)
    with pytest.raises(RunTimedOut):
        agent.run("x")
    assert seen == ["run_start", "request_start", "request_end", "run_error"]


# -------------------------------------------------------------------------- configuration


def test_run_options_hooks_follow_agent_hooks_and_correlation_sets_the_run_id() -> None:
    order: list[str] = []
    agent = Agent(Script([reply("x")]).model,
                  hooks=[lambda e: order.append(f"agent:{e.kind}")])
    run_hook = Recorder()
    agent.run("x", hooks=[lambda e: order.append(f"run:{e.kind}"), run_hook],
              correlation=Correlation(run_id="session-7", trace_parent="00-" + "a" * 32 + "-" + "b" * 16 + "-01",
                                      node_index=2, node_name="plan")).close()
    assert order[:2] == ["agent:run_start", "run:run_start"]
    info = run_hook.events[0].run
    assert info.run_id == "session-7" and info.correlation is not None
    assert info.correlation.node_name == "plan"


def test_bad_hook_configuration_fails_at_construction() -> None:
    from zigai.agent import InvalidAgentConfiguration

    with pytest.raises(InvalidAgentConfiguration, match="Agent.hooks"):
        Agent(Script([]).model, hooks=["not callable"])  # type: ignore[list-item]
    with pytest.raises(InvalidAgentConfiguration, match="RunOptions.hooks"):
        RunOptions(prompt="x", hooks=[42])  # type: ignore[list-item]
    with pytest.raises(InvalidAgentConfiguration, match="correlation"):
        RunOptions(prompt="x", correlation="id")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="node_index"):
        Correlation(node_index=-1)
    with pytest.raises(ValueError, match="run_id"):
        Correlation(run_id="")


def test_every_event_kind_is_listed_once() -> None:
    assert len(HOOK_EVENT_KINDS) == len(set(HOOK_EVENT_KINDS)) == 17


def test_event_payloads_are_read_only() -> None:
    hook = Recorder()
    Agent(Script([reply("x")]).model, hooks=[hook]).run("x").close()
    with pytest.raises(AttributeError):
        hook.events[0].message_count = 5  # type: ignore[misc]


# ------------------------------------------------------------- a real loopback HTTP provider

POLICY = UrlPolicy.local_development()


def _completion(message: dict[str, Any], finish: str) -> Reply:
    return Reply.of_json({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    })


def _tool_calls(*ids: str) -> Reply:
    calls = [{"id": i, "type": "function", "function": {"name": "add", "arguments": '{"a":1,"b":2}'}}
             for i in ids]
    return _completion({"content": None, "tool_calls": calls}, "tool_calls")


@contextmanager
def _http_agent(handler: Any, **agent_options: Any) -> Iterator[tuple[Agent, LoopbackServer]]:
    with LoopbackServer(handler) as server, HttpTransport(url_policy=POLICY, default_timeout_s=10.0) as transport:
        provider = oc.Provider("key", transport, url_policy=POLICY, base_url=f"{server.url}/v1")
        model = oc.Client("m", provider, fallback_profile="full")
        yield Agent(model, url_policy=POLICY, **agent_options), server


def test_http_tool_loop_with_two_parallel_calls_and_a_retried_request() -> None:
    replies = [_tool_calls("call_a", "call_b"), Reply.of_json({"error": {"message": "busy"}}, status=503),
               _completion({"content": "3 and 3"}, "stop")]

    def handler(request: Received) -> Reply:
        return replies.pop(0)

    hook = Recorder()
    with _http_agent(handler, tools=[_add_tool()], retry_policy=NO_WAIT, hooks=[hook]) as (agent, server):
        with agent.run("add twice") as result:
            assert result.output == "3 and 3"
        assert len(server.requests) == 3
    assert hook.trace == [
        ("run_start", 0),
        ("request_start", 1, 1), ("request_end", 1, 1),
        ("tool_dispatch_start", "call_a", "function"), ("tool_dispatch_start", "call_b", "function"),
        ("tool_execute_start", "call_a"), ("tool_execute_start", "call_b"),
        ("tool_execute_end", "call_a", "success"), ("tool_execute_end", "call_b", "success"),
        ("tool_dispatch_end", "call_a", "return"), ("tool_dispatch_end", "call_b", "return"),
        ("request_start", 2, 1), ("request_error", 2, 1, "server_error", True),
        ("request_start", 2, 2), ("request_end", 2, 2),
        ("run_end", "complete"),
    ]
    first_end = hook.events[2]
    assert first_end.response.provider_response_id == "chatcmpl-1"  # type: ignore[attr-defined]
    assert first_end.response.usage.input_tokens == 5  # type: ignore[attr-defined]


def test_http_streamed_run_delivers_the_same_order_as_a_scripted_stream() -> None:
    # two SSE deltas: the adapter's part start carries the first, a delta the second
    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        return json.dumps({"id": "c1", "object": "chat.completion.chunk", "model": "m",
                           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    events = [chunk({"role": "assistant", "content": "He"}), chunk({"content": "llo"}, "stop"), "[DONE]"]
    hook = Recorder()
    with _http_agent(lambda r: Reply.sse(events), hooks=[hook]) as (agent, _server):
        with agent.run_stream("x") as stream:
            list(stream)
            assert stream.result().output == "Hello"
    assert hook.trace == STREAMED_TEXT_RUN  # the same order as the scripted stream


def test_http_provider_error_delivers_run_error_once() -> None:
    hook = Recorder()
    with _http_agent(lambda r: Reply.of_json({"error": {"message": "no"}}, status=400), hooks=[hook]) as (agent, _s):
        with pytest.raises(ProviderBadRequest):
            agent.run("x")
    assert hook.trace == [
        ("run_start", 0), ("request_start", 1, 1), ("request_error", 1, 1, None, False),
        ("run_error", "ProviderBadRequest"),
    ]


def test_a_stream_closed_after_its_final_event_still_reports_run_end() -> None:
    hook = Recorder()
    agent = Agent(_streaming_model(), hooks=[hook])
    with agent.run_stream("x") as stream:
        for event in stream:
            if type(event).__name__ == "FinalResultEvent":
                break  # the run has completed; the consumer just stops iterating
    assert hook.trace[-1] == ("run_end", "complete")
    assert "run_error" not in hook.kinds()


def test_a_streamed_response_completed_after_the_deadline_is_reported_and_discarded() -> None:
    def streamed(messages: tuple[Any, ...], info: Any) -> Iterator[str]:
        yield "He"
        _outlast_the_deadline(hook)
        yield "llo"

    hook = Recorder()
    agent = Agent(FunctionModel(stream_function=streamed), run_timeout_ms=BUDGET_MS, hooks=[hook])
    with pytest.raises(RunTimedOut), agent.run_stream("x") as stream:
        list(stream)
    assert hook.trace[-2:] == [("request_error", 1, 1, None, False), ("run_error", "RunTimedOut")]


def test_a_single_callable_is_accepted_as_the_hook_list() -> None:
    hook = Recorder()
    agent = Agent(Script([reply("x")]).model, hooks=hook)  # type: ignore[arg-type]
    agent.run("x", hooks=None).close()  # type: ignore[arg-type]
    assert hook.kinds()[0] == "run_start" and len(agent.hooks) == 1


def test_a_deadline_between_two_stream_events_closes_the_open_request_once() -> None:
    def streamed(messages: tuple[Any, ...], info: Any) -> Iterator[str]:
        yield from ("a", "b", "c")

    hook = Recorder()
    agent = Agent(FunctionModel(stream_function=streamed), run_timeout_ms=BUDGET_MS, hooks=[hook])
    with pytest.raises(RunTimedOut), agent.run_stream("x") as stream:
        for event in stream:
            if type(event).__name__ == "PartDeltaEvent":  # the consumer is slow; the run's deadline passes
                _outlast_the_deadline(hook)
    assert hook.trace[-2:] == [("request_error", 1, 1, None, False), ("run_error", "RunTimedOut")]
    assert hook.kinds().count("request_error") == 1


def test_run_info_price_table_is_typed_without_importing_pricing_at_runtime() -> None:
    import subprocess
    import sys
    import typing

    import zigai.hooks as hooks
    from zigai.control import RunControl
    from zigai.pricing import PriceTable

    names = {**vars(hooks), "PriceTable": PriceTable, "RunControl": RunControl}
    hints = typing.get_type_hints(hooks.RunInfo, names)
    assert hints["price_table"] == PriceTable | None
    script = "import sys, zigai.hooks; print(sorted(m for m in sys.modules if m.startswith('zigai.pricing')))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"
