"""Output verdicts users rely on (issue 12): ``ModelRetry`` from an output function or validator
asks the model again, an ``OutputResult`` of an unknown kind is refused, and the streamed text
of a run is exactly its output when the first chunk arrives in the part's start event."""

from __future__ import annotations

from typing import Any

import pytest

from zigai.agent import Agent, OutputChoice, OutputResult, OutputSpec, PartialOutputEvent
from zigai.agent.errors import OutputRetriesExceeded
from zigai.messages import ResponseMessage, RetryPromptPart, TextPart
from zigai.model import PartDeltaEvent, PartStartEvent, TextPartDelta
from zigai.output import InvalidOutputSpec
from zigai.testing import FunctionModel
from zigai.tool import ModelRetry


def _answers(*texts: str) -> tuple[FunctionModel, list[Any]]:
    seen: list[Any] = []
    queue = list(texts)

    def reply(messages: Any, info: Any) -> ResponseMessage:
        seen.append(messages)
        return ResponseMessage.from_text(queue.pop(0))

    return FunctionModel(reply), seen


def _retry_prompts(messages: Any) -> list[str]:
    return [str(p.content) for m in messages for p in getattr(m, "parts", ())
            if isinstance(p, RetryPromptPart)]


def test_model_retry_in_a_validator_asks_the_model_again() -> None:
    model, seen = _answers("too short", "a long enough answer")

    def at_least_three_words(name: str, ctx: Any, value: str) -> OutputResult:
        if len(value.split()) < 3:
            raise ModelRetry("answer in at least three words")
        return OutputResult.output(value)

    with Agent(model, output_validators=[at_least_three_words]).run("hi") as result:
        assert result.output == "a long enough answer"
        assert _retry_prompts(result.messages) == ["answer in at least three words"]
    assert len(seen) == 2


def test_model_retry_in_an_output_function_asks_the_model_again() -> None:
    model, _ = _answers('{"n": -1}', '{"n": 4}')

    def positive(ctx: Any, value: dict[str, int]) -> int:
        if value["n"] <= 0:
            raise ModelRetry("n must be positive")
        return value["n"]

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    output = OutputSpec.native([OutputChoice("number", schema, function=positive)])
    with Agent(model, output=output).run("hi") as result:
        assert result.output == 4
        assert _retry_prompts(result.messages) == ["n must be positive"]


def test_a_validator_that_keeps_raising_model_retry_exhausts_the_output_retries() -> None:
    model, seen = _answers("no", "no", "no")

    def never(name: str, ctx: Any, value: str) -> OutputResult:
        raise ModelRetry("still no")

    with pytest.raises(OutputRetriesExceeded):
        Agent(model, output_validators=[never], max_output_retries=1).run("hi")
    assert len(seen) == 2  # the first answer plus exactly one retry


def test_other_exceptions_from_a_validator_still_propagate() -> None:
    model, _ = _answers("x")

    def broken(name: str, ctx: Any, value: str) -> OutputResult:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        Agent(model, output_validators=[broken]).run("hi")


@pytest.mark.parametrize("kind", ["QUIET", "Output", "", None])
def test_an_output_result_of_an_unknown_kind_is_refused(kind: Any) -> None:
    with pytest.raises(InvalidOutputSpec, match="'output' or 'retry'"):
        OutputResult(kind)


def test_an_output_result_message_must_be_text() -> None:
    with pytest.raises(InvalidOutputSpec, match="must be a str"):
        OutputResult("retry", None, 42)  # type: ignore[arg-type]
    assert OutputResult("output", 1).value == 1


def test_model_retry_while_streaming_partial_output_only_withholds_the_snapshot() -> None:
    def chunks(messages: Any, info: Any) -> Any:
        yield from ("one ", "two ", "three")

    def three_words(name: str, ctx: Any, value: str) -> OutputResult:
        if len(value.split()) < 3:
            raise ModelRetry("keep going")
        return OutputResult.output(value)

    agent = Agent(FunctionModel(stream_function=chunks), output_validators=[three_words])
    with agent.run_stream("hi") as stream:
        partial = [e.output for e in stream if isinstance(e, PartialOutputEvent)]
        with stream.result() as result:
            assert result.output == "one two three"
    assert "one " not in partial


def test_the_documented_streaming_recipe_keeps_the_first_chunk() -> None:
    """The first text chunk arrives inside PartStartEvent; the recipe must read it there."""
    def chunks(messages: Any, info: Any) -> Any:
        yield from ("Hello", ", ", "world")

    text: list[str] = []
    with Agent(FunctionModel(stream_function=chunks)).run_stream("hi") as stream:
        for event in stream:
            if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                text.append(event.part.content)
            elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                text.append(event.delta.content_delta)
        with stream.result() as result:
            assert "".join(text) == result.output == "Hello, world"


def test_stream_text_yields_deltas_or_the_growing_text() -> None:
    def chunks(messages: Any, info: Any) -> Any:
        yield from ("Hello", ", ", "world")

    agent = Agent(FunctionModel(stream_function=chunks))
    with agent.run_stream("hi") as stream:
        assert list(stream.stream_text(delta=True)) == ["Hello", ", ", "world"]
        with stream.result() as result:
            assert result.output == "Hello, world"
    with agent.run_stream("hi") as stream:
        assert list(stream.stream_text()) == ["Hello", "Hello, ", "Hello, world"]


def test_a_validator_that_cannot_take_name_ctx_value_is_refused_when_the_agent_is_built() -> None:
    """A PydanticAI-style ``(ctx, value)`` validator fails at ``Agent(...)`` with the expected
    call shape, not with a bare ``TypeError`` after the model was paid for."""
    from zigai.agent import InvalidAgentConfiguration

    def two(ctx: Any, value: str) -> Any:
        return OutputResult.output(value)

    def four(name: Any, ctx: Any, value: str, extra: Any) -> Any:
        return OutputResult.output(value)

    model, _ = _answers("hi")
    for bad, shown in ((two, "(ctx: 'Any', value: 'str')"), (four, "extra")):
        with pytest.raises(InvalidAgentConfiguration) as info:
            Agent(model, output_validators=[bad])
        assert f"output validator {bad.__name__!r} takes" in str(info.value) and shown in str(info.value)
        assert "validator(name, ctx, value)" in str(info.value)

    def flexible(*args: Any, **kwargs: Any) -> Any:
        return OutputResult.output(args[2])

    class Checker:
        def __call__(self, name: Any, ctx: Any, value: str, strict: bool = True) -> Any:
            return OutputResult.output(value.upper())

    with Agent(model, output_validators=[flexible, Checker()]).run("q") as result:
        assert result.output == "HI"
