"""zigai.json: every limit at exactly-the-limit and one past it, malformed input, profiles, dumps."""

from __future__ import annotations

import json
import math
import pickle
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zigai import json as zjson
from zigai.errors import JsonError
from zigai.json import (
    DocumentTooLarge,
    JsonLimitExceeded,
    Limits,
    MalformedJson,
    NestingTooDeep,
    TooManyItems,
    ValueTooLarge,
)

ROOMY = Limits(max_document_bytes=1 << 20, max_value_bytes=1 << 16, max_depth=64, max_items=4096)


def _with(**changes: int) -> Limits:
    fields = {
        "max_document_bytes": ROOMY.max_document_bytes,
        "max_value_bytes": ROOMY.max_value_bytes,
        "max_depth": ROOMY.max_depth,
        "max_items": ROOMY.max_items,
    }
    fields.update(changes)
    return Limits(**fields)


# --- Limits and profiles ---------------------------------------------------------------


def test_the_eight_profiles_match_the_api_table() -> None:
    kib, mib = 1024, 1024 * 1024
    d = zjson.defaults
    assert d.history == Limits(16 * mib, 1 * mib, 64, 65_536)
    assert d.paused_state == Limits(32 * mib, 16 * mib, 64, 65_536)
    assert d.resume_decisions == Limits(4 * mib, 1 * mib, 32, 16_384)
    assert d.provider_response == Limits(16 * mib, 4 * mib, 128, 65_536)
    assert d.tool_payload == Limits(1 * mib, 1 * mib, 64, 4_096)
    assert d.mcp_message == Limits(4 * mib, 1 * mib, 64, 16_384)
    assert d.json_schema == Limits(2 * mib, 512 * kib, 64, 16_384)
    assert d.cli_manifest == Limits(1 * mib, 256 * kib, 32, 4_096)


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "8", None])
def test_limits_reject_nonsense(bad: Any) -> None:
    for field in ("max_document_bytes", "max_value_bytes", "max_depth", "max_items"):
        with pytest.raises(ValueError, match=field):
            _with(**{field: bad})


def test_limits_are_frozen() -> None:
    with pytest.raises(AttributeError):
        ROOMY.max_depth = 3  # type: ignore[misc]


# --- document size ---------------------------------------------------------------------


@pytest.mark.parametrize("as_text", [False, True])
def test_document_size_counts_utf8_bytes(as_text: bool) -> None:
    doc = '["é€😀"]'  # 2 + 2 + 3 + 4 + 2 = 13 bytes, 6 characters
    data: str | bytes = doc if as_text else doc.encode()
    assert zjson.parse(data, _with(max_document_bytes=13)) == ["é€😀"]
    with pytest.raises(DocumentTooLarge) as caught:
        zjson.parse(data, _with(max_document_bytes=12))
    assert caught.value.limit == 12
    assert caught.value.observed == 13


def test_document_size_counts_surrounding_whitespace() -> None:
    assert zjson.parse(" 1 ", _with(max_document_bytes=3)) == 1
    with pytest.raises(DocumentTooLarge):
        zjson.parse(" 1 ", _with(max_document_bytes=2))


# --- value size: strings -----------------------------------------------------------------

STRING_CASES = [
    ("plain ascii", '"abcde"', 5),
    ("raw multibyte", '"é€😀"', 9),
    ("short escapes", r'"a\nb\"c\\"', 6),
    ("unicode escapes", r'"\u00e9\u20ac"', 5),
    ("surrogate pair escape", r'"\ud83d\ude00x"', 5),
    ("escaped solidus and tab", r'"\/\t\b\f\r"', 5),
]


@pytest.mark.parametrize(("label", "token", "decoded_bytes"), STRING_CASES)
def test_string_limit_is_on_decoded_utf8_bytes(label: str, token: str, decoded_bytes: int) -> None:
    for doc in (token, f"[{token}]", f'{{"k":{token}}}', f"{{{token}:1}}"):
        assert zjson.parse(doc, _with(max_value_bytes=decoded_bytes)) == json.loads(doc), label
        with pytest.raises(ValueTooLarge) as caught:
            zjson.parse(doc, _with(max_value_bytes=decoded_bytes - 1))
        assert caught.value.kind == "string"
        assert caught.value.limit == decoded_bytes - 1
        assert caught.value.observed == decoded_bytes
        assert caught.value.offset == doc.index(token)


def test_long_string_is_measured_after_its_escapes() -> None:
    doc = '["' + "\\n" * 100 + '"]'  # 200 encoded bytes, 100 decoded
    assert zjson.parse(doc, _with(max_value_bytes=100)) == ["\n" * 100]
    with pytest.raises(ValueTooLarge):
        zjson.parse(doc, _with(max_value_bytes=99))


