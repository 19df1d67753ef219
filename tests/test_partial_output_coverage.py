"""repair_json and partial_check on the prefixes the main table leaves out: malformed strings,
numbers and literals, finished containers, references, scalar kinds and too-deep values."""

from __future__ import annotations

from typing import Any

import pytest

from zigai.output.partial import MAX_PARTIAL_DEPTH, partial_check, repair_json


@pytest.mark.parametrize(
    "text",
    ['"bad \\x escape"', '{"a": -x}', '{"a": 1.}', '{"a": nope}', '{"a": 1 "b": 2}',
     '[1 2]', '{"a": @}'],
)
def test_text_that_cannot_start_a_json_document_repairs_to_nothing(text: str) -> None:
    assert repair_json(text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": -', ({}, False)),
        ('{"a": nul', ({}, False)),  # a literal that may still grow is not there yet
        ('{"a": {}}', ({"a": {}}, True)),
        ('{"a": []}', ({"a": []}, True)),
        ('{"a": [{}, []]}', ({"a": [{}, []]}, True)),
        ('[{"k": true}, {"k": fal', ([{"k": True}, {}], False)),
    ],
)
def test_prefixes_repair_to_the_value_so_far(text: str, expected: tuple[Any, bool]) -> None:
    assert repair_json(text) == expected


ROOT = {
    "$defs": {"flag": {"type": "boolean"}},
    "type": "object",
    "properties": {
        "flag": {"$ref": "#/$defs/flag"},
        "self": {"$ref": "#"},
        "far": {"$ref": "https://example.com/other.json"},
        "nothing": {"type": "null"},
        "ratio": {"type": "number"},
        "either": {"type": ["string", "null"]},
        "never": False,
    },
    "additionalProperties": {"type": "integer"},
}


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ({"flag": True}, True),
        ({"flag": "yes"}, False),
        ({"self": {"flag": False}}, True),
        ({"self": {"flag": 1}}, False),
        ({"far": "anything"}, True),  # a reference outside the document is not checked early
        ({"nothing": None}, True),
        ({"nothing": 0}, False),
        ({"ratio": 0.5}, True),
        ({"ratio": True}, False),
        ({"either": None}, True),
        ({"either": 3}, False),
        ({"never": 1}, False),
        ({"extra": 4}, True),
        ({"extra": "four"}, False),
    ],
)
def test_partial_check_applies_types_references_and_additional_properties(value: Any, ok: bool) -> None:
    assert partial_check(value, ROOT) is ok


def test_a_value_nested_past_the_depth_bound_fails_the_check() -> None:
    schema: Any = {"type": "array", "items": {"$ref": "#"}}
    value: Any = []
    for _ in range(MAX_PARTIAL_DEPTH + 2):
        value = [value]
    assert partial_check(value, schema) is False
    shallow: Any = [[[]]]
    assert partial_check(shallow, schema) is True
