"""Checked by mypy in tests/test_typecheck.py: the generic spellings a user writes type-check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, assert_type

from zigai.agent import Agent
from zigai.reflect import tool
from zigai.testing import TestModel
from zigai.tool import ToolRunContext


@dataclass
class Deps:
    city: str


@tool
def weather(ctx: ToolRunContext[Deps], day: int) -> str:
    """The weather in the dependencies' city."""
    assert_type(ctx.deps, Deps)
    return f"{ctx.deps.city} on day {day}: sunny"


def untyped(ctx: ToolRunContext) -> None:
    assert_type(ctx.deps, Any)


typed: Agent[Deps] = Agent(TestModel(), tools=[weather], deps_type=Deps)
subscripted = Agent[Deps](TestModel(), deps_type=Deps)
assert_type(subscripted, Agent[Deps])
plain = Agent(TestModel())  # no annotation needed: deps default to Any
assert_type(plain, Agent[Any])
