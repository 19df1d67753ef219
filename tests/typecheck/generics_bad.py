"""Checked by mypy in tests/test_typecheck.py: each line marked ``# expect:`` must be an error."""

from __future__ import annotations

from dataclasses import dataclass

from zigai.agent import Agent
from zigai.testing import TestModel
from zigai.tool import ToolRunContext


@dataclass
class Deps:
    city: str


def wrong_attribute(ctx: ToolRunContext[Deps]) -> str:
    return ctx.deps.country  # expect: "Deps" has no attribute "country"


def wrong_type(ctx: ToolRunContext[Deps]) -> int:
    return ctx.deps.city  # expect: Incompatible return value type


agent: Agent[Deps] = Agent[int](TestModel())  # expect: Incompatible types in assignment
