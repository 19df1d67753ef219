"""generate_from_schema on the schema shapes the main table leaves out: typed enums, boolean
subschemas inside allOf, merged multipleOf/uniqueItems/required, null-ish branches, both kinds
of numeric bound at once, and references it must refuse.  Every generated value is checked
with the real jsonschema validator."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from zigai.testing import SchemaGenerationFailed, generate_from_schema

SATISFIABLE: list[Any] = [
    {"type": ["null", "boolean", "array", "object"], "enum": [None, True, [1], {"a": 1}, 2.0, "s"]},
    {"type": "integer", "enum": [1.5, 2.0, "2"]},
    {"type": "number", "enum": [True, "x", 0.25]},
    {"allOf": [{"properties": {"a": True}}, {"properties": {"a": {"type": "integer"}}}],
     "type": "object", "required": ["a"]},
    {"allOf": [{"properties": {"a": {"type": "integer"}}}, {"properties": {"a": True}}],
     "type": "object", "required": ["a"]},
    {"allOf": [{"type": "object", "properties": {"a": False}}, {"properties": {"a": {"type": "integer"}}}]},
    {"allOf": [True, {"type": "integer", "minimum": 3}]},
    {"allOf": [{"type": "string", "minLength": 2}, True]},
    {"allOf": [{"type": "array", "items": {"enum": [1, 2, 3]}, "minItems": 2}, {"uniqueItems": True}]},
    {"allOf": [{"type": "object", "required": ["a"]}, {"required": ["a", "b"]}]},
    {"allOf": [{"type": "number", "multipleOf": 0.5}, {"multipleOf": 0.2}], "minimum": 1},
    {"anyOf": [{"type": ["null"]}, {"type": "integer"}]},
    {"anyOf": [{"const": None}, {"type": "string"}]},
    {"type": "number", "minimum": 1, "exclusiveMinimum": 2, "maximum": 9, "exclusiveMaximum": 8},
    {"type": "number", "minimum": 3, "exclusiveMinimum": 1, "maximum": 4, "exclusiveMaximum": 10},
    {"type": "integer", "minimum": 1, "exclusiveMinimum": 5, "maximum": 9, "exclusiveMaximum": 7},
    {"type": "number", "minimum": 500},
    {"type": "number", "maximum": -40},
    {"type": "number", "exclusiveMaximum": -40.5},
    {"if": {"type": "string"}, "then": {"minLength": 3}, "else": False, "type": "string"},
    {"if": {"type": "integer"}, "then": False, "type": ["integer", "string"]},
]


@pytest.mark.parametrize("schema", SATISFIABLE, ids=[str(i) for i in range(len(SATISFIABLE))])
def test_generated_values_validate(schema: Any) -> None:
    validator = Draft202012Validator(schema)
    for seed in (0, 3, 11):
        value = generate_from_schema(schema, seed)
        errors = [error.message for error in validator.iter_errors(value)]
        assert errors == [], (value, errors)


UNSATISFIABLE: list[Any] = [
    {"allOf": [{"type": "integer"}, False]},
    {"type": "integer", "enum": ["a", 1.5]},
    {"type": "number", "minimum": 2, "maximum": 1},
]


@pytest.mark.parametrize("schema", UNSATISFIABLE, ids=[str(i) for i in range(len(UNSATISFIABLE))])
def test_unsatisfiable_schemas_fail_with_the_named_error(schema: Any) -> None:
    with pytest.raises(SchemaGenerationFailed):
        generate_from_schema(schema, 0)


def test_a_reference_to_a_missing_definition_is_refused_before_generating() -> None:
    from zigai.json_schema import InvalidJsonSchema

    with pytest.raises(InvalidJsonSchema, match="not defined"):
        generate_from_schema({"$ref": "#/$defs/missing", "$defs": {}}, 0)


def test_an_optional_property_whose_schema_is_false_is_left_out() -> None:
    # regression: the first attempts filled every optional property, so a forbidden one
    # (schema false) made every attempt fail on a satisfiable schema
    schema = {"type": "object", "properties": {"secret": False, "n": {"type": "integer"}}}
    for seed in range(5):
        value = generate_from_schema(schema, seed)
        assert "secret" not in value and isinstance(value["n"], int)
