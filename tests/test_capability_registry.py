"""zigai.capability: descriptors, scopes, bounded validation and dependency-first planning."""

from __future__ import annotations

import pickle

import pytest

from zigai.capability import (
    Capability,
    CapabilityConflict,
    CapabilityDependencyCycle,
    CapabilityLayer,
    CapabilityLimitExceeded,
    CapabilityLimits,
    CapabilityLoading,
    CapabilityRegistry,
    CapabilityScope,
    CapabilitySnapshot,
    CapabilityUnloadPolicy,
    DuplicateCapabilityId,
    InvalidCapability,
    LoadResolution,
    LoadResolutionClosed,
    UnknownCapability,
    UnknownCapabilityDependency,
)
from zigai.errors import CapabilityError, ZigAIError
from zigai.model import ManagedTool
from zigai.settings import ModelSettings
from zigai.tool import Tool
from zigai.tool.policy import Policy


def on_demand(cid: str, **kw: object) -> Capability:
    return Capability(cid, description=f"{cid} features", loading=CapabilityLoading.on_demand, **kw)  # type: ignore[arg-type]


# -- descriptors -------------------------------------------------------------------------


def test_anonymous_capabilities_are_eager_only() -> None:
    anonymous = Capability(instructions="Be brief.")
    assert anonymous.id is None and anonymous.loading is CapabilityLoading.eager
    assert anonymous.instructions == ("Be brief.",)
    for kwargs in ({"loading": "on_demand"}, {"dependencies": ["a"]}, {"conflicts": ["a"]}):
        with pytest.raises(InvalidCapability, match="stable id"):
            Capability(**kwargs)  # type: ignore[arg-type]


def test_capability_ids_and_lists_are_checked() -> None:
    Capability("a" * 64)
    with pytest.raises(InvalidCapability, match="must match"):
        Capability("a" * 65)
    with pytest.raises(InvalidCapability, match="must match"):
        Capability("has space")
    with pytest.raises(InvalidCapability, match="itself"):
        Capability("a", dependencies=["a"])
    with pytest.raises(InvalidCapability, match="twice"):
        Capability("a", conflicts=["b", "b"])
    with pytest.raises(InvalidCapability, match="not a capability id"):
        Capability("a", dependencies=["b c"])
    with pytest.raises(InvalidCapability, match="both depends on and conflicts"):
        Capability("a", dependencies=["b"], conflicts=["b"])
    with pytest.raises(InvalidCapability, match="sequence"):
        Capability("a", dependencies=7)  # type: ignore[arg-type]
    with pytest.raises(InvalidCapability, match="CapabilityLoading"):
        Capability("a", loading="lazy")  # type: ignore[arg-type]
    with pytest.raises(InvalidCapability, match="description"):
        Capability("a", description=3)  # type: ignore[arg-type]


def test_capability_contributions_are_validated_and_frozen() -> None:
    ping = Tool.manual("ping", "Ping.", {"type": "object", "properties": {}}, lambda args: "pong")

    cap = Capability(
        "web", tools=[ping], builtin_tools="web_search", instructions=["Use the web.", ""],
        hooks=[lambda event: None], tool_policies=[Policy()],
        model_settings=ModelSettings(temperature=0.1), model_selector=lambda ctx, model: model,
    )
    assert cap.tools == (ping,) and cap.builtin_tools == (ManagedTool("web_search"),)
    assert cap.instructions == ("Use the web.",)
    assert "web" in repr(cap) and "eager" in repr(cap)
    with pytest.raises(InvalidCapability, match="tools must contain Tool"):
        Capability(tools=["ping"])  # type: ignore[list-item]
    with pytest.raises(InvalidCapability, match="builtin_tools"):
        Capability(builtin_tools=["teleport"])
    with pytest.raises(InvalidCapability, match="str or ManagedTool"):
        Capability(builtin_tools=[3])  # type: ignore[list-item]
    with pytest.raises(InvalidCapability, match="callables"):
        Capability(hooks=[1])  # type: ignore[list-item]
    with pytest.raises(InvalidCapability, match="Policy"):
        Capability(tool_policies=[object()])  # type: ignore[list-item]
    with pytest.raises(InvalidCapability, match="ModelSettings"):
        Capability(model_settings={"temperature": 1})  # type: ignore[arg-type]
    with pytest.raises(InvalidCapability, match="model_selector"):
        Capability(model_selector=1)  # type: ignore[arg-type]
    with pytest.raises(InvalidCapability, match="toolsets must contain Toolset"):
        Capability(toolsets=[ping])  # type: ignore[list-item]


