"""zigai.graph core: builder validation, typed boundaries, the pull-based Run and its limits."""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from typing import Any, Literal, Optional, Union

import pytest

from zigai.control import CancellationToken, Cancelled, RunControl, RunTimedOut
from zigai.graph import (
    END,
    Decision,
    GraphBuilder,
    GraphEvent,
    GraphLimitExceeded,
    GraphLimits,
    GraphRunFinished,
    GraphTypeMismatch,
    GraphTypes,
    InvalidGraphDefinition,
    InvalidGraphInput,
    Join,
    NodeDoc,
    Step,
    StepLimitExceeded,
    UnmatchedRoute,
    conforms,
)
from zigai.graph.types import type_label


@dataclass
class Tally:
    seen: list[int] = field(default_factory=list)


TYPES = GraphTypes(state=Tally, deps=str, input=int, value=int, output=str)


def inc(ctx: Any, value: int) -> int:
    ctx.state.seen.append(value)
    return value + 1


def until(limit: int) -> Any:
    def check(ctx: Any, value: int) -> tuple[str, int]:
        return ("again" if value < limit else "done", value)
    return check


def counter(limit: int = 3, **kwargs: Any) -> Any:
    return (
        GraphBuilder(TYPES, identity="count/v1", finish=lambda v: f"n={v}", **kwargs)
        .step("inc", inc, next="check")
        .decision("check", until(limit), routes={"again": "inc", "done": END})
        .build("inc")
    )


def chain(length: int, **kwargs: Any) -> Any:
    builder = GraphBuilder(GraphTypes(value=int), identity="chain", **kwargs)
    for i in range(length):
        builder.step(f"s{i}", lambda ctx, v: v + 1, next=f"s{i + 1}" if i + 1 < length else END)
    return builder.build("s0")


# -- builder -----------------------------------------------------------------------------------


def test_a_counter_loops_until_its_decision_ends_it() -> None:
    graph = counter()
    result = graph.run(0, state=Tally(), deps="d", run_id="r1")
    assert result.output == "n=3"
    assert result.state.seen == [0, 1, 2]
    assert result.steps == 6 and result.run_id == "r1"
    assert [n.name for n in graph.nodes] == ["inc", "check"]
    assert graph.entry.name == "inc" and graph.node("check").kind == "decision"
    assert [(r.branch, r.target) for r in graph.routes_of(graph.node("check"))] == [("again", 0), ("done", -1)]
    assert "count/v1" in repr(graph)


def test_builder_rejects_unreachable_nodes() -> None:
    builder = GraphBuilder(identity="g").step("a", inc, next=END).step("orphan", inc, next="a")
    with pytest.raises(InvalidGraphDefinition, match=r"\['orphan'\] are not reachable from the entry 'a'"):
        builder.build("a")


def test_builder_rejects_missing_routes_and_unknown_targets() -> None:
    with pytest.raises(InvalidGraphDefinition, match="has no routes"):
        GraphBuilder(identity="g").decision("d", until(1), routes={}).build("d")
    with pytest.raises(InvalidGraphDefinition, match="unknown node 'nowhere'"):
        GraphBuilder(identity="g").step("a", inc, next="nowhere").build("a")
    with pytest.raises(InvalidGraphDefinition, match="use a node name or END"):
        GraphBuilder(identity="g").step("a", inc, next=None).build("a")  # type: ignore[arg-type]
    with pytest.raises(InvalidGraphDefinition, match="has no branches"):
        GraphBuilder(identity="g").fork("f", branches=[], join=Join(list, list.__add__), next=END).build("f")


