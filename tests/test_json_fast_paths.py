"""zigai.json's shortcuts against the slow paths they replace, on adversarial inputs.

Each shortcut documented in ``zigai/json/_preflight.py`` and ``zigai/json/__init__.py``
must give exactly what the straightforward code gives: the same value, or the same
error class and message.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zigai import json as zjson
from zigai.errors import JsonError
from zigai.json import Limits, _preflight

LIMITS = Limits(max_document_bytes=1 << 20, max_value_bytes=1 << 16, max_depth=64, max_items=4096)
PADDING = ",[]" * (LIMITS.max_depth + 1)  # more openers than max_depth: the counting path runs


def _two_replaces(raw: bytes) -> bytes:
    """The neutralisation as it was written first: two whole-buffer replaces."""
    return raw.replace(b"\\\\", b"__").replace(b'\\"', b"__")


def test_one_pass_neutralisation_equals_the_two_replaces_on_every_short_input() -> None:
    for length in range(8):
        for letters in itertools.product(b'\\"ua', repeat=length):
            raw = bytes(letters)
            assert _preflight._neutralise_escapes(raw) == _two_replaces(raw), raw


def _outcome(call: Any) -> tuple[Any, Any]:
    try:
        return "value", call()
    except JsonError as exc:
        return type(exc), str(exc)


def _hooked_parse(doc: str) -> Any:
    """parse as it was before the counting path: preflight, then the duplicate-key hook."""
    text = _preflight.preflight(doc, LIMITS)
    return zjson._decode(zjson._BUILDING, text, LIMITS)


def _assert_same_as_hooked(doc: str) -> None:
    assert _outcome(lambda: zjson.parse(doc, LIMITS)) == _outcome(lambda: _hooked_parse(doc))


ADVERSARIAL = [
    '{"a":1,"a":2}',
    '{"a":1,"\\u0061":2}',  # equal after unescaping
    '{"a:b":1,"a:b":2}',
    '{"k":"x\\":y","k":1}',  # an escaped quote, then a colon, inside a string
    '{"k":"\\\\","j":":"}',  # an escaped backslash right before the closing quote
    '{"k":"\\\\\\":","k":0}',
    '{ "a" : 1 , "b" : { "a" : 2 , "a" : 3 } }',
    '{"a":[{"b":1},{"b":1,"b":1}]}',
    '{"a":{"b":{"c":{"d":1,"d":2}}}}',
    '{"a":1,"a":2} x',  # a duplicate, then trailing data
    '{"a" 1,"a":2}',  # a syntax error before the duplicate
    '{"a":NaN,"a":1}',
    '{"a":1,"a":NaN}',
    '{"":1,"":2}',
    '{"\\u00e9":1,"é":2}',
    '{"t":"12:30:45","u":"::"}',
    '{"x":1}:',
]


@pytest.mark.parametrize("inner", ADVERSARIAL)
def test_parse_without_the_hook_matches_the_hooked_parse(inner: str) -> None:
    doc = f"[{inner}{PADDING}]"
    _text, members = _preflight.preflight_counting_members(doc, LIMITS)
    assert members is not None  # the shortcut was really taken
    _assert_same_as_hooked(doc)


def test_member_count_is_exact_for_well_formed_documents() -> None:
    doc = '[{"a:":"b:","c":{"d\\":":1}},{"e":[":"]}' + PADDING + "]"
    assert _preflight.preflight_counting_members(doc, LIMITS)[1] == 4


def test_small_documents_keep_the_hooked_path_and_still_refuse_duplicates() -> None:
    assert _preflight.preflight_counting_members('{"a":1}', LIMITS)[1] is None
    with pytest.raises(zjson.MalformedJson, match="duplicate object key 'a'"):
        zjson.parse('{"a":1,"a":2}', LIMITS)


def test_a_duplicate_in_a_large_document_is_named_like_before() -> None:
    doc = "[" + ",".join(f'{{"k{i}":{i}}}' for i in range(200)) + ',{"z":1,"z":2}]'
    with pytest.raises(zjson.MalformedJson, match="duplicate object key 'z'"):
        zjson.parse(doc, LIMITS)


_KEYS = st.sampled_from(['"a"', '"\\u0061"', '"a:b"', '"\\":"', '"\\\\"', '"b"', '""'])
_SCALARS = st.sampled_from(['1', '"x:y"', '"\\\\"', '"\\""', "null", "true", "-0.5e3", "NaN"])


def _render_object(pairs: list[tuple[str, str]]) -> str:
    return "{" + ",".join(f"{key}:{value}" for key, value in pairs) + "}"


_DOCUMENTS = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(lambda items: "[" + ",".join(items) + "]"),
        st.lists(st.tuples(_KEYS, inner), max_size=4).map(_render_object),
    ),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inner=_DOCUMENTS, tail=st.sampled_from(["", " ", "x", ":", "}"]))
def test_parse_without_the_hook_matches_the_hooked_parse_on_generated_documents(
    inner: str, tail: str
) -> None:
    _assert_same_as_hooked(f"[{inner}{PADDING}]{tail}")
