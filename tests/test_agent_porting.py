"""The PydanticAI-shaped surface of ``Agent`` (issue 35) over the immutable agent.

Model strings, plain functions in ``tools=``, ``RunContext[Deps]`` tools, ``output_type``
(types, unions, lists, TypedDicts, pydantic models, output functions, output modes), typed
run keywords, ``run_sync``, ``stream_output``, ``with_*`` builders, registering decorators
frozen after the first run, ``override`` (context-local) and the errors that teach.
"""

from __future__ import annotations

import asyncio
import pickle
import threading
from dataclasses import dataclass, fields
from typing import Any, Literal, TypedDict

import pytest

from zigai.agent import (
    Agent,
    AgentFrozen,
    AwaitNotSupported,
    InvalidAgentConfiguration,
    OutputRetriesExceeded,
    RunContext,
    RunOptions,
    TypedResult,
    UnsupportedKeyword,
)
from zigai.agent._familiar.kwargs import RunKwargs
from zigai.messages import ResponseMessage, TextPart, ToolCallPart
from zigai.testing import FunctionModel, TestModel
from zigai.tool import ModelRetry, ToolDefinitionError, ToolRunContext
from zigai.toolset import Toolset


@dataclass
class Deps:
    city: str


@dataclass
class Forecast:
    city: str
    degrees: int


@dataclass
class Failure:
    reason: str


class Point(TypedDict):
    x: int
    y: int


def _answer(**output: Any) -> TestModel:
    return TestModel(custom_output_args=output)


# -- 1. model strings and plain functions -------------------------------------------------------


