"""Application callbacks race the run deadline and cancellation (issue 11 item 12).

A blocking FunctionModel function, stream item, dynamic instruction, output validator,
output function, tool approval or history processor used to overrun the deadline by its
own duration.  Each now loses its race like a tool call: the run returns on time with the
control's error, the callback is abandoned (counted process-wide) and its late result is
discarded.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from zigai.agent import Agent, RunOptions
from zigai.control import CancellationToken, Cancelled, RunControl, RunTimedOut
from zigai.messages import ResponseMessage, TextPart, ToolCallPart
from zigai.output import OutputResult
from zigai.testing import FunctionModel
from zigai.tool import (
    Tool,
    ToolThreadLimitReached,
    abandoned_tool_threads,
    set_max_abandoned_tool_threads,
)
from zigai.tool.race import BoundedIterator, call_bounded

TIMEOUT_MS = 150
BLOCK_S = 10.0
# The run must end near its deadline, far before the blocked callback would return.
RETURNS_BY_S = 2.0


@pytest.fixture()
def release() -> Iterator[threading.Event]:
    """An event blocked callbacks wait on; set at teardown so abandoned threads end."""
    event = threading.Event()
    yield event
    event.set()
    end = time.monotonic() + 5
    while abandoned_tool_threads() and time.monotonic() < end:
        time.sleep(0.01)


def _text(messages: Any, info: Any) -> ResponseMessage:
    return ResponseMessage((TextPart("ok"),))


def _timed(run: Any, error: type[BaseException]) -> float:
    started = time.monotonic()
    with pytest.raises(error):
        run()
    return time.monotonic() - started


def test_a_blocking_function_model_ends_at_the_deadline(release: threading.Event) -> None:
    late: list[str] = []

    def slow(messages: Any, info: Any) -> ResponseMessage:
        release.wait(BLOCK_S)
        late.append("returned")
        return _text(messages, info)

    agent = Agent(FunctionModel(slow), run_timeout_ms=TIMEOUT_MS)
    assert _timed(lambda: agent.run("hi"), RunTimedOut) < RETURNS_BY_S
    assert abandoned_tool_threads() >= 1
    release.set()
    end = time.monotonic() + 5
    while not late and time.monotonic() < end:
        time.sleep(0.01)
    assert late == ["returned"]  # it finished later; its result went nowhere


def test_a_blocking_function_model_observes_cancellation(release: threading.Event) -> None:
    token = CancellationToken()

    def slow(messages: Any, info: Any) -> ResponseMessage:
        release.wait(BLOCK_S)
        return _text(messages, info)

    agent = Agent(FunctionModel(slow))
    threading.Timer(0.1, token.cancel, args=("stop",)).start()
    elapsed = _timed(lambda: agent.run("hi", options=RunOptions(cancellation=token)), Cancelled)
    assert elapsed < RETURNS_BY_S


def test_a_blocking_stream_item_ends_at_the_deadline(release: threading.Event) -> None:
    def stream(messages: Any, info: Any) -> Iterator[str]:
        yield "first "
        release.wait(BLOCK_S)
        yield "never"

    agent = Agent(FunctionModel(stream_function=stream), run_timeout_ms=TIMEOUT_MS)
    seen: list[str] = []

    def consume() -> None:
        with agent.run_stream("hi") as events:
            for event in events:
                seen.append(type(event).__name__)

    assert _timed(consume, RunTimedOut) < RETURNS_BY_S
    assert "PartStartEvent" in seen and "PartDeltaEvent" not in seen


def test_a_raced_stream_delivers_every_item_in_order() -> None:
    words = [f"w{i} " for i in range(50)]

    def stream(messages: Any, info: Any) -> Iterator[str]:
        yield from words

    agent = Agent(FunctionModel(stream_function=stream), run_timeout_ms=5_000)
    with agent.run_stream("hi") as events:
        deltas = sum(1 for event in events if type(event).__name__ == "PartDeltaEvent")
        with events.result() as result:
            assert result.output == "".join(words)
    assert deltas == len(words) - 1


def test_a_blocking_dynamic_instruction_ends_at_the_deadline(release: threading.Event) -> None:
    def instruction(ctx: Any) -> str:
        release.wait(BLOCK_S)
        return "late"

    agent = Agent(FunctionModel(_text), dynamic_instructions=[instruction], run_timeout_ms=TIMEOUT_MS)
    assert _timed(lambda: agent.run("hi"), RunTimedOut) < RETURNS_BY_S


def test_a_blocking_output_validator_ends_at_the_deadline(release: threading.Event) -> None:
    def validator(name: str, ctx: Any, value: Any) -> OutputResult:
        release.wait(BLOCK_S)
        return OutputResult.output(value)

    agent = Agent(FunctionModel(_text), output_validators=[validator], run_timeout_ms=TIMEOUT_MS)
    assert _timed(lambda: agent.run("hi"), RunTimedOut) < RETURNS_BY_S

    hooked = Agent(FunctionModel(_text), output_validators=[validator], run_timeout_ms=TIMEOUT_MS,
                   hooks=[lambda event: None])
    assert _timed(lambda: hooked.run("hi"), RunTimedOut) < RETURNS_BY_S


def test_a_blocking_tool_approval_ends_at_the_deadline(release: threading.Event) -> None:
    def calls(messages: Any, info: Any) -> ResponseMessage:
        return ResponseMessage((ToolCallPart("lookup", "{}", "c1"),))

    def approval(ctx: Any, name: str, args: Any) -> bool:
        release.wait(BLOCK_S)
        return False

    tool = Tool.manual("lookup", "Look up.", {"type": "object"}, lambda args: "x")
    agent = Agent(FunctionModel(calls), tools=[tool], tool_approval=approval, run_timeout_ms=TIMEOUT_MS)
    assert _timed(lambda: agent.run_until_pause("hi"), RunTimedOut) < RETURNS_BY_S


def test_a_blocking_history_processor_ends_at_the_deadline(release: threading.Event) -> None:
    def processor(messages: Any) -> Any:
        release.wait(BLOCK_S)
        return messages

    agent = Agent(FunctionModel(_text), history_processors=[processor], run_timeout_ms=TIMEOUT_MS)
    assert _timed(lambda: agent.run("hi"), RunTimedOut) < RETURNS_BY_S


def test_unbounded_callbacks_run_inline_and_bounded_ones_keep_contextvars() -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")
    seen: list[tuple[int, str]] = []

    def model(messages: Any, info: Any) -> ResponseMessage:
        seen.append((threading.get_ident(), var.get()))
        return _text(messages, info)

    var.set("caller")
    with Agent(FunctionModel(model)).run("hi"):
        pass
    with Agent(FunctionModel(model), run_timeout_ms=5_000).run("hi"):
        pass
    me = threading.get_ident()
    assert seen[0] == (me, "caller")
    assert seen[1][0] != me and seen[1][1] == "caller"


def test_a_raced_callback_error_propagates_unchanged() -> None:
    class Boom(Exception):
        pass

    def model(messages: Any, info: Any) -> ResponseMessage:
        raise Boom("from the callback")

    with pytest.raises(Boom, match="from the callback"):
        Agent(FunctionModel(model), run_timeout_ms=5_000).run("hi")


def test_abandoned_callbacks_count_against_the_process_bound(release: threading.Event) -> None:
    base = abandoned_tool_threads()
    previous = set_max_abandoned_tool_threads(base + 1)
    try:
        control = RunControl.start(50)
        with pytest.raises(RunTimedOut, match="was still running at the deadline"):
            call_bounded(release.wait, BLOCK_S, control=control, what="a test callback")
        assert abandoned_tool_threads() == base + 1
        with pytest.raises(ToolThreadLimitReached, match="a test callback was not started"):
            call_bounded(lambda: "never", control=RunControl.start(1_000), what="a test callback")
        with pytest.raises(ToolThreadLimitReached):
            BoundedIterator(iter(()), control=RunControl.start(1_000), what="a test iterator")
        assert call_bounded(lambda: "inline", control=RunControl.start(), what="x") == "inline"
    finally:
        set_max_abandoned_tool_threads(previous)


def test_call_bounded_refuses_to_start_after_the_deadline_or_cancel() -> None:
    started: list[int] = []
    expired = RunControl(deadline=time.monotonic() - 1)
    with pytest.raises(RunTimedOut):
        call_bounded(started.append, 1, control=expired, what="x")
    token = CancellationToken()
    token.cancel("no")
    with pytest.raises(Cancelled, match="no"):
        call_bounded(started.append, 1, control=RunControl(token=token), what="x")
    assert started == []


def test_bounded_iterator_pulls_in_order_and_stops_cleanly() -> None:
    control = RunControl.start(5_000)
    assert list(BoundedIterator(range(5), control=control, what="x")) == [0, 1, 2, 3, 4]
    inline = BoundedIterator(range(3), control=RunControl.start(), what="x")
    assert list(inline) == [0, 1, 2]
    partial = BoundedIterator(iter(range(100)), control=control, what="x")
    assert next(partial) == 0
    partial.close()
    with pytest.raises(StopIteration):
        next(partial)

    def broken() -> Iterator[int]:
        yield 1
        raise KeyError("item")

    failing = BoundedIterator(broken(), control=control, what="x")
    assert next(failing) == 1
    with pytest.raises(KeyError):
        next(failing)
