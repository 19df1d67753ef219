"""A test module written the way a PydanticAI user writes one, running on zigai.

Decorated tools with ``RunContext[Deps]``, ``output_type``, an output validator, ``override``
with ``TestModel``, ``run_sync`` and ``message_history``.  Only the import block between the
two marker comments differs from its PydanticAI twin: ``tests/test_pydantic_ai_twin.py``
swaps that block for PydanticAI's imports and runs this same file against pydantic-ai-slim.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# --- imports: the only lines that differ from the PydanticAI twin ---
from zigai import Agent, ModelRetry, RunContext
from zigai.testing import TestModel

# --- end of imports ---


@dataclass
class Deps:
    city: str
    calls: list[str] = field(default_factory=list)


@dataclass
class Forecast:
    city: str
    summary: str


weather_agent = Agent(
    "test",
    deps_type=Deps,
    output_type=Forecast,
    instructions="Answer with a forecast for the user's city.",
)


@weather_agent.tool
def temperature(ctx: RunContext[Deps], day: int) -> str:
    """The temperature in the user's city.

    Args:
        day: Days from today, 0 for today.
    """
    ctx.deps.calls.append(f"temperature:{ctx.deps.city}")
    return f"21C in {ctx.deps.city}"


@weather_agent.tool_plain
def units() -> str:
    """The temperature unit forecasts use."""
    return "celsius"


@weather_agent.output_validator
def city_matches(ctx: RunContext[Deps], output: Forecast) -> Forecast:
    if output.city != ctx.deps.city:
        raise ModelRetry(f"the forecast must be for {ctx.deps.city}")
    return Forecast(output.city, output.summary.strip())


OSLO = {"city": "Oslo", "summary": " mild "}


def _tool_returns(messages: list[object] | tuple[object, ...]) -> dict[str, object]:
    return {
        part.tool_name: part.content
        for message in messages
        for part in message.parts  # type: ignore[attr-defined]
        if part.part_kind == "tool-return" and part.tool_name in ("temperature", "units")
    }


def _user_prompts(messages: list[object] | tuple[object, ...]) -> list[object]:
    return [
        part.content
        for message in messages
        for part in message.parts  # type: ignore[attr-defined]
        if part.part_kind == "user-prompt"
    ]


def test_tools_get_the_deps_and_the_output_is_the_typed_value() -> None:
    deps = Deps("Oslo")
    with weather_agent.override(model=TestModel(custom_output_args=OSLO)):
        result = weather_agent.run_sync("What is the weather tomorrow?", deps=deps)
    assert isinstance(result.output, Forecast)
    assert result.output == Forecast("Oslo", "mild")  # the validator's changed value
    assert deps.calls == ["temperature:Oslo"]
    assert _tool_returns(result.all_messages()) == {"temperature": "21C in Oslo", "units": "celsius"}


def test_override_supplies_deps_for_code_that_does_not_pass_them() -> None:
    deps = Deps("Oslo")
    with weather_agent.override(model=TestModel(custom_output_args=OSLO), deps=deps):
        result = weather_agent.run_sync("Weather?")
    assert result.output.city == "Oslo"
    assert deps.calls == ["temperature:Oslo"]


def test_message_history_continues_the_conversation() -> None:
    deps = Deps("Oslo")
    with weather_agent.override(model=TestModel(custom_output_args=OSLO)):
        first = weather_agent.run_sync("Weather today?", deps=deps)
        second = weather_agent.run_sync(
            "And the day after?", deps=deps, message_history=first.new_messages()
        )
    assert list(second.all_messages()[: len(first.new_messages())]) == list(first.new_messages())
    assert _user_prompts(second.all_messages()) == ["Weather today?", "And the day after?"]
    assert _user_prompts(second.new_messages()) == ["And the day after?"]


def test_a_validator_retry_reaches_the_model_and_the_run_fails_when_it_never_complies() -> None:
    deps = Deps("Oslo")
    bergen = {"city": "Bergen", "summary": "rain"}
    with weather_agent.override(model=TestModel(custom_output_args=bergen)):
        try:
            weather_agent.run_sync("Weather?", deps=deps)
        except Exception as exc:  # each framework names this failure its own way
            failure: Exception | None = exc
        else:
            failure = None
    assert failure is not None
    assert "retries" in str(failure).lower() or "retry" in str(failure).lower()
