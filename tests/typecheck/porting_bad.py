"""Checked by mypy in tests/test_typecheck.py: each marked line must be a type error."""

from __future__ import annotations

from dataclasses import dataclass

from zigai.agent import Agent, RunContext
from zigai.testing import TestModel


@dataclass
class Deps:
    city: str


agent: Agent[Deps, str] = Agent(TestModel(), deps_type=Deps)


def tool(ctx: RunContext[Deps]) -> int:
    return ctx.deps.city  # expect: Incompatible return value type


agent.run("go", deps="Oslo")  # expect: No overload variant of "run" of "Agent" matches argument types "str", "str"
agent.run("go", message_history="hi")  # expect: Argument "message_history" to "run" of "Agent" has incompatible type "str"
agent.run("go", usage_limits=None)  # expect: Unexpected keyword argument "usage_limits"
agent.run_stream("go", limits=3)  # expect: Argument "limits" to "run_stream" of "Agent"
number: int = agent.run("go").output  # expect: Incompatible types in assignment


async def ported() -> None:
    await agent.run("go")  # expect: Incompatible types in "await" (actual type "Result[str]"


agent.run("go").usage()  # expect: "RunUsage" not callable
agent.instructions(dynamic=True)  # expect: No overload variant of "__call__" of "InstructionsView" matches argument type "bool"
agent.instructions = ("x",)  # expect: Incompatible types in assignment