@pytest.mark.parametrize(("build", "message"), [
    (lambda: GraphBuilder(identity="g").build("a"), "at least one node"),
    (lambda: GraphBuilder(identity="g").step("a", inc, next=END).step("a", inc, next=END).build("a"),
     "defined twice"),
    (lambda: GraphBuilder(identity="g").step("", inc, next=END).build(""), "non-empty string"),
    (lambda: GraphBuilder(identity="g").step("a", inc, next=END).build("b"), "entry 'b' is not a node"),
    (lambda: GraphBuilder(identity="g").step("a", 3, next=END).build("a"), "run must be callable"),  # type: ignore[arg-type]
    (lambda: GraphBuilder(identity="g").add("a"), "Step, Decision or Fork"),  # type: ignore[arg-type]
    (lambda: GraphBuilder(identity="g").decision("d", until(1), routes={"x": END}, route_labels={"y": "Y"})
     .build("d"), "labels unknown branches"),
    (lambda: GraphBuilder(identity="g").decision("d", until(1), routes={"": END}).build("d"),
     "branch name must be a non-empty string"),
    (lambda: GraphBuilder(identity="g").fork("f", branches=[inc], join="x", next=END).build("f"),  # type: ignore[arg-type]
     "needs a Join"),
    (lambda: GraphBuilder(identity="g").fork("f", branches=[inc], join=Join(list, 1), next=END).build("f"),  # type: ignore[arg-type]
     "join.reduce must be callable"),
    (lambda: GraphBuilder(identity="g").fork("f", branches=[inc], join=Join(list, list.__add__), items=1,  # type: ignore[arg-type]
                                             next=END).build("f"), "items must be callable"),
    (lambda: GraphBuilder(identity="g").fork("f", branches=[inc], join=Join(list, list.__add__), cleanup=1,  # type: ignore[arg-type]
                                             next=END).build("f"), "cleanup must be callable"),
    (lambda: GraphBuilder(identity="g").step("a", inc, next=END).group("g", ["zz"]).build("a"), "unknown nodes"),
    (lambda: GraphBuilder(identity="g").step("a", inc, next=END).group("g", ["a"]).group("g", ["a"]).build("a"),
     "group 'g' is defined twice"),
    (lambda: GraphBuilder(identity="g").add(Step("a", inc, END, doc="x")).build("a"),  # type: ignore[arg-type]
     "doc must be a NodeDoc"),
    (lambda: GraphBuilder(identity=""), "identity must be a non-empty string"),
    (lambda: GraphBuilder("types", identity="g"), "must be a GraphTypes"),  # type: ignore[arg-type]
    (lambda: GraphBuilder(identity="g", limits="x"), "must be a GraphLimits"),  # type: ignore[arg-type]
    (lambda: GraphBuilder(identity="g", start=3), "start must be callable"),  # type: ignore[arg-type]
    (lambda: GraphLimits(max_steps=0), "max_steps must be an int >= 1"),
    (lambda: GraphLimits(max_nodes=True), "max_nodes must be an int >= 1"),  # type: ignore[arg-type]
    (lambda: GraphTypes(value="int"), "GraphTypes.value must be a class"),
])
def test_builder_names_what_is_wrong(build: Any, message: str) -> None:
    with pytest.raises(InvalidGraphDefinition, match=message):
        build()


def test_node_count_bound_accepts_the_limit_and_refuses_one_more() -> None:
    assert len(chain(4, limits=GraphLimits(max_nodes=4)).nodes) == 4
    with pytest.raises(GraphLimitExceeded, match="5 nodes; the limit is 4"):
        chain(5, limits=GraphLimits(max_nodes=4))


def test_edge_bound_accepts_the_limit_and_refuses_one_more() -> None:
    def fan(routes: int) -> Any:
        targets = {f"b{i}": END for i in range(routes)}
        return GraphBuilder(identity="g", limits=GraphLimits(max_edges=3)).decision(
            "d", until(1), routes=targets).build("d")
    assert len(fan(3).routes) == 3
    with pytest.raises(GraphLimitExceeded, match="more than 3 routes"):
        fan(4)


