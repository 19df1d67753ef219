"""Resume decisions and run outcomes: each malformed decision, decisions document and outcome
is refused with a named error; owners report and release what they hold."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_pause_integrity import _agent

from zigai.agent import (
    InvalidResumeDecisions,
    ResumeAction,
    ResumeDecision,
    RunOutcome,
    parse_resume_decisions,
    stringify_resume_decisions,
)
from zigai.agent.deferred import match_decisions
from zigai.errors import AgentError


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("", "approve"), "non-empty tool_call_id"),
        (("c1", "maybe"), "unknown resume action 'maybe'"),
        (("c1", "deny", 5), "a deny reason must be a string"),
        (("c1", "approve", None, {"x": 1}), "only a 'result' decision carries content"),
        (("c1", "approve", "because"), "only a 'deny' decision carries a reason"),
    ],
)
def test_a_malformed_decision_is_refused(args: tuple[Any, ...], message: str) -> None:
    with pytest.raises(InvalidResumeDecisions, match=message):
        ResumeDecision(*args)


def test_decisions_round_trip_and_iterate_in_order() -> None:
    text = stringify_resume_decisions([
        ResumeDecision.approve("c1"), ResumeDecision.deny("c2", "no"), ResumeDecision.result("c3", {"ok": 1}),
    ])
    with parse_resume_decisions(text) as owned:
        assert [(d.tool_call_id, d.action) for d in owned] == [
            ("c1", ResumeAction.approve), ("c2", ResumeAction.deny), ("c3", ResumeAction.result)
        ]


def test_stringify_refuses_values_that_are_not_decisions() -> None:
    with pytest.raises(InvalidResumeDecisions, match="expected ResumeDecision values, got dict"):
        stringify_resume_decisions([{"tool_call_id": "c1", "action": "approve"}])  # type: ignore[list-item]


def _doc(*decisions: Any, **extra: Any) -> str:
    return json.dumps({"version": 1, "decisions": list(decisions), **extra})


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (7, "expected str or bytes, got int"),
        ("[1, 2]", "must be a JSON object"),
        (_doc(extra=1), 'exactly "version", a "decisions" array'),
        (json.dumps({"version": 1, "decisions": {}}), 'exactly "version", a "decisions" array'),
        (_doc("c1"), r"decisions\[0\] must be an object"),
        (_doc({"tool_call_id": "c1"}), r"decisions\[0\] has keys \['tool_call_id'\]"),
        (_doc({"tool_call_id": "c1", "action": "approve", "reason": "x"}), r"decisions\[0\] has keys"),
        (_doc({"tool_call_id": "c1", "action": "result"}), "a result decision needs content"),
        (_doc({"tool_call_id": 3, "action": "approve"}), r"decisions\[0\].tool_call_id must be a string"),
    ],
)
def test_a_malformed_decisions_document_is_refused(data: Any, message: str) -> None:
    with pytest.raises(InvalidResumeDecisions, match=message):
        parse_resume_decisions(data)


def test_match_decisions_refuses_values_that_are_not_decisions() -> None:
    with pytest.raises(InvalidResumeDecisions, match="got str"):
        match_decisions([], ["approve"])  # type: ignore[list-item]


def test_a_run_outcome_is_either_complete_or_paused() -> None:
    with pytest.raises(ValueError, match="either complete or paused"):
        RunOutcome()
    with _agent().run_until_pause("go") as outcome:
        assert outcome.is_paused and repr(outcome) == "RunOutcome(paused)"
        assert repr(outcome.paused) == "PausedRun(calls=['publish', 'ship'])"
        with pytest.raises(AgentError, match="the run paused; read RunOutcome.paused"):
            outcome.result  # noqa: B018
        paused = outcome.paused
    assert repr(paused) == "PausedRun(closed)"


def test_a_complete_outcome_has_no_paused_run() -> None:
    from zigai.agent import Agent
    from zigai.messages import ResponseMessage, TextPart
    from zigai.testing import FunctionModel

    agent = Agent(FunctionModel(lambda messages, info: ResponseMessage((TextPart("hi"),))))
    with agent.run_until_pause("go") as outcome:
        assert not outcome.is_paused and repr(outcome) == "RunOutcome(complete)"
        assert outcome.result.output == "hi"
        with pytest.raises(AgentError, match="the run completed; read RunOutcome.result"):
            outcome.paused  # noqa: B018
