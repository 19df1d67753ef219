"""zigai.testing.generate_from_schema: folding allOf/$ref/if, type inference, numeric bounds, failures."""

from __future__ import annotations

from fractions import Fraction

import pytest

from zigai.json_schema import Validator
from zigai.testing import SchemaGenerationFailed, generate_from_schema


def _valid(schema: object, seed: int = 0) -> object:
    value = generate_from_schema(schema, seed)
    assert Validator(schema).is_valid(value), (schema, value)
    return value


@pytest.mark.parametrize(("schema", "check"), [
    # type intersection: number ∩ integer is integer
    ({"allOf": [{"type": ["number", "string"]}, {"type": "integer"}]}, lambda v: type(v) is int),
    ({"allOf": [{"type": "integer"}, {"type": ["number", "null"]}]}, lambda v: type(v) is int),
    # bounds tighten to the stricter of both members
    ({"allOf": [{"type": "integer", "minimum": 3, "maximum": 10}, {"minimum": 5, "maximum": 5}]},
     lambda v: v == 5),
    ({"allOf": [{"type": "string", "minLength": 2}, {"maxLength": 2}]}, lambda v: len(v) == 2),
    # enum intersection keeps JSON equality (1 == 1.0) but true is not 1
    ({"allOf": [{"enum": [1, "a", True]}, {"enum": [1.0, "b"]}]}, lambda v: v == 1 and v is not True),
    ({"allOf": [{"const": {"a": [1.0]}}, {"const": {"a": [1]}}]}, lambda v: v == {"a": [1.0]}),
    # multipleOf members combine to their least common multiple on the decimal grid
    ({"allOf": [{"type": "number", "multipleOf": 0.3}, {"multipleOf": 0.2}], "minimum": 1},
     lambda v: Fraction(repr(v)) % Fraction("0.6") == 0 and v >= 1),
    # required and properties unite; both property subschemas hold
    ({"allOf": [{"type": "object", "properties": {"a": {"type": "integer", "minimum": 2}},
                 "required": ["a"]},
                {"properties": {"a": {"maximum": 2}, "b": {"type": "boolean"}}, "required": ["b", "a"]}]},
     lambda v: v["a"] == 2 and isinstance(v["b"], bool)),
    ({"allOf": [{"type": "array", "items": {"type": "integer"}, "minItems": 2},
                {"items": {"minimum": 7, "maximum": 7}, "uniqueItems": False}]},
     lambda v: len(v) >= 2 and set(v) == {7}),
    ({"allOf": [{"allOf": [{"type": "integer"}]}, {"allOf": [{"minimum": 4, "maximum": 4}]}]},
     lambda v: v == 4),
    # keyword hints choose the type when "type" is absent
    ({"properties": {"x": {"const": 1}}, "required": ["x"]}, lambda v: v == {"x": 1}),
    ({"minItems": 1, "items": {"const": "i"}}, lambda v: v[0] == "i"),
    ({"minLength": 3}, lambda v: isinstance(v, str) and len(v) >= 3),
    ({"minimum": 10, "maximum": 10}, lambda v: v == 10),
    # $ref with JSON-pointer escapes in the definition name
    ({"$defs": {"a/b~c": {"type": "integer", "minimum": 9, "maximum": 9}}, "$ref": "#/$defs/a~1b~0c"},
     lambda v: v == 9),
    # numeric bounds: exclusive bounds are honoured at the exact limit
    ({"type": "integer", "exclusiveMinimum": 4, "exclusiveMaximum": 6}, lambda v: v == 5),
    ({"type": "integer", "minimum": 4, "exclusiveMinimum": 5, "maximum": 6}, lambda v: v == 6),
    ({"type": "integer", "maximum": 6, "exclusiveMaximum": 5, "minimum": 4}, lambda v: v == 4),
    ({"type": "number", "exclusiveMinimum": 0.1, "exclusiveMaximum": 0.2}, lambda v: 0.1 < v < 0.2),
    ({"type": "number", "multipleOf": 0.25, "exclusiveMinimum": 0, "exclusiveMaximum": 0.5},
     lambda v: v == 0.25),
    ({"type": "number", "minimum": 1000.5}, lambda v: v >= 1000.5),
    ({"type": "number", "maximum": -1000.5}, lambda v: v <= -1000.5),
    # propertyNames constrain the generated extra keys
    ({"type": "object", "propertyNames": {"enum": ["k1", "k2", "k3"]}, "minProperties": 2},
     lambda v: len(v) >= 2 and all(k[0] == "k" for k in v)),
])
def test_generated_value_satisfies_the_folded_schema(schema: dict, check: object) -> None:
    for seed in (0, 1, 7):
        value = _valid(schema, seed)
        assert check(value), (schema, seed, value)  # type: ignore[operator]
    assert generate_from_schema(schema, 3) == generate_from_schema(schema, 3)  # deterministic


@pytest.mark.parametrize("schema", [
    {"allOf": [{"type": "string"}, {"type": "integer"}]},
    {"allOf": [{"enum": [1, 2]}, {"enum": [3]}]},
    {"allOf": [{"const": 1}, {"const": True}]},
    {"allOf": [{"type": "integer"}, False]},
    {"type": "integer", "minimum": 5, "maximum": 4},
    {"type": "integer", "exclusiveMinimum": 4, "exclusiveMaximum": 5},
    {"type": "number", "multipleOf": 0.5, "exclusiveMinimum": 1, "exclusiveMaximum": 1.5},
    {"type": "number", "minimum": 1.5, "exclusiveMaximum": 1.5},
    {"anyOf": [{"type": "string"}, {"type": "null"}], "type": "integer"},
    {"type": "array", "items": False, "minItems": 1},
    {"if": {"type": "integer"}, "then": False, "else": False},
])
def test_unsatisfiable_schemas_raise_schema_generation_failed(schema: dict) -> None:
    with pytest.raises(SchemaGenerationFailed) as info:
        generate_from_schema(schema, max_attempts=3)
    assert info.value.attempts == 3


def test_if_then_else_picks_one_consistent_path() -> None:
    schema = {"type": "integer", "minimum": 0, "maximum": 9,
              "if": {"minimum": 5}, "then": {"multipleOf": 7}, "else": {"maximum": 1}}
    values = {generate_from_schema(schema, seed) for seed in range(8)}
    assert values and values <= {0, 1, 7}
