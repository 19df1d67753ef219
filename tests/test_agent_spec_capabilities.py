"""Capabilities through specs and the harness: attached with their loading mode, checked by the
capability registry in the dry run, the golden built-ins spec end to end in process (the same
spec through real ``zigai check`` / ``zigai run --spec`` processes: tests/test_cli_spec.py)."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from zigai.agent import Agent
from zigai.agent_spec import CapabilityDependencyCycle as SpecCycle
from zigai.agent_spec import (
    Catalogs,
    UnresolvedReference,
    load,
    model_string_catalog,
    parse,
    resolve,
    validate_resolution,
)
from zigai.capabilities_builtin import DirectorySkills, builtin_capabilities
from zigai.capability import (
    Capability,
    CapabilityConflict,
    CapabilityDependencyCycle,
    CapabilityLimitExceeded,
    CapabilityLimits,
    CapabilityLoading,
    InvalidCapability,
)
from zigai.environments import RootedDirectory
from zigai.errors import AgentSpecError, CapabilityError
from zigai.harness import Harness, InvalidHarness
from zigai.messages import (
    CapabilityLoadReturnPart,
    ResponseMessage,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from zigai.testing import FunctionModel, TestModel

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "docs" / "examples" / "agent_spec"
MINIMAL = "version: 1\nmodel: {provider: test, name: default}\n"


def catalogs(*capabilities: Capability, limits: CapabilityLimits | None = None) -> Catalogs:
    return Catalogs(providers=model_string_catalog(), capability_limits=limits,
                    capabilities={c.id: c for c in capabilities if c.id})


# -- one class per error ---------------------------------------------------------------------------


def test_the_spec_cycle_is_the_capability_packages_class_with_the_spec_path() -> None:
    assert SpecCycle is CapabilityDependencyCycle and issubclass(SpecCycle, CapabilityError)
    assert not issubclass(SpecCycle, AgentSpecError)
    a, b = Capability("a", dependencies=["b"]), Capability("b", dependencies=["a"])
    with pytest.raises(CapabilityDependencyCycle) as info:
        validate_resolution(parse(MINIMAL + "capabilities: [x, a]\n"), catalogs(Capability("x"), a, b), {})
    assert info.value.cycle == ("a", "b", "a") and info.value.path == "$.capabilities[1]"
    copy = pickle.loads(pickle.dumps(info.value))
    assert (copy.cycle, copy.path, str(copy)) == (info.value.cycle, info.value.path, str(info.value))
    assert CapabilityDependencyCycle("c", cycle=("a", "a")).path == ""  # found outside a spec


# -- the dry run hands the plan to the registry --------------------------------------------------


def test_an_eager_conflict_in_the_spec_is_refused_at_the_conflicting_entry() -> None:
    sql, docs = Capability("sql"), Capability("docs", conflicts=["sql"])
    with pytest.raises(CapabilityConflict) as info:
        validate_resolution(parse(MINIMAL + "capabilities: [sql, docs]\n"), catalogs(sql, docs), {})
    assert str(info.value).startswith("$.capabilities[1]: ")
    assert (info.value.capability_id, info.value.conflicting) == ("docs", "sql")
    # on demand, the conflict is the model's load to refuse later, not a structural error
    plan = validate_resolution(parse(MINIMAL + "capabilities: [sql, {name: docs, loading: on_demand}]\n"),
                               catalogs(sql, docs), {})
    assert [c.name for c in plan.capabilities] == ["sql", "docs"]


def test_capability_limits_hold_at_the_exact_limit_and_refuse_one_past_it() -> None:
    caps = [Capability(name) for name in ("a", "b", "c")]
    limits = CapabilityLimits(max_capabilities=2)
    plan = validate_resolution(parse(MINIMAL + "capabilities: [a, b]\n"), catalogs(*caps, limits=limits), {})
    assert len(plan.capabilities) == 2
    with pytest.raises(CapabilityLimitExceeded) as info:
        validate_resolution(parse(MINIMAL + "capabilities: [a, b, c]\n"), catalogs(*caps, limits=limits), {})
    assert str(info.value).startswith("$.capabilities: ") and info.value.value == 3


def test_dependencies_are_resolved_before_the_registry_sees_them() -> None:
    # the registry alone would refuse "app" (its dependency is not registered); the spec adds it
    app, db = Capability("app", dependencies=["db"]), Capability("db")
    plan = validate_resolution(parse(MINIMAL + "capabilities: [app]\n"), catalogs(app, db), {})
    assert [(c.name, c.required_by, c.path) for c in plan.capabilities] == [
        ("db", "app", "$.capabilities[0]"), ("app", None, "$.capabilities[0]")]


@pytest.mark.parametrize(("entry", "words"), [
    (object(), "is a object, not a zigai.capability.Capability"),
    (Capability("other"), "has the id 'other'"),
])
def test_a_catalog_entry_must_be_the_capability_of_that_name(entry: Any, words: str) -> None:
    bad = Catalogs(providers=model_string_catalog(), capabilities={"notes": entry})
    with pytest.raises(InvalidCapability, match=words) as info:
        validate_resolution(parse(MINIMAL + "capabilities: [notes]\n"), bad, {})
    assert str(info.value).startswith("$.capabilities[0]: ")


def test_an_absent_built_in_names_the_backend_it_needs() -> None:
    with pytest.raises(UnresolvedReference, match="needs an image backend") as info:
        validate_resolution(parse(MINIMAL + "capabilities: [image]\n"),
                            Catalogs(model_string_catalog(), capabilities=builtin_capabilities()), {})
    assert (info.value.path, info.value.name) == ("$.capabilities[0]", "image")


# -- full resolution attaches them ---------------------------------------------------------------


def test_resolution_attaches_capabilities_with_the_spec_loading_mode() -> None:
    notes = Capability("notes", instructions="Keep notes.")
    lazy = Capability("lazy", loading=CapabilityLoading.on_demand, description="Later.")
    text = MINIMAL + "capabilities: [{name: notes, loading: on_demand}, lazy]\n"
    with resolve(parse(text), catalogs(notes, lazy), lambda ref, env: TestModel(), {}) as resolved:
        attached = resolved.agent.capabilities
        assert [(c.id, c.loading) for c in attached] == [
            ("notes", CapabilityLoading.on_demand), ("lazy", CapabilityLoading.eager)]
        assert attached[0].instructions == notes.instructions and attached[0].tools is notes.tools
        assert notes.loading is CapabilityLoading.eager  # the catalog's bundle is unchanged
        assert [c.capability for c in resolved.capabilities] == list(attached)
    same = Capability("same")
    with resolve(parse(MINIMAL + "capabilities: [same]\n"), catalogs(same), lambda r, e: TestModel(), {}) as r:
        assert r.agent.capabilities[0] is same  # already in the requested mode: borrowed as is


def _builtins_run(repo: RootedDirectory, skills: RootedDirectory) -> tuple[Any, list[list[str]]]:
    offered: list[list[str]] = []
    script = iter([
        [ToolCallPart("load_capability", json.dumps({"capability_id": "skill"}), "c1")],
        [ToolCallPart("skill_load", json.dumps({"name": "release-notes"}), "c2")],
        [ToolCallPart("repository_read", json.dumps({"path": "builtins.yaml"}), "c3")],
        [TextPart("notes written")],
    ])

    def model(messages: Any, info: Any) -> ResponseMessage:
        offered.append(sorted(t.name for t in info.tools))
        return ResponseMessage(tuple(next(script)))

    catalog = Catalogs(model_string_catalog(), capabilities=builtin_capabilities(
        repository=repo, skills=DirectorySkills(skills)))
    with load(SPECS / "builtins.yaml") as spec, \
            resolve(spec, catalog, lambda ref, env: FunctionModel(model), {}) as resolved:
        result = resolved.agent.run("Write the release notes.")
    return result, offered


def test_the_golden_built_ins_spec_resolves_and_runs_end_to_end() -> None:
    with RootedDirectory.open(SPECS) as repo, repo.open_dir("skills") as skills:
        result, offered = _builtins_run(repo, skills)
    with result:
        repository_tools = ["repository_list", "repository_read", "repository_search"]
        assert offered[0] == ["load_capability", *repository_tools]  # skill is on demand
        assert offered[1] == [*repository_tools, "skill_list", "skill_load", "skill_read_file"]
        parts = [p for m in result.messages for p in getattr(m, "parts", ())]
        [loaded] = [p for p in parts if isinstance(p, CapabilityLoadReturnPart)]
        assert loaded.loaded == ("skill",)
        skill_text, spec_text = [p.content for p in parts if isinstance(p, ToolReturnPart)]
        assert skill_text.startswith("Group the changes by area")
        assert spec_text == (SPECS / "builtins.yaml").read_text()
        # the framework's load_capability is not one of the run's tool calls
        assert result.output == "notes written" and result.usage.tool_calls == 2


# -- the harness ---------------------------------------------------------------------------------


def test_the_harness_adds_enabled_capabilities_after_the_agents_in_the_order_given(tmp_path: Path) -> None:
    own = Capability("own", instructions="own bundle")
    first, second = Capability("first", instructions="first"), Capability("second", instructions="second")
    requests: list[Any] = []

    def model(messages: Any, info: Any) -> ResponseMessage:
        requests.append(info.request)
        return ResponseMessage((TextPart("ok"),))

    base = Agent(FunctionModel(model), instructions="base", capabilities=[own])
    harness = Harness(base, preset_instructions="preset", capabilities=[second, first])
    assert [c.id for c in harness.agent.capabilities] == ["own", "second", "first"]
    assert [c.id for c in base.capabilities] == ["own"]
    with harness.run("hi"):
        pass
    assert requests[0].instructions == ("base", "preset", "own bundle", "second", "first")
    assert Harness(base).agent.capabilities == (own,)
    with pytest.raises(CapabilityConflict):
        Harness(base, capabilities=[Capability("x", conflicts=["own"])])
    for bad in (own, [object()], "own"):
        with pytest.raises(InvalidHarness, match="sequence of zigai.capability.Capability"):
            Harness(base, capabilities=bad)  # type: ignore[arg-type]


def test_the_harness_over_a_resolved_spec_with_built_ins(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("hello")
    with RootedDirectory.open(tmp_path) as root:
        catalog = builtin_capabilities(repository=root)
        calls = iter([[ToolCallPart("repository_list", "{}", "c1")], [TextPart("listed")]])
        agent_catalogs = Catalogs(model_string_catalog())
        with resolve(parse(MINIMAL), agent_catalogs,
                     lambda r, e: FunctionModel(lambda m, i: ResponseMessage(tuple(next(calls)))), {}) as resolved:
            harness = Harness(resolved.agent, capabilities=[catalog["repository"]])
            with harness.run("list") as outcome:
                [listed] = [p.content for m in outcome.result.messages for p in getattr(m, "parts", ())
                            if isinstance(p, ToolReturnPart)]
                assert listed == ("README.md",) and outcome.output == "listed"


def test_capability_errors_of_a_spec_exit_with_the_usage_code() -> None:
    from zigai.cli.errors import ExitCode, exit_code_for

    for error in (CapabilityConflict("$.capabilities[1]: x", capability_id="docs", conflicting="sql"),
                  CapabilityDependencyCycle("$.capabilities[0]: x", cycle=("a", "a"), path="$.capabilities[0]"),
                  CapabilityLimitExceeded("$.capabilities: x"), InvalidCapability("$.capabilities[0]: x")):
        assert exit_code_for(error) is ExitCode.usage
