"""The flat-object-schema shortcut never accepts what the Draft 2020-12 engine rejects."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from zigai.json_schema import Validator
from zigai.json_schema._flat import compile_flat

_TYPES = ["integer", "number", "string", "boolean", "null", "array", "object"]
_NAMES = ["a", "b", "c"]

_type = st.one_of(st.sampled_from(_TYPES),
                  st.lists(st.sampled_from(_TYPES), min_size=1, max_size=3, unique=True))
_annotations = st.fixed_dictionaries({}, optional={
    "description": st.just("d"), "title": st.just("t"), "default": st.integers(),
    "format": st.sampled_from(["date-time", "email"]), "examples": st.just([1])})


@st.composite
def _leaf(draw: Any, depth: int = 0) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return True
    schema: dict[str, Any] = {"type": draw(_type), **draw(_annotations)}
    if depth < 2 and draw(st.booleans()):
        schema["items"] = draw(_leaf(depth + 1))
    return schema


@st.composite
def _schema(draw: Any) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(_NAMES), unique=True))
    schema: dict[str, Any] = {"type": "object",
                              "properties": {name: draw(_leaf()) for name in names}}
    schema["required"] = draw(st.lists(st.sampled_from(_NAMES), unique=True, max_size=2))
    extra = draw(st.sampled_from([None, True, False]))
    if extra is not None:
        schema["additionalProperties"] = extra
    return schema


_scalar = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.0, 1.0, 1.5, -2.0, 1e300]),
                    st.text(max_size=3))
_value = st.recursive(_scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(_NAMES), inner, max_size=2)),
    max_leaves=6)
_instance = st.one_of(st.dictionaries(st.sampled_from(_NAMES + ["z"]), _value, max_size=4), _value)


@settings(max_examples=400, deadline=None)
@given(_schema(), _instance)
def test_flat_shortcut_agrees_with_the_engine(schema: dict[str, Any], instance: Any) -> None:
    flat = compile_flat(schema)
    assert flat is not None  # the generated vocabulary is exactly the shortcut's
    engine_says = Draft202012Validator(schema).is_valid(instance)
    if flat(instance):
        assert engine_says
    validator = Validator(schema)
    assert validator.is_valid(instance) is engine_says
    assert (validator.errors(instance) == []) is engine_says


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"a": {"type": "integer", "minimum": 0}}},
    {"type": "object", "properties": {"a": {"enum": [1, 2]}}},
    {"type": "object", "properties": {"a": {"type": "object", "properties": {}}}},
    {"type": "object", "properties": {"a": {}}},
    {"type": "object", "properties": {"a": False}},
    {"type": "object", "additionalProperties": {"type": "string"}},
    {"type": "object", "$defs": {}},
    {"type": ["object"]},
    {"properties": {}},
    {"type": "object", "required": "a"},
    {"type": "object", "properties": {"a": {"type": "decimal"}}},
    {"type": "object", "properties": {"a": {"type": "array", "items": {"enum": [1]}}}},
    True,
])
def test_schemas_outside_the_flat_vocabulary_get_no_shortcut(schema: Any) -> None:
    assert compile_flat(schema) is None


def test_integral_floats_are_integers_and_booleans_are_not_numbers() -> None:
    flat = compile_flat({"type": "object", "properties": {"n": {"type": "integer"},
                                                         "x": {"type": "number"}},
                         "required": ["n"], "additionalProperties": False})
    assert flat is not None
    assert flat({"n": 1.0, "x": 2})
    assert not flat({"n": 1.5})
    assert not flat({"n": True})
    assert not flat({"n": 1, "x": False})
    assert not flat({"x": 1})
    assert not flat({"n": 1, "y": 1})
    errors = Validator({"type": "object", "properties": {"n": {"type": "integer"}},
                        "required": ["n"]}).errors({"n": "1"})
    assert errors == [("$.n", "'1' is not of type 'integer'")]
