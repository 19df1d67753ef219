"""zigai.output.partial: JSON prefix repair and the monotonic partial schema check."""

from __future__ import annotations

import json

import pytest

from zigai.output.partial import (
    MAX_PARTIAL_CHARS,
    MAX_PARTIAL_DEPTH,
    partial_check,
    repair_json,
    strip_partial_fences,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": "hel', {"a": "hel"}),
        ('{"a": 1', {}),  # a trailing number may still grow
        ('{"a": 1,', {"a": 1}),
        ('{"a": 1.5, "b"', {"a": 1.5}),
        ('{"a": 1, "b":', {"a": 1}),
        ('{"a": tr', {}),
        ('{"a": true', {"a": True}),
        ('{"a": [1, 2', {"a": [1]}),
        ('{"a": [1, 2]', {"a": [1, 2]}),
        ('{"a": "x\\u00', {"a": "x"}),  # ends inside an escape
        ('{"a": "line\\', {"a": "line"}),
        ('{"a": "q\\"', {"a": 'q"'}),
        ('[1, {"b": nu', [1, {}]),
        ('{"a": -', {}),
        ('{"a": 1e', {}),
        ('"ab', "ab"),
        ("{", {}),
        ("[", []),
    ],
)
def test_repair_keeps_only_what_is_certain(text: str, value: object) -> None:
    assert repair_json(text) == (value, False)


def test_repair_reports_a_complete_document() -> None:
    assert repair_json('{"a": {"b": [1, "x", null]}}  ') == ({"a": {"b": [1, "x", None]}}, True)


@pytest.mark.parametrize("text", ["", "   ", "12", "-", "tru", '{]', '{"a" 1}', '{"a": 1} x', "{'a': 1}",
                                  '{"a": 01x}', '{"a":"b","a":"c"}', '{"a": "\\q"}'])
def test_repair_gives_nothing_for_unusable_text(text: str) -> None:
    assert repair_json(text) is None


def test_every_prefix_of_a_document_repairs_to_a_json_value() -> None:
    document = json.dumps({"name": "Ada \u00e9\u4e2d", "tags": ["x", "y"], "n": -12.5e3, "ok": False,
                           "nested": {"z": None, "list": [[1], {"k": "v"}]}})
    for end in range(1, len(document) + 1):
        repaired = repair_json(document[:end])
        if repaired is not None:
            json.dumps(repaired[0])  # always representable
    assert repair_json(document) == (json.loads(document), True)


def test_repair_is_bounded_in_depth_and_size() -> None:
    assert repair_json("[" * MAX_PARTIAL_DEPTH) is not None
    assert repair_json("[" * (MAX_PARTIAL_DEPTH + 2)) is None
    assert repair_json('"' + "a" * (MAX_PARTIAL_CHARS - 1)) is not None
    assert repair_json('"' + "a" * MAX_PARTIAL_CHARS) is None


SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 5, "minLength": 3},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2, "minItems": 2},
        "n": {"type": "integer", "maximum": 10},
        "kind": {"enum": ["a", "b"]},
        "ref": {"$ref": "#/$defs/point"},
    },
    "required": ["name", "tags"],
    "additionalProperties": False,
    "maxProperties": 4,
    "$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"}}}},
}


@pytest.mark.parametrize(
    "value",
    [{}, {"name": "A"}, {"tags": []}, {"n": 99}, {"kind": "zz"}, {"ref": {"x": 1}},
     {"name": "Ada", "tags": ["x", "y"], "n": 1, "kind": "a"}],
)
def test_deferred_assertions_do_not_reject_a_partial(value: object) -> None:
    # required, minLength, minItems, maximum and enum can still change: not checked.
    assert partial_check(value, SCHEMA)


@pytest.mark.parametrize(
    "value",
    [{"name": 1}, {"extra": 1}, {"name": "Adalovelace"}, {"tags": ["a", "b", "c"]}, {"tags": [1]},
     {"ref": {"x": "no"}}, {"name": "a", "tags": [], "n": 1, "kind": "a", "ref": {}}, [], "x"],
)
def test_monotonic_assertions_reject_a_partial(value: object) -> None:
    assert not partial_check(value, SCHEMA)


def test_max_bounds_are_inclusive() -> None:
    assert partial_check({"name": "Adalo"}, SCHEMA)
    assert not partial_check({"name": "Adalov"}, SCHEMA)


def test_any_of_needs_one_arm_and_all_of_every_arm() -> None:
    schema = {"anyOf": [{"type": "string"}, {"type": "object", "additionalProperties": False}]}
    assert partial_check("x", schema)
    assert partial_check({}, schema)
    assert not partial_check({"a": 1}, schema)
    both = {"allOf": [{"type": "object"}, {"properties": {"a": {"type": "string"}}}]}
    assert partial_check({"a": "x"}, both)
    assert not partial_check({"a": 1}, both)


def test_prefix_items_and_integer_typing() -> None:
    schema = {"type": "array", "prefixItems": [{"type": "integer"}], "items": {"type": "string"}}
    assert partial_check([1, "a"], schema)
    assert partial_check([2.0], schema)
    assert not partial_check(["a"], schema)
    assert not partial_check([1, 2], schema)
    assert not partial_check([True], schema)


def test_prompted_fences_are_stripped_while_streaming() -> None:
    assert strip_partial_fences('```json\n{"a": 1') == '{"a": 1'
    assert strip_partial_fences('```json\n{"a": 1}\n```') == '{"a": 1}\n'
    assert strip_partial_fences("```js") == ""
    assert strip_partial_fences('{"a"') == '{"a"'
