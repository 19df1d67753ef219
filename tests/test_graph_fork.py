"""Fork/join: bounded admission, fail-fast cancellation, deterministic join, cleanup."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import pytest
from support.timing import StallMeter, assert_ended_within

from zigai.control import CancellationToken, Cancelled, RunControl, RunTimedOut
from zigai.graph import (
    END,
    EndMarker,
    ForkItemLimitExceeded,
    GraphBuilder,
    GraphLimits,
    GraphTypeMismatch,
    GraphTypes,
    Join,
)

COLLECT = Join(list, lambda acc, v: [*acc, v])


def fork_graph(branches: Any, *, items: Any = None, join: Join = COLLECT, limits: GraphLimits | None = None,
               **kwargs: Any) -> Any:
    return (
        GraphBuilder(GraphTypes(value=Any), identity="fork", limits=limits)
        .fork("f", branches=branches, items=items, join=join, next=END, **kwargs)
        .build("f")
    )


def emit_range(ctx: Any, value: int, emit: Any) -> None:
    for i in range(value):
        emit(i)


def test_broadcast_hands_the_same_value_to_every_branch_in_branch_order() -> None:
    seen: list[tuple[int, int]] = []

    def branch(tag: str) -> Any:
        def run(ctx: Any, value: int) -> str:
            seen.append((ctx.item_index, ctx.branch_index))
            assert ctx.node_name == "f" and ctx.step == 0
            time.sleep(0.01 if tag == "a" else 0)
            return f"{tag}{value}"
        return run
    graph = fork_graph([branch("a"), branch("b"), branch("c")])
    assert graph.run(7, state=None).output == ["a7", "b7", "c7"]
    assert sorted(seen) == [(0, 0), (0, 1), (0, 2)]


def test_join_order_is_item_major_branch_major_across_50_runs_with_random_latency() -> None:
    completions: list[list[str]] = []

    def branch(tag: str) -> Any:
        def run(ctx: Any, item: int) -> str:
            time.sleep(random.uniform(0, 0.004))
            completions[-1].append(f"{tag}{item}")
            return f"{tag}{item}"
        return run
    graph = fork_graph([branch("x"), branch("y")], items=emit_range, max_concurrency=4)
    expected = [f"{tag}{item}" for item in range(6) for tag in "xy"]
    outputs = []
    for _ in range(50):
        completions.append([])
        outputs.append(graph.run(6, state=None).output)
    assert all(output == expected for output in outputs)
    assert any(order != expected for order in completions)  # the scheduling really varied


def test_at_most_max_concurrency_callbacks_run_at_once() -> None:
    lock = threading.Lock()
    running = [0]
    peak = [0]

    def branch(ctx: Any, item: int) -> int:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.01)
        with lock:
            running[0] -= 1
        return item
    fork_graph([branch], items=emit_range, max_concurrency=3).run(12, state=None)
    assert peak[0] == 3
    peak[0] = 0
    fork_graph([branch], items=emit_range, limits=GraphLimits(max_concurrency=2)).run(8, state=None)
    assert peak[0] == 2


def test_a_failing_branch_cancels_its_siblings_at_once_and_nothing_more_is_admitted() -> None:
    started: list[int] = []
    cancelled_seen: list[int] = []

    def branch(ctx: Any, item: int) -> int:
        started.append(item)
        if item == 1:
            raise ValueError("item 1 is bad")
        if ctx.control.token.wait(10):
            cancelled_seen.append(item)
        return item
    cleaned: list[Any] = []
    graph = fork_graph([branch], items=emit_range, max_concurrency=3, cleanup=cleaned.append)
    with StallMeter() as meter:
        began = time.monotonic()
        with pytest.raises(ValueError, match="item 1 is bad"):
            graph.run(10, state=None)
        assert_ended_within(began, 2, meter)  # the failure cancels the siblings' 10 s waits
    assert sorted(started) == [0, 1, 2]
    assert sorted(cancelled_seen) == [0, 2]
    assert sorted(cleaned) == [0, 0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9]  # late results + every map item


def test_failures_are_observed_in_completion_order() -> None:
    def slow_fail(ctx: Any, value: int) -> int:
        time.sleep(0.2)
        raise KeyError("slow")

    def fast_fail(ctx: Any, value: int) -> int:
        raise LookupError("fast")
    with pytest.raises(LookupError, match="fast"):
        fork_graph([slow_fail, fast_fail]).run(0, state=None)


def test_an_empty_map_returns_the_initialized_accumulator() -> None:
    calls: list[int] = []
    join = Join(lambda: {"total": 0}, lambda acc, v: {"total": acc["total"] + v}, lambda acc: ("done", acc))
    graph = fork_graph([lambda c, v: calls.append(v) or v], items=emit_range, join=join)
    assert graph.run(0, state=None).output == ("done", {"total": 0})
    assert calls == []
    assert graph.run(3, state=None).output == ("done", {"total": 3})


def test_map_item_limit_accepts_the_limit_and_refuses_one_more() -> None:
    limits = GraphLimits(max_fork_items=4)
    cleaned: list[int] = []
    assert fork_graph([lambda c, v: v], items=emit_range, limits=limits).run(4, state=None).output == [0, 1, 2, 3]
    graph = fork_graph([lambda c, v: v], items=emit_range, limits=limits, cleanup=cleaned.append)
    with pytest.raises(ForkItemLimitExceeded, match="more than 4 items"):
        graph.run(5, state=None)
    assert sorted(cleaned) == [0, 1, 2, 3, 4]


def test_cleanup_closes_map_items_on_success_and_the_accumulator_of_a_failed_join() -> None:
    cleaned: list[Any] = []
    graph = fork_graph([lambda c, v: v * 10], items=emit_range, cleanup=cleaned.append)
    assert graph.run(3, state=None).output == [0, 10, 20]
    assert cleaned == [0, 1, 2]

    cleaned.clear()

    def reduce(acc: list[int], v: int) -> list[int]:
        if v == 10:
            raise OverflowError("reducer refuses 10")
        return [*acc, v]
    failing = fork_graph([lambda c, v: v * 10], items=emit_range, join=Join(list, reduce), cleanup=cleaned.append)
    with pytest.raises(OverflowError):
        failing.run(3, state=None)
    assert cleaned == [20, [0], 0, 1, 2]  # the unreduced result, the accumulator, then the items

    cleaned.clear()

    def finish(acc: list[int]) -> int:
        raise ArithmeticError("finish refuses")
    broken_finish = fork_graph([lambda c, v: v], join=Join(list, lambda a, v: [*a, v], finish), cleanup=cleaned.append)
    with pytest.raises(ArithmeticError):
        broken_finish.run(5, state=None)
    assert cleaned == [[5]]  # broadcast: the current value is the run's, not cleaned


def test_a_branch_result_of_the_wrong_type_fails_the_fork() -> None:
    cleaned: list[Any] = []
    graph = (
        GraphBuilder(GraphTypes(value=int), identity="typed")
        .fork("f", branches=[lambda c, v: "nope"], join=Join(lambda: 0, lambda a, v: a + v), next=END,
              cleanup=cleaned.append)
        .build("f")
    )
    with pytest.raises(GraphTypeMismatch, match="from node 'f'"):
        graph.run(1, state=None)
    assert cleaned == ["nope"]

    emits_text = (
        GraphBuilder(GraphTypes(value=int), identity="typed")
        .fork("f", branches=[lambda c, v: v], items=lambda c, v, emit: emit("x"),
              join=Join(lambda: 0, lambda a, v: a + v), next=END)
        .build("f")
    )
    with pytest.raises(GraphTypeMismatch):
        emits_text.run(1, state=None)


def test_an_items_callback_that_raises_releases_what_it_emitted() -> None:
    cleaned: list[int] = []

    def items(ctx: Any, value: int, emit: Any) -> None:
        emit(1)
        emit(2)
        raise RuntimeError("source broke")
    with pytest.raises(RuntimeError, match="source broke"):
        fork_graph([lambda c, v: v], items=items, cleanup=cleaned.append).run(0, state=None)
    assert cleaned == [1, 2]


def test_run_cancellation_reaches_running_branches() -> None:
    token = CancellationToken()
    seen: list[bool] = []

    def branch(ctx: Any, value: int) -> int:
        token.cancel("stop the fork")
        seen.append(ctx.control.token.wait(5))
        return value
    with pytest.raises(Cancelled, match="stop the fork"):
        fork_graph([branch]).run(0, state=None, control=RunControl(token=token))
    assert seen == [True]


def test_the_run_deadline_abandons_a_branch_that_ignores_cancellation() -> None:
    release = threading.Event()
    cleaned: list[Any] = []

    def stubborn(ctx: Any, value: int) -> str:
        release.wait(10)
        return "late"
    graph = fork_graph([stubborn], cleanup=cleaned.append)
    with StallMeter() as meter:
        began = time.monotonic()
        with pytest.raises(RunTimedOut):
            graph.run(0, state=None, control=RunControl.start(150))
        assert_ended_within(began + 0.15, 1.85, meter)  # the deadline, not the 10 s branch
    release.set()
    for _ in range(100):
        if cleaned:
            break
        time.sleep(0.02)
    assert cleaned == ["late"]


def test_a_cleanup_error_fails_a_successful_fork_but_never_masks_a_failure() -> None:
    def cleanup(value: Any) -> None:
        raise OSError(f"cannot close {value}")
    with pytest.raises(OSError, match="cannot close 0"):
        fork_graph([lambda c, v: v], items=emit_range, cleanup=cleanup).run(2, state=None)

    def fails(ctx: Any, value: int) -> int:
        raise ValueError("branch failed")
    with pytest.raises(ValueError, match="branch failed"):
        fork_graph([fails], items=emit_range, cleanup=cleanup).run(2, state=None)


def test_the_fork_counts_as_one_step_and_commits_its_joined_value() -> None:
    graph = (
        GraphBuilder(GraphTypes(value=Any), identity="two")
        .fork("f", branches=[lambda c, v: v + 1, lambda c, v: v + 2], join=COLLECT, next="sum")
        .step("sum", lambda c, v: sum(v), next=END)
        .build("f")
    )
    run = graph.start(1, state=None)
    run.next()
    assert run.value == [2, 3] and run.completed_steps == 1 and run.upcoming is not None
    assert run.run_to_end().output == 5


def test_successes_stored_before_a_failure_are_cleaned_and_a_later_deadline_keeps_the_failure() -> None:
    cleaned: list[Any] = []
    release = threading.Event()

    def quick(ctx: Any, value: int) -> str:
        return "kept-then-dropped"

    def failing(ctx: Any, value: int) -> str:
        time.sleep(0.05)
        raise ValueError("second branch failed")

    def stubborn(ctx: Any, value: int) -> str:
        release.wait(10)
        return "late"
    graph = fork_graph([quick, failing, stubborn], cleanup=cleaned.append)
    with StallMeter() as meter:
        began = time.monotonic()
        with pytest.raises(ValueError, match="second branch failed"):
            graph.run(0, state=None, control=RunControl.start(300))
        assert_ended_within(began, 2, meter)  # the failure, not the 10 s branch
    release.set()
    for _ in range(100):
        if "late" in cleaned:
            break
        time.sleep(0.02)
    assert cleaned == ["kept-then-dropped", "late"]


def test_run_accessors_and_end_marker() -> None:
    import pickle

    graph = fork_graph([lambda c, v: v])
    control = RunControl()
    run = graph.start(1, state="S", deps="D", control=control, run_id="rid")
    assert (run.graph, run.state, run.deps, run.control, run.run_id) == (graph, "S", "D", control, "rid")
    assert "upcoming='f'" in repr(run)
    assert run.run_to_end().output == [1]
    assert repr(END) == "END" and pickle.loads(pickle.dumps(END)) is END and EndMarker() is END
    assert len(graph.digest) == 64


def test_declared_types_may_be_unions_literals_and_generics() -> None:
    types = GraphTypes(state=int | None, deps=Any, input=list[int], value=list[int], output=int)
    graph = GraphBuilder(types, identity="t", finish=sum).step("a", lambda c, v: [*v, 1], next=END).build("a")
    assert graph.run([1, 2], state=None).output == 4
    from typing import Literal
    assert GraphTypes(value=Literal["a"]).value == Literal["a"]
    from typing import Union

    from zigai.graph import InvalidGraphDefinition
    with pytest.raises(InvalidGraphDefinition, match="GraphTypes.state"):
        GraphTypes(state=Union[int, "Later"])  # noqa: F821, UP007 - a forward reference cannot be checked