def test_name_and_text_bounds_count_utf8_bytes() -> None:
    limits = GraphLimits(max_name_bytes=4, max_text_bytes=4)
    GraphBuilder(identity="g", limits=limits).step("ééa"[:2], inc, next=END, label="abcd").build("éé")
    with pytest.raises(GraphLimitExceeded, match="5 UTF-8 bytes; the limit is 4"):
        GraphBuilder(identity="g", limits=limits).step("ééa", inc, next=END).build("ééa")
    with pytest.raises(GraphLimitExceeded, match="label is 5 UTF-8 bytes"):
        GraphBuilder(identity="g", limits=limits).step("a", inc, next=END, label="abcde").build("a")
    with pytest.raises(InvalidGraphDefinition, match="description must be a string or None"):
        GraphBuilder(identity="g").add(Step("a", inc, END, NodeDoc(description=3))).build("a")  # type: ignore[arg-type]
    with pytest.raises(GraphLimitExceeded, match="identity is 5 UTF-8 bytes"):
        GraphBuilder(identity="abcde", limits=limits)


def test_fork_concurrency_may_only_tighten_the_graph_ceiling() -> None:
    def fork(limit: object) -> Any:
        return GraphBuilder(identity="g", limits=GraphLimits(max_concurrency=2)).fork(
            "f", branches=[inc], join=Join(list, list.__add__), next=END, max_concurrency=limit,  # type: ignore[arg-type]
        ).build("f")
    assert fork(2).definition(0).max_concurrency == 2
    for bad in (3, 0, True):
        with pytest.raises(InvalidGraphDefinition, match=r"max_concurrency must be an int in 1\.\.2"):
            fork(bad)


def test_the_graph_is_immutable_and_looks_up_names() -> None:
    graph = counter()
    with pytest.raises(AttributeError):
        graph.nodes[0].name = "x"  # type: ignore[misc]
    with pytest.raises(KeyError, match="no node 'zz'"):
        graph.node("zz")
    assert graph.types is TYPES and graph.limits == GraphLimits() and graph.identity == "count/v1"
    assert graph.groups == ()


# -- typed boundaries ----------------------------------------------------------------------------


def test_types_are_checked_at_every_boundary() -> None:
    graph = counter()
    with pytest.raises(GraphTypeMismatch, match="graph input must be int, got str") as info:
        graph.run("0", state=Tally(), deps="d")  # type: ignore[arg-type]
    assert info.value.boundary == "input"
    with pytest.raises(GraphTypeMismatch, match="graph state must be"):
        graph.run(0, state=[], deps="d")  # type: ignore[arg-type]
    with pytest.raises(GraphTypeMismatch, match="graph deps must be str, got int"):
        graph.run(0, state=Tally(), deps=1)  # type: ignore[arg-type]
    with pytest.raises(GraphTypeMismatch, match="graph input must be int, got bool"):
        graph.run(True, state=Tally(), deps="d")


def test_a_callback_returning_the_wrong_type_fails_at_its_node() -> None:
    graph = GraphBuilder(GraphTypes(value=int), identity="g").step("bad", lambda c, v: "x", next=END).build("bad")
    run = graph.start(1, state=None)
    with pytest.raises(GraphTypeMismatch, match="from node 'bad'") as info:
        run.next()
    assert info.value.node == "bad" and run.value == 1 and run.completed_steps == 0
    wrong_output = GraphBuilder(GraphTypes(value=int, output=str), identity="g").step(
        "a", lambda c, v: v, next=END).build("a")
    with pytest.raises(GraphTypeMismatch, match="graph output must be str"):
        wrong_output.run(1, state=None)
    wrong_start = GraphBuilder(GraphTypes(value=int), identity="g", start=str).step(
        "a", lambda c, v: v, next=END).build("a")
    with pytest.raises(GraphTypeMismatch, match="graph value must be int"):
        wrong_start.run(1, state=None)


