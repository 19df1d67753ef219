"""ProviderExtraBody is bounded by the named ``provider_extra_body`` JSON profile (issue 31,
defect 4): depth, encoded size, string size and members, each exact at the limit and refused
one past it with ``ExtraBodyTooLarge`` — never a bare ``RecursionError`` — on construction,
so before any request exists."""

from __future__ import annotations

import json
from typing import Any

import pytest

from zigai import json as zjson
from zigai.json import DocumentTooLarge, NestingTooDeep, TooManyItems, ValueTooLarge
from zigai.settings import ExtraBodyTooLarge, InvalidModelSettings, ModelSettings, ProviderExtraBody

PROFILE = zjson.defaults.provider_extra_body


def _nested(depth: int) -> dict[str, Any]:
    """An object whose containers nest exactly ``depth`` deep (built without recursion)."""
    body: dict[str, Any] = {}
    for _ in range(depth - 1):
        body = {"k": body}
    return body


def _encoded_size(body: Any) -> int:
    return len(zjson.dumps(body).encode("utf-8"))


def test_the_profile_is_named_and_pinned() -> None:
    assert PROFILE == zjson.Limits(1024 * 1024, 256 * 1024, 32, 4_096)


def test_a_100000_deep_body_is_a_named_depth_error_not_a_recursion_error() -> None:
    with pytest.raises(ExtraBodyTooLarge, match="provider_extra_body") as caught:
        ProviderExtraBody("openai", _nested(100_000))
    assert isinstance(caught.value.limit_error, NestingTooDeep)
    assert isinstance(caught.value, InvalidModelSettings)


def test_depth_at_the_limit_is_accepted_and_one_more_is_refused() -> None:
    assert ProviderExtraBody("openai", _nested(PROFILE.max_depth)).body == _nested(PROFILE.max_depth)
    with pytest.raises(ExtraBodyTooLarge):
        ProviderExtraBody("openai", _nested(PROFILE.max_depth + 1))
    with pytest.raises(ExtraBodyTooLarge):  # arrays count as containers too
        ProviderExtraBody("openai", {"a": json.loads("[" * PROFILE.max_depth + "]" * PROFILE.max_depth)})


def test_a_20_mib_body_is_refused() -> None:
    chunk = "x" * (200 * 1024)
    with pytest.raises(ExtraBodyTooLarge) as caught:
        ProviderExtraBody("openai", {f"k{i}": chunk for i in range(103)})  # 20.1 MiB
    assert isinstance(caught.value.limit_error, DocumentTooLarge)


def test_the_encoded_size_is_exact_at_the_limit() -> None:
    filler = "y" * (PROFILE.max_value_bytes - 16)
    body: dict[str, Any] = {}
    index = 0
    while _encoded_size(body) + len(filler) + 32 < PROFILE.max_document_bytes:
        body[f"f{index}"] = filler
        index += 1
    body["last"] = ""
    body["last"] = "z" * (PROFILE.max_document_bytes - _encoded_size(body))
    assert _encoded_size(body) == PROFILE.max_document_bytes
    ProviderExtraBody("openai", body)
    body["last"] += "z"
    with pytest.raises(ExtraBodyTooLarge) as caught:
        ProviderExtraBody("openai", body)
    assert isinstance(caught.value.limit_error, DocumentTooLarge)


def test_string_size_and_members_are_exact_at_the_limit() -> None:
    ProviderExtraBody("openai", {"s": "v" * PROFILE.max_value_bytes})
    with pytest.raises(ExtraBodyTooLarge) as caught:
        ProviderExtraBody("openai", {"s": "v" * (PROFILE.max_value_bytes + 1)})
    assert isinstance(caught.value.limit_error, ValueTooLarge)
    ProviderExtraBody("openai", {"items": list(range(PROFILE.max_items))})
    with pytest.raises(ExtraBodyTooLarge) as caught:
        ProviderExtraBody("openai", {"items": list(range(PROFILE.max_items + 1))})
    assert isinstance(caught.value.limit_error, TooManyItems)


def test_a_shared_value_repeated_until_the_encoding_explodes_is_refused_quickly() -> None:
    level: Any = ["x"]
    for _ in range(PROFILE.max_depth - 2):
        level = [level, level]  # 2**30 leaves once encoded
    with pytest.raises(ExtraBodyTooLarge) as caught:
        ProviderExtraBody("openai", {"tree": level})
    assert isinstance(caught.value.limit_error, DocumentTooLarge)


def test_a_self_referencing_body_is_refused() -> None:
    body: dict[str, Any] = {}
    body["self"] = body
    with pytest.raises(ExtraBodyTooLarge):
        ProviderExtraBody("openai", body)


def test_settings_carrying_an_oversized_body_cannot_be_built() -> None:
    with pytest.raises(ExtraBodyTooLarge):
        ModelSettings(extra_body=ProviderExtraBody("openai", _nested(PROFILE.max_depth + 1)))
