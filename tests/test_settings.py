"""ModelSettings: validation, merge order, profile support checks, extension bodies, headers."""

from __future__ import annotations

import math

import pytest

from zigai.model import ModelProfile
from zigai.settings import (
    ExtraBodyRejected,
    ForbiddenRequestHeader,
    InvalidModelSettings,
    ModelSettings,
    ProviderExtraBody,
    UnsupportedModelSetting,
    check_supported,
    merge_settings,
    requested_controls,
    validate_request_headers,
)


def test_merge_order_model_agent_run_and_none_inherits() -> None:
    model = ModelSettings(max_tokens=100, temperature=0.5, stop_sequences=("a",))
    agent = ModelSettings(temperature=0.7)
    run = ModelSettings(seed=3)
    merged = merge_settings(model, agent, run)
    assert (merged.max_tokens, merged.temperature, merged.seed) == (100, 0.7, 3)
    assert merged.stop_sequences == ("a",)


def test_empty_sequence_overrides_instead_of_inheriting() -> None:
    merged = merge_settings(ModelSettings(stop_sequences=("a",)), ModelSettings(stop_sequences=()))
    assert merged.stop_sequences == ()


def test_merge_with_no_layers_is_empty() -> None:
    assert requested_controls(merge_settings()) == ()
    assert requested_controls(merge_settings(None, None)) == ()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_tokens": 0},
        {"max_tokens": True},
        {"temperature": math.nan},
        {"temperature": 2.01},
        {"top_p": -0.1},
        {"top_logprobs": 21},
        {"tool_choice": "sometimes"},
        {"thinking": "extreme"},
        {"truncation": "maybe"},
        {"stop_sequences": "stop"},
        {"stop_sequences": ("",)},
        {"logprobs": 1},
        {"service_tier": ""},
        {"extra_body": {"a": 1}},
    ],
)
def test_invalid_values_are_rejected(kwargs: dict) -> None:
    with pytest.raises(InvalidModelSettings):
        ModelSettings(**kwargs)


def test_bounds_are_inclusive() -> None:
    ModelSettings(temperature=2.0, top_p=1.0, top_logprobs=20, max_tokens=1, presence_penalty=-2.0)


def test_profile_rejects_unsupported_controls_before_io() -> None:
    profile = ModelProfile(settings=frozenset({"max_tokens"}))
    check_supported(ModelSettings(max_tokens=5), profile)
    with pytest.raises(UnsupportedModelSetting, match="temperature"):
        check_supported(ModelSettings(temperature=0.1), profile)


def test_thinking_levels_and_service_tiers_must_be_declared_exactly() -> None:
    profile = ModelProfile(
        supports_thinking=True,
        reasoning_efforts=frozenset({"low", "high"}),
        service_tiers=frozenset({"flex"}),
    )
    check_supported(ModelSettings(thinking="high", service_tier="flex"), profile)
    check_supported(ModelSettings(thinking="off"), ModelProfile())
    with pytest.raises(UnsupportedModelSetting):
        check_supported(ModelSettings(thinking="medium"), profile)
    with pytest.raises(UnsupportedModelSetting):
        check_supported(ModelSettings(service_tier="priority"), profile)
    with pytest.raises(UnsupportedModelSetting):
        check_supported(ModelSettings(thinking="low"), ModelProfile())
    with pytest.raises(UnsupportedModelSetting):
        check_supported(ModelSettings(thinking_budget_tokens=1024), ModelProfile())


def test_extra_body_accepts_only_its_own_tag_and_no_reserved_keys() -> None:
    body = ProviderExtraBody("openai", {"store": False, "nested": {"x": [1, 2]}})
    accepted = body.accept("openai", reserved_keys={"model", "input"})
    assert accepted == {"store": False, "nested": {"x": [1, 2]}}
    accepted["nested"]["x"].append(3)
    assert body.body["nested"]["x"] == [1, 2]  # the caller got a copy
    with pytest.raises(ExtraBodyRejected, match="anthropic"):
        body.accept("anthropic", reserved_keys=())
    with pytest.raises(ExtraBodyRejected, match="store"):
        body.accept("openai", reserved_keys={"store"})


def test_extra_body_must_be_json() -> None:
    with pytest.raises(InvalidModelSettings):
        ProviderExtraBody("openai", {"bad": math.inf})
    with pytest.raises(InvalidModelSettings):
        ProviderExtraBody("openai", {1: "x"})  # type: ignore[dict-item]
    with pytest.raises(InvalidModelSettings):
        ProviderExtraBody("", {})


@pytest.mark.parametrize(
    "name",
    ["Authorization", "x-api-key", "Content-Length", "Host", "Transfer-Encoding", "traceparent",
     "Idempotency-Key", "anthropic-version", "X-Request-Id", "Cookie", "x-stainless-os"],
)
def test_framework_owned_headers_are_forbidden(name: str) -> None:
    with pytest.raises(ForbiddenRequestHeader):
        validate_request_headers([(name, "v")])
    with pytest.raises(ForbiddenRequestHeader):
        ModelSettings(extra_headers=((name, "v"),))


def test_malformed_and_duplicate_headers_are_rejected_without_echoing_values() -> None:
    with pytest.raises(ForbiddenRequestHeader) as excinfo:
        validate_request_headers([("x-ok", "secret\r\ninjected")])
    assert "secret" not in str(excinfo.value)
    with pytest.raises(ForbiddenRequestHeader):
        validate_request_headers([("bad name", "v")])
    with pytest.raises(ForbiddenRequestHeader):
        validate_request_headers([("x-a", "1"), ("X-A", "2")])
    validate_request_headers([("x-trace-tag", "blue")])