def test_layers_take_scopes_by_member_or_name() -> None:
    assert CapabilityLayer("nested").scope is CapabilityScope.nested
    assert CapabilityLayer(CapabilityScope.run).scope is CapabilityScope.run
    assert CapabilityLayer(0).scope is CapabilityScope.inherited
    for bad in ("global", 9, True, 1.5):
        with pytest.raises(InvalidCapability, match="CapabilityScope"):
            CapabilityLayer(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidCapability, match="Capability values"):
        CapabilityLayer("run", ["x"])  # type: ignore[list-item]


# -- composition order -------------------------------------------------------------------


def test_scope_order_is_fixed_whatever_the_layer_order() -> None:
    caps = {name: Capability(name) for name in ("i", "a1", "a2", "r", "n", "s1", "s2")}
    layers = [
        CapabilityLayer("subagent", [caps["s1"]]),
        CapabilityLayer("run", [caps["r"]]),
        CapabilityLayer("subagent", [caps["s2"]]),
        CapabilityLayer("nested", [caps["n"]]),
        CapabilityLayer("inherited", [caps["i"]]),
    ]
    registry = CapabilityRegistry([*layers, caps["a1"], caps["a2"]])
    assert registry.ids == ("i", "a1", "a2", "r", "n", "s1", "s2")
    reversed_registry = CapabilityRegistry([caps["a1"], caps["a2"], *reversed(layers)])
    # layers of one scope keep their relative order; the scopes themselves never move
    assert reversed_registry.ids == ("i", "a1", "a2", "r", "n", "s2", "s1")
    assert len(registry) == 7 and "r" in registry and "zz" not in registry
    assert registry.get("n") is caps["n"] and registry.get("zz") is None
    assert "7 capabilities" in repr(registry)


def test_one_bundle_given_twice_composes_once() -> None:
    shared = Capability("shared")
    registry = CapabilityRegistry([CapabilityLayer("run", [shared]), shared])
    assert registry.capabilities == (shared,)


def test_registry_takes_a_single_item_and_rejects_other_values() -> None:
    cap = Capability("solo")
    assert CapabilityRegistry(cap).ids == ("solo",)
    assert CapabilityRegistry(CapabilityLayer("run", [cap])).ids == ("solo",)
    with pytest.raises(InvalidCapability, match="Capability or CapabilityLayer"):
        CapabilityRegistry(["solo"])  # type: ignore[list-item]
    with pytest.raises(InvalidCapability, match="CapabilityLimits"):
        CapabilityRegistry((), limits=3)  # type: ignore[arg-type]


# -- structural validation ---------------------------------------------------------------


def test_duplicate_ids_are_refused_across_scopes() -> None:
    with pytest.raises(DuplicateCapabilityId, match="'x'") as info:
        CapabilityRegistry([Capability("x"), CapabilityLayer("run", [Capability("x")])])
    assert info.value.capability_id == "x"


def test_unknown_dependencies_are_refused() -> None:
    with pytest.raises(UnknownCapabilityDependency, match="'b' depends on 'missing'") as info:
        CapabilityRegistry([Capability("a"), Capability("b", dependencies=["a", "missing"])])
    assert (info.value.capability_id, info.value.dependency) == ("b", "missing")


def test_cycles_are_found_and_named() -> None:
    caps = [
        Capability("root", dependencies=["a"]),
        Capability("a", dependencies=["b"]),
        Capability("b", dependencies=["c"]),
        Capability("c", dependencies=["a"]),
    ]
    with pytest.raises(CapabilityDependencyCycle, match="a -> b -> c -> a") as info:
        CapabilityRegistry(caps)
    assert info.value.cycle == ("a", "b", "c", "a")


