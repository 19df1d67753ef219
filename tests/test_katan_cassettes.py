"""The project's own llm-katan recordings (``cassettes/katan/``): present, strict, and checked.

The provider test modules replay them (``support.katan_model.katan_cases``); this module pins
that every case has its cassette and that the replays and their checks can fail.
``scripts/record_katan.py`` re-records them against a real llm-katan.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from support import katan_model, replays
from support.cassettes import CassetteMismatch


@pytest.mark.parametrize("case", katan_model.CASES, ids=lambda c: f"{c.protocol}-{c.name}")
def test_every_katan_case_has_its_recording(case: katan_model.KatanCase) -> None:
    path = katan_model.cassette_path(case.protocol, case.name)
    assert path.is_file(), f"missing recording {path}; run scripts/record_katan.py"


def test_a_katan_tool_loop_offers_its_tool_only_until_the_return() -> None:
    """katan calls a declared tool on every turn, so the recorded second request has no tools;
    offering them again is a different request and does not replay."""
    (loop,) = katan_model.katan_cases("google", ["tool_loop"])
    replays.assert_tool_loop(loop.run(), "weather")
    with pytest.raises(CassetteMismatch):
        dataclasses.replace(loop, tools_until_returned=False).run()


def test_the_katan_checks_reject_another_scenarios_responses() -> None:
    text, tools, structured = (katan_model.katan_cases("google", [name])[0]
                               for name in ("buffered_text", "tool_loop", "structured_output"))
    with pytest.raises(AssertionError, match="expected one answer"):
        replays.assert_text_answer(tools.run())
    with pytest.raises(AssertionError, match="expected call then answer"):
        replays.assert_tool_loop(text.run(), "weather")
    with pytest.raises(json.JSONDecodeError):  # the plain echo is no JSON object
        dataclasses.replace(text, extra_check=structured.extra_check).run()
