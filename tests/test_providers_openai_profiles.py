"""zigai.providers.openai.profiles: which Responses model family gets which capabilities."""

from __future__ import annotations

import pytest

from zigai.providers.openai.profiles import (
    BASE_SETTINGS,
    SAMPLING_SETTINGS,
    UNKNOWN_PROFILE,
    profile_for_model,
)


@pytest.mark.parametrize(("model", "thinking", "efforts", "web_search", "flex"), [
    ("gpt-5", True, {"minimal", "low", "medium", "high"}, True, True),
    ("gpt-5-nano", True, {"minimal", "low", "medium", "high"}, True, True),  # issue 31 #9
    ("GPT-5.1-codex", True, {"off", "low", "medium", "high"}, True, True),
    ("gpt-5.2", True, {"off", "low", "medium", "high", "xhigh"}, True, True),
    ("gpt-5-chat-latest", False, set(), True, False),
    ("o1", True, {"low", "medium", "high"}, False, False),
    ("o3-mini", True, {"low", "medium", "high"}, False, False),
    ("o3", True, {"low", "medium", "high"}, True, True),
    ("o4-mini-2025-04-16", True, {"low", "medium", "high"}, True, True),
])
def test_reasoning_families(model: str, thinking: bool, efforts: set[str], web_search: bool,
                            flex: bool) -> None:
    profile = profile_for_model(model)
    assert profile.supports_thinking is thinking
    assert set(profile.reasoning_efforts) == efforts
    assert ("web_search" in profile.provider_managed_tools) is web_search
    assert ("flex" in profile.service_tiers) is flex
    # reasoning models take no sampling settings; chat models do
    assert bool(SAMPLING_SETTINGS & profile.settings) is (not thinking)


def test_o1_mini_has_no_tools_vision_or_structured_output() -> None:
    profile = profile_for_model("o1-mini")
    assert not profile.supports_tools and not profile.supports_parallel_tool_calls
    assert not profile.json_schema_output and not profile.json_object_output
    assert "image" not in profile.content_kinds
    assert profile.settings == BASE_SETTINGS - {"parallel_tool_calls", "tool_choice", "allowed_tools"}
    assert "image" not in profile_for_model("o3-mini").content_kinds


@pytest.mark.parametrize(("model", "schema", "web_search"), [
    ("gpt-4.1", True, True), ("gpt-4.1-nano", True, False),
    ("gpt-4o", True, True), ("gpt-4o-search-preview", True, False),
    ("gpt-4o-2024-05-13", False, True),  # the first gpt-4o snapshot predates structured outputs
])
def test_chat_families(model: str, schema: bool, web_search: bool) -> None:
    profile = profile_for_model(model)
    assert not profile.supports_thinking
    assert profile.json_schema_output is schema and profile.json_object_output
    assert ("web_search" in profile.provider_managed_tools) is web_search
    assert "image" in profile.content_kinds and SAMPLING_SETTINGS <= profile.settings


@pytest.mark.parametrize("model", ["gpt-4o-audio-preview", "gpt-4o-realtime-preview", "davinci-002", ""])
def test_unmatched_models_get_the_conservative_unknown_profile(model: str) -> None:
    assert profile_for_model(model) is UNKNOWN_PROFILE
    assert UNKNOWN_PROFILE.settings == BASE_SETTINGS and not UNKNOWN_PROFILE.supports_thinking
