"""zigai.output.OutputChoice / OutputSpec / OutputResult: every malformed spec is refused by name."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from zigai.output import (
    SCHEMA_MARKER,
    InvalidOutputSpec,
    OutputChoice,
    OutputMode,
    OutputResult,
    OutputSpec,
)

OBJ = {"type": "object"}


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"name": "has space", "schema": OBJ}, "output name 'has space' must match"),
    ({"name": 7, "schema": OBJ}, "output name 7 must match"),
    ({"name": "a", "schema": [OBJ]}, "output 'a': schema must be a JSON object"),
    ({"name": "a", "schema": OBJ, "description": 3}, "output 'a': description must be a string"),
    ({"name": "a", "schema": OBJ, "function": "not callable"}, "output 'a': function must be callable"),
    ({"name": "a", "schema": {"const": float("nan")}}, "output 'a' schema is not plain JSON"),
    ({"name": "a", "schema": {"const": object()}}, "output 'a' schema is not plain JSON"),
])
def test_output_choice_validation(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidOutputSpec, match=message):
        OutputChoice(**kwargs)


def test_output_choice_schema_is_copied_to_plain_json() -> None:
    source = {"type": "object", "required": ("a",)}
    choice = OutputChoice("a", source)
    assert choice.schema == {"type": "object", "required": ["a"]}
    source["type"] = "string"
    assert choice.schema["type"] == "object"  # the caller's dict is not shared


def test_output_spec_choices_rules() -> None:
    one = OutputChoice("a", OBJ)
    assert OutputSpec(OutputMode.tool, one).choices == (one,)  # type: ignore[arg-type]  # a bare choice is accepted
    with pytest.raises(InvalidOutputSpec, match="tool output needs at least one choice"):
        OutputSpec.tool([])
    with pytest.raises(InvalidOutputSpec, match="native output choices must be OutputChoice values"):
        OutputSpec.native([OBJ])  # type: ignore[list-item]
    with pytest.raises(InvalidOutputSpec, match="duplicate output names: a"):
        OutputSpec.prompted([one, OutputChoice("a", {"type": "string"})])
    with pytest.raises(InvalidOutputSpec, match="text output takes no choices"):
        OutputSpec(OutputMode.text, (one,))
    with pytest.raises(InvalidOutputSpec, match="json_object output takes no choices"):
        OutputSpec("json_object", (one,))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        OutputSpec("xml")  # type: ignore[arg-type]


def test_prompted_template_needs_exactly_one_marker_and_only_prompted_takes_one() -> None:
    one = (OutputChoice("a", OBJ),)
    assert OutputSpec.prompted(one, f"Reply as {SCHEMA_MARKER}").template == "Reply as {schema}"
    for bad in ("no marker", f"{SCHEMA_MARKER} twice {SCHEMA_MARKER}"):
        with pytest.raises(InvalidOutputSpec, match="exactly one {schema} marker"):
            OutputSpec.prompted(one, bad)
    with pytest.raises(InvalidOutputSpec, match="only prompted output takes a template"):
        OutputSpec(OutputMode.native, one, f"x {SCHEMA_MARKER}")
    with pytest.raises(InvalidOutputSpec, match="union name 'final result' is not provider-safe"):
        OutputSpec.native(one, union_name="final result")


def test_structured_and_constructors() -> None:
    assert not OutputSpec.text().structured
    assert OutputSpec.json_object().structured
    spec = OutputSpec.json_schema("answer", OBJ, description="The answer.", strict=True)
    assert (spec.mode, spec.choices[0].description, spec.choices[0].strict) == (
        OutputMode.native, "The answer.", True)


def test_output_result_verdicts() -> None:
    assert OutputResult.output(3) == OutputResult("output", 3)
    assert OutputResult.retry("try again") == OutputResult("retry", None, "try again")
    with pytest.raises(InvalidOutputSpec, match="kind must be 'output' or 'retry', got 'maybe'"):
        OutputResult("maybe")  # type: ignore[arg-type]
    with pytest.raises(InvalidOutputSpec, match="message must be a str, got int"):
        OutputResult("retry", None, 5)  # type: ignore[arg-type]
    for empty in ("", None):
        with pytest.raises(InvalidOutputSpec, match="needs a non-empty model-safe message"):
            OutputResult.retry(empty)  # type: ignore[arg-type]
    error = pickle.loads(pickle.dumps(InvalidOutputSpec("bad")))
    assert isinstance(error, InvalidOutputSpec) and str(error) == "bad"
