"""PreparedOutput edges: union rejections name the failures, output-tool arguments must be an
object, re-checks of transformed values per mode, fenced prompted output, non-JSON values."""

from __future__ import annotations

from typing import Any

import pytest

from zigai.output import InvalidOutputSpec, OutputChoice, OutputSpec, prepare_output
from zigai.output.prepare import OutputRejected
from zigai.testing import PERMISSIVE_PROFILE

POINT = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"],
         "additionalProperties": False}
WORD = {"type": "object", "properties": {"w": {"type": "string"}}, "required": ["w"],
        "additionalProperties": False}
LIST = {"type": "array", "items": {"type": "integer"}}


def test_a_value_matching_no_union_member_is_rejected_with_the_failures() -> None:
    prepared = prepare_output(OutputSpec.native([OutputChoice("point", POINT), OutputChoice("word", WORD)]),
                              PERMISSIVE_PROFILE)
    assert prepared.check_value({"w": "hi"}).choice.name == "word"
    with pytest.raises(OutputRejected, match="does not match the JSON Schema"):
        prepared.check_value({"x": "one"})


def test_output_tool_arguments_must_be_an_object_and_empty_means_empty() -> None:
    prepared = prepare_output(OutputSpec.tool([OutputChoice("point", POINT)]), PERMISSIVE_PROFILE)
    choice = prepared.choice_for_tool("point")
    assert choice is not None and prepared.choice_for_tool("nope") is None
    with pytest.raises(OutputRejected, match="must be a JSON object"):
        prepared.check_tool_args(choice, "[1]")
    with pytest.raises(OutputRejected, match="does not match"):
        prepared.check_tool_args(choice, "  ")  # empty arguments are {} and miss "x"
    with pytest.raises(OutputRejected, match="Call one of the output tools \\(point\\)"):
        prepared.parse_text("just text")


def test_a_non_object_schema_is_wrapped_for_the_tool_and_unwrapped_for_the_caller() -> None:
    prepared = prepare_output(OutputSpec.tool([OutputChoice("numbers", LIST)]), PERMISSIVE_PROFILE)
    choice = prepared.choice_for_tool("numbers")
    assert choice is not None
    assert prepared.check_tool_args(choice, '{"value": [1, 2]}').value == [1, 2]
    prepared.recheck(None, [3])
    with pytest.raises(OutputRejected):
        prepared.recheck(None, ["three"])


@pytest.mark.parametrize(
    ("spec", "good", "bad"),
    [
        (OutputSpec.text(), "anything", None),
        (OutputSpec.json_object(), {"a": 1}, [1]),
        (OutputSpec.native([OutputChoice("point", POINT)]), {"x": 1}, {"x": "1"}),
    ],
)
def test_recheck_of_a_transformed_value_follows_the_mode(spec: OutputSpec, good: Any, bad: Any) -> None:
    prepared = prepare_output(spec, PERMISSIVE_PROFILE)
    prepared.recheck(None, good)
    if bad is not None:
        with pytest.raises(OutputRejected):
            prepared.recheck(None, bad)


def test_prompted_output_may_come_in_a_fence_with_a_language_tag() -> None:
    prepared = prepare_output(OutputSpec.prompted([OutputChoice("point", POINT)]), PERMISSIVE_PROFILE)
    assert prepared.parse_text('```json\n{"x": 4}\n```').value == {"x": 4}
    assert prepared.parse_text('```{"x": 5}```').value == {"x": 5}


def test_json_object_mode_refuses_other_json() -> None:
    prepared = prepare_output(OutputSpec.json_object(), PERMISSIVE_PROFILE)
    with pytest.raises(OutputRejected, match="must be a JSON object"):
        prepared.parse_text("[1, 2]")


def test_prepare_output_needs_an_output_spec() -> None:
    with pytest.raises(InvalidOutputSpec, match="got dict"):
        prepare_output({"type": "object"}, PERMISSIVE_PROFILE)  # type: ignore[arg-type]