def test_string_limit_applies_to_every_string_not_just_the_first() -> None:
    doc = '{"a":"xy","b":["xy","xyz"]}'
    with pytest.raises(ValueTooLarge) as caught:
        zjson.parse(doc, _with(max_value_bytes=2))
    assert caught.value.offset == doc.index('"xyz"')


# --- value size: numbers -------------------------------------------------------------------


@pytest.mark.parametrize("token", ["12345", "-1234", "1.5e3", "-0.25", "1E+10", "123456789012345678"])
def test_number_limit_is_on_the_encoded_token(token: str) -> None:
    for doc in (token, f"[{token}, true, false]", f'{{"n":{token}}}'):
        assert zjson.parse(doc, _with(max_value_bytes=len(token))) == json.loads(doc)
        with pytest.raises(ValueTooLarge) as caught:
            zjson.parse(doc, _with(max_value_bytes=len(token) - 1))
        assert caught.value.kind == "number"
        assert caught.value.observed == len(token)


def test_digits_inside_strings_are_not_number_tokens() -> None:
    # "\u0030" and the digits after it form a long digit run, but inside a string.
    doc = '["\\u00301111", 12]'
    assert zjson.parse(doc, _with(max_value_bytes=5)) == ["01111", 12]


def test_integer_beyond_the_interpreter_digit_limit_is_value_too_large() -> None:
    doc = "9" * 5000
    with pytest.raises(ValueTooLarge) as caught:
        zjson.parse(doc, _with(max_value_bytes=5000))
    assert caught.value.kind == "number"
    assert zjson.parse("9" * 4300, _with(max_value_bytes=5000)) == int("9" * 4300)


# --- depth ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "depth"),
    [
        ("1", 0),
        ("[]", 1),
        ("{}", 1),
        ('[{"a":[1]}]', 3),
        ('{"a":{"b":{"c":{}}}}', 4),
        ("[[],[[]],[[[]]],[]]", 4),
        ('[{"x":"[[[[[["}]', 2),
    ],
)
def test_depth_limit_is_exact(doc: str, depth: int) -> None:
    assert zjson.parse(doc, _with(max_depth=max(depth, 1))) == json.loads(doc)
    if depth > 1:
        with pytest.raises(NestingTooDeep) as caught:
            zjson.parse(doc, _with(max_depth=depth - 1))
        assert caught.value.limit == depth - 1


def test_deep_nesting_is_rejected_before_decoding() -> None:
    doc = "[" * 100_000 + "]" * 100_000  # would overflow the stdlib's recursion limit
    with pytest.raises(NestingTooDeep):
        zjson.parse(doc, _with(max_depth=64))


def test_depth_limit_many_containers_use_the_exact_pass() -> None:
    doc = json.dumps([[[i]] for i in range(300)])
    assert zjson.parse(doc, _with(max_depth=3, max_items=300)) == json.loads(doc)
    with pytest.raises(NestingTooDeep):
        zjson.parse(doc, _with(max_depth=2, max_items=300))


# --- items ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "items"),
    [
        ("[1,2,3]", 3),
        ('{"a":1,"b":2,"c":3}', 3),
        ("[[1,2],[3,4],[5,6]]", 3),
        ("[[1,2,3],[4,5,6,7],[8]]", 4),
        ("[1,[2,[3]],4,[5,6],7]", 5),  # the outer commas are split by children
        ('[",,,,,", "a,b", ","]', 3),  # commas inside strings never count
        ('{"a,b,c,d":[1,2],"e":{"f":1,"g":2}}', 2),
    ],
)
def test_items_limit_is_exact(doc: str, items: int) -> None:
    assert zjson.parse(doc, _with(max_items=items)) == json.loads(doc)
    with pytest.raises(TooManyItems) as caught:
        zjson.parse(doc, _with(max_items=items - 1))
    assert caught.value.limit == items - 1
    assert caught.value.observed == items


def test_items_are_per_collection_not_per_document() -> None:
    doc = json.dumps([list(range(50)) for _ in range(50)])
    assert zjson.parse(doc, _with(max_items=50)) == json.loads(doc)
    with pytest.raises(TooManyItems):
        zjson.parse(doc, _with(max_items=49))


# --- malformed input ----------------------------------------------------------------------

