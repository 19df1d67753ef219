"""Message timestamps: every request the agent builds and every unstamped response get one."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from zigai import history
from zigai.agent import Agent, InvalidAgentConfiguration
from zigai.messages import RequestMessage, ResponseMessage, TextPart, ToolCallPart
from zigai.output import OutputResult
from zigai.reflect import tool
from zigai.testing import FunctionModel

START = datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)


def _ticking() -> Any:
    seconds = itertools.count()
    return lambda: START + timedelta(seconds=next(seconds))


def _tool_then_bad_then_good() -> FunctionModel:
    def decide(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        requests = sum(isinstance(message, RequestMessage) for message in messages)
        if requests == 1:
            return ResponseMessage((ToolCallPart("add", '{"a":1,"b":2}', "c1"),))
        return ResponseMessage((TextPart("bad" if requests == 2 else "good"),))

    return FunctionModel(decide)


def _agent(**fields: Any) -> Agent:
    def add(a: int, b: int) -> int:
        return a + b

    def validator(name: Any, ctx: Any, value: str) -> OutputResult:
        return OutputResult.retry("say good") if value == "bad" else OutputResult.output(value)

    return Agent(_tool_then_bad_then_good(), tools=[tool("add", "Add.", add)],
                 output_validators=[validator], max_output_retries=2, **fields)


def test_requests_and_responses_are_stamped_in_order_from_the_clock() -> None:
    with _agent(clock=_ticking()).run("sum") as result:
        kinds = [type(message).__name__ for message in result.messages]
        stamps = [message.timestamp for message in result.messages]
    # prompt, tool call, tool returns, "bad", output retry, "good"
    assert kinds == ["RequestMessage", "ResponseMessage"] * 3
    assert stamps == [START + timedelta(seconds=s) for s in range(6)]


def test_the_default_clock_is_utc_now() -> None:
    before = datetime.now(UTC)
    with _agent().run("sum") as result:
        stamps = [message.timestamp for message in result.messages]
    after = datetime.now(UTC)
    assert all(stamp.tzinfo is UTC and before <= stamp <= after for stamp in stamps)
    assert stamps == sorted(stamps)


def test_a_timestamp_the_model_gave_is_kept() -> None:
    given = datetime(2020, 1, 1, tzinfo=UTC)
    answer = ResponseMessage((TextPart("hi"),), timestamp=given)
    agent = Agent(FunctionModel(lambda messages, info: answer), clock=lambda: START)
    with agent.run("hello") as result:
        assert [m.timestamp for m in result.messages] == [START, given]


def test_streamed_runs_stamp_like_buffered_runs_and_equal_clocks_give_equal_histories() -> None:
    model = FunctionModel(lambda messages, info: ResponseMessage((TextPart("hi"),)),
                          stream_function=lambda messages, info: ("hi",))
    with Agent(model, clock=_ticking()).run_stream("hello") as stream:
        list(stream)
        with stream.result() as streamed:
            streamed_messages = streamed.messages
    assert [m.timestamp for m in streamed_messages] == [START, START + timedelta(seconds=1)]
    with Agent(model, clock=_ticking()).run("hello") as buffered:
        assert buffered.messages == streamed_messages


def test_an_aware_clock_in_another_zone_is_normalized_to_utc() -> None:
    local = datetime(2025, 3, 4, 7, 6, 7, tzinfo=timezone(timedelta(hours=2)))
    with _agent(clock=lambda: local).run("sum") as result:
        assert {m.timestamp for m in result.messages} == {START}
        assert all(m.timestamp.tzinfo is UTC for m in result.messages)


def test_timestamps_survive_the_history_codec_and_old_histories_still_load() -> None:
    with _agent(clock=_ticking()).run("sum") as result:
        text = history.stringify(result.messages)
        with history.parse(text) as loaded:
            assert loaded.messages == result.messages
    old = ('{"version":2,"messages":[{"kind":"request","parts":[{"part_kind":"user-prompt",'
           '"content":"sum"}]}]}')
    with history.parse(old) as loaded:
        assert loaded.messages[0].timestamp is None
        with _agent(clock=lambda: START).run(None, message_history=loaded.messages) as result:
            assert result.messages[0].timestamp is None  # history is never rewritten
            assert {m.timestamp for m in result.messages[1:]} == {START}


def test_a_clock_that_is_not_callable_or_returns_a_naive_time_is_refused() -> None:
    with pytest.raises(InvalidAgentConfiguration, match="Agent.clock must be a callable"):
        _agent(clock=START)
    with pytest.raises(InvalidAgentConfiguration, match="timezone-aware datetime, got datetime"):
        _agent(clock=lambda: datetime(2025, 1, 1)).run("sum")
    with pytest.raises(InvalidAgentConfiguration, match="got '2025-01-01'"):
        _agent(clock=lambda: "2025-01-01").run("sum")


def test_stamping_keeps_every_other_response_field() -> None:
    from dataclasses import fields

    from zigai.messages import FinishReason, Metadata, ProviderDetails
    from zigai.usage import RequestUsage

    assert [f.name for f in fields(ResponseMessage)] == [
        "parts", "usage", "model_name", "provider_name", "provider_response_id", "finish_reason",
        "raw_finish_reason", "timestamp", "provider_details", "metadata", "kind"]
    answer = ResponseMessage(
        (TextPart("hi"),), usage=RequestUsage(input_tokens=3, output_tokens=2), model_name="m",
        provider_name="p", provider_response_id="r1", finish_reason=FinishReason.stop,
        raw_finish_reason="end_turn", provider_details=ProviderDetails.from_value({"a": 1}),
        metadata=Metadata.from_value({"b": 2}))
    agent = Agent(FunctionModel(lambda messages, info: answer), clock=lambda: START)
    with agent.run("hello") as result:
        kept = result.messages[-1]
    assert kept.timestamp == START
    assert all(getattr(kept, f.name) == getattr(answer, f.name)
               for f in fields(ResponseMessage) if f.name != "timestamp")


def _part_stamps(messages: tuple[Any, ...]) -> list[tuple[str, datetime | None]]:
    return [(part.part_kind, part.timestamp) for message in messages
            if isinstance(message, RequestMessage) for part in message.parts]


def test_parts_the_agent_creates_carry_their_request_timestamp() -> None:
    """System and user prompts, tool returns and output-retry prompts are stamped from the
    same clock reading as the request that carries them (as PydanticAI stamps its parts)."""
    agent = _agent(clock=_ticking(), system_prompt=("Be brief.",))
    with agent.run("sum") as result:
        stamps = _part_stamps(result.messages)
    assert stamps == [
        ("system-prompt", START), ("user-prompt", START),
        ("tool-return", START + timedelta(seconds=2)),
        ("retry-prompt", START + timedelta(seconds=4)),
    ]


def test_a_bad_tool_call_retry_prompt_is_stamped_and_so_is_the_event_that_reports_it() -> None:
    from zigai.agent import FunctionToolResultEvent
    from zigai.testing import DeltaToolCall

    def decide(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        if len(messages) == 1:
            return ResponseMessage((ToolCallPart("add", '{"a":"one"}', "c1"),))
        return ResponseMessage((TextPart("done"),))

    def streamed(messages: tuple[Any, ...], info: Any) -> Any:
        if len(messages) == 1:
            return iter([DeltaToolCall("add", '{"a":"one"}', "c1")])
        return iter(["done"])

    def add(a: int, b: int) -> int:
        return a + b

    agent = Agent(FunctionModel(decide, stream_function=streamed),
                  tools=[tool("add", "Add.", add)], clock=_ticking())
    with agent.run("sum") as result:
        assert _part_stamps(result.messages) == [
            ("user-prompt", START), ("retry-prompt", START + timedelta(seconds=2))]
    agent = Agent(FunctionModel(decide, stream_function=streamed),
                  tools=[tool("add", "Add.", add)], clock=_ticking())
    with agent.run_stream("sum") as stream:
        events = list(stream)
        with stream.result() as result:
            reported = [e.result for e in events if isinstance(e, FunctionToolResultEvent)]
            assert [p.timestamp for p in reported] == [START + timedelta(seconds=2)]
            assert reported[0] == result.messages[2].parts[0]


def test_parts_of_an_incoming_history_or_built_with_a_timestamp_are_never_rewritten() -> None:
    from zigai.messages import UserPromptPart

    given = datetime(2020, 1, 1, tzinfo=UTC)
    prior = (RequestMessage((UserPromptPart("earlier"),)),
             ResponseMessage((TextPart("ok"),)),
             RequestMessage((UserPromptPart("stamped", timestamp=given),)))
    agent = Agent(FunctionModel(lambda messages, info: ResponseMessage((TextPart("hi"),))),
                  clock=lambda: START)
    with agent.run("now", message_history=prior) as result:
        assert result.messages[:3] == prior
        assert _part_stamps(result.messages) == [
            ("user-prompt", None), ("user-prompt", given), ("user-prompt", START)]
