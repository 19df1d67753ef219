"""zigai.json_schema: the fail-closed Draft 2020-12 subset, its preflight and its validator."""

from __future__ import annotations

import importlib.util
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from zigai import json_schema
from zigai.errors import JsonSchemaError
from zigai.json_schema import (
    InvalidJsonSchema,
    OutputSchemaValidationFailed,
    UnsupportedJsonSchema,
    Validator,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def test_supported_dialect_is_draft_2020_12() -> None:
    assert json_schema.supported_dialect == DIALECT


def test_errors_derive_from_the_json_schema_base() -> None:
    for cls in (InvalidJsonSchema, UnsupportedJsonSchema, OutputSchemaValidationFailed):
        assert issubclass(cls, JsonSchemaError)


# --- every supported keyword: accepted, passes one instance, fails another -----------------

SUPPORTED: list[tuple[str, dict[str, Any], Any, Any]] = [
    ("type", {"type": "integer"}, 3, "3"),
    ("type list", {"type": ["string", "null"]}, None, 1),
    ("enum", {"enum": ["a", 1, None]}, 1, "b"),
    ("const", {"const": {"a": [1, 2]}}, {"a": [1, 2]}, {"a": [2, 1]}),
    ("allOf", {"allOf": [{"minimum": 1}, {"maximum": 3}]}, 2, 4),
    ("anyOf", {"anyOf": [{"type": "string"}, {"minimum": 10}]}, 11, 9),
    ("oneOf", {"oneOf": [{"multipleOf": 2}, {"multipleOf": 3}]}, 4, 6),
    ("not", {"not": {"type": "string"}}, 1, "x"),
    ("if/then/else", {"if": {"type": "string"}, "then": {"minLength": 2}, "else": {"minimum": 0}},
     "ab", -1),
    ("$defs/$ref", {"$defs": {"n": {"type": "number"}}, "$ref": "#/$defs/n"}, 1.5, "x"),
    ("properties", {"properties": {"a": {"type": "string"}}}, {"a": "x", "b": 1}, {"a": 1}),
    ("required", {"required": ["a"]}, {"a": None}, {"b": 1}),
    ("additionalProperties", {"properties": {"a": True}, "additionalProperties": False},
     {"a": 1}, {"a": 1, "b": 2}),
    ("propertyNames", {"propertyNames": {"maxLength": 2}}, {"ab": 1}, {"abc": 1}),
    ("dependentRequired", {"dependentRequired": {"card": ["cvv"]}},
     {"card": 1, "cvv": 2}, {"card": 1}),
    ("minProperties", {"minProperties": 1}, {"a": 1}, {}),
    ("maxProperties", {"maxProperties": 1}, {"a": 1}, {"a": 1, "b": 2}),
    ("items", {"items": {"type": "integer"}}, [1, 2], [1, "2"]),
    ("prefixItems", {"prefixItems": [{"type": "string"}], "items": False}, ["a"], ["a", 1]),
    ("contains", {"contains": {"const": 5}}, [1, 5], [1, 2]),
    ("minContains", {"contains": {"const": 5}, "minContains": 2}, [5, 5], [5, 1]),
    ("maxContains", {"contains": {"const": 5}, "maxContains": 1}, [5, 1], [5, 5]),
    ("minItems", {"minItems": 2}, [1, 2], [1]),
    ("maxItems", {"maxItems": 1}, [1], [1, 2]),
    ("uniqueItems", {"uniqueItems": True}, [1, "1", True], [1, 1.0]),
    ("minLength", {"minLength": 2}, "ab", "a"),
    ("maxLength", {"maxLength": 2}, "ab", "abc"),
    ("minimum", {"minimum": 1}, 1, 0.999),
    ("maximum", {"maximum": 1}, 1, 1.001),
    ("exclusiveMinimum", {"exclusiveMinimum": 1}, 1.5, 1),
    ("exclusiveMaximum", {"exclusiveMaximum": 1}, 0.5, 1),
    ("multipleOf", {"multipleOf": 0.5}, 2.5, 2.25),
]


@pytest.mark.parametrize(("name", "schema", "good", "bad"), SUPPORTED, ids=[s[0] for s in SUPPORTED])
def test_supported_keyword_accepts_and_asserts(name: str, schema: dict[str, Any], good: Any,
                                                bad: Any) -> None:
    json_schema.validate_schema(schema)
    validator = Validator({"$schema": DIALECT, **schema})
    assert validator.is_valid(good)
    assert not validator.is_valid(bad)
    validator.validate(good)
    with pytest.raises(OutputSchemaValidationFailed):
        validator.validate(bad)


def test_annotations_are_accepted_and_never_assert() -> None:
    schema = {
        "title": "T", "description": "D", "default": "not an int", "examples": [[], {}],
        "format": "email", "readOnly": True, "writeOnly": False, "deprecated": True,
        "$comment": "c", "type": "string",
    }
    json_schema.validate_schema(schema)
    assert Validator(schema).is_valid("definitely not an email")
    assert Validator({"format": "date-time"}).is_valid("yesterday")


def test_boolean_schemas() -> None:
    assert Validator(True).is_valid({"anything": [1]})
    assert not Validator(False).is_valid(None)
    assert Validator({"properties": {"x": False}}).is_valid({"y": 1})
    assert not Validator({"properties": {"x": False}}).is_valid({"x": 1})


def test_root_id_is_an_annotation_when_refs_stay_local() -> None:
    validator = Validator({
        "$id": "urn:example:schema", "$defs": {"s": {"type": "string"}},
        "properties": {"a": {"$ref": "#/$defs/s"}},
    })
    assert validator.is_valid({"a": "x"})
    assert not validator.is_valid({"a": 1})


# --- draft 2020-12 semantics that are easy to get wrong ----------------------------------

def test_integral_floats_are_integers_and_booleans_are_not_numbers() -> None:
    integer = Validator({"type": "integer"})
    assert integer.is_valid(1.0)
    assert not integer.is_valid(1.5)
    assert not integer.is_valid(True)
    assert not Validator({"type": "number"}).is_valid(False)
    assert Validator({"maxLength": 2.0}).is_valid("ab")  # 2.0 is a valid count


def test_string_lengths_count_code_points() -> None:
    validator = Validator({"minLength": 2, "maxLength": 2})
    assert validator.is_valid("\U0001F600\U0001F600")  # 8 UTF-8 bytes, 4 UTF-16 units
    assert validator.is_valid("e\u0301")  # decomposed é: two code points
    assert not validator.is_valid("\u00e9")  # composed é: one code point


def test_enum_and_const_distinguish_booleans_from_numbers() -> None:
    assert Validator({"const": 1}).is_valid(1.0)
    assert not Validator({"const": 1}).is_valid(True)
    assert not Validator({"enum": [False]}).is_valid(0)
    assert not Validator({"const": [0]}).is_valid([False])


# --- unsupported vocabulary fails closed --------------------------------------------------

UNSUPPORTED: list[tuple[str, Any]] = [
    ("pattern", {"pattern": "^a"}),
    ("patternProperties", {"patternProperties": {"^a": {}}}),
    ("$dynamicRef", {"$dynamicRef": "#meta"}),
    ("$dynamicAnchor", {"$dynamicAnchor": "meta"}),
    ("unevaluatedItems", {"unevaluatedItems": False}),
    ("unevaluatedProperties", {"unevaluatedProperties": False}),
    ("$anchor", {"$anchor": "here"}),
    ("dependentSchemas", {"dependentSchemas": {"a": {"required": ["b"]}}}),
    ("contentMediaType", {"contentMediaType": "application/json"}),
    ("contentEncoding", {"contentEncoding": "base64"}),
    ("$vocabulary", {"$vocabulary": {}}),
    ("definitions", {"definitions": {}}),
    ("unknown keyword", {"type": "string", "maxLenght": 3}),
    ("unknown nested keyword", {"properties": {"a": {"nullable": True}}}),
    ("other dialect", {"$schema": "http://json-schema.org/draft-07/schema#"}),
    ("nested $schema", {"properties": {"a": {"$schema": DIALECT}}}),
    ("nested $id", {"properties": {"a": {"$id": "http://example.com/a"}}}),
    ("$id with empty fragment", {"$id": "http://example.com/a#"}),
    ("remote ref", {"$ref": "https://example.com/schema.json"}),
    ("relative ref", {"$ref": "other.json#/$defs/a"}),
    ("anchor ref", {"$ref": "#here"}),
    ("general pointer ref", {"properties": {"a": {}, "b": {"$ref": "#/properties/a"}}}),
    ("two-segment defs ref", {"$defs": {"a": {"$defs": {"b": {}}}}, "$ref": "#/$defs/a/$defs/b"}),
]


@pytest.mark.parametrize(("name", "schema"), UNSUPPORTED, ids=[u[0] for u in UNSUPPORTED])
def test_unsupported_vocabulary_is_rejected(name: str, schema: Any) -> None:
    with pytest.raises(UnsupportedJsonSchema):
        json_schema.validate_schema(schema)
    with pytest.raises(UnsupportedJsonSchema):
        Validator(schema)


def test_every_listed_unsupported_keyword_is_rejected() -> None:
    for keyword in json_schema.UNSUPPORTED_KEYWORDS:
        with pytest.raises(UnsupportedJsonSchema) as caught:
            json_schema.validate_schema({"properties": {"x": {keyword: {}}}})
        assert caught.value.keyword == keyword
        assert caught.value.location == "#/properties/x"


# --- malformed supported vocabulary -------------------------------------------------------

INVALID: list[tuple[str, Any]] = [
    ("schema is a number", 3),
    ("subschema is a string", {"items": "integer"}),
    ("minimum is a string", {"minimum": "x"}),
    ("minimum is a boolean", {"minimum": True}),
    ("required holds a number", {"required": [1]}),
    ("required repeats", {"required": ["a", "a"]}),
    ("unknown type", {"type": "nope"}),
    ("empty type list", {"type": []}),
    ("repeated type", {"type": ["string", "string"]}),
    ("negative count", {"minLength": -1}),
    ("fractional count", {"maxItems": 1.5}),
    ("zero multipleOf", {"multipleOf": 0}),
    ("enum not an array", {"enum": "a"}),
    ("empty allOf", {"allOf": []}),
    ("items as array (draft-07 form)", {"items": [{}]}),
    ("properties not an object", {"properties": []}),
    ("dependentRequired value", {"dependentRequired": {"a": "b"}}),
    ("uniqueItems not boolean", {"uniqueItems": 1}),
    ("title not a string", {"title": 1}),
    ("examples not an array", {"examples": 1}),
    ("$ref not a string", {"$ref": 1}),
    ("$ref with a space", {"$ref": "#/$defs/a b", "$defs": {"a b": {}}}),
    ("$ref with bad escape", {"$ref": "#/$defs/a~2", "$defs": {"a~2": {}}}),
    ("$ref with bad percent", {"$ref": "#/$defs/a%zz"}),
    ("$ref percent-encoding invalid UTF-8", {"$ref": "#/$defs/%ff"}),
    ("dependentRequired not an object", {"dependentRequired": ["a"]}),
    ("$id not a string", {"$id": 5}),
    ("$ref target missing", {"$ref": "#/$defs/missing"}),
    ("$ref target in nested $defs only", {"$defs": {"a": {"$defs": {"b": {}}}}, "$ref": "#/$defs/b"}),
    ("$id with fragment", {"$id": "http://example.com/s#frag"}),
    ("$schema not a string", {"$schema": 7}),
    ("root self reference", {"$ref": "#"}),
    ("definition cycle", {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"anyOf": [{"$ref": "#/$defs/a"}]}}}),
    ("non-finite number", {"maximum": float("inf")}),
    ("non-JSON value", {"const": {1, 2}}),
    ("non-string key", {"properties": {1: {}}}),
    ("tuple instead of array", {"required": ("a",)}),
]


