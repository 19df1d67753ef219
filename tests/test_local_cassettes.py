"""Replay the project's own recordings (``cassettes/local/``) from a real llama-server.

Every protocol llama-server speaks (OpenAI Chat Completions, OpenAI Responses, Anthropic
Messages) times every scenario of ``support.local_model`` must have a cassette, and each must
replay strictly (same requests, in order, all consumed) and pass the scenario's structural
checks.  These run offline, need no outside corpus, and are the provider-conformance tests
a fresh clone runs; ``scripts/record_local.py`` re-records them.
"""

from __future__ import annotations

import json

import pytest
from support import local_model, replays
from support.cassettes import CassetteMismatch, ReplayTransport

CASES = local_model.CASES


def _replayed(protocol: str, name: str) -> local_model.Outcome:
    """Scenario ``name`` run strictly against our recording of it for ``protocol``."""
    path = local_model.cassette_path(protocol, name)
    assert path.is_file(), f"missing recording {path}; run scripts/record_local.py"
    spec = local_model.scenario(name)
    with ReplayTransport.load(path) as transport:
        return local_model.run(protocol, spec, local_model.build_model(
            protocol, local_model.DEFAULT_URL, transport, spec))


@pytest.mark.parametrize(("protocol", "name"), CASES, ids=[f"{p}-{s}" for p, s in CASES])
def test_local_recording_replays_and_keeps_its_structure(protocol: str, name: str) -> None:
    local_model.check(local_model.scenario(name), _replayed(protocol, name), protocol)


def test_a_changed_request_does_not_replay() -> None:
    """Replay is strict: a scenario whose request differs from the recording fails loudly."""
    path = local_model.cassette_path("chat", "buffered_text")
    spec = local_model.scenario("streamed_text")  # same prompt, but a streamed request
    with pytest.raises(CassetteMismatch):
        with ReplayTransport.load(path) as transport:
            local_model.run("chat", spec, local_model.build_model(
                "chat", local_model.DEFAULT_URL, transport))


def test_the_checks_reject_a_wrong_structure() -> None:
    """The structural checks can fail: a tool scenario's checks refuse a text-only run."""
    outcome = _replayed("chat", "buffered_text")
    with pytest.raises(AssertionError, match="requests"):
        local_model.check(local_model.scenario("tool_loop"), outcome)


def test_the_client_level_checks_reject_a_wrong_structure() -> None:
    """The provider tests' replay checks can fail: each refuses another scenario's responses."""
    text, tools, structured, refusal = (
        replays.local_cases("chat", [name])[0]
        for name in ("buffered_text", "tool_loop", "structured_output", "context_overflow"))
    with pytest.raises(AssertionError, match="expected one answer"):
        replays.assert_text_answer(tools.run())
    with pytest.raises(AssertionError, match="expected call then answer"):
        replays.assert_tool_loop(text.run(), "weather")
    with pytest.raises(json.JSONDecodeError):
        replays.assert_structured_answer(text.run())
    with pytest.raises(pytest.fail.Exception, match="DID NOT RAISE"):
        replays.assert_refused(structured)
    replays.assert_refused(refusal)
    with pytest.raises(AssertionError, match="first part"):
        replays.assert_thinking_answer(text.run(), [])
    (thinking,) = replays.local_cases("chat", ["thinking_stream"])
    with pytest.raises(AssertionError, match="streamed part starts"):
        replays.assert_thinking_answer(thinking.run(), [])  # no events: nothing was streamed


def test_the_thinking_checks_reject_an_answer_without_reasoning() -> None:
    """A run that answered without a thinking part fails the reasoning scenario's checks."""
    outcome = _replayed("chat", "streamed_text")
    with pytest.raises(AssertionError, match="first part"):
        local_model.check(local_model.scenario("thinking_stream"), outcome)
