"""``@agent.instructions`` / ``@agent.system_prompt`` on an agent whose fields of those names
still read as the configured strings, and ``result.usage()``'s teaching error (issue 35)."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import threading
from dataclasses import dataclass
from typing import Any

import pytest

from zigai.agent import Agent, AgentFrozen, InvalidAgentConfiguration, RunContext
from zigai.agent.config import AgentConfig
from zigai.testing import TestModel
from zigai.usage import InvalidUsage, RunUsage, UsageNotCallable

_SLOT = {name: AgentConfig.__dict__[name] for name in ("instructions", "system_prompt")}


@dataclass
class Deps:
    city: str


def _stored(agent: Agent[Any, Any], name: str) -> object:
    """What the dataclass slot holds, below the decorating view."""
    return _SLOT[name].__get__(agent, type(agent))


def test_every_pydantic_ai_spelling_registers_a_dynamic_instruction_in_order() -> None:
    model = TestModel()
    agent = Agent(model, instructions="static", system_prompt="Be kind.", deps_type=Deps)

    @agent.instructions
    def bare(ctx: RunContext[Deps]) -> str:
        return f"in {ctx.deps.city}"

    @agent.instructions()
    def called() -> str:
        return "called"

    @agent.system_prompt
    def prompt_bare() -> str:
        return "prompt bare"

    @agent.system_prompt()
    def prompt_called(ctx: RunContext[Deps]) -> str | None:
        return None  # None adds nothing

    @agent.system_prompt(dynamic=True)
    def prompt_dynamic() -> str:
        return "prompt dynamic"

    assert (bare.__name__, called(), prompt_bare(), prompt_dynamic()) == (
        "bare", "called", "prompt bare", "prompt dynamic",
    )  # each function comes back unchanged
    assert prompt_called(None) is None  # type: ignore[arg-type]
    assert len(agent.dynamic_instructions) == 5
    assert agent.instructions == ("static",) and agent.system_prompt == ("Be kind.",)
    result = agent.run("go", deps=Deps("Oslo"))
    assert model.last_request is not None
    assert model.last_request.instructions == (
        "static", "in Oslo", "called", "prompt bare", "prompt dynamic",
    )
    first = result.all_messages()[0]
    assert [p.content for p in first.parts if p.part_kind == "system-prompt"] == ["Be kind."]


def test_every_spelling_is_refused_after_the_first_run_and_names_with_instructions() -> None:
    agent = Agent(TestModel(), instructions="static")

    @agent.instructions
    def before() -> str:
        return "before"

    agent.run("go")
    for register in (
        agent.instructions, agent.instructions(), agent.system_prompt, agent.system_prompt(),
        agent.system_prompt(dynamic=True), agent.dynamic_instruction,
    ):
        with pytest.raises(AgentFrozen, match=r"agent\.with_instructions\(\.\.\.\) instead"):
            register(before)
    with pytest.raises(AgentFrozen, match="@agent.system_prompt after the agent's first run"):
        agent.system_prompt(before)
    assert len(agent.dynamic_instructions) == 1
    grown = agent.with_instructions(before)  # the documented way out: a new agent
    assert len(grown.dynamic_instructions) == 2 and len(agent.dynamic_instructions) == 1


def test_iter_freezes_the_instruction_decorators_too() -> None:
    agent = Agent(TestModel())
    agent.iter("go").close()
    with pytest.raises(AgentFrozen):
        agent.instructions(lambda: "late")
    assert agent.dynamic_instructions == ()


def test_a_string_or_a_wrong_shape_is_refused_with_the_spelling_that_works() -> None:
    agent = Agent(TestModel())
    with pytest.raises(InvalidAgentConfiguration, match=r"with_instructions\('Be brief.'\)"):
        agent.instructions("Be brief.")  # type: ignore[call-overload]
    with pytest.raises(InvalidAgentConfiguration, match=r"Agent\(system_prompt=\.\.\.\)"):
        agent.system_prompt("Be brief.")  # type: ignore[call-overload]
    with pytest.raises(InvalidAgentConfiguration, match=r"write \(ctx\) or \(\)"):
        agent.instructions(lambda a, b: "x")

    async def later() -> str:
        return ""

    with pytest.raises(InvalidAgentConfiguration, match="async function"):
        agent.system_prompt(later)
    assert agent.dynamic_instructions == ()


def test_the_fields_still_read_as_the_configured_tuples() -> None:
    model = TestModel()
    agent = Agent(model, instructions=["a", "b"], system_prompt="s")
    config = AgentConfig(model, instructions=["a", "b"], system_prompt="s")
    view = agent.instructions
    assert isinstance(view, tuple) and view == ("a", "b") and ("a", "b") == view
    assert hash(view) == hash(("a", "b")) and repr(view) == "('a', 'b')"
    assert list(view) == ["a", "b"] and len(view) == 2 and view[1] == "b" and "a" in view
    assert type(view[:1]) is tuple and view + ("c",) == ("a", "b", "c")
    assert agent.system_prompt == ("s",) and config.instructions == view
    assert type(config.instructions) is tuple  # a bare AgentConfig is untouched
    assert type(_stored(agent, "instructions")) is tuple  # the slot holds a plain tuple
    assert repr(agent).split(", tools=")[0].endswith("instructions=('a', 'b'), system_prompt=('s',), "
                                                      "dynamic_instructions=()")
    assert agent == Agent(model, instructions=("a", "b"), system_prompt=["s"])
    assert agent != Agent(model, instructions=("a",), system_prompt=["s"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        agent.instructions = ("x",)  # type: ignore[assignment]
    descriptor = Agent.__dict__["instructions"]  # read on the class: the descriptor itself
    assert descriptor.__get__(None, Agent) is descriptor
    assert type(descriptor) is type(Agent.__dict__["system_prompt"])


def test_replace_copy_and_pickle_keep_plain_tuples() -> None:
    agent = Agent(TestModel(), instructions="a", system_prompt=("s1", "s2"))
    replaced = dataclasses.replace(agent, instructions=agent.instructions + ("b",))
    assert replaced.instructions == ("a", "b") and replaced.system_prompt == ("s1", "s2")
    assert type(_stored(replaced, "system_prompt")) is tuple
    for clone in (copy.copy(agent), copy.deepcopy(agent), pickle.loads(pickle.dumps(agent))):
        assert clone is not agent and dataclasses.replace(clone, model=agent.model) == agent
        assert type(_stored(clone, "instructions")) is tuple
        assert clone.instructions == ("a",) and clone.system_prompt == ("s1", "s2")
    alone = pickle.loads(pickle.dumps(agent.instructions))
    assert type(alone) is tuple and alone == ("a",)  # never pickles the agent with it
    assert type(copy.deepcopy(agent.system_prompt)) is tuple
    assert type(type(agent.instructions)(("x",))) is tuple  # generic code rebuilding a tuple
    rebuilt = Agent(TestModel(), instructions=agent.instructions)  # a view passed back in
    assert type(_stored(rebuilt, "instructions")) is tuple and rebuilt.instructions == ("a",)


def test_a_view_read_before_the_first_run_still_obeys_the_freeze() -> None:
    agent = Agent(TestModel())
    register = agent.instructions  # read early, called late
    agent.run("go")
    with pytest.raises(AgentFrozen):
        register(lambda: "late")
    assert agent.dynamic_instructions == ()


def _race_registrations_with_the_first_run(agent: Agent[Any, Any]) -> tuple[list[int], list[int]]:
    barrier = threading.Barrier(9)
    accepted: list[int] = []
    refused: list[int] = []

    def register(i: int) -> None:
        barrier.wait()
        try:
            agent.system_prompt(lambda: f"n{i}")
        except AgentFrozen:
            refused.append(i)
        else:
            accepted.append(i)

    def first_run() -> None:
        barrier.wait()
        agent.run("go")

    threads = [threading.Thread(target=register, args=(i,)) for i in range(8)]
    threads.append(threading.Thread(target=first_run))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return accepted, refused


def test_registrations_racing_the_first_run_either_land_or_raise_never_vanish() -> None:
    for _ in range(20):
        agent = Agent(TestModel())
        accepted, refused = _race_registrations_with_the_first_run(agent)
        assert sorted(accepted + refused) == list(range(8))
        assert len(agent.dynamic_instructions) == len(accepted)
        with pytest.raises(AgentFrozen):
            agent.instructions(lambda: "after")


def test_calling_usage_as_a_method_names_the_property() -> None:
    result = Agent(TestModel()).run("go")
    assert result.usage.requests == 1
    with pytest.raises(UsageNotCallable, match=r"write result\.usage \(no parentheses\)") as caught:
        result.usage()  # type: ignore[operator]
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, InvalidUsage)
    with pytest.raises(UsageNotCallable):
        RunUsage()()  # type: ignore[operator]