@pytest.mark.parametrize(("name", "schema"), INVALID, ids=[i[0] for i in INVALID])
def test_malformed_vocabulary_is_invalid(name: str, schema: Any) -> None:
    with pytest.raises(InvalidJsonSchema):
        json_schema.validate_schema(schema)


def test_invalid_error_names_the_location() -> None:
    with pytest.raises(InvalidJsonSchema) as caught:
        json_schema.validate_schema({"properties": {"a/b": {"minimum": "x"}}})
    assert caught.value.location == "#/properties/a~1b/minimum"
    assert str(caught.value) == "#/properties/a~1b/minimum: must be a number"


def test_schema_depth_is_bounded_at_the_json_schema_profile() -> None:
    def nested(levels: int) -> dict[str, Any]:
        schema: dict[str, Any] = {}
        for _ in range(levels - 1):
            schema = {"not": schema}
        return schema

    json_schema.validate_schema(nested(64))  # 64 nested objects: exactly the limit
    with pytest.raises(InvalidJsonSchema, match="deeper than 64"):
        json_schema.validate_schema(nested(65))


# --- references ----------------------------------------------------------------------------

def test_root_reference_recurses_through_the_instance() -> None:
    tree = Validator({"properties": {"child": {"$ref": "#"}}, "additionalProperties": False})
    assert tree.is_valid({"child": {"child": {}}})
    assert not tree.is_valid({"child": {"child": {"x": 1}}})


