"""zigai.toolset: namespaces, per-step preparation, metadata merging, duplicate names."""

from __future__ import annotations

from typing import Any

import pytest

from zigai.control import CancellationToken, Cancelled, RunControl
from zigai.messages import RequestMessage, UserPromptPart
from zigai.tool import DuplicateToolName, Tool, ToolDefinitionError
from zigai.toolset import PreparedTool, ToolPrepareContext, Toolset, resolve_tools
from zigai.usage import RunUsage


def make(name: str, metadata: dict[str, Any] | None = None) -> Tool:
    return Tool.manual(name, f"{name} tool", {"type": "object"}, lambda args: name, metadata=metadata)


def test_namespace_prefixes_provider_visible_names() -> None:
    database = Toolset([make("search"), make("fetch")], namespace="db")
    tools = resolve_tools([], [database], ToolPrepareContext())
    assert [t.name for t in tools] == ["db__search", "db__fetch"]
    assert [t.definition().name for t in tools] == ["db__search", "db__fetch"]
    assert [t.name for t in database.tools] == ["search", "fetch"]  # originals untouched


def test_direct_tools_come_first_then_toolsets_in_order() -> None:
    tools = resolve_tools(
        [make("a")], [Toolset([make("b")]), Toolset([make("c")], namespace="x")], ToolPrepareContext()
    )
    assert [t.name for t in tools] == ["a", "b", "x__c"]


def test_prepare_sees_the_step_state_and_selects_tools() -> None:
    search, fetch = make("search"), make("fetch")
    seen: list[ToolPrepareContext] = []

    def only_search_after_first_request(ctx: ToolPrepareContext) -> list[Tool] | None:
        seen.append(ctx)
        return [search] if ctx.request_count >= 1 else None

    toolset = Toolset([search, fetch], namespace="db", prepare=only_search_after_first_request)
    history = (RequestMessage((UserPromptPart("hi"),)),)
    first = ToolPrepareContext(deps="deps", usage=RunUsage(), request_count=0, messages=history)
    second = ToolPrepareContext(deps="deps", usage=RunUsage(requests=1), request_count=1, messages=history)
    assert [t.name for t in resolve_tools([], [toolset], first)] == ["db__search", "db__fetch"]
    assert [t.name for t in resolve_tools([], [toolset], second)] == ["db__search"]
    assert seen == [first, second]
    assert seen[1].messages == history and seen[1].deps == "deps"


def test_prepare_may_disable_everything() -> None:
    toolset = Toolset([make("a")], prepare=lambda ctx: [])
    assert resolve_tools([], [toolset], ToolPrepareContext()) == ()


def test_metadata_merges_tool_then_toolset_then_prepared_entry() -> None:
    tool = make("search", {"owner": "tool", "tier": "tool", "keep": 1})

    def prepare(ctx: ToolPrepareContext) -> list[PreparedTool]:
        return [PreparedTool(tool, metadata={"tier": "entry"})]

    toolset = Toolset([tool], namespace="db", prepare=prepare, metadata={"owner": "toolset"})
    (prepared,) = resolve_tools([], [toolset], ToolPrepareContext())
    assert dict(prepared.metadata or {}) == {"owner": "toolset", "tier": "entry", "keep": 1}
    assert dict(tool.metadata or {}) == {"owner": "tool", "tier": "tool", "keep": 1}
    # metadata is application-only: definitions keep it locally, adapters never send it
    assert prepared.definition().metadata == {"owner": "toolset", "tier": "entry", "keep": 1}


def test_static_tools_without_changes_are_returned_as_is() -> None:
    tool = make("plain")
    (resolved,) = resolve_tools([], [Toolset([tool])], ToolPrepareContext())
    assert resolved is tool


def test_duplicate_prepared_names_are_rejected_before_the_request() -> None:
    with pytest.raises(DuplicateToolName, match="'db__search'") as info:
        resolve_tools(
            [make("db__search")], [Toolset([make("search")], namespace="db")], ToolPrepareContext()
        )
    assert info.value.name == "db__search"
    twice = Toolset([make("a"), make("b")], prepare=lambda ctx: [make("a"), make("a")])
    with pytest.raises(DuplicateToolName):
        resolve_tools([], [twice], ToolPrepareContext())
    with pytest.raises(DuplicateToolName):
        Toolset([make("same"), make("same")])


