"""A test module written the way a PydanticAI user writes one, running on zigai.

Decorated tools with ``RunContext[Deps]``, ``@agent.instructions`` and ``@agent.system_prompt``
functions, ``output_type``, an output validator, ``override`` with ``TestModel``, ``run_sync``,
``result.usage`` and ``message_history``.  Only the import block between the
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


@weather_agent.instructions
def mention_city(ctx: RunContext[Deps]) -> str:
    return f"The user is in {ctx.deps.city}."


@weather_agent.system_prompt
def house_style() -> str:
    return "Keep forecasts short."


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


def _what_the_model_was_told(messages: list[object] | tuple[object, ...]) -> str:
    told: list[str] = []
    for message in messages:
        if message.kind == "request":  # type: ignore[attr-defined]
            told += [p.content for p in message.parts if p.part_kind == "system-prompt"]  # type: ignore[attr-defined]
            told.append(message.instructions or "")  # type: ignore[attr-defined]
    return "\n".join(told)


def test_instruction_and_system_prompt_functions_reach_the_model() -> None:
    bergen = {"city": "Bergen", "summary": "rain"}
    with weather_agent.override(model=TestModel(custom_output_args=bergen)):
        result = weather_agent.run_sync("Weather?", deps=Deps("Bergen"))
    told = _what_the_model_was_told(result.all_messages())
    assert "Answer with a forecast for the user's city." in told
    assert "The user is in Bergen." in told
    assert "Keep forecasts short." in told
    assert weather_agent.instructions  # the configured instructions are still there to read


def test_usage_counts_the_requests_and_tool_calls() -> None:
    with weather_agent.override(model=TestModel(custom_output_args=OSLO)):
        result = weather_agent.run_sync("Weather?", deps=Deps("Oslo"))
    usage = result.usage
    assert (usage.requests, usage.tool_calls) == (2, 2)  # the tools' step, then the answer
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens > 0


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