def test_defs_references_resolve_with_pointer_and_percent_escapes() -> None:
    validator = Validator({
        "$defs": {"a~b": {"type": "integer"}, "c/d": {"type": "string"}, "e%f": {"type": "null"},
                  "": {"type": "boolean"}},
        "prefixItems": [{"$ref": "#/$defs/a~0b"}, {"$ref": "#/$defs/c~1d"},
                        {"$ref": "#/$defs/e%25f"}, {"$ref": "#/$defs/"}],
    })
    assert validator.is_valid([1, "x", None, True])
    assert not validator.is_valid([1, "x", None, 0])
    assert not validator.is_valid(["1", "x", None, True])


def test_mutually_recursive_definitions_consume_the_instance() -> None:
    validator = Validator({
        "$defs": {
            "tree": {"type": "object", "properties": {"kids": {"$ref": "#/$defs/forest"}}},
            "forest": {"type": "array", "items": {"$ref": "#/$defs/tree"}},
        },
        "$ref": "#/$defs/tree",
    })
    assert validator.is_valid({"kids": [{"kids": []}, {}]})
    assert not validator.is_valid({"kids": [{"kids": [1]}]})


def test_reference_registry_refuses_any_retrieval() -> None:
    from referencing.exceptions import Unresolvable

    engine, registry = json_schema._load_engine()
    resolver = registry.resolver()
    with pytest.raises(Unresolvable):
        resolver.lookup("http://127.0.0.1:9/never.json")


