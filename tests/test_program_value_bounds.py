"""Values a program hands over are bounded with named errors, never a RecursionError or an
unbounded copy: structured-output schemas and extra request headers (issue 31, defect 4's
class).  Each bound is tested at the exact limit and one past it.
"""

from __future__ import annotations

import pytest

from zigai.json import defaults
from zigai.output import InvalidOutputSpec, OutputChoice
from zigai.settings import (
    MAX_EXTRA_HEADER_BYTES,
    MAX_EXTRA_HEADERS,
    InvalidModelSettings,
    ModelSettings,
    RequestHeadersTooLarge,
)


def _nested(depth: int) -> dict[str, object]:
    """A schema whose containers nest exactly ``depth`` levels (the root object included)."""
    value: dict[str, object] = {"type": "string"}
    for _ in range(depth - 1):
        value = {"not": value}
    return value


def test_a_100000_deep_output_schema_is_a_named_error_not_a_recursion_error() -> None:
    with pytest.raises(InvalidOutputSpec, match="json_schema JSON profile"):
        OutputChoice("answer", _nested(100_000))


def test_output_schema_depth_is_bounded_at_the_exact_limit() -> None:
    limit = defaults.json_schema.max_depth
    assert OutputChoice("answer", _nested(limit)).schema == _nested(limit)
    with pytest.raises(InvalidOutputSpec, match="json_schema JSON profile"):
        OutputChoice("answer", _nested(limit + 1))


def test_an_output_schema_over_the_size_bound_is_refused() -> None:
    description = "d" * 1000
    big = {"type": "object",
           "properties": {f"p{i}": {"type": "string", "description": description} for i in range(3000)}}
    with pytest.raises(InvalidOutputSpec, match="json_schema JSON profile"):
        OutputChoice("answer", big)


def test_output_schemas_stay_plain_json() -> None:
    with pytest.raises(InvalidOutputSpec, match="not plain JSON"):
        OutputChoice("answer", {"type": "number", "maximum": float("nan")})
    with pytest.raises(InvalidOutputSpec, match="not plain JSON"):
        OutputChoice("answer", {"enum": {1, 2}})
    original = {"type": "object", "properties": {"x": {"type": "integer"}}}
    choice = OutputChoice("answer", original)
    original["properties"]["x"]["type"] = "string"  # type: ignore[index]
    assert choice.schema["properties"]["x"]["type"] == "integer"  # an own copy


def test_extra_headers_are_bounded_in_count_at_the_exact_limit() -> None:
    at_limit = tuple((f"x-h{i}", "v") for i in range(MAX_EXTRA_HEADERS))
    assert len(ModelSettings(extra_headers=at_limit).extra_headers or ()) == MAX_EXTRA_HEADERS
    with pytest.raises(RequestHeadersTooLarge, match=f"more than {MAX_EXTRA_HEADERS} extra headers"):
        ModelSettings(extra_headers=(*at_limit, ("x-one-more", "v")))


def test_extra_headers_are_bounded_in_bytes_at_the_exact_limit() -> None:
    name = "x-bigg"
    value = "é" * ((MAX_EXTRA_HEADER_BYTES - len(name)) // 2)  # two UTF-8 bytes each
    assert len(name) + 2 * len(value) == MAX_EXTRA_HEADER_BYTES
    assert ModelSettings(extra_headers=((name, value),)).extra_headers == ((name, value),)
    with pytest.raises(RequestHeadersTooLarge, match="extra_body") as caught:
        ModelSettings(extra_headers=((name, value + "a"),))
    assert isinstance(caught.value, InvalidModelSettings)
    with pytest.raises(RequestHeadersTooLarge):  # a 10 MB value is refused, not forwarded
        ModelSettings(extra_headers=(("x-a", "v" * 10_000_000),))


def test_extra_header_names_and_values_must_be_strings() -> None:
    from zigai.settings import ForbiddenRequestHeader

    for pair in ((b"x-a", "v"), ("x-a", 5)):
        with pytest.raises(ForbiddenRequestHeader, match="must be strings"):
            ModelSettings(extra_headers=(pair,))  # type: ignore[arg-type]


def test_agent_names_are_bounded_at_the_exact_limit() -> None:
    from zigai.agent import Agent, InvalidAgentConfiguration
    from zigai.agent.config import MAX_AGENT_NAME_CHARS
    from zigai.testing import TestModel

    assert Agent(TestModel(), name="n" * MAX_AGENT_NAME_CHARS).name == "n" * MAX_AGENT_NAME_CHARS
    for bad in ("n" * (MAX_AGENT_NAME_CHARS + 1), "n" * 10_000_000, 5):
        with pytest.raises(InvalidAgentConfiguration, match="Agent.name must be None or a string"):
            Agent(TestModel(), name=bad)  # type: ignore[arg-type]