def test_conforms_is_shallow_and_predictable() -> None:
    assert conforms(1, float) and not conforms(True, float) and conforms(1.5, float)
    optional_int = Optional[int]  # noqa: UP045 - the typing spelling is checked too
    union = Union[int, str]  # noqa: UP007 - the typing spelling is checked too
    assert conforms(None, None) and not conforms(0, None) and conforms(None, optional_int)
    assert conforms("a", union) and conforms("a", int | str) and not conforms(b"a", int | str)
    assert conforms([1], list[int]) and conforms(["not int"], list[int]) and not conforms((1,), list[int])
    assert conforms("a", Literal["a", "b"]) and not conforms("c", Literal["a"]) and not conforms(1, Literal[True])
    assert conforms(object(), Any) and conforms(3, object)
    assert type_label(int) == "int" and type_label(None) == "None" and type_label(Any) == "Any"
    assert type_label(list[int]) == "list[int]"


# -- the pull-based run --------------------------------------------------------------------------


def test_next_runs_one_callback_and_exposes_the_upcoming_node() -> None:
    events: list[GraphEvent] = []
    run = counter(limit=1).start(0, state=Tally(), deps="d", observer=events.append, run_id="r")
    assert run.upcoming is not None and run.upcoming.name == "inc" and run.status == "ready"
    upcoming = run.next()
    assert upcoming is not None and upcoming.name == "check" and run.value == 1 and run.completed_steps == 1
    assert run.next() is None and run.done and run.status == "finished" and run.output == "n=1"
    assert run.upcoming is None
    assert [(e.kind, e.node_name, e.branch, e.target, e.step) for e in events] == [
        ("run_start", None, None, None, 0),
        ("node_start", "inc", None, None, 0),
        ("node_end", "inc", None, "check", 0),
        ("node_start", "check", None, None, 1),
        ("node_end", "check", "done", None, 1),
        ("run_end", None, None, None, 2),
    ]
    assert all(e.run_id == "r" for e in events)
    with pytest.raises(GraphRunFinished, match="already finished"):
        run.next()
    assert "finished" in repr(run)


def test_step_limit_accepts_the_exact_count_and_stops_one_short() -> None:
    assert chain(3).run(0, state=None, max_steps=3).output == 3
    run = chain(3).start(0, state=None, max_steps=2)
    with pytest.raises(StepLimitExceeded, match="step limit 2") as info:
        run.run_to_end()
    assert info.value.limit == 2 and run.completed_steps == 2 and run.status == "failed"


def test_a_cyclic_graph_stops_at_the_graph_ceiling_and_a_run_can_only_tighten_it() -> None:
    forever = GraphBuilder(identity="loop", limits=GraphLimits(max_steps=7)).step(
        "spin", lambda c, v: v, next="spin").build("spin")
    run = forever.start(0, state=None, max_steps=100)
    assert run.max_steps == 7
    with pytest.raises(StepLimitExceeded):
        run.run_to_end()
    assert run.completed_steps == 7
    tighter = forever.start(0, state=None, max_steps=3)
    with pytest.raises(StepLimitExceeded):
        tighter.run_to_end()
    assert tighter.completed_steps == 3


def test_unmatched_route_latches_and_reports_the_attempted_branch() -> None:
    events: list[GraphEvent] = []
    graph = GraphBuilder(identity="g").decision(
        "pick", lambda c, v: ("sideways", v), routes={"left": END, "right": END}).build("pick")
    run = graph.start(0, state=None, observer=events.append)
    with pytest.raises(UnmatchedRoute, match="chose branch 'sideways'.*\\['left', 'right'\\]") as first:
        run.next()
    assert first.value.branch == "sideways" and first.value.node == "pick"
    with pytest.raises(UnmatchedRoute) as again:
        run.next()
    assert again.value is first.value and run.error is first.value
    with pytest.raises(UnmatchedRoute):
        _ = run.output
    assert [(e.kind, e.branch) for e in events][-2:] == [("node_error", "sideways"), ("run_error", None)]
    clone = pickle.loads(pickle.dumps(first.value))
    assert clone.branch == "sideways" and clone.node == "pick"


