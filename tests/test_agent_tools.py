"""The agent's tool step: order, retries, limits, sequential tools, follow-ups, toolsets."""

from __future__ import annotations

import threading
import time

import pytest
from support.agent_script import Script, call, reply

from zigai.agent import Agent, RunLimits, ToolCallLimitExceeded, UsageLimitExceeded
from zigai.messages import (
    RequestMessage,
    ResponseMessage,
    RetryPromptPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from zigai.reflect import tool
from zigai.testing import FunctionModel
from zigai.tool import ModelRetry, Tool, ToolLimits, ToolRetriesExceeded, ToolReturn, ToolRunContext
from zigai.toolset import Toolset


def _sleeper(seconds: float, log: list[tuple[str, float, float]] | None = None):  # type: ignore[no-untyped-def]
    def nap(label: str) -> str:
        start = time.monotonic()
        time.sleep(seconds)
        if log is not None:
            log.append((label, start, time.monotonic()))
        return label

    return nap


def test_parallel_calls_keep_the_model_call_order() -> None:
    delays = {"a": 0.05, "b": 0.0, "c": 0.03, "d": 0.01}

    def wait(label: str) -> str:
        time.sleep(delays[label])
        return label.upper()

    script = Script([reply(*[call("wait", {"label": k}, k) for k in delays]), reply("done")])
    with Agent(script.model, tools=[tool("wait", "Wait.", wait)]).run("go") as result:
        returns = result.messages[2].parts
        assert [(p.tool_call_id, p.content) for p in returns] == [("a", "A"), ("b", "B"), ("c", "C"), ("d", "D")]
        assert result.usage.tool_calls == 4


def test_eight_waiting_tools_run_concurrently() -> None:
    # the barrier opens only when all eight run at once: serial execution breaks it after its
    # timeout and every call returns an error instead of its label
    together = threading.Barrier(8, timeout=5)

    def meet(label: str) -> str:
        together.wait()
        return label

    script = Script([reply(*[call("meet", {"label": str(i)}, str(i)) for i in range(8)]), reply("done")])
    with Agent(script.model, tools=[tool("meet", "Meet.", meet)]).run("go") as result:
        returns = result.messages[2].parts
        assert [(p.tool_call_id, p.content) for p in returns] == [(str(i), str(i)) for i in range(8)]


def test_sequential_tools_never_overlap() -> None:
    log: list[tuple[str, float, float]] = []
    seq = tool("seq", "Sequential.", _sleeper(0.02, log), sequential=True)
    par = tool("par", "Parallel.", _sleeper(0.02, log))
    calls = [call("par", {"label": "p1"}, "1"), call("seq", {"label": "s1"}, "2"),
             call("par", {"label": "p2"}, "3"), call("seq", {"label": "s2"}, "4")]
    script = Script([reply(*calls), reply("done")])
    with Agent(script.model, tools=[seq, par]).run("go"):
        pass
    spans = {label: (s, e) for label, s, e in log}
    for label in ("s1", "s2"):
        start, end = spans[label]
        for other, (os_, oe) in spans.items():
            if other != label:
                assert oe <= start or os_ >= end, f"{label} overlapped {other}"


def test_queue_overflow_becomes_a_retryable_result_without_running_the_callback() -> None:
    ran: list[str] = []

    def work(label: str) -> str:
        ran.append(label)
        return label

    limits = ToolLimits(max_active=1, max_queued=1)
    script = Script([reply(*[call("work", {"label": str(i)}, str(i)) for i in range(3)]), reply("done")])
    with Agent(script.model, tools=[tool("work", "Work.", work)], tool_limits=limits,
               max_tool_retries=1).run("go") as result:
        parts = result.messages[2].parts
        assert [type(p) for p in parts] == [ToolReturnPart, ToolReturnPart, RetryPromptPart]
        assert sorted(ran) == ["0", "1"]
        assert result.usage.tool_calls == 2


def test_max_tool_calls_caps_the_run_exactly() -> None:
    ran: list[str] = []

    def work(label: str) -> str:
        ran.append(label)
        return label

    echo = tool("work", "Work.", work)
    ok = Script([reply(call("work", {"label": "a"}, "1"), call("work", {"label": "b"}, "2")),
                 reply(call("work", {"label": "c"}, "3")), reply("done")])
    with Agent(ok.model, tools=[echo], limits=RunLimits(max_tool_calls=3)).run("go") as result:
        assert result.usage.tool_calls == 3
    ran.clear()
    over = Script([reply(call("work", {"label": "a"}, "1"), call("work", {"label": "b"}, "2")),
                   reply(call("work", {"label": "c"}, "3"), call("work", {"label": "d"}, "4")),
                   reply("done")])
    with pytest.raises(ToolCallLimitExceeded) as caught:
        Agent(over.model, tools=[echo], limits=RunLimits(max_tool_calls=3), max_tool_retries=2).run("go")
    assert ran == ["a", "b"]  # the step that would pass the cap runs none of its calls
    assert (caught.value.limit_name, caught.value.limit, caught.value.value) == ("max_tool_calls", 3, 4)


def test_max_tool_calls_ends_a_tool_looping_run_before_another_model_request() -> None:
    ran: list[int] = []
    requests: list[int] = []

    def model(messages, info):  # type: ignore[no-untyped-def]
        requests.append(len(requests))
        return ResponseMessage((ToolCallPart("work", {"n": len(requests)}, f"c{len(requests)}"),))

    def work(n: int) -> int:
        ran.append(n)
        return n

    agent = Agent(FunctionModel(model), tools=[tool("work", "Work.", work)], limits=RunLimits(max_tool_calls=2))
    with pytest.raises(ToolCallLimitExceeded, match="max_tool_calls=2") as caught:
        agent.run("go")
    assert ran == [1, 2] and len(requests) == 3  # two calls ran; the third response ended the run
    assert isinstance(caught.value, UsageLimitExceeded)
    requests.clear()
    ran.clear()
    with pytest.raises(ToolCallLimitExceeded):
        Agent(FunctionModel(model), tools=[tool("work", "Work.", work)],
              limits=RunLimits(max_tool_calls=0)).run("go")
    assert ran == [] and len(requests) == 1


def test_invalid_arguments_become_retry_prompts_and_are_bounded_per_tool() -> None:
    def add(a: int, b: int) -> int:
        return a + b

    adder = tool("add", "Add.", add)
    script = Script([reply(call("add", {"a": "x", "b": 1}, "1")), reply(call("add", {"a": 1, "b": 2}, "2")),
                     reply("done")])
    with Agent(script.model, tools=[adder]).run("go") as result:
        retry = result.messages[2].parts[0]
        assert isinstance(retry, RetryPromptPart) and retry.tool_call_id == "1"
        assert "$.a" in retry.content
        assert result.messages[4].parts == (ToolReturnPart("add", "2", 3, timestamp=result.messages[4].timestamp),)
    bad = Script([reply(call("add", {"a": "x"}, "1")), reply(call("add", {"b": "y"}, "2"))])
    with pytest.raises(ToolRetriesExceeded) as info:
        Agent(bad.model, tools=[adder]).run("go")
    assert info.value.tool_name == "add" and info.value.max_retries == 1


def test_model_retry_uses_the_per_tool_override_and_context_retry_count() -> None:
    seen: list[int] = []

    def flaky(ctx: ToolRunContext, n: int) -> int:
        seen.append(ctx.retry)
        if ctx.retry < 2:
            raise ModelRetry("try again")
        return n

    flaky_tool = tool("flaky", "Flaky.", flaky, max_retries=2)
    script = Script([reply(call("flaky", {"n": i}, str(i))) for i in range(3)] + [reply("done")])
    with Agent(script.model, tools=[flaky_tool], max_tool_retries=0).run("go") as result:
        assert result.output == "done"
    assert seen == [0, 1, 2]


def test_tool_retries_do_not_consume_the_output_budget() -> None:
    def failing(n: int) -> int:
        raise ModelRetry("nope")

    script = Script([reply(call("f", {"n": 1}, "1")), reply("final")])
    with Agent(script.model, tools=[tool("f", "F.", failing)], max_output_retries=0).run("go") as result:
        assert result.output == "final"


def test_unknown_tool_names_become_retry_prompts() -> None:
    script = Script([reply(call("nope", {}, "1")), reply("done")])
    echo = tool("echo", "Echo.", _sleeper(0))
    with Agent(script.model, tools=[echo]).run("go") as result:
        retry = result.messages[2].parts[0]
        assert isinstance(retry, RetryPromptPart)
        assert retry.content == "Unknown tool name: 'nope'. Available tools: echo."


def test_application_exceptions_from_tools_propagate_unwrapped() -> None:
    class Boom(Exception):
        pass

    def explode(n: int) -> int:
        raise Boom("bad")

    script = Script([reply(call("x", {"n": 1}))])
    with pytest.raises(Boom):
        Agent(script.model, tools=[tool("x", "X.", explode)]).run("go")


def test_follow_up_messages_follow_the_tool_returns_in_call_order() -> None:
    def note(label: str) -> ToolReturn[str]:
        return ToolReturn(label, (RequestMessage((UserPromptPart(f"note {label}"),)),))

    script = Script([reply(call("note", {"label": "a"}, "1"), call("note", {"label": "b"}, "2")), reply("done")])
    with Agent(script.model, tools=[tool("note", "Note.", note)]).run("go") as result:
        assert [type(m).__name__ for m in result.messages] == [
            "RequestMessage", "ResponseMessage", "RequestMessage", "RequestMessage", "RequestMessage",
            "ResponseMessage",
        ]
        assert result.messages[3].parts == (UserPromptPart("note a"),)
        assert result.messages[4].parts == (UserPromptPart("note b"),)


def test_manual_and_contextual_tools_receive_dependencies_and_usage() -> None:
    seen = []

    def lookup(args, ctx):  # type: ignore[no-untyped-def]
        seen.append((ctx.dependency(dict)["k"], ctx.request_count, ctx.usage.requests, ctx.tool_call_id))
        return {"value": args["key"]}

    manual = Tool.manual("lookup", "Look up.", {"type": "object", "properties": {"key": {"type": "string"}}},
                         lookup, takes_context=True)
    script = Script([reply(call("lookup", {"key": "z"}, "7")), reply("done")])
    with Agent(script.model, tools=[manual]).run("go", deps={"k": "dep"}) as result:
        assert result.messages[2].parts[0].content == {"value": "z"}
    assert seen == [("dep", 1, 1, "7")]


def test_toolsets_are_prepared_before_each_step_with_namespaces() -> None:
    steps: list[int] = []

    def prepare(ctx):  # type: ignore[no-untyped-def]
        steps.append(ctx.request_count)
        return None

    db = Toolset([tool("search", "Search.", _sleeper(0))], namespace="db", prepare=prepare)
    script = Script([reply(call("db__search", {"label": "q"}, "1")), reply("done")])
    with Agent(script.model, toolsets=[db]).run("go") as result:
        assert result.messages[2].parts[0].content == "q"
        assert [t.name for t in script.requests[0].tools] == ["db__search"]
    assert steps == [0, 1]


def test_tools_run_in_worker_threads_without_blocking_other_runs() -> None:
    nap = tool("nap", "Nap.", _sleeper(0.05))
    agent = Agent(Script([]).model, tools=[nap])
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            s = Script([reply(*[call("nap", {"label": str(j)}, str(j)) for j in range(2)]), reply(str(i))])
            with Agent(s.model, tools=agent.tools).run("go") as result:
                assert result.output == str(i)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
