"""``SqliteUiStore`` holds the UI store contract: bounds at the limit and one past, replay
semantics of ``ReplayLog``, pauses claimed once.  The two-process behaviour is in
``tests/test_ui_workers.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.ui_agents import approval_agent

from zigai.agent.deferred import DeferredCall
from zigai.messages import RequestMessage, ResponseMessage, TextPart, UserPromptPart
from zigai.ui import (
    ApprovalReply,
    PauseStore,
    ReplayGap,
    ReplayTimedOut,
    UiBridge,
    resume_run,
    start_run,
)
from zigai.ui.sqlite import SqliteUiStore

CALL = DeferredCall("c1", "publish", '{"city": "Oslo"}', "requires_approval")


def test_histories_round_trip_and_evict_the_least_recent(tmp_path: Path) -> None:
    store = SqliteUiStore(tmp_path / "s.db", max_threads=2)
    messages = (RequestMessage(parts=(UserPromptPart("hi"),)), ResponseMessage(parts=(TextPart("hello"),)))
    store.histories.put("a", messages)
    store.histories.put("b", messages[:1])
    assert store.histories.get("a") == messages and store.histories.get("missing") is None
    store.histories.put("c", messages)  # one past the bound: the oldest thread goes
    assert store.histories.get("a") is None and store.histories.get("b") == messages[:1]
    other = SqliteUiStore(tmp_path / "s.db")  # another process would open the same file
    assert other.histories.get("c") == messages


def test_pauses_are_bounded_shared_and_claimed_once(tmp_path: Path) -> None:
    store = SqliteUiStore(tmp_path / "s.db", max_pauses=2)
    first = store.pauses.put("t", "{}", [CALL])
    second = store.pauses.put("t", "{}", [CALL])
    assert len(store.pauses) == 2
    other = SqliteUiStore(tmp_path / "s.db", max_pauses=2).pauses
    found = other.find([ApprovalReply(first.interrupts[0].interrupt_id, "approve")])
    assert found.calls == (CALL,) and found.interrupts == first.interrupts
    assert other.interrupt_for_call("t", "c1") == second.interrupts[0].interrupt_id  # the newest
    assert other.interrupt_for_call("t", "nope") is None
    store.pauses.put("t", "{}", [CALL])  # one past: the oldest pause goes
    assert len(store.pauses) == 2 and store.pauses._load(first.pause_id) is None
    assert store.pauses.take(second.pause_id) is True
    assert other.take(second.pause_id) is False  # already claimed elsewhere


def test_replay_log_semantics_and_eviction_at_the_limit(tmp_path: Path) -> None:
    store = SqliteUiStore(tmp_path / "s.db", poll_s=0.01)
    log = store.replay_log("r1", "t", max_events=3, max_bytes=1000)
    assert (log.first_sequence, log.last_sequence, log.closed) == (1, 0, False)
    assert [log.append(b"x%d" % i) for i in range(3)] == [1, 2, 3]
    reader = log.read(0, timeout=0.05)
    assert [next(reader) for _ in range(3)] == [(1, b"x0"), (2, b"x1"), (3, b"x2")]  # all three kept
    with pytest.raises(ReplayTimedOut):
        next(reader)  # the run is still open: the reader waits, bounded
    log.append(b"x3")  # one past: frame 1 evicted
    with pytest.raises(ReplayGap, match="events 1..1"):
        list(log.read(0, timeout=1))
    log.close()
    assert list(log.read(1, timeout=1)) == [(2, b"x1"), (3, b"x2"), (4, b"x3")]
    with pytest.raises(ValueError, match="closed"):
        log.append(b"late")
    opened = store.open_replay("r1")
    assert opened is not None and opened[1] == "t" and opened[0].closed
    assert store.open_replay("nobody") is None
    assert store.request_cancel("r1") and not store.request_cancel("nobody")
    assert opened[0].cancel_requested
    sized = store.replay_log("r2", "t", max_events=10, max_bytes=4)
    sized.append(b"abc")
    sized.append(b"de")  # 5 bytes > 4: the older frame goes, the newest is always kept
    assert sized.first_sequence == 2


def test_finished_runs_beyond_max_runs_are_dropped(tmp_path: Path) -> None:
    store = SqliteUiStore(tmp_path / "s.db", max_runs=2)
    for run in ("r1", "r2"):
        store.replay_log(run, "t", 10, 100).close()
    store.replay_log("r3", "t", 10, 100)
    assert store.open_replay("r1") is None and store.open_replay("r2") is not None


@pytest.mark.parametrize(("kwargs", "message"), [({"max_threads": 0}, "max_threads"), ({"max_runs": True}, "max_runs"),
                                                 ({"poll_s": 0}, "poll_s")])
def test_store_options_are_checked(tmp_path: Path, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SqliteUiStore(tmp_path / "s.db", **kwargs)  # type: ignore[arg-type]


class LosingStore(PauseStore):
    """A store where another request always wins the claim."""

    def _delete(self, pause_id: str) -> bool:
        return False


def test_a_resume_that_loses_the_claim_runs_nothing() -> None:
    from support import ui_agents

    ui_agents.PUBLISHED.clear()
    pauses = LosingStore()
    agent = approval_agent()
    (interrupt,) = list(start_run(agent, UiBridge("t", "r1"), pauses, prompt="publish"))[-1].interrupts
    events = list(resume_run(agent, UiBridge("t", "r2"), pauses, [ApprovalReply(interrupt.interrupt_id, "approve")]))
    assert (events[-1].kind, events[-1].code) == ("run_failure", "UnknownInterrupt")
    assert ui_agents.PUBLISHED == []