def test_a_model_string_is_resolved_without_io(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    agent = Agent("openai:gpt-5-mini")
    assert agent.model.profile is not None
    assert getattr(agent.model, "model_name", "gpt-5-mini") == "gpt-5-mini"


def google(ctx: RunContext[Deps], day: int, unit: str = "C") -> str:
    """Temperature in the user's city.

    Args:
        day: Days from today.
        unit: C or F.
    """
    return f"{ctx.deps.city}:{day}{unit}"


def numpy(day: int) -> int:
    """Rain chance.

    Parameters
    ----------
    day : int
        Days from today.
    """
    return day


def sphinx(day: int) -> int:
    """Wind speed.

    :param day: Days from today.
    """
    return day


def test_plain_functions_in_tools_are_reflected_with_every_docstring_layout() -> None:
    agent = Agent(TestModel(), tools=[google, numpy, sphinx])
    defs = {tool.name: tool.definition() for tool in agent.function_tools}
    assert defs["google"].description == "Temperature in the user's city."
    props = defs["google"].parameters_json_schema["properties"]
    assert props["day"] == {"type": "integer", "description": "Days from today."}
    assert props["unit"]["description"] == "C or F." and props["unit"]["default"] == "C"
    assert "ctx" not in props
    assert defs["numpy"].parameters_json_schema["properties"]["day"]["description"] == "Days from today."
    assert defs["sphinx"].parameters_json_schema["properties"]["day"]["description"] == "Days from today."
    assert defs["numpy"].description == "Rain chance." and defs["sphinx"].description == "Wind speed."


def test_a_run_context_first_parameter_receives_the_call_context_with_deps() -> None:
    seen: list[Any] = []

    def where(ctx: RunContext[Deps]) -> str:
        seen.append(ctx)
        return ctx.deps.city

    result = Agent(TestModel(), tools=[where]).run("hi", deps=Deps("Oslo"))
    assert len(seen) == 1 and isinstance(seen[0], ToolRunContext)
    assert seen[0].deps == Deps("Oslo") and seen[0].tool_name == "where"
    assert '"Oslo"' in result.output or "Oslo" in result.output


def test_a_toolset_and_a_class_in_tools_are_refused_with_the_right_spelling() -> None:
    with pytest.raises(InvalidAgentConfiguration, match=r"Agent\(toolsets=\[\.\.\.\]\)"):
        Agent(TestModel(), tools=[Toolset()])
    with pytest.raises(InvalidAgentConfiguration, match="plain functions, got type"):
        Agent(TestModel(), tools=[Forecast])
    with pytest.raises(InvalidAgentConfiguration, match="sequence of Tool values or functions"):
        Agent(TestModel(), tools=google)  # type: ignore[arg-type]


def test_an_async_tool_is_refused_naming_a_plain_def() -> None:
    async def fetch(url: str) -> str:
        return url

    with pytest.raises(ToolDefinitionError, match=r"async function.*plain `def`"):
        Agent(TestModel(), tools=[fetch])


# -- 2. output_type ---------------------------------------------------------------------------------


def test_output_type_makes_run_return_the_typed_value() -> None:
    agent = Agent(TestModel(custom_output_args={"city": "Oslo", "degrees": 7}), output_type=Forecast)
    result = agent.run("forecast")
    assert isinstance(result, TypedResult)
    assert result.output == Forecast("Oslo", 7) and result.value == result.output
    assert result.json == {"city": "Oslo", "degrees": 7}


@pytest.mark.parametrize(
    ("output_type", "args", "expected"),
    [
        (list[Forecast], {"value": [{"city": "A", "degrees": 1}]}, [Forecast("A", 1)]),
        (Point, {"x": 1, "y": 2}, {"x": 1, "y": 2}),
        (Forecast | int, {"value": 5}, 5),  # not all objects: one anyOf schema, wrapped as "value"
        (Literal["yes", "no"], {"value": "yes"}, "yes"),
        (int, {"value": 3}, 3),
    ],
)
def test_output_type_shapes(output_type: Any, args: Any, expected: Any) -> None:
    agent = Agent(TestModel(custom_output_args=args), output_type=output_type, output_mode="tool")
    assert agent.run("go").output == expected


def _pick(name: str, args: dict[str, Any]) -> FunctionModel:
    def answer(messages: Any, info: Any) -> ResponseMessage:
        assert sorted(t.name for t in info.request.tools if t.kind == "output") == [
            "final_result_Failure", "final_result_Forecast"]
        return ResponseMessage((ToolCallPart(name, args, "o1"),))

    return FunctionModel(answer)


@pytest.mark.parametrize("output_type", [Forecast | Failure, [Forecast, Failure]])
def test_a_union_of_objects_in_tool_mode_is_one_output_tool_per_member(output_type: Any) -> None:
    failure = Agent(_pick("final_result_Failure", {"reason": "no data"}), output_type=output_type,
                    output_mode="tool").run("go")
    assert failure.output == Failure("no data") and failure.output_name == "final_result_Failure"
    forecast = Agent(_pick("final_result_Forecast", {"city": "B", "degrees": 2}),
                     output_type=output_type, output_mode="tool").run("go")
    assert forecast.output == Forecast("B", 2)


def test_union_members_decode_by_the_tool_the_model_called() -> None:
    @dataclass
    class Loose:
        note: str = ""

    @dataclass
    class Tight:
        note: str = ""

    result = Agent(FunctionModel(lambda m, i: ResponseMessage((ToolCallPart("final_result_Tight", {"note": "x"}, "o1"),))),
                   output_type=Loose | Tight, output_mode="tool").run("go")
    assert type(result.output) is Tight  # the same JSON would also decode as Loose


def test_output_type_accepts_a_pydantic_model_when_pydantic_is_installed() -> None:
    pydantic = pytest.importorskip("pydantic", reason="install pydantic (the dev extra has it)")

    class City(pydantic.BaseModel):  # type: ignore[name-defined,misc]
        name: str
        people: int

    result = Agent(_answer(name="Oslo", people=700000), output_type=City).run("city")
    assert isinstance(result.output, City) and result.output.people == 700000


@pytest.mark.parametrize(("mode", "format_kind", "output_tools"), [
    ("native", "json_schema", 0), ("tool", "text", 1), ("prompted", "json_object", 0),
])
def test_output_mode_picks_how_the_model_is_asked(mode: str, format_kind: str, output_tools: int) -> None:
    model = TestModel(custom_output_args={"city": "Oslo", "degrees": 7})
    result = Agent(model, output_type=Forecast, output_mode=mode).run("forecast")  # type: ignore[arg-type]
    assert result.output == Forecast("Oslo", 7)
    request = model.last_request
    assert request is not None and request.output_format.kind == format_kind
    assert sum(1 for t in request.tools if t.kind == "output") == output_tools


def test_an_unknown_output_mode_is_refused() -> None:
    with pytest.raises(InvalidAgentConfiguration, match="output_mode must be one of native, tool, prompted"):
        Agent(TestModel(), output_type=Forecast, output_mode="json")  # type: ignore[arg-type]


def test_an_output_function_receives_decoded_arguments_and_its_return_is_the_output() -> None:
    def to_fahrenheit(city: str, degrees: int) -> str:
        """Convert and report."""
        return f"{city}: {degrees * 9 // 5 + 32}F"

    model = _answer(city="Oslo", degrees=10)
    result = Agent(model, output_type=to_fahrenheit).run("go")
    assert result.output == "Oslo: 50F"
    assert [t.name for t in model.last_request.tools] == ["to_fahrenheit"]  # type: ignore[union-attr]


def test_an_output_function_raising_model_retry_asks_the_model_again() -> None:
    calls: list[int] = []

    def must_be_warm(degrees: int) -> int:
        calls.append(degrees)
        raise ModelRetry("too cold")

    with pytest.raises(OutputRetriesExceeded, match="too cold"):
        Agent(_answer(degrees=1), output_type=must_be_warm, max_output_retries=1).run("go")
    assert calls == [1, 1]


def test_output_type_and_output_together_are_refused() -> None:
    from zigai.output import OutputSpec

    with pytest.raises(InvalidAgentConfiguration, match="not both"):
        Agent(TestModel(), output=OutputSpec.json_object(), output_type=Forecast)


def test_an_output_type_without_a_schema_is_refused_when_the_agent_is_built() -> None:
    with pytest.raises(InvalidAgentConfiguration, match="Agent.output_type"):
        Agent(TestModel(), output_type=threading.Lock)


def test_pydantic_ai_output_markers_are_refused_naming_output_mode() -> None:
    pydantic_ai = pytest.importorskip("pydantic_ai", reason="install pydantic-ai-slim (dev extra)")
    with pytest.raises(InvalidAgentConfiguration, match=r"output_mode='native'"):
        Agent(TestModel(), output_type=pydantic_ai.NativeOutput(Forecast))
    with pytest.raises(InvalidAgentConfiguration, match=r"output_mode='tool'"):
        Agent(TestModel(), output_type=[pydantic_ai.ToolOutput(Forecast)])


def test_run_output_type_overrides_the_agent_for_one_run() -> None:
    agent = Agent(_answer(x=1, y=2), output_type=Forecast)
    assert agent.run("go", output_type=Point, mode="tool").output == {"x": 1, "y": 2}


def test_an_agent_with_output_type_pickles() -> None:
    agent = Agent("test", output_type=Forecast, output_mode="tool")
    clone = pickle.loads(pickle.dumps(agent))
    assert clone.output_type is Forecast and clone._typed_output is Forecast
    assert clone.output_mode == "tool" and not clone._frozen


# -- 5. typed entry points -----------------------------------------------------------------------


def test_run_kwargs_list_exactly_the_run_option_fields() -> None:
    assert set(RunKwargs.__annotations__) == {f.name for f in fields(RunOptions)} - {"prompt"}


def test_run_sync_is_run() -> None:
    assert Agent.run_sync is Agent.run
    assert Agent(TestModel()).run_sync("hi").output == "success (no tool calls)"


def test_stream_output_yields_snapshots_then_the_typed_output() -> None:
    agent = Agent(_answer(city="Oslo", degrees=3), output_type=Forecast, output_mode="native")
    with agent.run_stream("go") as stream:
        items = list(stream.stream_output())
        result = stream.result()
    assert items[-1] == Forecast("Oslo", 3) == result.output
    assert all(isinstance(item, dict) for item in items[:-1]) and len(items) >= 2


def test_stream_text_helper_on_an_untyped_agent() -> None:
    with Agent(TestModel(custom_output_text="one two three")).run_stream("go") as stream:
        assert "".join(stream.stream_text(delta=True)) == "one two three"


# -- 3. builders and decorators ------------------------------------------------------------------


def test_with_builders_return_new_agents_and_leave_the_original_alone() -> None:
    base = Agent(TestModel(), instructions="base")
    grown = base.with_tools(numpy).with_instructions("more", lambda: "dynamic").with_output_validator(
        lambda output: output.upper()
    )
    assert base.tools == () and base.instructions == ("base",) and base.output_validators == ()
    assert [t.name for t in grown.function_tools] == ["numpy"]
    assert grown.instructions == ("base", "more") and len(grown.dynamic_instructions) == 1
    model = TestModel()
    result = grown.override(model=model)
    with result:
        out = grown.run("hi")
    assert out.output == out.output.upper()
    assert model.last_request is not None
    assert model.last_request.instructions == ("base", "more", "dynamic")


def test_registering_decorators_work_before_the_first_run_then_the_agent_is_frozen() -> None:
    agent = Agent(_answer(city="Oslo", degrees=5), output_type=Forecast, deps_type=Deps)

    @agent.tool
    def where(ctx: RunContext[Deps]) -> str:
        return ctx.deps.city

    @agent.tool_plain(name="unit")
    def unit_of_measure() -> str:
        return "C"

    @agent.dynamic_instruction
    def mention(ctx: RunContext[Deps]) -> str:
        return f"User is in {ctx.deps.city}"

    @agent.output_validator
    def warmer(ctx: RunContext[Deps], output: Forecast) -> Forecast:
        assert isinstance(output, Forecast)  # the typed value, not its JSON
        return Forecast(output.city, output.degrees + 1)

    assert where.__name__ == "where" and unit_of_measure() == "C"  # functions come back unchanged
    assert [t.name for t in agent.function_tools] == ["where", "unit"]
    result = agent.run("go", deps=Deps("Oslo"))
    assert result.output == Forecast("Oslo", 6) and result.json == {"city": "Oslo", "degrees": 6}
    with pytest.raises(AgentFrozen, match=r"agent\.with_tools\(\.\.\.\)"):
        agent.tool_plain(numpy)
    with pytest.raises(AgentFrozen, match="with_output_validator"):
        agent.output_validator(warmer)
    with pytest.raises(AgentFrozen, match="with_instructions"):
        agent.dynamic_instruction(mention)
    assert [t.name for t in agent.function_tools] == ["where", "unit"]


def test_iter_also_freezes_the_agent() -> None:
    agent = Agent(TestModel())
    agent.iter("go").close()
    with pytest.raises(AgentFrozen):
        agent.tool(numpy)


def test_validator_and_instruction_shapes_that_cannot_be_called_are_refused() -> None:
    agent = Agent(TestModel())
    with pytest.raises(InvalidAgentConfiguration, match="takes 4 arguments"):
        agent.with_output_validator(lambda a, b, c, d: a)
    with pytest.raises(InvalidAgentConfiguration, match="write \\(ctx\\) or \\(\\)"):
        agent.with_instructions(lambda a, b: "x")

    async def later(ctx: Any) -> str:
        return ""

    with pytest.raises(InvalidAgentConfiguration, match="async function"):
        agent.with_instructions(later)


def test_toolset_tool_plain_and_run_context_tools() -> None:
    toolset = Toolset()

    @toolset.tool
    def where(ctx: RunContext[Deps]) -> str:
        return ctx.deps.city

    @toolset.tool_plain
    def unit() -> str:
        return "C"

    @toolset.tool_plain(name="wind")
    def wind_speed() -> int:
        return 3

    assert [t.name for t in toolset.tools] == ["where", "unit", "wind"]
    assert [t.takes_context for t in toolset.tools] == [True, False, False]
    with pytest.raises(ToolDefinitionError, match="tool_plain bare"):
        toolset.tool_plain(wind_speed, name="x")
    result = Agent(TestModel(), toolsets=[toolset]).run("go", deps=Deps("Oslo"))
    assert "Oslo" in result.output


# -- 4. override ------------------------------------------------------------------------------------


def test_override_swaps_model_deps_and_tools_inside_the_block_only() -> None:
    agent = Agent(FunctionModel(lambda messages, info: ResponseMessage((TextPart("real"),))), deps_type=Deps)
    before = {f.name: getattr(agent, f.name) for f in fields(agent) if f.compare}

    def probe(ctx: RunContext[Deps]) -> str:
        return ctx.deps.city

    with agent.override(model=TestModel(), deps=Deps("Oslo"), tools=[probe]):
        inside = agent.run("go", deps=Deps("ignored"))
        with agent.override(model=TestModel(custom_output_text="inner")):
            assert agent.run("go").output == "inner"  # the outer deps still apply
        again = agent.run("go")
    outside = agent.run("go", deps=Deps("Bergen"))
    assert "Oslo" in inside.output and "Oslo" in again.output
    assert outside.output == "real"
    assert {f.name: getattr(agent, f.name) for f in fields(agent) if f.compare} == before


def test_override_validates_its_replacement_when_entered() -> None:
    agent = Agent(TestModel())
    with pytest.raises(InvalidAgentConfiguration, match="must implement zigai.model.Model"), agent.override(
        model=object()
    ):
        pass  # pragma: no cover - never entered


def test_override_applies_to_that_agent_only() -> None:
    one, two = Agent(TestModel()), Agent(TestModel())
    with one.override(model=TestModel(custom_output_text="swapped")):
        assert one.run("go").output == "swapped"
        assert two.run("go").output == "success (no tool calls)"


def _echo_city(messages: Any, info: Any) -> ResponseMessage:
    returned = [p for m in messages for p in m.parts if getattr(p, "part_kind", "") == "tool-return"]
    if not returned:
        return ResponseMessage((ToolCallPart("city", {}, "c1"),))
    return ResponseMessage((TextPart(f"{info.model_name}:{returned[-1].content}"),))


def test_600_concurrent_runs_on_32_threads_with_overrides_in_some_threads_show_no_cross_talk() -> None:
    def city(ctx: RunContext[str]) -> str:
        return ctx.deps

    agent = Agent(FunctionModel(_echo_city, model_name="base"), tools=[city])
    swapped = FunctionModel(_echo_city, model_name="swapped")
    errors: list[str] = []
    counts = {"plain": 0, "overridden": 0}
    lock = threading.Lock()
    start = threading.Barrier(32)

    def worker(index: int) -> None:
        start.wait()
        for run in range(600 // 32 + (1 if index < 600 % 32 else 0)):
            own = f"t{index}-r{run}"
            if index % 2:
                with agent.override(model=swapped, deps=f"o{own}"):
                    output = agent.run("go", deps=own).output
                expected, kind = f"swapped:o{own}", "overridden"
            else:
                output = agent.run("go", deps=own).output
                expected, kind = f"base:{own}", "plain"
            with lock:
                counts[kind] += 1
                if output != expected:
                    errors.append(f"{own}: {output!r} != {expected!r}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    assert counts == {"plain": 300, "overridden": 300}
    assert agent.model.model_name == "base" and [t.name for t in agent.function_tools] == ["city"]


# -- 7. errors that teach ----------------------------------------------------------------------------


@pytest.mark.parametrize(("keyword", "spelling"), [
    ("usage_limits", "limits=RunLimits"),
    ("model", "agent.override"),
    ("event_stream_handler", "run_stream_events"),
    ("user_prompt", "first positional argument"),
])
def test_pydantic_ai_run_keywords_name_the_zigai_spelling(keyword: str, spelling: str) -> None:
    agent = Agent(TestModel())
    with pytest.raises(UnsupportedKeyword, match=spelling) as caught:
        agent.run("go", **{keyword: None})  # type: ignore[arg-type]
    assert isinstance(caught.value, TypeError)


def test_an_unknown_run_keyword_lists_the_real_ones() -> None:
    with pytest.raises(UnsupportedKeyword, match=r"unexpected keyword 'dep'.*deps"):
        Agent(TestModel()).run("go", dep=1)  # type: ignore[call-arg]


@pytest.mark.parametrize(("keyword", "spelling"), [
    ("retries", "max_tool_retries="), ("output_retries", "max_output_retries="),
    ("instrument", "hooks="), ("tool_timeout", "ToolLimits"),
])
def test_pydantic_ai_agent_keywords_name_the_zigai_field(keyword: str, spelling: str) -> None:
    with pytest.raises(UnsupportedKeyword, match=spelling):
        Agent(TestModel(), **{keyword: 1})


def test_awaiting_a_run_names_the_synchronous_call() -> None:
    agent = Agent(TestModel())

    async def ported() -> Any:
        return await agent.run("go")  # type: ignore[misc]

    with pytest.raises(AwaitNotSupported, match=r"asyncio\.to_thread\(agent\.run"):
        asyncio.run(ported())


def test_async_with_and_async_for_on_a_stream_name_the_plain_spelling() -> None:
    agent = Agent(TestModel())

    async def ported_with() -> None:
        async with agent.run_stream("go"):  # type: ignore[attr-defined]
            pass  # pragma: no cover - never entered

    async def ported_for() -> None:
        with agent.run_stream("go") as stream:
            async for _ in stream:  # type: ignore[attr-defined]
                pass  # pragma: no cover - never iterated

    with pytest.raises(AwaitNotSupported, match=r"with agent\.run_stream"):
        asyncio.run(ported_with())
    with pytest.raises(AwaitNotSupported, match="plain `for event in stream`"):
        asyncio.run(ported_for())


# -- edges of the translations ---------------------------------------------------------------------


def test_output_type_list_edges_are_refused() -> None:
    def pick(x: int) -> int:
        return x

    with pytest.raises(InvalidAgentConfiguration, match=r"output_type=\[\] names no type"):
        Agent(TestModel(), output_type=[])
    with pytest.raises(InvalidAgentConfiguration, match="lists a function"):
        Agent(TestModel(), output_type=[Forecast, pick])


def test_an_output_function_with_a_context_parameter_is_refused() -> None:
    def needs_ctx(ctx: RunContext[Deps], x: int) -> int:
        return x

    with pytest.raises(InvalidAgentConfiguration, match="takes a context first"):
        Agent(TestModel(), output_type=needs_ctx)


@pytest.mark.parametrize(("mode", "format_kind"), [("native", "json_schema"), ("prompted", "json_object")])
def test_an_output_function_in_native_and_prompted_mode(mode: str, format_kind: str) -> None:
    def area(point: Point) -> int:
        return point["x"] * point["y"]

    model = _answer(x=3, y=4)
    assert Agent(model, output_type=area, output_mode=mode).run("go").output == 12  # type: ignore[arg-type]
    assert model.last_request is not None and model.last_request.output_format.kind == format_kind


def test_validator_shapes_three_parameters_pass_through_and_the_rest_adapt() -> None:
    from zigai.agent._familiar.adapters import PortedValidator, adapt_instruction, adapt_validator
    from zigai.output import OutputResult

    def native(name: str, ctx: Any, value: Any) -> OutputResult:
        return OutputResult.output(value)

    assert adapt_validator(native) is native
    ported = adapt_validator(lambda output: output)
    assert isinstance(ported, PortedValidator) and repr(ported) == "PortedValidator(<lambda>)"
    with pytest.raises(InvalidAgentConfiguration, match="must be callable"):
        adapt_validator(3)  # type: ignore[arg-type]
    with pytest.raises(InvalidAgentConfiguration, match="must be callable"):
        adapt_instruction("text")  # type: ignore[arg-type]


def test_the_unset_marker_reads_as_unset() -> None:
    from zigai.agent._familiar.override import UNSET

    assert repr(UNSET) == "UNSET"


def test_a_pydantic_ai_shaped_validator_in_output_validators_names_with_output_validator() -> None:
    def plausible(ctx: Any, output: str) -> str:
        return output

    with pytest.raises(InvalidAgentConfiguration, match=r"agent\.with_output_validator\(\.\.\.\)"):
        Agent(TestModel(), output_validators=[plausible])
    agent = Agent(TestModel(custom_output_text="ok")).with_output_validator(plausible)
    assert agent.run("go").output == "ok"


def test_an_override_reaches_an_agent_that_a_tool_calls_on_a_worker_thread() -> None:
    helper = Agent(TestModel(custom_output_text="real helper"))
    seen: list[str] = []

    def delegate(topic: str) -> str:
        """Ask the helper agent."""
        seen.append(threading.current_thread().name)
        return helper.run(topic).output

    outer = Agent(TestModel(), tools=[delegate], run_timeout_ms=60_000)  # a deadline: calls get threads
    with helper.override(model=TestModel(custom_output_text="fake helper")):
        inside = outer.run("go")
    outside = outer.run("go")
    assert seen[0] != threading.current_thread().name  # the tool ran on a worker thread
    assert "fake helper" in inside.output and "real helper" in outside.output


def test_the_constructor_signature_stays_visible_to_introspection() -> None:
    import inspect

    parameters = inspect.signature(Agent).parameters
    assert {"model", "tools", "output_type", "output_mode", "deps_type"} <= set(parameters)


def test_a_settings_dict_is_refused_naming_the_model_settings_conversion() -> None:
    with pytest.raises(InvalidAgentConfiguration, match=r"ModelSettings\(\*\*settings\)"):
        Agent(TestModel(), model_settings={"temperature": 0})  # type: ignore[arg-type]
    with pytest.raises(InvalidAgentConfiguration, match=r"ModelSettings\(\*\*settings\)"):
        Agent(TestModel()).run("go", model_settings={"temperature": 0})  # type: ignore[typeddict-item]


def test_agent_subscripts_with_one_or_two_type_arguments_at_run_time() -> None:
    one = Agent[Deps](TestModel(), deps_type=Deps)
    two = Agent[Deps, Forecast](_answer(city="Oslo", degrees=1), deps_type=Deps, output_type=Forecast)
    assert type(one) is Agent and type(two) is Agent
    assert two.run("go", deps=Deps("Oslo")).output == Forecast("Oslo", 1)


def test_a_typed_validator_also_runs_under_lifecycle_hooks() -> None:
    events: list[str] = []
    agent = Agent(_answer(city="Oslo", degrees=1), output_type=Forecast, hooks=[lambda e: events.append(type(e).__name__)])
    agent = agent.with_output_validator(lambda output: Forecast(output.city, output.degrees * 10))
    assert agent.run("go").output == Forecast("Oslo", 10)
    assert "OutputValidatorEnd" in events


def test_a_per_run_output_type_list_means_the_union_of_its_types() -> None:
    agent = Agent(_pick("final_result_Forecast", {"city": "C", "degrees": 3}))
    result = agent.run("go", output_type=[Forecast, Failure], mode="tool")  # type: ignore[arg-type]
    assert result.output == Forecast("C", 3)
    single = Agent(_answer(city="D", degrees=4)).run("go", output_type=[Forecast], mode="tool")  # type: ignore[arg-type]
    assert single.output == Forecast("D", 4)