def test_a_decision_must_return_a_branch_and_a_value() -> None:
    graph = GraphBuilder(identity="g").add(Decision("d", lambda c, v: "left", {"left": END})).build("d")
    with pytest.raises(UnmatchedRoute, match=r"must return \(branch_name, value\)"):
        graph.run(0, state=None)


def test_application_errors_pass_through_unwrapped_and_latch() -> None:
    class Boom(Exception):
        pass

    def explode(ctx: Any, value: int) -> int:
        raise Boom("no")

    run = GraphBuilder(identity="g").step("x", explode, next=END).build("x").start(0, state=None)
    with pytest.raises(Boom):
        run.next()
    with pytest.raises(Boom):
        run.next()
    assert run.completed_steps == 0 and run.upcoming is None


def test_output_is_unavailable_before_the_run_finishes() -> None:
    run = chain(2).start(0, state=None)
    with pytest.raises(GraphRunFinished, match="not finished yet"):
        _ = run.output


def test_run_control_stops_a_run_before_the_next_callback() -> None:
    token = CancellationToken()
    calls: list[int] = []

    def step(ctx: Any, v: int) -> int:
        calls.append(v)
        token.cancel("user pressed stop")
        return v + 1
    graph = GraphBuilder(identity="g").step("a", step, next="b").step("b", step, next=END).build("a")
    run = graph.start(0, state=None, control=RunControl(token=token))
    run.next()
    with pytest.raises(Cancelled, match="user pressed stop"):
        run.next()
    assert calls == [0]
    with pytest.raises(RunTimedOut):
        graph.run(0, state=None, control=RunControl(deadline=0.0))


def test_a_step_context_carries_position_deps_and_control() -> None:
    seen: list[tuple[str, int, int, str]] = []
    control = RunControl()

    def look(ctx: Any, v: int) -> int:
        assert ctx.control is control
        seen.append((ctx.node_name, ctx.node_index, ctx.step, ctx.deps))
        return v
    graph = GraphBuilder(identity="g").step("a", look, next="b").step("b", look, next=END).build("a")
    graph.run(0, state=None, deps="D", control=control)
    assert seen == [("a", 0, 0, "D"), ("b", 1, 1, "D")]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"max_steps": 0}, "max_steps must be None or an int >= 1"),
    ({"max_steps": True}, "max_steps must be None or an int >= 1"),
    ({"control": "c"}, "control must be a zigai.control.RunControl"),
    ({"observer": 3}, "observer must be callable"),
    ({"run_id": ""}, "run_id must be a non-empty string"),
    ({"run_id": "x" * 257}, "run_id must be a non-empty string of <= 256"),
])
def test_run_arguments_are_checked(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidGraphInput, match=message):
        chain(1).start(0, state=None, **kwargs)
    assert chain(1).run(0, state=None, run_id="x" * 256).run_id == "x" * 256


def test_an_observer_failure_fails_the_run_but_never_masks_the_original_error() -> None:
    def observer(event: GraphEvent) -> None:
        if event.kind in ("node_end", "run_error"):
            raise RuntimeError(f"observer broke on {event.kind}")
    run = chain(2).start(0, state=None, observer=observer)
    with pytest.raises(RuntimeError, match="observer broke on node_end") as info:
        run.next()
    assert run.status == "failed" and run.completed_steps == 1
    assert any("observer also failed" in note for note in info.value.__notes__)

    def start_fails(event: GraphEvent) -> None:
        raise ValueError("no start")
    with pytest.raises(ValueError, match="no start"):
        chain(1).run(0, state=None, observer=start_fails)


def test_the_graph_package_never_imports_the_agent_loop() -> None:
    import subprocess
    import sys

    code = "import sys, zigai.graph; print(sorted(m for m in sys.modules if m.startswith(('zigai.agent', 'zigai.tool'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"