MALFORMED: list[str | bytes] = [
    "",
    "   ",
    "[1,2",
    '{"a":1',
    '"abc',
    "[1,]",
    '{"a":1,}',
    '{"a" 1}',
    "[1 2]",
    r'"\x41"',
    r'"\u12"',
    "NaN",
    "[Infinity]",
    '{"a":-Infinity}',
    "[1] x",
    "1 2",
    "nul",
    "tru",
    "'single'",
    "[01]",
    "1.",
    ".5",
    '"a\tb"',  # raw control character inside a string
    "\ufeff[1]",
    b"\xff",
    b'["\xc3"]',
    b'"\xed\xa0\x80"',  # UTF-8 encoded surrogate
    r'"\ud800"',
    r'"\udc00"',
    r'"\ud83dx"',
    r'"\ud83d\ud83d"',
    '{"a":1,"a":2}',
    '{"a":1,"\\u0061":2}',
    "]",
    "[}",
]


@pytest.mark.parametrize("doc", MALFORMED)
def test_malformed_documents_are_malformed_json(doc: str | bytes) -> None:
    with pytest.raises(MalformedJson):
        zjson.parse(doc, ROOMY)
    with pytest.raises(MalformedJson):
        zjson.validate(doc, ROOMY)
    assert not zjson.is_valid(doc, ROOMY)


def test_malformed_error_carries_a_byte_offset() -> None:
    with pytest.raises(MalformedJson) as caught:
        zjson.parse('["é", 1,]', ROOMY)
    assert caught.value.offset == 9  # byte offset of "]": "é" is two bytes
    with pytest.raises(MalformedJson) as caught:
        zjson.parse(b'[1, "\xff"]', ROOMY)
    assert caught.value.offset == 5


def test_str_with_a_lone_surrogate_is_malformed() -> None:
    with pytest.raises(MalformedJson):
        zjson.parse('"\ud800"', ROOMY)


def test_other_input_types() -> None:
    assert zjson.parse(bytearray(b"[1]"), ROOMY) == [1]
    assert zjson.parse(memoryview(b"[1]"), ROOMY) == [1]
    with pytest.raises(TypeError):
        zjson.parse(123, ROOMY)  # type: ignore[arg-type]


# --- validate / validate_as / is_valid / parse(error=) ----------------------------------------


class BoundaryError(Exception):
    pass


def test_validate_accepts_and_returns_none() -> None:
    assert zjson.validate('{"a":[1,2.5,"x",true,null]}', ROOMY) is None
    assert zjson.is_valid(b'{"a":[1]}', ROOMY)


@pytest.mark.parametrize(
    ("doc", "limits", "named"),
    [
        ("[1,", ROOMY, MalformedJson),
        ("[1,2]", _with(max_items=1), TooManyItems),
        ("[[1]]", _with(max_depth=1), NestingTooDeep),
        ('"ab"', _with(max_value_bytes=1), ValueTooLarge),
        ("[1]", _with(max_document_bytes=2), DocumentTooLarge),
    ],
)
def test_validate_as_and_parse_map_to_the_callers_error(
    doc: str, limits: Limits, named: type[JsonError]
) -> None:
    with pytest.raises(named):
        zjson.validate(doc, limits)
    assert not zjson.is_valid(doc, limits)
    with pytest.raises(BoundaryError) as caught:
        zjson.validate_as(doc, limits, BoundaryError)
    assert isinstance(caught.value.__cause__, named)
    assert str(caught.value) == str(caught.value.__cause__)
    with pytest.raises(BoundaryError) as caught:
        zjson.parse(doc, limits, BoundaryError)
    assert isinstance(caught.value.__cause__, named)
    with pytest.raises(BoundaryError):
        zjson.parse_leaky(doc, limits, error=BoundaryError)


def test_validate_as_passes_valid_input() -> None:
    assert zjson.validate_as("[1]", ROOMY, BoundaryError) is None


def test_parse_leaky_is_parse() -> None:
    assert zjson.parse_leaky is zjson.parse


def test_limit_errors_share_a_base_and_pickle_with_attributes() -> None:
    with pytest.raises(JsonLimitExceeded) as caught:
        zjson.parse('"abc"', _with(max_value_bytes=2))
    clone = pickle.loads(pickle.dumps(caught.value))
    assert type(clone) is ValueTooLarge
    assert (clone.limit, clone.observed, clone.kind, clone.offset) == (2, 3, "string", 0)
    assert str(clone) == str(caught.value)
    assert zjson.ValidationError is JsonError


# --- dumps ---------------------------------------------------------------------------------


def test_dumps_is_compact_utf8_and_keeps_order() -> None:
    value = {"b": [1, 2.5, "é😀", None, True], "a": (1, {"x": "\n"})}
    assert zjson.dumps(value) == '{"b":[1,2.5,"é😀",null,true],"a":[1,{"x":"\\n"}]}'


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, {1, 2}, b"x", object(), [1j]])
def test_dumps_rejects_non_json_values(bad: Any) -> None:
    with pytest.raises(MalformedJson):
        zjson.dumps(bad)