def test_namespaced_names_must_stay_provider_safe() -> None:
    with pytest.raises(ToolDefinitionError, match="namespace"):
        Toolset([make("a")], namespace="bad space")
    with pytest.raises(ToolDefinitionError, match="must match"):
        Toolset([make("t" * 60)], namespace="long")
    exact = Toolset([make("t" * 58)], namespace="abcd")  # 4 + 2 + 58 = 64 characters
    assert len(resolve_tools([], [exact], ToolPrepareContext())[0].name) == 64


def test_prepare_results_are_checked() -> None:
    toolset = Toolset([make("a")], prepare=lambda ctx: ["a"])
    with pytest.raises(ToolDefinitionError, match="expected Tool or PreparedTool"):
        resolve_tools([], [toolset], ToolPrepareContext())
    with pytest.raises(ToolDefinitionError):
        resolve_tools([], [Toolset([make("a")], prepare=lambda ctx: make("a"))], ToolPrepareContext())


def test_prepare_does_not_run_after_cancellation() -> None:
    calls: list[int] = []
    token = CancellationToken()
    token.cancel()
    toolset = Toolset([make("a")], prepare=lambda ctx: calls.append(1))
    with pytest.raises(Cancelled):
        resolve_tools([], [toolset], ToolPrepareContext(control=RunControl(token=token)))
    assert calls == []


def test_preparer_errors_pass_through_unwrapped() -> None:
    class Boom(Exception):
        pass

    def prepare(ctx: ToolPrepareContext) -> None:
        raise Boom("nope")

    with pytest.raises(Boom):
        resolve_tools([], [Toolset([make("a")], prepare=prepare)], ToolPrepareContext())


def test_toolset_tool_decorator_adds_bare_and_configured_tools_that_an_agent_calls() -> None:
    from zigai.agent import Agent
    from zigai.messages import ResponseMessage, TextPart, ToolCallPart, ToolReturnPart
    from zigai.testing import FunctionModel

    units = Toolset(namespace="units")

    @units.tool
    def to_celsius(fahrenheit: float) -> float:
        """Convert Fahrenheit to Celsius.

        Args:
            fahrenheit: the temperature in degrees Fahrenheit.
        """
        return round((fahrenheit - 32) * 5 / 9, 1)

    @units.tool(name="km", description="Miles to kilometres.", max_retries=0)
    def miles_to_km(miles: float) -> float:
        return round(miles * 1.609, 1)

    assert isinstance(to_celsius, Tool) and to_celsius.name == "to_celsius"
    assert to_celsius.description == "Convert Fahrenheit to Celsius."
    assert to_celsius.definition().parameters_json_schema["properties"]["fahrenheit"][
        "description"] == "the temperature in degrees Fahrenheit."
    assert [t.name for t in units.tools] == ["to_celsius", "km"]
    assert miles_to_km.description == "Miles to kilometres." and miles_to_km.max_retries == 0

    def decide(messages: Any, info: Any) -> ResponseMessage:
        if len(messages) == 1:
            assert [t.name for t in info.tools] == ["units__to_celsius", "units__km"]
            return ResponseMessage((ToolCallPart("units__to_celsius", '{"fahrenheit": 212}', "c1"),))
        return ResponseMessage((TextPart("done"),))

    with Agent(FunctionModel(decide), toolsets=[units]).run("Boiling?") as result:
        returns = [p for msg in result.all_messages() for p in msg.parts
                   if isinstance(p, ToolReturnPart)]
    assert returns[0].content == 100.0


def test_toolset_tool_decorator_refuses_duplicates_and_positional_options() -> None:
    box = Toolset([make("search")])

    def search() -> str:
        return "again"

    with pytest.raises(DuplicateToolName):
        box.tool(search)
    assert [t.name for t in box.tools] == ["search"]  # nothing was added
    with pytest.raises(ToolDefinitionError, match="keywords only"):
        box.tool("search", name="x")  # type: ignore[arg-type]
