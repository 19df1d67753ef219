"""Checked by mypy --strict in tests/test_typecheck.py: PydanticAI-shaped code type-checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, assert_type

from zigai.agent import Agent, RunContext, RunLimits
from zigai.agent.result import Result, TypedResult
from zigai.control import RunControl
from zigai.testing import TestModel
from zigai.usage import RunUsage


@dataclass
class Deps:
    city: str


@dataclass
class Forecast:
    city: str
    degrees: int


agent = Agent(TestModel(), deps_type=Deps, output_type=Forecast)
assert_type(agent, Agent[Any, Forecast])
annotated: Agent[Deps, Forecast] = Agent(TestModel(), deps_type=Deps, output_type=Forecast)
plain = Agent(TestModel())
assert_type(plain, Agent[Any, Any])


@annotated.tool
def where(ctx: RunContext[Deps], day: int) -> str:
    assert_type(ctx.deps, Deps)
    return f"{ctx.deps.city}:{day}"


@annotated.output_validator
def check(ctx: RunContext[Deps], output: Forecast) -> Forecast:
    return output


assert_type(where(RunContext(Deps("Oslo"), RunUsage(), 0, (), RunControl()), 1), str)  # unchanged
result = annotated.run("go", deps=Deps("Oslo"), limits=RunLimits(max_requests=3))
assert_type(result, Result[Forecast])
assert_type(result.output, Forecast)
assert_type(annotated.run_sync("go", deps=Deps("Oslo")).output, Forecast)
assert_type(annotated.run("go", output_type=int), TypedResult[int])
assert_type(annotated.run_typed(int, "go").output, int)
with annotated.override(model=TestModel(), deps=Deps("Bergen")):
    pass
listed = Agent(TestModel(), output_type=list[Forecast])
assert_type(listed.run("go").output, list[Forecast])
by_name = Agent("openai:gpt-5-mini", output_type=Forecast)  # a model string is a model
assert_type(by_name, Agent[Any, Forecast])


@annotated.instructions
def mention(ctx: RunContext[Deps]) -> str:
    return ctx.deps.city


@annotated.system_prompt(dynamic=True)
def style() -> str:
    return "short"


@annotated.instructions()
def called() -> str | None:
    return None


assert_type(mention(RunContext(Deps("Oslo"), RunUsage(), 0, (), RunControl())), str)  # unchanged
assert_type(style(), str)
configured: tuple[str, ...] = annotated.instructions  # still the configured strings
assert_type(annotated.system_prompt[0], str)
assert_type(result.usage, RunUsage)
