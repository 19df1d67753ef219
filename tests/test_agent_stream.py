"""Agent.run_stream / run_stream_events: the streamed mode of the one agent loop."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from support.corpus import Recordings

from zigai.agent import (
    Agent,
    FinalResultEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelResponseEvent,
    PartialOutputEvent,
    PauseRequired,
    ToolAvailabilityEvent,
    TypedResult,
)
from zigai.messages import ResponseMessage, TextPart, ToolCallPart
from zigai.model import PartDeltaEvent, PartEndEvent, PartStartEvent
from zigai.output import OutputChoice, OutputResult, OutputSpec
from zigai.provider import ProviderServerError
from zigai.retry import RetryPolicy
from zigai.testing import DeltaToolCall, FunctionModel, TestModel
from zigai.tool import Tool, ToolExecution

ROOT = Path(__file__).resolve().parent.parent

WORDS = ["The ", "quick ", "brown ", "fox"]


def _text_model() -> FunctionModel:
    def buffered(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        return ResponseMessage((TextPart("".join(WORDS)),))

    def streamed(messages: tuple[Any, ...], info: Any) -> Iterator[str]:
        yield from WORDS

    return FunctionModel(buffered, stream_function=streamed)


def _stream(agent: Agent, prompt: str, **kwargs: Any) -> tuple[list[Any], Any]:
    with agent.run_stream(prompt, **kwargs) as stream:
        events = list(stream)
        return events, stream.result()


def _fixed_clock() -> datetime:
    return datetime(2025, 6, 1, 12, 0, tzinfo=UTC)  # separate runs then build equal histories


def test_text_stream_matches_the_buffered_run() -> None:
    agent = Agent(_text_model(), clock=_fixed_clock)
    events, streamed = _stream(agent, "hi")
    with agent.run("hi") as buffered, streamed:
        assert streamed.output == buffered.output == "The quick brown fox"
        assert streamed.usage == buffered.usage
        assert streamed.messages == buffered.messages
    kinds = [e.event_kind for e in events]
    assert kinds == [
        "tool_availability",
        "part_start", "partial_output", "part_delta", "partial_output", "part_delta",
        "partial_output", "part_delta", "partial_output", "part_end",
        "model_response", "final_result",
    ]
    partials = [e.output for e in events if isinstance(e, PartialOutputEvent)]
    assert partials == ["The ", "The quick ", "The quick brown ", "The quick brown fox"]
    assert events[-1] == FinalResultEvent("The quick brown fox", "The quick brown fox", None)


def test_streamed_tool_loop_matches_the_buffered_run() -> None:
    def add(args: dict[str, int]) -> int:
        return args["a"] + args["b"]

    tool = Tool.manual(
        "add", "Add.", {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                        "required": ["a", "b"]}, add,
    )
    agent = Agent(TestModel(seed=3), tools=[tool], clock=_fixed_clock)
    events, streamed = _stream(agent, "sum")
    with agent.run("sum") as buffered, streamed:
        assert streamed.output == buffered.output
        assert streamed.usage == buffered.usage
        assert streamed.messages == buffered.messages
    calls = [e for e in events if isinstance(e, FunctionToolCallEvent)]
    results = [e for e in events if isinstance(e, FunctionToolResultEvent)]
    assert [c.part.tool_name for c in calls] == ["add"]
    assert results[0].result.tool_call_id == calls[0].part.tool_call_id
    assert events.index(calls[0]) < events.index(results[0])
    assert [e for e in events if isinstance(e, ToolAvailabilityEvent)] == [ToolAvailabilityEvent(("add",), ())]
    assert sum(isinstance(e, ModelResponseEvent) for e in events) == 2
    assert sum(isinstance(e, FinalResultEvent) for e in events) == 1
    # indexes restart for every model response
    starts = [e.index for e in events if isinstance(e, PartStartEvent)]
    assert starts.count(0) == 2


SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "maxLength": 20}, "rank": {"type": "integer"}},
    "required": ["city", "rank"],
    "additionalProperties": False,
}
JSON_CHUNKS = ['{"ci', 'ty": "Par', 'is", ', '"rank', '": 1', "2}"]


def test_native_output_streams_repaired_partial_snapshots() -> None:
    def streamed(messages: tuple[Any, ...], info: Any) -> Iterator[str]:
        yield from JSON_CHUNKS

    seen: list[tuple[bool, Any]] = []

    def validator(name: str, ctx: Any, value: Any) -> OutputResult:
        seen.append((ctx.partial_output, value))
        return OutputResult.output(value)

    agent = Agent(FunctionModel(stream_function=streamed), output=OutputSpec.json_schema("place", SCHEMA),
                  output_validators=[validator])
    events, result = _stream(agent, "where")
    partials = [e for e in events if isinstance(e, PartialOutputEvent)]
    assert [p.output for p in partials] == [
        {}, {"city": "Par"}, {"city": "Paris"}, {"city": "Paris", "rank": 12},
    ]
    assert {p.choice_name for p in partials} == {"place"}
    for partial in partials:  # the raw event that produced a snapshot comes right before it
        assert events[events.index(partial) - 1].event_kind in ("part_start", "part_delta")
    assert seen[-1] == (False, {"city": "Paris", "rank": 12})
    assert all(flag for flag, _ in seen[:-1])
    with result:
        assert result.output == {"city": "Paris", "rank": 12}
        assert result.output_name == "place"
    assert events[-1] == FinalResultEvent({"city": "Paris", "rank": 12}, {"city": "Paris", "rank": 12}, "place")


def test_partial_retry_suppresses_the_snapshot_and_extras_are_never_shown() -> None:
    def streamed(messages: tuple[Any, ...], info: Any) -> Iterator[str]:
        yield from ['{"city": "Lyon", ', '"rank": 3}']

    def function(ctx: Any, value: Any) -> Any:
        if ctx.partial_output and "rank" not in value:
            return OutputResult.retry("incomplete")
        return {"label": f"{value['city']}#{value['rank']}"}

    spec = OutputSpec.native([OutputChoice("place", SCHEMA, function=function)])
    events, result = _stream(Agent(FunctionModel(stream_function=streamed), output=spec), "q")
    partials = [e.output for e in events if isinstance(e, PartialOutputEvent)]
    assert partials == [{"label": "Lyon#3"}]
    with result:
        assert result.output == {"label": "Lyon#3"}

    def bad(messages: tuple[Any, ...], info: Any) -> Iterator[str]:
        yield '{"town": "x"'
        yield "}"

    calls = {"n": 0}

    def fixed(messages: tuple[Any, ...], info: Any) -> Iterator[str]:
        calls["n"] += 1
        yield from (bad(messages, info) if calls["n"] == 1 else iter(['{"city": "A", "rank": 1}']))

    events, result = _stream(Agent(FunctionModel(stream_function=fixed),
                                   output=OutputSpec.json_schema("place", SCHEMA)), "q")
    assert [e.output for e in events if isinstance(e, PartialOutputEvent)] == [{"city": "A", "rank": 1}]
    with result:
        assert result.usage.requests == 2


def test_tool_output_partials_unwrap_the_value_wrapper() -> None:
    def streamed(messages: tuple[Any, ...], info: Any) -> Iterator[Any]:
        if any(isinstance(p, ToolCallPart) for m in messages if isinstance(m, ResponseMessage)
               for p in m.parts):
            return
        yield DeltaToolCall(name="numbers", json_args='{"value": [1, ')
        yield DeltaToolCall(json_args="2, 3]}")

    spec = OutputSpec.tool([OutputChoice("numbers", {"type": "array", "items": {"type": "integer"}})])
    events, result = _stream(Agent(FunctionModel(stream_function=streamed), output=spec), "q")
    partials = [e for e in events if isinstance(e, PartialOutputEvent)]
    assert [p.output for p in partials] == [[1], [1, 2, 3]]
    assert partials[0].tool_call_id == partials[1].tool_call_id is not None
    with result:
        assert result.output == [1, 2, 3]


@dataclass
class _FlakyModel:
    """Fails the first stream attempt either before or after its first event."""

    fail_after_first: bool
    calls: int = 0

    def __post_init__(self) -> None:
        self.inner = _text_model()

    model_name = "flaky"
    provider_name = "flaky"

    @property
    def profile(self) -> Any:
        return self.inner.profile

    def request(self, request: Any) -> Any:  # pragma: no cover - streaming only
        raise AssertionError

    def stream(self, request: Any) -> Any:
        self.calls += 1
        stream = self.inner.stream(request)
        if self.calls > 1:
            return stream
        fail_after_first = self.fail_after_first

        class Broken(type(stream)):  # type: ignore[misc]
            def _events(self_inner) -> Iterator[Any]:  # noqa: N805
                if fail_after_first:
                    yield PartStartEvent(0, TextPart("The "))
                raise ProviderServerError("overloaded", status=529)

        stream.__class__ = Broken
        return stream


def test_a_failure_before_visible_output_is_retried() -> None:
    model = _FlakyModel(fail_after_first=False)
    agent = Agent(model, retry_policy=RetryPolicy(max_attempts=2, initial_delay_ms=0, jitter=False))  # type: ignore[arg-type]
    events, result = _stream(agent, "hi")
    assert model.calls == 2
    with result:
        assert result.output == "The quick brown fox"


def test_a_failure_after_visible_output_is_never_retried() -> None:
    model = _FlakyModel(fail_after_first=True)
    agent = Agent(model, retry_policy=RetryPolicy(max_attempts=3, initial_delay_ms=0, jitter=False))  # type: ignore[arg-type]
    seen: list[Any] = []
    with pytest.raises(ProviderServerError), agent.run_stream("hi") as stream:
        for event in stream:
            seen.append(event)
    assert model.calls == 1
    assert [e.event_kind for e in seen] == ["tool_availability", "part_start", "partial_output"]


def test_callback_sink_sees_the_same_events() -> None:
    agent = Agent(_text_model(), clock=_fixed_clock)
    events, streamed = _stream(agent, "hi")
    got: list[Any] = []
    with agent.run_stream_events("hi", sink=got.append) as result, streamed:
        assert result.messages == streamed.messages
    assert got == events


def test_sink_errors_stop_the_run() -> None:
    def sink(event: Any) -> None:
        if isinstance(event, PartDeltaEvent):
            raise KeyError("stop")

    with pytest.raises(KeyError):
        Agent(_text_model()).run_stream_events("hi", sink=sink)


def test_result_drains_unread_events_and_abandoning_stops_the_run() -> None:
    agent = Agent(_text_model())
    with agent.run_stream("hi") as stream, stream.result() as result:
        assert result.output == "The quick brown fox"
    with agent.run_stream("hi") as stream:
        iterator = iter(stream)
        assert next(iterator).event_kind == "tool_availability"
        assert next(iterator).event_kind == "part_start"
    with pytest.raises(RuntimeError):
        stream.result()


def test_typed_streaming_returns_a_typed_result() -> None:
    @dataclass
    class Place:
        city: str
        rank: int

    def streamed(messages: tuple[Any, ...], info: Any) -> Iterator[str]:
        yield from JSON_CHUNKS

    agent = Agent(FunctionModel(stream_function=streamed))
    with agent.run_stream("q", output_type=Place, mode="native") as stream:
        events = list(stream)
        result = stream.result()
    assert isinstance(result, TypedResult)
    with result:
        assert result.value == Place("Paris", 12)
        assert result.json == {"city": "Paris", "rank": 12}
    assert isinstance(events[-1], FinalResultEvent) and events[-1].output == Place("Paris", 12)


def test_run_stream_refuses_to_discard_a_pause() -> None:
    tool = Tool.manual("publish", "Publish.", {"type": "object", "properties": {}}, lambda a: "ok",
                       execution=ToolExecution.requires_approval)
    agent = Agent(TestModel(), tools=[tool])
    with pytest.raises(PauseRequired), agent.run_stream("go") as stream:
        list(stream)


def test_end_events_carry_the_final_parts() -> None:
    events, result = _stream(Agent(_text_model()), "hi")
    ends = [e for e in events if isinstance(e, PartEndEvent)]
    with result:
        assert tuple(e.part for e in ends) == result.response.parts


def test_every_streamed_text_cassette_replays_through_run_stream(recordings: Recordings) -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    import conformance

    scenarios = conformance.load_scenarios(recordings.scenarios)
    base = recordings.root
    if recordings.own:  # ours: llama-server's three protocols and llm-katan's Gemini
        cassettes = [path for path in sorted(base.rglob("*.yaml"))
                     if (found := conformance.find_scenario(path.relative_to(base).as_posix(), scenarios))
                     and found.family == "streamed-text"]
        assert len(cassettes) >= 4, cassettes
    else:
        cassettes = sorted((base / "streamed" / "text").glob("*.yaml"))
    assert cassettes
    for path in cassettes:
        scenario = conformance.find_scenario(path.relative_to(base).as_posix(), scenarios)
        assert scenario is not None and scenario.family in conformance.STREAMED_FAMILIES
        conformance.run_cassette(path, path.relative_to(base).as_posix(), scenarios)