def test_a_diamond_is_not_a_cycle() -> None:
    caps = [
        Capability("top", dependencies=["left", "right"]),
        Capability("left", dependencies=["base"]),
        Capability("right", dependencies=["base"]),
        Capability("base"),
    ]
    registry = CapabilityRegistry(caps)
    assert [c.id for c in registry.eager_plan] == ["base", "left", "right", "top"]


def test_eager_conflicts_are_structural() -> None:
    with pytest.raises(CapabilityConflict, match="'b' conflicts with 'a'") as info:
        CapabilityRegistry([Capability("a"), Capability("b", conflicts=["a"])])
    assert (info.value.capability_id, info.value.conflicting) == ("b", "a")
    # an on-demand bundle may conflict with an eager one: only its load is refused
    registry = CapabilityRegistry([Capability("a"), on_demand("b", conflicts=["a"])])
    assert [c.id for c in registry.on_demand] == ["b"]
    # a conflict naming an unregistered id is vacuous
    CapabilityRegistry([Capability("a", conflicts=["elsewhere"])])


def test_limits_hold_at_the_exact_value_and_fail_one_past() -> None:
    limits = CapabilityLimits(max_capabilities=3, max_dependencies=2, max_conflicts=1)
    CapabilityRegistry([Capability(f"c{i}") for i in range(3)], limits=limits)
    with pytest.raises(CapabilityLimitExceeded, match="max_capabilities=3") as info:
        CapabilityRegistry([Capability(f"c{i}") for i in range(4)], limits=limits)
    assert (info.value.limit_name, info.value.limit, info.value.value) == ("max_capabilities", 3, 4)
    base = [Capability("x"), Capability("y"), Capability("z")]
    CapabilityRegistry([*base[:2], Capability("d", dependencies=["x", "y"])],
                       limits=CapabilityLimits(max_dependencies=2))
    with pytest.raises(CapabilityLimitExceeded, match="max_dependencies=2"):
        CapabilityRegistry([*base, Capability("d", dependencies=["x", "y", "z"])],
                           limits=CapabilityLimits(max_dependencies=2))
    CapabilityRegistry([Capability("d", conflicts=["q"])], limits=limits)
    with pytest.raises(CapabilityLimitExceeded, match="max_conflicts=1"):
        CapabilityRegistry([Capability("d", conflicts=["q", "r"])], limits=limits)
    with pytest.raises(InvalidCapability, match="max_conflicts"):
        CapabilityLimits(max_conflicts=-1)
    with pytest.raises(InvalidCapability, match="max_capabilities"):
        CapabilityLimits(max_capabilities=True)


def test_a_long_chain_validates_without_recursion_trouble() -> None:
    chain = [Capability("c0")] + [Capability(f"c{i}", dependencies=[f"c{i - 1}"]) for i in range(1, 256)]
    registry = CapabilityRegistry(list(reversed(chain)))
    assert [c.id for c in registry.eager_plan] == [f"c{i}" for i in range(256)]


# -- planning ----------------------------------------------------------------------------


def _chain_registry() -> CapabilityRegistry:
    return CapabilityRegistry([
        Capability("core"),
        on_demand("sql", dependencies=["storage", "auth"]),
        on_demand("storage", dependencies=["auth"]),
        on_demand("auth"),
        on_demand("nosql", conflicts=["sql"]),
        on_demand("legacy", conflicts=["core"]),
    ])


def test_plans_are_dependency_first_in_declaration_order() -> None:
    registry = _chain_registry()
    assert [c.id for c in registry.eager_plan] == ["core"]
    with registry.resolve("sql", active=["core"]) as resolution:
        assert resolution.ok and resolution.error is None and resolution.diagnostic is None
        assert resolution.ids == ("auth", "storage", "sql")
        assert resolution.require() == resolution.plan
        assert "auth" in repr(resolution)
    with registry.resolve(["auth", "sql"], active=["core", "auth"]) as resolution:
        assert resolution.ids == ("storage", "sql")  # active bundles are not planned again


