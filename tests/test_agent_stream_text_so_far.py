"""Text-output snapshots are O(delta) to deliver and still read as the text so far.

A streamed text run hands out one ``partial_output`` event per delta; the event keeps the
run's piece buffer and its piece count, and joins on first read.  These tests pin that the
lazy value is indistinguishable from the eager one: whatever order events are read in,
after the run ended, pickled, compared or hashed.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from typing import Any

import pytest

from zigai.agent import Agent
from zigai.agent.events import PartialOutputEvent, TextSoFar
from zigai.output import OutputResult
from zigai.testing import FunctionModel

WORDS = [f"w{i} " for i in range(50)]


def _partials(agent: Agent) -> list[PartialOutputEvent]:
    with agent.run_stream("go") as stream:
        events = [e for e in stream if isinstance(e, PartialOutputEvent)]
        stream.result().close()
    return events


def _streaming(words: list[str]) -> FunctionModel:
    def streamed(messages: tuple[Any, ...], info: Any) -> Iterator[str]:
        yield from words

    return FunctionModel(stream_function=streamed)


def test_every_snapshot_is_the_text_so_far_in_any_read_order() -> None:
    events = _partials(Agent(_streaming(WORDS)))
    assert len(events) == len(WORDS)
    expected = ["".join(WORDS[: n + 1]) for n in range(len(WORDS))]
    order = list(range(len(events)))[::-2] + list(range(len(events)))[::2]  # late first, then early
    for n in order:
        assert events[n].output == expected[n]
    assert [e.output for e in events] == expected  # a second read returns the same text
    assert all(e.json is None and e.choice_name is None and e.part_index == 0 for e in events)


def test_a_lazy_snapshot_equals_hashes_pickles_and_prints_like_an_eager_one() -> None:
    lazy = _partials(Agent(_streaming(["a", "b"])))[1]
    eager = PartialOutputEvent("ab", None, None, None, 0)
    assert lazy == eager and hash(lazy) == hash(eager)
    assert lazy != PartialOutputEvent("a", None, None, None, 0)
    assert lazy.__eq__(object()) is NotImplemented
    assert pickle.loads(pickle.dumps(lazy)) == eager
    assert repr(lazy) == repr(eager) and "output='ab'" in repr(lazy)
    assert lazy.event_kind == "partial_output"
    with pytest.raises(AttributeError):
        lazy.json = 1  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del lazy.part_index


def test_the_piece_buffer_reuses_its_last_join_and_serves_shorter_prefixes() -> None:
    buffer = TextSoFar()
    buffer.pieces.extend(["ab", "cd", "ef"])
    assert buffer.text(2) == "abcd"
    assert buffer.text(2) is buffer.text(2)
    assert buffer.text(3) == "abcdef"
    assert buffer.text(1) == "ab"
    assert buffer.text(0) == ""


def test_validators_still_see_every_text_snapshot() -> None:
    seen: list[tuple[str, bool]] = []

    def validator(name: str, ctx: Any, value: Any) -> OutputResult:
        seen.append((value, ctx.partial_output))
        return OutputResult.output(value.upper())

    events = _partials(Agent(_streaming(["x", "y"]), output_validators=[validator]))
    assert [e.output for e in events] == ["X", "XY"]
    assert seen[:2] == [("x", True), ("xy", True)]