# --- the validator -------------------------------------------------------------------------

def test_validation_failure_lists_json_paths_and_messages() -> None:
    validator = Validator({
        "type": "object",
        "properties": {"age": {"minimum": 0}, "tags": {"items": {"type": "string"}},
                       "a b": {"type": "null"}},
        "required": ["id"],
    })
    with pytest.raises(OutputSchemaValidationFailed) as caught:
        validator.validate({"age": -1, "tags": ["x", 2], "a b": 0})
    assert sorted(caught.value.errors) == [
        ("$", "'id' is a required property"),
        ("$.age", "-1 is less than the minimum of 0"),
        ("$.tags[1]", "2 is not of type 'string'"),
        ('$["a b"]', "0 is not of type 'null'"),
    ]
    assert str(caught.value).startswith("value does not match the JSON Schema at ")
    assert str(caught.value).endswith("(and 3 more)")


def test_validation_error_pickles_with_its_errors() -> None:
    with pytest.raises(OutputSchemaValidationFailed) as caught:
        Validator({"type": "string"}).validate(1)
    clone = pickle.loads(pickle.dumps(caught.value))
    assert clone.errors == [("$", "1 is not of type 'string'")]
    assert str(clone) == "value does not match the JSON Schema at $: 1 is not of type 'string'"


def test_reported_errors_and_messages_are_bounded() -> None:
    validator = Validator({"items": {"type": "integer"}})
    with pytest.raises(OutputSchemaValidationFailed) as caught:
        validator.validate(["x" * 1000] * 100)
    assert len(caught.value.errors) == json_schema.MAX_REPORTED_ERRORS
    assert all(len(message) <= 240 for _, message in caught.value.errors)


def test_validator_owns_a_copy_of_the_schema() -> None:
    schema: dict[str, Any] = {"properties": {"a": {"type": "integer"}}}
    validator = Validator(schema)
    schema["properties"]["a"]["type"] = "string"
    assert validator.is_valid({"a": 1})
    copy = validator.schema
    copy["properties"] = {}
    assert validator.schema == {"properties": {"a": {"type": "integer"}}}


def test_convenience_functions_reuse_one_compiled_validator() -> None:
    schema = {"type": "object", "required": ["zz_cache_probe"]}
    json_schema.validate({"zz_cache_probe": 1}, schema)
    first = json_schema._cached(schema)
    assert json_schema._cached({"required": ["zz_cache_probe"], "type": "object"}) is first
    assert json_schema.is_valid({}, schema) is False
    with pytest.raises(OutputSchemaValidationFailed):
        json_schema.validate({}, schema)
    with pytest.raises(UnsupportedJsonSchema):
        json_schema.validate({}, {"pattern": "x"})
    with pytest.raises(InvalidJsonSchema):
        json_schema.validate({}, {"const": object()})
    # the cached list form must not admit the tuple form preflight rejects
    with pytest.raises(InvalidJsonSchema):
        json_schema.validate({"zz_cache_probe": 1}, {"type": "object", "required": ("zz_cache_probe",)})


