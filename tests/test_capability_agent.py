"""Capabilities in the agent loop: eager and on-demand bundles, loads, precedence, resume."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import pytest

from zigai import Agent
from zigai.agent import RunOptions
from zigai.agent.errors import InvalidAgentConfiguration
from zigai.capability import (
    Capability,
    CapabilityConflict,
    CapabilityLayer,
    CapabilityLoading,
    CapabilityRegistry,
    CapabilitySnapshot,
    DuplicateCapabilityId,
    UnknownCapabilityDependency,
)
from zigai.hooks import ToolDispatchStart
from zigai.messages import (
    CapabilityLoadCallPart,
    CapabilityLoadReturnPart,
    RequestMessage,
    ResponseMessage,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolOutcome,
)
from zigai.model import ManagedTool
from zigai.output import OutputResult
from zigai.settings import ModelSettings
from zigai.testing import FunctionModel
from zigai.tool import ModelRetry, Tool, ToolExecution
from zigai.tool.policy import Policy
from zigai.toolset import Toolset

EMPTY = {"type": "object", "properties": {}}


def make_tool(name: str, result: Any = "ok", **options: Any) -> Tool:
    return Tool.manual(name, f"The {name} tool.", EMPTY, lambda args: result, **options)


def load(cid: str, call_id: str = "L1") -> ToolCallPart:
    return ToolCallPart("load_capability", json.dumps({"capability_id": cid}), call_id)


def lazy(cid: str, **kw: Any) -> Capability:
    return Capability(cid, description=f"{cid} features", loading=CapabilityLoading.on_demand, **kw)


class Script:
    """A FunctionModel body answering with the given responses in turn; records requests."""

    def __init__(self, *responses: Any) -> None:
        self.responses = list(responses)
        self.requests: list[Any] = []

    def __call__(self, messages: Any, info: Any) -> ResponseMessage:
        self.requests.append(info.request)
        item = self.responses.pop(0)
        if callable(item):
            item = item(messages, info)
        if isinstance(item, str):
            return ResponseMessage((TextPart(item),))
        if isinstance(item, ToolCallPart):
            return ResponseMessage((item,))
        return ResponseMessage(tuple(item))

    def tools(self, index: int) -> list[str]:
        return [t.name for t in self.requests[index].tools]

    def instructions(self, index: int) -> tuple[str, ...]:
        return tuple(self.requests[index].instructions)


# -- eager vs on-demand ------------------------------------------------------------------------


def test_eager_bundles_are_active_from_the_first_request_on_demand_ones_only_in_the_catalog() -> None:
    script = Script(load("sql"), "done")
    eager = Capability("notes", tools=[make_tool("note")], instructions="Keep notes.")
    sql = lazy("sql", tools=[make_tool("query")], instructions="Use SQL carefully.")
    agent = Agent(FunctionModel(script), instructions="Base.", capabilities=[eager, sql])
    result = agent.run("hi")
    assert result.output == "done"
    first = script.requests[0]
    assert script.tools(0) == ["note", "load_capability"]
    load_tool = first.tools[-1]
    assert load_tool.sequential
    assert load_tool.parameters_json_schema["properties"]["capability_id"]["enum"] == ["sql"]
    assert first.instructions[:2] == ("Base.", "Keep notes.")
    assert "Use SQL" not in " ".join(first.instructions)
    assert "- sql: sql features" in first.instructions[-1]
    # the load is typed in history and its result carries the instructions
    call = result.messages[1].parts[0]
    assert isinstance(call, CapabilityLoadCallPart) and call.capability_id == "sql"
    ret = result.messages[2].parts[0]
    assert isinstance(ret, CapabilityLoadReturnPart)
    assert ret.loaded == ("sql",) and ret.instructions == ("Use SQL carefully.",)
    # after the load: the tools are there, the catalog and load_capability are gone
    assert script.tools(1) == ["note", "query"]
    assert script.instructions(1) == ("Base.", "Keep notes.")


def test_a_dependency_chain_loads_dependency_first_with_instructions_in_that_order() -> None:
    script = Script(load("reports"), "done")
    caps = [
        lazy("reports", dependencies=["sql", "charts"], tools=[make_tool("report")], instructions="R."),
        lazy("sql", dependencies=["auth"], tools=[make_tool("query")], instructions="S."),
        lazy("charts", tools=[make_tool("chart")], instructions="C."),
        lazy("auth", tools=[make_tool("login")], instructions="A.",
             dynamic_instructions=[lambda ctx: f"A-dyn sees {ctx.capabilities.active_ids}"]),
    ]
    result = Agent(FunctionModel(script), capabilities=caps).run("go")
    ret = result.messages[2].parts[0]
    assert ret.loaded == ("auth", "sql", "charts", "reports")
    assert ret.instructions == ("A.", "A-dyn sees ()", "S.", "C.", "R.")
    # tools follow composition (declaration) order, not load order
    assert script.tools(1) == ["report", "query", "chart", "login"]


# -- atomic loads --------------------------------------------------------------------------------


def test_a_conflict_refuses_the_whole_plan_and_activates_nothing() -> None:
    script = Script(load("nosql"), "done")
    caps = [
        Capability("sql", tools=[make_tool("query")]),
        lazy("nosql", dependencies=["driver"], conflicts=["sql"], tools=[make_tool("find")]),
        lazy("driver", tools=[make_tool("connect")]),
    ]
    result = Agent(FunctionModel(script), capabilities=caps).run("go")
    ret = result.messages[2].parts[0]
    assert ret.outcome is ToolOutcome.error and ret.loaded == ()
    assert "conflicts with 'sql'" in (ret.content or "")
    # the dependency planned before the conflict was found is not active either
    assert script.tools(1) == ["query", "load_capability"]
    assert "driver" in script.instructions(1)[-1]


def test_a_conflict_with_an_earlier_load_of_the_same_batch_is_refused() -> None:
    script = Script([load("a", "L1"), load("b", "L2")], "done")
    caps = [lazy("a", tools=[make_tool("ta")]), lazy("b", conflicts=["a"], tools=[make_tool("tb")])]
    result = Agent(FunctionModel(script), capabilities=caps).run("go")
    first, second = result.messages[2].parts
    assert first.outcome is ToolOutcome.success and first.loaded == ("a",)
    assert second.outcome is ToolOutcome.error and "also being loaded" in second.content
    assert script.tools(1) == ["ta", "load_capability"]


def test_a_failed_load_leaves_no_trace_even_in_a_later_run() -> None:
    def refuse(ctx: Any) -> str:
        raise ModelRetry("the data source is offline")

    script = Script(load("sql"), "done", "again")
    sql = lazy("sql", tools=[make_tool("query")], instructions="S.", dynamic_instructions=[refuse])
    agent = Agent(FunctionModel(script), capabilities=[sql])
    result = agent.run("go")
    ret = result.messages[2].parts[0]
    assert ret.outcome is ToolOutcome.error and "offline" in ret.content and ret.instructions == ()
    assert script.tools(1) == ["load_capability"]
    agent.run("more", message_history=result.messages)
    assert script.tools(2) == ["load_capability"]  # unsuccessful results never restore state


def test_a_callback_exception_fails_the_run_with_nothing_committed() -> None:
    class Broken(Exception):
        pass

    def broken(ctx: Any) -> str:
        raise Broken("bug")

    script = Script(load("sql"), "done")
    agent = Agent(FunctionModel(script), capabilities=[lazy("sql", dynamic_instructions=[broken])])
    with pytest.raises(Broken):
        agent.run("go")


def test_loads_commit_only_after_the_whole_tool_batch() -> None:
    seen: list[Any] = []

    def probe(args: dict[str, Any], ctx: Any) -> str:
        seen.append(ctx.capabilities.active_ids)
        return "probed"

    probe_tool = Tool.manual("probe", "Probe.", EMPTY, probe, takes_context=True)
    script = Script([load("extra"), ToolCallPart("probe", "{}", "P1")], ToolCallPart("probe", "{}", "P2"), "done")
    agent = Agent(FunctionModel(script), tools=[probe_tool],
                  capabilities=[lazy("extra", tools=[make_tool("more")])])
    agent.run("go")
    assert seen == [(), ("extra",)]


def test_an_already_active_or_eager_capability_is_not_loaded_again() -> None:
    script = Script(load("a", "L1"), [load("a", "L2"), load("base", "L3"), load("ghost", "L4")], "done")
    agent = Agent(FunctionModel(script), capabilities=[Capability("base"), lazy("a"), lazy("b")])
    result = agent.run("go")
    again, eager, ghost = result.messages[4].parts
    assert again.outcome is ToolOutcome.success and again.loaded == () and "already active" in again.content
    assert eager.outcome is ToolOutcome.error and "always active" in eager.content
    assert ghost.outcome is ToolOutcome.error and "no capability has the id 'ghost'" in ghost.content


def test_malformed_load_arguments_get_a_retry_prompt() -> None:
    script = Script(ToolCallPart("load_capability", '{"id": "a"}', "L1"), "done")
    result = Agent(FunctionModel(script), capabilities=[lazy("a")]).run("go")
    assert isinstance(result.messages[1].parts[0], ToolCallPart)  # not typed: not a load
    retry = result.messages[2].parts[0]
    assert isinstance(retry, RetryPromptPart) and "capability_id" in retry.content
    assert retry.tool_call_id == "L1"


def test_a_load_call_without_capabilities_is_an_unknown_tool() -> None:
    script = Script(load("a"), "done")
    result = Agent(FunctionModel(script)).run("go")
    assert isinstance(result.messages[2].parts[0], RetryPromptPart)


# -- structural errors and configuration ----------------------------------------------------------


def test_structural_errors_surface_before_the_first_model_request() -> None:
    calls: list[int] = []
    model = FunctionModel(lambda m, i: calls.append(1) or ResponseMessage((TextPart("x"),)))
    agent = Agent(model, capabilities=[Capability("a")])
    with pytest.raises(DuplicateCapabilityId):
        agent.run("go", capabilities=[Capability("a")])
    with pytest.raises(UnknownCapabilityDependency):
        Agent(model, capabilities=[Capability("b", dependencies=["zz"])]).run("go")
    with pytest.raises(CapabilityConflict):
        Agent(model, capabilities=[Capability("a"), Capability("b", conflicts=["a"])]).run("go")
    assert calls == []


def test_configuration_is_type_checked() -> None:
    model = FunctionModel(lambda m, i: ResponseMessage((TextPart("x"),)))
    with pytest.raises(InvalidAgentConfiguration, match="Agent.capabilities must contain Capability"):
        Agent(model, capabilities=["a"])  # type: ignore[list-item]
    with pytest.raises(InvalidAgentConfiguration, match="RunOptions.capability_layers"):
        RunOptions(prompt="x", capability_layers=[Capability("a")])  # type: ignore[list-item]
    with pytest.raises(InvalidAgentConfiguration, match="sequence"):
        RunOptions(prompt="x", capabilities="a")  # type: ignore[arg-type]
    single = RunOptions(prompt="x", capabilities=Capability("a"))  # type: ignore[arg-type]
    assert len(single.capabilities) == 1


def test_a_function_tool_named_load_capability_is_refused_while_loads_are_offered() -> None:
    script = Script("x")
    agent = Agent(FunctionModel(script), tools=[make_tool("load_capability")], capabilities=[lazy("a")])
    with pytest.raises(InvalidAgentConfiguration, match="framework owns"):
        agent.run("go")


# -- composition order and precedence --------------------------------------------------------------


def test_scope_order_is_fixed_whatever_order_the_layers_are_given_in() -> None:
    script = Script("done")
    agent = Agent(FunctionModel(script), instructions="direct",
                  capabilities=[Capability(instructions="agent-1"), Capability(instructions="agent-2")])
    agent.run(
        "go", instructions="run-direct",
        capabilities=[Capability(instructions="run-1")],
        capability_layers=[
            CapabilityLayer("subagent", [Capability(instructions="subagent")]),
            CapabilityLayer("nested", [Capability(instructions="nested")]),
            CapabilityLayer("inherited", [Capability(instructions="inherited")]),
        ],
    )
    assert script.instructions(0) == (
        "direct", "inherited", "agent-1", "agent-2", "run-1", "nested", "subagent", "run-direct",
    )


def test_settings_precedence_across_tiers() -> None:
    script = Script(load("late"), "done")
    agent = Agent(
        FunctionModel(script), model_settings=ModelSettings(seed=7),
        capabilities=[
            Capability("one", model_settings=ModelSettings(temperature=0.1, top_p=0.5, seed=1)),
            Capability("two", model_settings=ModelSettings(top_p=0.6)),
            lazy("late", model_settings=ModelSettings(temperature=0.3, seed=2)),
        ],
    )
    agent.run("go", model_settings=ModelSettings(max_tokens=50))
    first, second = script.requests[0].settings, script.requests[1].settings
    # later capability over earlier; agent and run over every capability
    assert (first.temperature, first.top_p, first.seed, first.max_tokens) == (0.1, 0.6, 7, 50)
    assert (second.temperature, second.top_p, second.seed, second.max_tokens) == (0.3, 0.6, 7, 50)
    script2 = Script("done")
    Agent(FunctionModel(script2), capabilities=[Capability(model_settings=ModelSettings(temperature=0.1))]).run(
        "go", model_settings=ModelSettings(temperature=0.9))
    assert script2.requests[0].settings.temperature == 0.9


def test_model_selectors_receive_the_model_chosen_so_far() -> None:
    base_script, strong_script = Script(load("strong")), Script("from strong")
    base = FunctionModel(base_script, model_name="base")
    strong = FunctionModel(strong_script, model_name="strong")
    chosen: list[tuple[str, str, tuple[str, ...]]] = []

    def pick(target: Any, label: str) -> Callable[[Any, Any], Any]:
        def select(ctx: Any, model: Any) -> Any:
            chosen.append((label, model.model_name, ctx.capabilities.active_ids))
            return target
        return select

    agent = Agent(base, capabilities=[
        Capability("router", model_selector=lambda ctx, model: model),
        lazy("strong", model_selector=pick(strong, "strong")),
    ])
    result = agent.run("go")
    assert result.output == "from strong"
    assert len(base_script.requests) == 1 and len(strong_script.requests) == 1
    assert chosen == [("strong", "base", ("router", "strong"))]
    with pytest.raises(InvalidAgentConfiguration, match="does not implement"):
        Agent(base, capabilities=[Capability(model_selector=lambda ctx, model: "nope")]).run("go")


def test_every_contribution_kind_joins_in_order() -> None:
    order: list[str] = []
    events: list[str] = []

    class Tag(Policy):
        def __init__(self, label: str) -> None:
            self.label = label

        def returned(self, ctx: Any, content: Any) -> Any:
            order.append(f"policy-{self.label}:{ctx.capabilities.active_ids}")
            return f"{content}+{self.label}"

    def processor(label: str) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
        def run(messages: tuple[Any, ...]) -> tuple[Any, ...]:
            order.append(f"processor-{label}")
            return messages
        return run

    def validator(label: str) -> Callable[[str, Any, Any], Any]:
        def check(name: Any, ctx: Any, value: Any) -> Any:
            order.append(f"validator-{label}:{ctx.capabilities.active_ids}")
            return OutputResult.output(f"{value}+{label}")
        return check

    def hook(label: str) -> Callable[[Any], None]:
        def on(event: Any) -> None:
            if isinstance(event, ToolDispatchStart):
                events.append(f"{label}:{event.route}")
        return on

    echo = make_tool("echo", "hi")

    def prepare(ctx: Any) -> Any:
        order.append(f"toolset:{ctx.capabilities.active_ids}")
        return [echo]

    script = Script(ToolCallPart("echo", "{}", "E1"), "done")
    cap = Capability(
        "kit", toolsets=[Toolset([echo], prepare=prepare)],
        builtin_tools=["web_search"], hooks=[hook("cap")], tool_policies=[Tag("cap")],
        history_processors=[processor("cap")], output_validators=[validator("cap")],
    )
    agent = Agent(
        FunctionModel(script), hooks=[hook("agent")], tool_policies=[Tag("agent")],
        history_processors=[processor("agent")], output_validators=[validator("agent")],
        builtin_tools=[ManagedTool("web_fetch")], capabilities=[cap],
    )
    result = agent.run("go", hooks=[hook("run")], history_processors=[processor("run")])
    assert result.output == "done+agent+cap"
    assert result.messages[2].parts[0].content == "hi+agent+cap"
    assert [t.kind for t in script.requests[0].managed_tools] == ["web_fetch", "web_search"]
    assert events == ["agent:function", "run:function", "cap:function"]
    assert order[:4] == ["toolset:('kit',)", "processor-agent", "processor-cap", "processor-run"]
    assert "policy-agent:('kit',)" in order and order.index("policy-agent:('kit',)") < order.index("policy-cap:('kit',)")
    assert order[-2:] == ["validator-agent:('kit',)", "validator-cap:('kit',)"]


def test_managed_tools_of_one_kind_keep_the_agents_and_the_latest_capabilitys() -> None:
    script = Script("done")
    agent = Agent(FunctionModel(script), builtin_tools=["web_fetch"], capabilities=[
        Capability(builtin_tools=[ManagedTool("web_search"), ManagedTool("web_fetch")]),
    ])
    agent.run("go")
    assert [t.kind for t in script.requests[0].managed_tools] == ["web_fetch", "web_search"]


def test_hooks_of_a_capability_loaded_mid_run_start_receiving_events() -> None:
    events: list[str] = []
    script = Script(load("audit"), ToolCallPart("t", "{}", "T1"), "done")
    audit = lazy("audit", tools=[make_tool("t")],
                 hooks=[lambda e: events.append(e.kind) if e.kind == "tool_dispatch_start" else None])
    Agent(FunctionModel(script), capabilities=[audit]).run("go")
    assert events == ["tool_dispatch_start"]  # only the call after the load


def test_hook_dispatch_route_names_the_capability_load() -> None:
    routes: list[str] = []
    script = Script(load("a"), "done")
    agent = Agent(FunctionModel(script), capabilities=[lazy("a")],
                  hooks=[lambda e: routes.append(e.route) if isinstance(e, ToolDispatchStart) else None])
    agent.run("go")
    assert routes == ["capability"]


# -- history and resume -------------------------------------------------------------------------


def test_a_later_run_rebuilds_history_loads_but_not_run_end_ones() -> None:
    script = Script([load("keep", "L1"), load("once", "L2")], "done", "again")
    caps = [lazy("keep", tools=[make_tool("kept")]),
            lazy("once", unload="run_end", tools=[make_tool("temporary")])]
    agent = Agent(FunctionModel(script), capabilities=caps)
    first = agent.run("go")
    assert script.tools(1) == ["kept", "temporary"]
    agent.run("more", message_history=first.messages)
    assert script.tools(2) == ["kept", "load_capability"]
    enum = script.requests[2].tools[-1].parameters_json_schema["properties"]["capability_id"]["enum"]
    assert enum == ["once"]


def test_a_load_result_without_its_typed_call_restores_nothing() -> None:
    forged = [
        RequestMessage((CapabilityLoadReturnPart("L9", "keep", loaded=("keep",)),)),
        ResponseMessage((TextPart("ok"),)),
    ]
    script = Script("done")
    Agent(FunctionModel(script), capabilities=[lazy("keep", tools=[make_tool("kept")])]).run(
        "go", message_history=forged)
    assert script.tools(0) == ["load_capability"]


def test_history_reconstruction_skips_ids_the_registry_no_longer_knows() -> None:
    script = Script(load("gone"), "done", "again")
    first = Agent(FunctionModel(script), capabilities=[lazy("gone"), lazy("other")]).run("go")
    Agent(FunctionModel(script), capabilities=[lazy("other")]).run("more", message_history=first.messages)
    assert script.tools(2) == ["load_capability"]


def test_a_restored_load_that_now_conflicts_is_reported() -> None:
    script = Script(load("a"), "done")
    first = Agent(FunctionModel(script), capabilities=[lazy("a")]).run("go")
    agent = Agent(FunctionModel(Script("x")), capabilities=[lazy("a"), Capability("b", conflicts=["a"])])
    with pytest.raises(CapabilityConflict):
        agent.run("more", message_history=first.messages)


_PAUSE_SCRIPT = textwrap.dedent('''
    import json, sys
    from zigai import Agent
    from zigai.agent import ResumeDecision
    from zigai.capability import Capability
    from zigai.messages import ResponseMessage, TextPart, ToolCallPart
    from zigai.testing import FunctionModel
    from zigai.tool import Tool, ToolExecution

    EMPTY = {"type": "object", "properties": {}}
    seen = []

    def model(messages, info):
        names = [t.name for t in info.tools]
        seen.append(names)
        if "load_capability" in names:
            return ResponseMessage((ToolCallPart("load_capability", '{"capability_id": "ops"}', "L1"),))
        if not any(getattr(p, "tool_name", None) == "deploy" for m in messages for p in m.parts):
            return ResponseMessage((ToolCallPart("deploy", "{}", "D1"),))
        if not any(getattr(p, "tool_call_id", None) == "S1" for m in messages for p in m.parts):
            return ResponseMessage((ToolCallPart("status", "{}", "S1"),))
        return ResponseMessage((TextPart("finished"),))

    deploy = Tool.manual("deploy", "Deploy.", EMPTY, lambda a: "deployed",
                         execution=ToolExecution.requires_approval)
    status = Tool.manual("status", "Status.", EMPTY, lambda a: "green")
    ops = Capability("ops", description="operations", loading="on_demand", unload="run_end",
                     tools=[deploy, status])
    agent = Agent(FunctionModel(model), capabilities=[ops])
    if sys.argv[1] == "pause":
        outcome = agent.run_until_pause("ship it")
        assert outcome.paused is not None
        sys.stdout.write(json.dumps({"state": outcome.paused.state_json, "seen": seen}))
    else:
        state = sys.stdin.read()
        outcome = agent.resume_run(state, [ResumeDecision.approve("D1")])
        sys.stdout.write(json.dumps({"output": outcome.result.output, "seen": seen}))
''')


def test_pause_and_resume_across_processes_keeps_a_run_end_load(tmp_path: Any) -> None:
    script = tmp_path / "pause_resume.py"
    script.write_text(_PAUSE_SCRIPT)

    def run(mode: str, stdin: str = "") -> dict[str, Any]:
        done = subprocess.run([sys.executable, str(script), mode], input=stdin, capture_output=True,
                              text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    paused = run("pause")
    assert paused["seen"] == [["load_capability"], ["deploy", "status"]]
    resumed = run("resume", paused["state"] if isinstance(paused["state"], str) else "")
    assert resumed["output"] == "finished"
    # the resumed process never re-offered load_capability: the run_end load came back
    assert resumed["seen"] == [["deploy", "status"], ["deploy", "status"]]


# -- snapshots for nested agents and streaming ---------------------------------------------------


def test_a_nested_agent_inherits_the_active_capabilities_through_a_layer() -> None:
    snapshots: list[CapabilitySnapshot] = []

    def capture(ctx: Any) -> None:
        snapshots.append(ctx.capabilities)
        return None

    script = Script(load("sql"), "done")
    sql = lazy("sql", tools=[make_tool("query")], dynamic_instructions=[capture])
    Agent(FunctionModel(script), capabilities=[Capability("base", dynamic_instructions=[capture]), sql]).run("go")
    snapshot = snapshots[-1]
    assert snapshot.active_ids == ("base",)  # resolved while loading: sql is not active yet
    registry = CapabilityRegistry([Capability("base"), sql])
    parent = registry.snapshot([registry.get("base"), sql], loaded=["sql"])  # type: ignore[list-item]
    child_script = Script("child")
    Agent(FunctionModel(child_script)).run("sub", capability_layers=[parent.inherited_layer()])
    assert child_script.tools(0) == ["query"]


def test_a_streamed_run_loads_capabilities_the_same_way() -> None:
    script = Script(load("sql"), "done")

    def stream(messages: Any, info: Any) -> Any:
        response = script(messages, info)
        for part in response.parts:
            if isinstance(part, TextPart):
                yield part.content
            else:
                from zigai.testing import DeltaToolCall

                yield DeltaToolCall(key=0, name=part.tool_name, json_args=part.args, tool_call_id=part.tool_call_id)

    agent = Agent(FunctionModel(stream_function=stream), capabilities=[lazy("sql", tools=[make_tool("query")])])
    with agent.run_stream("go") as events:
        for _ in events:
            pass
        result = events.result()
    assert isinstance(result.messages[1].parts[0], CapabilityLoadCallPart)
    assert script.tools(1) == ["query"]


def test_a_deferred_capability_tool_is_still_a_deferred_tool() -> None:
    script = Script(load("ops"), ToolCallPart("deploy", "{}", "D1"))
    ops = lazy("ops", tools=[make_tool("deploy", execution=ToolExecution.external)])
    outcome = Agent(FunctionModel(script), capabilities=[ops]).run_until_pause("go")
    assert outcome.paused is not None and outcome.paused.calls[0].tool_name == "deploy"


def test_unparsable_load_arguments_stay_an_untyped_call() -> None:
    script = Script(ToolCallPart("load_capability", "{not json", "L1"), "done")
    result = Agent(FunctionModel(script), capabilities=[lazy("a")]).run("go")
    assert isinstance(result.messages[1].parts[0], ToolCallPart)
    assert isinstance(result.messages[2].parts[0], RetryPromptPart)


def test_a_dynamic_instruction_must_return_text() -> None:
    script = Script(load("a"), "done")
    agent = Agent(FunctionModel(script), capabilities=[lazy("a", dynamic_instructions=[lambda ctx: 3])])
    with pytest.raises(InvalidAgentConfiguration, match="returned int, not str"):
        agent.run("go")


def test_capability_settings_the_model_cannot_honour_fail_before_the_request() -> None:
    from zigai.model import ModelProfile

    calls: list[int] = []
    model = FunctionModel(lambda m, i: calls.append(1) or ResponseMessage((TextPart("x"),)),
                          profile=ModelProfile(supports_tools=True, service_tiers=frozenset()))
    agent = Agent(model, capabilities=[Capability(model_settings=ModelSettings(service_tier="flex"))])
    from zigai.settings import UnsupportedModelSetting

    with pytest.raises(UnsupportedModelSetting, match="service"):
        agent.run("go")
    assert calls == []
