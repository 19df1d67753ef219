"""``@tool`` spellings and schema details a PydanticAI user expects (issue 12): parameter
descriptions from Google, NumPy and Sphinx docstrings, and defaults shown in the schema."""

from __future__ import annotations

from typing import Annotated

import pytest

from zigai.agent import Agent
from zigai.reflect import tool
from zigai.testing import TestModel
from zigai.tool import Tool, ToolDefinitionError


def google(city: str, days: int = 3) -> str:
    """Forecast for a city.

    Args:
        city: The city, e.g. Oslo.
        days (int): How many days,
            at most seven.

    Returns:
        The forecast text.
    """
    return f"{city}:{days}"


def numpy(city: str, units: str = "metric") -> str:
    """Forecast for a city.

    Parameters
    ----------
    city : str
        The city.
    units : str, optional
        metric or imperial.
    """
    return city


def sphinx(city: str, when: Annotated[str, "ISO date"] = "today") -> str:
    """Forecast for a city.

    :param city: The city.
    :param str when: Ignored: Annotated wins.
    """
    return city


@pytest.mark.parametrize("fn", [google, numpy, sphinx])
def test_docstring_parameter_texts_become_schema_descriptions(fn: object) -> None:
    made = tool(fn)  # bare call: name and description from the function
    assert made.name == fn.__name__  # type: ignore[attr-defined]
    assert made.description.startswith("Forecast for a city.")
    assert "city" not in made.description.split("Returns")[0].replace("for a city", "")
    props = made.parameters_json_schema["properties"]
    assert props["city"]["description"].startswith("The city")


def test_google_continuations_and_sections_after_args_are_kept() -> None:
    made = tool(google)
    assert made.parameters_json_schema["properties"]["days"]["description"] == "How many days, at most seven."
    assert "Returns:" in made.description and "Args:" not in made.description


def test_annotated_descriptions_win_and_defaults_are_shown() -> None:
    props = tool(sphinx).parameters_json_schema["properties"]
    assert props["when"] == {"type": "string", "description": "ISO date", "default": "today"}
    schema = tool(google).parameters_json_schema
    assert schema["properties"]["days"]["default"] == 3 and schema["required"] == ["city"]


def test_a_default_json_cannot_show_is_left_out() -> None:
    sentinel = object()

    def odd(x: int = sentinel) -> int:  # type: ignore[assignment]
        """Odd."""
        return 1

    assert "default" not in tool(odd).parameters_json_schema["properties"]["x"]


def test_bare_and_configured_decorators_build_tools() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @tool(name="subtract", max_retries=2)
    def sub(a: int, b: int) -> int:
        """Subtract."""
        return a - b

    @tool()
    def mul(a: int, b: int) -> int:
        return a * b

    assert isinstance(add, Tool) and add.name == "add" and add.description == "Add two integers."
    assert sub.name == "subtract" and mul.name == "mul" and mul.description == ""
    with Agent(TestModel(), tools=[add, sub, mul]).run("go") as result:
        assert result.usage.tool_calls == 3


def test_the_decorator_still_refuses_what_it_cannot_describe() -> None:
    with pytest.raises(ToolDefinitionError, match="needs a type annotation"):
        @tool
        def untyped(x):  # type: ignore[no-untyped-def]
            return x