def test_dumps_rejects_circular_values() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(MalformedJson):
        zjson.dumps(loop)


def test_dumps_accepts_read_only_mappings() -> None:
    from types import MappingProxyType

    assert zjson.dumps(MappingProxyType({"a": 1})) == '{"a":1}'


# --- properties ----------------------------------------------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda children: st.lists(children, max_size=6)
    | st.dictionaries(st.text(max_size=6), children, max_size=6),
    max_leaves=30,
)


def _measure(value: Any, depth: int = 0) -> tuple[int, int, int]:
    """(largest value bytes, depth, largest collection) of a value serialized by json.dumps."""
    if isinstance(value, str):
        return len(value.encode()), depth, 0
    if isinstance(value, bool) or value is None:
        return 0, depth, 0
    if isinstance(value, (int, float)):
        return len(json.dumps(value)), depth, 0
    children = list(value.items()) if isinstance(value, dict) else [(None, v) for v in value]
    size, deepest, items = 0, depth + 1, len(children)
    for key, child in children:
        if key is not None:
            size = max(size, len(key.encode()))
        c_size, c_depth, c_items = _measure(child, depth + 1)
        size, deepest, items = max(size, c_size), max(deepest, c_depth), max(items, c_items)
    return size, deepest, items


def _document(value: Any, ensure_ascii: bool, indent: int | None) -> bytes:
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent).encode()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=json_values, ensure_ascii=st.booleans(), indent=st.sampled_from([None, 1]))
def test_parse_agrees_with_json_loads_within_limits(
    value: Any, ensure_ascii: bool, indent: int | None
) -> None:
    data = _document(value, ensure_ascii, indent)
    size, depth, items = _measure(value)
    exact = Limits(len(data), max(size, 1), max(depth, 1), max(items, 1))
    assert zjson.parse(data, exact) == json.loads(data)
    assert zjson.parse(data.decode(), exact) == json.loads(data)
    assert zjson.is_valid(data, exact)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    value=json_values,
    ensure_ascii=st.booleans(),
    indent=st.sampled_from([None, 1]),
    squeeze=st.tuples(*[st.integers(min_value=0, max_value=2)] * 4),
)
def test_parse_never_returns_past_a_limit(
    value: Any, ensure_ascii: bool, indent: int | None, squeeze: tuple[int, int, int, int]
) -> None:
    data = _document(value, ensure_ascii, indent)
    size, depth, items = _measure(value)
    measured = (len(data), size, depth, items)
    bounds = [max(m - s, 1) for m, s in zip(measured, squeeze, strict=True)]
    limits = Limits(*bounds)
    over = [m > b for m, b in zip(measured, bounds, strict=True)]
    if over[0]:
        expected: tuple[type[JsonError], ...] = (DocumentTooLarge,)
    else:
        named = (ValueTooLarge, NestingTooDeep, TooManyItems)
        expected = tuple(error for error, hit in zip(named, over[1:], strict=True) if hit)
    if not expected:
        assert zjson.parse(data, limits) == json.loads(data)
        return
    with pytest.raises(expected):
        zjson.parse(data, limits)
    with pytest.raises(expected):
        zjson.validate(data, limits)


@settings(max_examples=150, deadline=None)
@given(
    kind=st.sampled_from(["depth", "items", "string", "number"]),
    n=st.integers(min_value=1, max_value=40),
    filler=st.text(alphabet=',[]{}"\\é ', max_size=8),
)
def test_documents_built_one_past_a_limit_raise_that_limit(kind: str, n: int, filler: str) -> None:
    if kind == "depth":
        doc = "[" * n + json.dumps(filler) + "]" * n
        limits, error = _with(max_depth=n - 1 if n > 1 else 1), NestingTooDeep
    elif kind == "items":
        doc = json.dumps([filler] * (n + 1))
        limits, error = _with(max_items=n), TooManyItems
    elif kind == "string":
        text = filler + "x" * (n + 1)
        doc = json.dumps({"k": text})
        limits, error = _with(max_value_bytes=len(text.encode()) - 1), ValueTooLarge
    else:
        doc = json.dumps({json.dumps(filler): [int("7" * (n + 1))]})
        limits, error = _with(max_value_bytes=n), ValueTooLarge
    if kind == "depth" and n == 1:
        assert zjson.parse(doc, limits) == json.loads(doc)
        return
    with pytest.raises(error):
        zjson.parse(doc, limits)
