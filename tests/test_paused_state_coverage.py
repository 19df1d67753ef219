"""decode_paused_state refuses each malformed field of a paused state, even with a recomputed
(valid) digest, naming the field; one state edit per case on a real paused run."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from test_pause_integrity import _agent, _forge, _pause

from zigai.agent import InvalidPausedState
from zigai.agent.deferred import decode_paused_state


@pytest.fixture(scope="module")
def state_json() -> str:
    return _pause(_agent())


def _set(*path_and_value: Any) -> Any:
    *path, value = path_and_value

    def edit(state: dict[str, Any]) -> None:
        target: Any = state
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return edit


def _history_response() -> Any:
    def edit(state: dict[str, Any]) -> None:
        state["pending_messages"] = [copy.deepcopy(state["history"][-1])]

    return edit


def _duplicate_call(state: dict[str, Any]) -> None:
    state["pending_calls"].append(copy.deepcopy(state["pending_calls"][0]))


def _drop_last_message(state: dict[str, Any]) -> None:
    state["history"].pop()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (_set("usage", "details", []), "state.usage.details must be an object"),
        (_set("usage", "requests", -1), "state.usage.requests must be an int >= 0"),
        (_set("usage", "details", {"cached": True}), "state.usage.details.cached must be an int >= 0"),
        (_history_response(), "state.pending_messages must hold request messages"),
        (_set("instructions", [7]), r"state.instructions\[\] must be a string"),
        (_set("instructions", "Be brief."), "state.instructions must be an array"),
        (_set("tool_retries", []), "state.tool_retries must be an object"),
        (_set("tool_retries", {"lookup": -2}), "state.tool_retries.lookup must be an int >= 0"),
        (_set("pending_calls", 0, "execution", "immediate"), "execution 'immediate' is not deferred"),
        (_set("pending_calls", 0, "approval", "psychic"), r"pending_calls\[0\].approval is unknown"),
        (_set("pending_calls", 0, "tool_name", 5), "must be a string"),
        (_set("pending_calls", 0, "args", '{"text":"other"}'), "has arguments that differ from its call"),
        (_set("pending_calls", 0, "tool_call_id", "c9"), "'c9' is not a call of the last response"),
        (_set("pending_calls", []), "needs at least one pending call"),
        (_duplicate_call, "'c2' appears twice"),
        (_drop_last_message, "the history must end with the pausing model response"),
        (_set("surprise", 1), r"unknown \['surprise'\]"),
    ],
)
def test_a_malformed_field_is_refused_with_its_path(state_json: str, edit: Any, message: str) -> None:
    def apply(state: dict[str, Any]) -> None:
        edit(state)

    with pytest.raises(InvalidPausedState, match=message):
        decode_paused_state(_forge(state_json, apply))


def test_the_unedited_state_decodes(state_json: str) -> None:
    state = decode_paused_state(state_json)
    assert [call.tool_call_id for call in state.calls] == ["c2", "c3"]


@pytest.mark.parametrize("data", [12, None, ["{}"]])
def test_only_text_or_bytes_is_decoded(data: Any) -> None:
    with pytest.raises(InvalidPausedState, match="expected str or bytes"):
        decode_paused_state(data)