def test_too_deep_instance_fails_closed() -> None:
    validator = Validator({"items": {"$ref": "#"}})
    deep: list[Any] = []
    for _ in range(2000):
        deep = [deep]
    assert validator.is_valid([[[]]])
    assert not validator.is_valid(deep)
    with pytest.raises(OutputSchemaValidationFailed, match="too deeply"):
        validator.validate(deep)


def test_import_does_not_load_jsonschema() -> None:
    code = (
        "import sys, zigai.json_schema as s; s.validate_schema({'type': 'string'}); "
        "print('jsonschema' in sys.modules, 'referencing' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


# --- bounded parsing under the JSON Schema profile ----------------------------------------

def _document_of_size(total: int) -> bytes:
    """A schema document of exactly ``total`` bytes whose strings stay under 512 KiB."""
    chunk = 500 * 1024
    head, tail = b'{"examples":[', b"]}"
    budget = total - len(head) - len(tail)
    strings = []
    while budget > 0:
        size = min(chunk, budget - 2)
        if budget - (size + 2) in (1, 2):  # leave room for at least '"",' next time
            size -= 3
        strings.append(b'"' + b"a" * size + b'"')
        budget -= size + 2 + 1
    body = b",".join(strings)
    document = head + body + tail
    assert len(document) == total
    return document


def test_parse_schema_accepts_a_document_exactly_at_the_limit() -> None:
    zjson = pytest.importorskip("zigai.json")
    limit = zjson.defaults.json_schema.max_document_bytes
    assert limit == 2 * 1024 * 1024
    schema = json_schema.parse_schema(_document_of_size(limit))
    assert len(schema["examples"]) == 5
    with pytest.raises(zjson.DocumentTooLarge):
        json_schema.parse_schema(_document_of_size(limit + 1))


def test_parse_schema_bounds_values_and_depth() -> None:
    zjson = pytest.importorskip("zigai.json")
    value = 512 * 1024
    ok = b'{"description":"' + b"d" * value + b'"}'
    assert json_schema.parse_schema(ok) == {"description": "d" * value}
    with pytest.raises(zjson.ValueTooLarge):
        json_schema.parse_schema(b'{"description":"' + b"d" * (value + 1) + b'"}')
    deep = '{"not":' * 63 + "{}" + "}" * 63  # 64 nested objects
    json_schema.parse_schema(deep)
    with pytest.raises(zjson.NestingTooDeep):
        json_schema.parse_schema('{"not":' * 64 + "{}" + "}" * 64)


def test_parse_schema_preflights_the_decoded_schema() -> None:
    pytest.importorskip("zigai.json")
    assert json_schema.parse_schema('{"type":"integer"}') == {"type": "integer"}
    with pytest.raises(UnsupportedJsonSchema):
        json_schema.parse_schema('{"pattern":"a"}')
    with pytest.raises(InvalidJsonSchema):
        json_schema.parse_schema('{"type":"nope"}')


# --- the official suite ---------------------------------------------------------------------

def _suite_module() -> Any:
    spec = importlib.util.spec_from_file_location(
        "jsonschema_suite", REPO_ROOT / "scripts" / "jsonschema_suite.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # dataclasses resolve annotations through it
    spec.loader.exec_module(module)
    return module


@pytest.mark.conformance("the official JSON-Schema-Test-Suite (draft 2020-12) is part of that corpus")
def test_official_draft_2020_12_suite_has_no_failures(conformance_root: Path) -> None:
    directory = conformance_root / "json-schema-test-suite" / "draft2020-12"
    if not directory.is_dir():
        pytest.skip(f"JSON-Schema-Test-Suite not found at {directory}")
    suite = _suite_module()
    result = suite.run_suite(directory)
    assert result.failures == []
    assert result.failed == 0
    assert result.passed == result.validated_tests + result.rejected_tests
    assert result.validated_tests > result.rejected_tests  # most of the suite is really checked


def test_suite_runner_fails_a_rejection_of_supported_vocabulary(tmp_path: Path) -> None:
    suite = _suite_module()
    assert suite.unsupported_features({"$defs": {"a": {}}, "$ref": "#/$defs/a"}) == []
    assert suite.unsupported_features({"properties": {"a": {"pattern": "x"}}}) == ["keyword pattern"]
    result = suite.SuiteResult()
    group = {"description": "g", "schema": {"pattern": "x"},
             "tests": [{"description": "t", "data": "x", "valid": True}]}
    suite.run_group(result, "unlisted.json", group)  # genuine, but the file is not expected
    assert (result.passed, result.failed) == (0, 1)
