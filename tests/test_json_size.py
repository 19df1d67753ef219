"""zigai.json.encoded_size / utf8_size: the bytes of dumps(value), counted without building it."""

from __future__ import annotations

import tracemalloc
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zigai import json as zjson
from zigai.messages.json_value import adopt_parsed_json

_text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=40)
_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _text
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=5)
    | st.dictionaries(_text, inner, max_size=5)
    | st.tuples(inner, inner),
    max_leaves=30,
)


def _dumped(value: Any) -> int:
    return len(zjson.dumps(value).encode("utf-8"))


@settings(max_examples=300, deadline=None)
@given(_values)
def test_encoded_size_equals_the_dumped_bytes(value: Any) -> None:
    assert zjson.encoded_size(value) == _dumped(value)


@pytest.mark.parametrize("value", [
    {1: "a", 2.5: "b", False: "c", None: "d"},  # non-string keys are written as strings
    OrderedDict(a=[1, {"b": None}]),
    "quote \" backslash \\ newline \n tab \t bell \x07 é ☃ 😀 \u2028",
    "é" * 70_000 + "\n" * 70_000,  # longer than one measuring slice, escapes and multi-byte on both sides
    adopt_parsed_json({"list": [1, 2, {"x": "y"}], "n": -1.5e300}),
])
def test_encoded_size_matches_dumps_on_edge_values(value: Any) -> None:
    assert zjson.encoded_size(value) == _dumped(value)


def test_a_limit_is_exact_and_counting_stops_one_past_it() -> None:
    assert zjson.encoded_size("x" * 8, limit=10) == 10  # '"xxxxxxxx"'
    assert zjson.encoded_size("x" * 9, limit=10) > 10
    assert zjson.encoded_size(["a", "b"], limit=9) == 9
    assert zjson.encoded_size(["a", "b"], limit=8) > 8
    assert zjson.encoded_size({"k": "v"}, limit=9) == 9
    assert zjson.encoded_size({"k": "v"}, limit=8) > 8
    # once past the limit the walk stops: a later value is never visited
    assert zjson.encoded_size(["x" * 20, object()], limit=10) > 10


@pytest.mark.parametrize("value, error", [
    (object(), zjson.MalformedJson),
    (float("nan"), zjson.MalformedJson),
    ({float("inf"): 1}, zjson.MalformedJson),
    ({("a",): 1}, zjson.MalformedJson),
])
def test_values_dumps_refuses_raise_the_same_named_errors(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        zjson.dumps(value)
    with pytest.raises(error):
        zjson.encoded_size(value)


def test_a_circular_value_is_malformed_and_deep_nesting_is_named() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(zjson.MalformedJson, match="Circular"):
        zjson.encoded_size(loop)
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(zjson.NestingTooDeep):
        zjson.encoded_size(deep)


def test_a_repeated_value_is_not_circular() -> None:
    shared = ["a"]
    assert zjson.encoded_size([shared, shared]) == _dumped([shared, shared])


def test_a_lone_surrogate_fails_as_encoding_its_text_would() -> None:
    with pytest.raises(UnicodeEncodeError):
        zjson.encoded_size("a\ud800b")


def test_utf8_size_counts_without_encoding_everything() -> None:
    assert zjson.utf8_size("") == 0
    assert zjson.utf8_size("abc") == 3
    assert zjson.utf8_size("é☃😀" * 30_000) == len(("é☃😀" * 30_000).encode("utf-8"))


@pytest.mark.parametrize("payload", ["x" * (8 << 20), "é" * (4 << 20)])
def test_measuring_a_large_string_needs_no_copy_of_it(payload: str) -> None:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        size = zjson.encoded_size(payload)
        over = zjson.encoded_size(payload, limit=1 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert size == len(payload.encode("utf-8")) + 2
    assert over > 1 << 20
    assert peak < (1 << 20), f"measuring allocated {peak} bytes for an {size}-byte encoding"
