"""zigai.tool.scheduler: bounded, order-keeping, race-aware execution of tool batches."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support.timing import StallMeter, assert_ended_within

from zigai.control import CancellationToken, Cancelled, RunControl, RunTimedOut
from zigai.messages import RequestMessage, ToolCallPart, UserPromptPart
from zigai.tool import (
    InvalidToolArguments,
    ModelRetry,
    ScheduledCall,
    Tool,
    ToolCallResult,
    ToolLimits,
    ToolRunContext,
    ToolScheduler,
)

OPEN = {"type": "object"}


def make_tool(name: str, fn: Callable[..., Any], **options: Any) -> Tool:
    return Tool.manual(name, "", OPEN, fn, **options)


def calls_for(tool: Tool, count: int, start: int = 0) -> list[ScheduledCall]:
    found = []
    for i in range(start, start + count):
        text = f'{{"i":{i}}}'
        ctx = ToolRunContext(tool_name=tool.name, tool_call_id=f"c{i}")
        found.append(ScheduledCall(ToolCallPart(tool.name, text, f"c{i}"), tool, tool.validate_arguments(text), ctx))
    return found


@pytest.fixture
def scheduler_factory() -> Iterator[Callable[..., ToolScheduler]]:
    made: list[ToolScheduler] = []

    def factory(limits: ToolLimits | None = None, max_tool_calls: int | None = None, **kw: Any) -> ToolScheduler:
        scheduler = ToolScheduler(limits or ToolLimits(), max_tool_calls, **kw)
        made.append(scheduler)
        return scheduler

    yield factory
    for scheduler in made:
        scheduler.close()


def statuses(results: list[ToolCallResult]) -> list[str]:
    return [r.status for r in results]


def test_results_keep_call_order_despite_random_finish_order(scheduler_factory: Any) -> None:
    rng = random.Random(7)
    delays = [rng.uniform(0, 0.03) for _ in range(20)]

    def sleepy(args: dict[str, int]) -> int:
        time.sleep(delays[args["i"]])
        return args["i"] * 10

    tool = make_tool("sleepy", sleepy)
    results = scheduler_factory().run_batch(calls_for(tool, 20), RunControl())
    assert [r.content for r in results] == [i * 10 for i in range(20)]
    assert [r.tool_call_id for r in results] == [f"c{i}" for i in range(20)]
    assert set(statuses(results)) == {"success"}


def test_eight_slow_calls_run_concurrently(scheduler_factory: Any) -> None:
    # all eight must be running at the same moment to pass the barrier: serial (or fewer
    # workers) breaks it after its timeout and the calls fail; no wall-clock bound needed
    together = threading.Barrier(8, timeout=5)
    tool = make_tool("slow", lambda args: together.wait())
    results = scheduler_factory().run_batch(calls_for(tool, 8), RunControl())
    assert statuses(results) == ["success"] * 8


def test_overflowing_active_plus_queued_is_rejected_without_running(scheduler_factory: Any) -> None:
    ran: list[int] = []
    lock = threading.Lock()

    def record(args: dict[str, int]) -> int:
        with lock:
            ran.append(args["i"])
        return args["i"]

    tool = make_tool("rec", record)
    limits = ToolLimits(max_active=2, max_queued=1)
    exact = scheduler_factory(limits).run_batch(calls_for(tool, 3), RunControl())
    assert statuses(exact) == ["success"] * 3
    ran.clear()
    over = scheduler_factory(limits).run_batch(calls_for(tool, 5), RunControl())
    assert statuses(over) == ["success", "success", "success", "rejected", "rejected"]
    assert sorted(ran) == [0, 1, 2]
    assert over[3].retry_message is not None and "ToolQueueOverflow" in over[3].retry_message
    assert over[3].content is None


def test_per_tool_limits_bound_that_tool_only(scheduler_factory: Any) -> None:
    active = 0
    peak = 0
    lock = threading.Lock()

    def tracked(args: dict[str, int]) -> None:
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        time.sleep(0.02)
        with lock:
            active -= 1

    narrow = make_tool("narrow", tracked, limits=ToolLimits(max_active=1, max_queued=2))
    wide = make_tool("wide", lambda args: "ok")
    batch = calls_for(narrow, 4) + calls_for(wide, 3, start=4)
    results = scheduler_factory().run_batch(batch, RunControl())
    assert statuses(results) == ["success"] * 3 + ["rejected"] + ["success"] * 3
    assert peak == 1
    assert "'narrow' accepts at most 3" in (results[3].retry_message or "")


def test_max_tool_calls_counts_across_batches(scheduler_factory: Any) -> None:
    tool = make_tool("t", lambda args: args["i"])
    scheduler = scheduler_factory(max_tool_calls=3)
    first = scheduler.run_batch(calls_for(tool, 2), RunControl())
    second = scheduler.run_batch(calls_for(tool, 2, start=2), RunControl())
    assert statuses(first) == ["success", "success"]
    assert statuses(second) == ["success", "rejected"]
    assert scheduler.admitted_calls == 3
    assert "at most 3 tool calls" in (second[1].retry_message or "")
    third = scheduler.run_batch(calls_for(tool, 1, start=4), RunControl())
    assert statuses(third) == ["rejected"]


def test_sequential_tools_never_overlap_other_calls(scheduler_factory: Any) -> None:
    intervals: dict[str, tuple[float, float]] = {}
    lock = threading.Lock()

    def timed(args: dict[str, int], ctx: ToolRunContext) -> None:
        begin = time.monotonic()
        time.sleep(0.02)
        with lock:
            intervals[ctx.tool_call_id] = (begin, time.monotonic())

    parallel = make_tool("par", timed)
    exclusive = make_tool("seq", timed, sequential=True)
    batch = (
        calls_for(parallel, 3)
        + calls_for(exclusive, 1, start=3)
        + calls_for(parallel, 2, start=4)
        + calls_for(exclusive, 1, start=6)
        + calls_for(parallel, 2, start=7)
    )
    results = scheduler_factory().run_batch(batch, RunControl())
    assert statuses(results) == ["success"] * 9
    for seq_id in ("c3", "c6"):
        seq_begin, seq_end = intervals[seq_id]
        for other, (begin, end) in intervals.items():
            if other != seq_id:
                assert end <= seq_begin or begin >= seq_end, (seq_id, other)
    # calls never start ahead of an earlier sequential call
    assert all(intervals[c][0] >= intervals["c3"][1] for c in ("c4", "c5", "c7", "c8"))
    assert all(intervals[c][1] <= intervals["c3"][0] for c in ("c0", "c1", "c2"))


def test_timeout_returns_timed_out_and_discards_the_late_result(scheduler_factory: Any) -> None:
    finished = threading.Event()
    saw_cancel: list[bool] = []

    def stubborn(args: dict[str, int], ctx: ToolRunContext) -> str:
        time.sleep(0.3)  # ignores cancellation on purpose
        saw_cancel.append(ctx.cancelled)
        finished.set()
        return "late"

    slow = make_tool("slow", stubborn, limits=ToolLimits(timeout_ms=30))
    quick = make_tool("quick", lambda args: "fast")
    scheduler = scheduler_factory()
    results = scheduler.run_batch(calls_for(slow, 1) + calls_for(quick, 1, start=1), RunControl())
    assert not finished.is_set()  # returned while the abandoned thread still runs
    assert statuses(results) == ["timed_out", "success"]
    assert results[0].content is None
    assert "did not finish within 30 ms" in (results[0].retry_message or "")
    assert scheduler.abandoned == 1
    assert finished.wait(5)
    # the count drops when the abandoned thread's function has returned, just after `finished`
    until = time.monotonic() + 5
    while scheduler.abandoned and time.monotonic() < until:
        time.sleep(0.005)
    assert saw_cancel == [True]
    assert scheduler.abandoned == 0


def test_cooperative_tool_observes_its_timeout(scheduler_factory: Any) -> None:
    def patient(args: dict[str, int], ctx: ToolRunContext) -> str:
        ctx.sleep(5)
        return "never"

    tool = make_tool("patient", patient, limits=ToolLimits(timeout_ms=20))
    limits = ToolLimits(timeout_ms=1000)
    results = scheduler_factory(limits).run_batch(calls_for(tool, 2), RunControl())
    assert statuses(results) == ["timed_out", "timed_out"]


def test_cancellation_stops_the_batch(scheduler_factory: Any) -> None:
    observed = threading.Event()

    def waiting(args: dict[str, int], ctx: ToolRunContext) -> None:
        while not ctx.cancelled:
            time.sleep(0.005)
        observed.set()

    tool = make_tool("wait", waiting)
    token = CancellationToken()
    control = RunControl(token=token)
    threading.Timer(0.05, token.cancel, args=("user pressed stop",)).start()
    with pytest.raises(Cancelled, match="user pressed stop"):
        scheduler_factory().run_batch(calls_for(tool, 2), control)
    assert observed.is_set()  # cooperative calls were drained before Cancelled was raised


def test_run_deadline_raises_run_timed_out(scheduler_factory: Any) -> None:
    tool = make_tool("wait", lambda args, ctx: ctx.sleep(5))
    control = RunControl(deadline=time.monotonic() + 0.05)
    with pytest.raises(RunTimedOut):
        scheduler_factory().run_batch(calls_for(tool, 1), control)


def test_an_already_cancelled_run_runs_nothing(scheduler_factory: Any) -> None:
    ran: list[int] = []
    tool = make_tool("t", lambda args: ran.append(1))
    token = CancellationToken()
    token.cancel()
    with pytest.raises(Cancelled):
        scheduler_factory().run_batch(calls_for(tool, 3), RunControl(token=token))
    assert ran == []


class AppFailure(Exception):
    pass


def test_fatal_exception_propagates_unwrapped_and_cancels_others(scheduler_factory: Any) -> None:
    failure = AppFailure("disk on fire")
    sibling_cancelled = threading.Event()
    queued_ran: list[int] = []

    def dispatch(args: dict[str, int], ctx: ToolRunContext) -> None:
        if args["i"] == 0:
            time.sleep(0.02)
            raise failure
        if args["i"] == 1:
            while not ctx.cancelled:
                time.sleep(0.005)
            sibling_cancelled.set()
            return
        queued_ran.append(args["i"])

    tool = make_tool("d", dispatch)
    with pytest.raises(AppFailure) as info:
        scheduler_factory(ToolLimits(max_active=2)).run_batch(calls_for(tool, 4), RunControl())
    assert info.value is failure
    assert sibling_cancelled.is_set()
    assert queued_ran == []


def test_retry_outcomes_from_the_callback(scheduler_factory: Any) -> None:
    def choose(args: dict[str, int]) -> str:
        if args["i"] == 0:
            raise ModelRetry("try a city name")
        if args["i"] == 1:
            raise InvalidToolArguments("city must not be empty")
        return "ok"

    tool = make_tool("c", choose)
    results = scheduler_factory().run_batch(calls_for(tool, 3), RunControl())
    assert [(r.status, r.retry_message) for r in results] == [
        ("retry", "try a city name"),
        ("retry", "city must not be empty"),
        ("success", None),
    ]


@pytest.mark.parametrize("parallel", [False, True])
def test_result_size_limit_is_exact(scheduler_factory: Any, parallel: bool) -> None:
    tool = make_tool("s", lambda args: "x" * args["n"])
    limits = ToolLimits(max_result_bytes=10)

    def call(n: int) -> ScheduledCall:
        text = f'{{"n":{n}}}'
        return ScheduledCall(ToolCallPart("s", text, f"n{n}"), tool, tool.validate_arguments(text), ToolRunContext())

    control = RunControl(deadline=time.monotonic() + 30) if parallel else RunControl()
    at_limit, over = (scheduler_factory(limits).run_batch([call(n)], control)[0] for n in (8, 9))
    assert (at_limit.status, at_limit.content) == ("success", "x" * 8)  # '"xxxxxxxx"' is 10 bytes
    assert over.status == "retry" and over.content is None
    assert "ToolResultTooLarge" in (over.retry_message or "") and "more than 10 bytes" in (over.retry_message or "")


def test_follow_up_count_and_bytes_are_exact(scheduler_factory: Any) -> None:
    def follow(args: dict[str, int]) -> Any:
        from zigai.tool import ToolOutput

        messages = [RequestMessage((UserPromptPart("ab"),)) for _ in range(args["count"])]
        if args.get("big"):
            messages = [RequestMessage((UserPromptPart("a" * args["big"]),))]
        return ToolOutput("done", messages)

    tool = make_tool("f", follow)
    limits = ToolLimits(max_follow_ups=2, max_follow_up_bytes=4)

    def run(text: str) -> ToolCallResult:
        sc = ScheduledCall(ToolCallPart("f", text, "x"), tool, tool.validate_arguments(text), ToolRunContext())
        return scheduler_factory(limits).run_batch([sc], RunControl())[0]

    ok = run('{"count":2}')
    assert ok.status == "success" and len(ok.follow_up_messages) == 2
    too_many = run('{"count":3}')
    assert too_many.status == "retry" and "3 follow-up messages" in (too_many.retry_message or "")
    assert run('{"count":0,"big":4}').status == "success"
    too_big = run('{"count":0,"big":5}')
    assert too_big.status == "retry" and "ToolFollowUpOverflow" in (too_big.retry_message or "")


def test_single_unbounded_call_runs_inline(scheduler_factory: Any) -> None:
    tool = make_tool("where", lambda args: threading.current_thread().name)
    scheduler = scheduler_factory()
    (inline,) = scheduler.run_batch(calls_for(tool, 1), RunControl())
    assert inline.content == threading.current_thread().name
    two = scheduler.run_batch(calls_for(tool, 2), RunControl())
    assert all(r.content.startswith("zigai-tool") for r in two)


def test_the_agent_context_is_copied_not_mutated(scheduler_factory: Any) -> None:
    tool = make_tool("t", lambda args, ctx: ctx.call_deadline is not None, limits=ToolLimits(timeout_ms=5000))
    batch = calls_for(tool, 1)
    (result,) = scheduler_factory().run_batch(batch, RunControl())
    assert result.content is True
    assert batch[0].ctx.call_deadline is None and not batch[0].ctx.call_token.cancelled


def test_closed_scheduler_refuses_work() -> None:
    scheduler = ToolScheduler(ToolLimits(), None)
    tool = make_tool("t", lambda args: 1)
    scheduler.run_batch(calls_for(tool, 2), RunControl())
    scheduler.close()
    with pytest.raises(RuntimeError, match="closed"):
        scheduler.run_batch(calls_for(tool, 1), RunControl())


@pytest.fixture
def thread_budget() -> Iterator[Callable[[int], int]]:
    """Set the process-wide abandoned-thread bound relative to what other tests left running."""
    from zigai.tool import set_max_abandoned_tool_threads

    previous: list[int] = []

    def allow(extra: int) -> int:
        from zigai.tool import abandoned_tool_threads

        base = abandoned_tool_threads()
        previous.append(set_max_abandoned_tool_threads(base + extra))
        return base

    yield allow
    if previous:
        set_max_abandoned_tool_threads(previous[0])


def test_abandoned_threads_are_bounded_process_wide_and_the_bound_fails_fast(
    scheduler_factory: Any, thread_budget: Callable[[int], int]
) -> None:
    from zigai.tool import ToolThreadLimitReached, abandoned_tool_threads

    release = threading.Event()
    started: list[int] = []

    def blocked(args: dict[str, int], ctx: ToolRunContext) -> str:
        started.append(args["i"])
        release.wait(10)  # ignores its token on purpose: the thread is abandoned
        return "late"

    stuck = make_tool("stuck", blocked, limits=ToolLimits(timeout_ms=20))
    try:
        base = thread_budget(2)
        # two runs (two schedulers) each abandon one thread: exactly at the bound
        for run in range(2):
            results = scheduler_factory().run_batch(calls_for(stuck, 1, start=run), RunControl())
            assert statuses(results) == ["timed_out"]
        assert abandoned_tool_threads() == base + 2
        with StallMeter() as meter:
            began = time.monotonic()
            with pytest.raises(ToolThreadLimitReached) as caught:
                scheduler_factory().run_batch(calls_for(stuck, 1, start=2), RunControl())
            assert_ended_within(began, 0.5, meter, "the refusal")  # refused at once, not after a wait
        assert caught.value.limit == base + 2 and caught.value.abandoned == base + 2
        assert "set_max_abandoned_tool_threads" in str(caught.value)
        assert started == [0, 1]  # the refused call's function never ran
        assert abandoned_tool_threads() == base + 2
    finally:
        release.set()
    until = time.monotonic() + 5
    while abandoned_tool_threads() > base and time.monotonic() < until:
        time.sleep(0.01)
    assert abandoned_tool_threads() == base
    results = scheduler_factory().run_batch(calls_for(stuck, 1, start=3), RunControl())
    assert statuses(results) == ["success"]


def test_one_below_the_thread_bound_a_call_still_starts(
    scheduler_factory: Any, thread_budget: Callable[[int], int]
) -> None:
    release = threading.Event()

    def blocked(args: dict[str, int], ctx: ToolRunContext) -> str:
        release.wait(10)
        return "late"

    stuck = make_tool("stuck", blocked, limits=ToolLimits(timeout_ms=20))
    quick = make_tool("quick", lambda args: "ok", limits=ToolLimits(timeout_ms=1000))
    try:
        thread_budget(2)
        scheduler_factory().run_batch(calls_for(stuck, 1), RunControl())
        results = scheduler_factory().run_batch(calls_for(quick, 1), RunControl())
        assert statuses(results) == ["success"]
    finally:
        release.set()


def test_the_thread_bound_rejects_nonsense() -> None:
    from zigai.tool import max_abandoned_tool_threads, set_max_abandoned_tool_threads

    for bad in (0, -1, True, 2.5):
        with pytest.raises(ValueError):
            set_max_abandoned_tool_threads(bad)  # type: ignore[arg-type]
    assert max_abandoned_tool_threads() >= 1