def test_conflicts_with_active_or_earlier_planned_bundles_refuse_the_whole_plan() -> None:
    registry = _chain_registry()
    with registry.resolve("legacy", active=["core"]) as resolution:
        assert not resolution.ok and resolution.plan == ()
        assert isinstance(resolution.error, CapabilityConflict)
        assert "which is active" in (resolution.diagnostic or "")
        with pytest.raises(CapabilityConflict):
            resolution.require()
    with registry.resolve(["sql", "nosql"]) as resolution:
        assert resolution.plan == () and "also being loaded" in (resolution.diagnostic or "")
        assert "error=" in repr(resolution)
    with registry.resolve("nosql", active=["sql"]) as resolution:
        # declared on the loading side only: still refused
        assert isinstance(resolution.error, CapabilityConflict)


def test_unknown_ids_are_a_diagnostic_listing_the_loadable_ones() -> None:
    registry = _chain_registry()
    with registry.resolve("nope") as resolution:
        assert isinstance(resolution.error, UnknownCapability)
        assert resolution.error.capability_id == "nope"
        assert "sql, storage, auth, nosql, legacy" in (resolution.diagnostic or "")
    with CapabilityRegistry().resolve("x") as resolution:
        assert "loadable capabilities: none" in (resolution.diagnostic or "")


def test_load_resolution_is_an_owner() -> None:
    resolution = _chain_registry().resolve("auth")
    assert isinstance(resolution, LoadResolution)
    resolution.close()
    resolution.deinit()  # idempotent
    assert resolution.closed and repr(resolution) == "LoadResolution(<closed>)"
    for use in (lambda: resolution.ok, lambda: resolution.plan, lambda: resolution.ids,
                lambda: resolution.error, lambda: resolution.diagnostic, resolution.require):
        with pytest.raises(LoadResolutionClosed, match="after close"):
            use()


# -- snapshots ---------------------------------------------------------------------------


def test_snapshots_order_ids_and_build_an_inherited_layer() -> None:
    registry = _chain_registry()
    anonymous = Capability(instructions="x")
    auth, core = registry.get("auth"), registry.get("core")
    assert auth is not None and core is not None
    snapshot = registry.snapshot([auth, core, anonymous], loaded=["auth"])
    assert snapshot.active_ids == ("core", "auth") and snapshot.on_demand_ids == ("auth",)
    assert snapshot.is_active("auth") and not snapshot.is_active("sql")
    layer = snapshot.inherited_layer()
    assert layer.scope is CapabilityScope.inherited
    assert [c.id for c in layer.capabilities] == ["core", "auth", None]
    assert all(c.loading is CapabilityLoading.eager for c in layer.capabilities)
    assert layer.capabilities[0] is core  # eager bundles are passed through unchanged
    child = CapabilityRegistry([layer])
    assert child.on_demand == () and [c.id for c in child.eager_plan] == ["core", "auth", None]
    assert CapabilitySnapshot().active_ids == ()


def test_unload_policy_values() -> None:
    assert on_demand("a").unload is CapabilityUnloadPolicy.history
    assert on_demand("a", unload="run_end").unload is CapabilityUnloadPolicy.run_end
    with pytest.raises(InvalidCapability):
        on_demand("a", unload="never")


def test_errors_sit_under_one_base_and_pickle() -> None:
    for error in (
        DuplicateCapabilityId("d", capability_id="x"),
        UnknownCapabilityDependency("u", capability_id="a", dependency="b"),
        CapabilityDependencyCycle("c", cycle=("a", "a")),
        CapabilityConflict("c", capability_id="a", conflicting="b"),
        CapabilityLimitExceeded("l", limit_name="max_capabilities", limit=1, value=2),
        UnknownCapability("u", capability_id="z"),
    ):
        assert isinstance(error, CapabilityError) and isinstance(error, ZigAIError)
        clone = pickle.loads(pickle.dumps(error))
        assert type(clone) is type(error) and vars(clone) == vars(error) and str(clone) == str(error)
