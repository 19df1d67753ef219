"""zigai.harness: a tightened copy of a borrowed agent, bounded artifacts, one control."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from support.timing import StallMeter, assert_ended_within

from zigai.agent import Agent, RunLimits
from zigai.agent_spec import Catalogs, model_string_catalog, model_string_factory, parse, resolve
from zigai.control import CancellationToken, Cancelled, RunTimedOut
from zigai.harness import (
    ArtifactCollector,
    ArtifactLimitExceeded,
    ArtifactLimits,
    Harness,
    HarnessResultClosed,
    InvalidHarness,
    ProducerContext,
    tighten,
)
from zigai.testing import TestModel


def agent(**options: Any) -> Agent:
    return Agent(TestModel(custom_output_text="done"), instructions=("base",), **options)


def test_the_copy_appends_preset_then_custom_instructions_and_leaves_the_agent_alone() -> None:
    original = agent(limits=RunLimits(max_requests=10), run_timeout_ms=5000)
    harness = Harness(original, preset_instructions=["preset 1", "preset 2"], instructions="custom")
    assert harness.agent.instructions == ("base", "preset 1", "preset 2", "custom")
    assert original.instructions == ("base",)
    assert harness.agent.model is original.model and harness.agent.tools == original.tools


def test_limits_only_tighten() -> None:
    original = agent(limits=RunLimits(max_requests=10, max_tool_calls=None), run_timeout_ms=5000)
    tighter = Harness(original, limits=RunLimits(max_requests=3, max_tool_calls=4), run_timeout_ms=9000,
                      request_timeout_ms=100)
    assert tighter.agent.limits.max_requests == 3 and tighter.agent.limits.max_tool_calls == 4
    assert tighter.agent.run_timeout_ms == 5000 and tighter.agent.request_timeout_ms == 100
    looser = Harness(original, limits=RunLimits(max_requests=50))
    assert looser.agent.limits.max_requests == 10
    assert (tighten(None, 3), tighten(3, None), tighten(None, None), tighten(2, 5)) == (3, 3, None, 2)


def test_producers_see_the_completed_result_and_artifacts_are_owned() -> None:
    seen: list[Any] = []

    def summary(context: ProducerContext) -> None:
        seen.append(context.result.output)
        context.collector.add("summary.txt", f"answer: {context.result.output}")

    def raw(context: ProducerContext) -> None:
        buffer = bytearray(b"\x00\x01")
        context.collector.add("raw.bin", buffer, "application/octet-stream")
        buffer[0] = 9  # the collector copied it

    with Harness(agent(), producers=[summary, raw]).run("hi") as outcome:
        assert seen == ["done"] and outcome.output == "done"
        assert [a.name for a in outcome.artifacts] == ["summary.txt", "raw.bin"]
        assert outcome.artifact("raw.bin").content == b"\x00\x01"
        assert outcome.artifact("summary.txt").content == "answer: done"
        with pytest.raises(KeyError):
            outcome.artifact("missing")
        result = outcome.result
    with pytest.raises(HarnessResultClosed):
        _ = outcome.artifacts
    assert result.closed


def test_artifact_bounds_hold_at_the_exact_limit_and_fail_one_past() -> None:
    limits = ArtifactLimits(max_artifacts=2, max_artifact_bytes=4, max_total_bytes=6, max_name_chars=3)
    collector = ArtifactCollector(limits)
    collector.add("abc", b"1234")
    with pytest.raises(ArtifactLimitExceeded):
        collector.add("abcd", b"1")
    with pytest.raises(ArtifactLimitExceeded):
        collector.add("b", b"12345")
    with pytest.raises(ArtifactLimitExceeded):
        collector.add("c", "ééé")  # 6 bytes of UTF-8 over the 4-byte artifact limit
    with pytest.raises(ArtifactLimitExceeded):
        collector.add("d", b"123")  # the total would be 7
    collector.add("d", b"12")
    assert collector.total_bytes == 6
    with pytest.raises(ArtifactLimitExceeded):
        collector.add("e", b"")
    with pytest.raises(InvalidHarness):
        collector.add("d", b"")
    assert [a.name for a in collector.seal()] == ["abc", "d"]
    with pytest.raises(InvalidHarness):
        collector.add("x", b"")


@pytest.mark.parametrize(("call", "args"), [
    ("add", ("", b"")), ("add", ("n", b"", "plain")), ("add", ("n", 5)),
])
def test_bad_artifacts_are_refused(call: str, args: tuple[Any, ...]) -> None:
    with pytest.raises(InvalidHarness):
        getattr(ArtifactCollector(), call)(*args)


def test_bad_configuration_is_refused() -> None:
    with pytest.raises(InvalidHarness):
        Harness("agent")  # type: ignore[arg-type]
    with pytest.raises(InvalidHarness):
        Harness(agent(), limits={"max_requests": 1})  # type: ignore[arg-type]
    with pytest.raises(InvalidHarness):
        Harness(agent(), producers=[42])  # type: ignore[list-item]
    with pytest.raises(InvalidHarness):
        Harness(agent(), instructions=[" "])
    with pytest.raises(InvalidHarness):
        ArtifactLimits(max_artifacts=0)


def test_one_deadline_spans_the_run_and_every_producer() -> None:
    released = threading.Event()
    late: list[BaseException] = []

    def slow(context: ProducerContext) -> None:
        context.control.token.wait(5)
        released.set()
        try:
            context.collector.add("late.txt", "too late")
        except BaseException as exc:
            late.append(exc)

    harness = Harness(agent(), producers=[slow])
    with StallMeter() as meter:
        started = time.monotonic()
        with pytest.raises(RunTimedOut):
            harness.run("hi", timeout_ms=200)
        assert_ended_within(started + 0.2, 1.8, meter)  # the deadline, not the producer's 5 s
    assert released.wait(2) and isinstance(late[0], InvalidHarness)  # sealed: nothing kept


def test_cancellation_stops_a_producer() -> None:
    token = CancellationToken()
    never = threading.Event()

    def waits(context: ProducerContext) -> None:
        threading.Timer(0.1, token.cancel, ("operator stopped it",)).start()
        never.wait(10)  # ignores the token: the harness must still return on cancellation

    with StallMeter() as meter:
        started = time.monotonic()
        with pytest.raises(Cancelled, match="operator stopped it"):
            Harness(agent(), producers=[waits]).run("hi", cancellation=token)
        assert_ended_within(started, 1.5, meter)
    never.set()


def test_a_failing_producer_closes_the_result() -> None:
    def boom(context: ProducerContext) -> None:
        raise ValueError("producer failed")

    with pytest.raises(ValueError, match="producer failed"):
        Harness(agent(), producers=[boom]).run("hi")


def test_a_resolved_spec_is_borrowed_by_the_harness() -> None:
    spec = parse("version: 1\nmodel: {provider: test, name: a}\ninstructions: from the spec\n"
                 "limits: {max_requests: 4}\n")
    with resolve(spec, Catalogs(providers=model_string_catalog()), model_string_factory, {}) as resolved:
        harness = Harness(resolved.agent, instructions="from the harness", limits=RunLimits(max_requests=2))
        assert harness.agent.instructions == ("from the spec", "from the harness")
        assert harness.agent.limits.max_requests == 2 and resolved.agent.limits.max_requests == 4
        with harness.run("hi") as outcome:
            assert outcome.result.usage.requests == 1
