"""CLI configuration and tools files, checked in process: each refused setting names the key
and the rule, relative paths resolve next to the config file, and a tools file's TOOLS list
is honoured exactly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from zigai.cli.config import RunSettings, load_config, settings_from_json
from zigai.cli.errors import CliUsageError, InvalidCliConfig
from zigai.cli.tools_file import load_tools


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([], "settings must be a JSON object"),
        ({"api_token": "x"}, "'api_token' is refused; credentials are never stored"),
        ({"colour": "red"}, "unknown key 'colour'"),
        ({"retries": True}, "'retries' has the wrong type"),
        ({"api_key_env": "sk-123"}, "must be an environment variable NAME"),
        ({"max_requests": 0}, "'max_requests' must be between 1 and 10000"),
        ({"max_requests": 10_001}, "'max_requests' must be between 1 and 10000"),
        ({"timeout": 0}, "'timeout' must be between 0 and 86400"),
        ({"timeout": 86_400.5}, "'timeout' must be between 0 and 86400"),
        ({"retries": 11}, "'retries' must be between 0 and 10"),
        ({"mcp_stdio": [" "]}, "'mcp_stdio' must be a list of at most 16"),
        ({"mcp_stdio": ["x"] * 17}, "'mcp_stdio' must be a list of at most 16"),
    ],
)
def test_a_refused_setting_names_its_key_and_rule(value: Any, message: str) -> None:
    with pytest.raises(InvalidCliConfig, match=message):
        settings_from_json(value, "settings")


def test_limits_hold_at_their_exact_bounds_and_nulls_mean_unset() -> None:
    settings = settings_from_json(
        {"max_requests": 10_000, "timeout": 86_400, "retries": 10, "mcp_stdio": ["a"] * 16,
         "system": None},
        "settings",
    )
    assert (settings.max_requests, settings.timeout, settings.retries) == (10_000, 86_400, 10)
    assert settings.mcp_stdio == ("a",) * 16 and settings.system is None
    assert settings_from_json({"max_requests": 1}, "settings").max_requests == 1


def test_a_config_file_resolves_relative_paths_next_to_itself(tmp_path: Path) -> None:
    config = tmp_path / "zigai.json"
    config.write_text(json.dumps({"version": 1, "tools": "tools.py", "output_schema": "/abs/schema.json",
                                  "mcp_stdio": ["python server.py"]}))
    settings = load_config(config)
    assert settings.tools == str(tmp_path.resolve() / "tools.py")
    assert settings.output_schema == "/abs/schema.json"
    assert settings.to_json()["mcp_stdio"] == ["python server.py"]
    assert RunSettings().to_json() == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1]", "must hold a JSON object"),
        ('{"version": 2}', "'version' must be 1"),
        ('{"version": true}', "'version' must be 1"),
        ("{nope", "config file"),
    ],
)
def test_a_config_file_must_be_a_version_1_object(tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "zigai.json"
    config.write_text(text)
    with pytest.raises(InvalidCliConfig, match=message):
        load_config(config)


def _tools_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "my_tools.py"
    path.write_text(text)
    return str(path)


def test_a_tools_list_is_used_as_declared(tmp_path: Path) -> None:
    path = _tools_file(tmp_path, (
        "from zigai.tool import Tool\n"
        "def shout(text: str) -> str:\n    return text.upper()\n"
        "def hidden(text: str) -> str:\n    return text\n"
        "ECHO = Tool.manual('echo', 'Echo.', {'type': 'object'}, lambda args: args)\n"
        "TOOLS = [shout, ECHO]\n"
    ))
    assert [tool.name for tool in load_tools(path)] == ["shout", "echo"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("TOOLS = 'shout'\n", "TOOLS must be a list"),
        ("TOOLS = [42]\n", "TOOLS entries must be functions or Tool values, got 42"),
        ("def a(x: int) -> int:\n    return x\nTOOLS = [a, a]\n", "two tools are named 'a'"),
        ("def bad(x: object, *, y: 'Undefined') -> int:\n    return 1\nTOOLS = [bad]\n", "bad"),
    ],
)
def test_a_malformed_tools_list_is_refused_naming_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = _tools_file(tmp_path, text)
    with pytest.raises(CliUsageError, match=message) as caught:
        load_tools(path)
    assert "my_tools.py" in str(caught.value)


def test_a_missing_tools_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(CliUsageError, match="does not exist"):
        load_tools(str(tmp_path / "absent.py"))
