"""``zigai run --mcp-stdio "CMD ARGS"``: MCP stdio servers as the run's toolsets, end to end.

The server is the real docs example (a zigai mcp.Server on stdio, in a child process); the
interop tests cover the official SDK's server behind the same StdioTransport and toolset.
"""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path

import pytest

from zigai.cli import ExitCode, RunSettings, load_config, main
from zigai.cli.config import settings_from_json
from zigai.cli.errors import InvalidCliConfig
from zigai.cli.mcp_stdio import MAX_MCP_SERVERS

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "mcp_server.py"
ENV = {"PYTHONPATH": str(ROOT)}


def _command(path: Path) -> str:
    return shlex.join([sys.executable, str(path)])


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    # servers get only the environment allowlist: name the variable that lets them import zigai
    argv = (*argv, "--mcp-env", f"PYTHONPATH={ROOT}") if argv[0] == "run" else argv
    code = main(list(argv), env=ENV, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _tool_parts(history: Path) -> list[dict]:
    messages = json.loads(history.read_text())["messages"]
    return [part for message in messages for part in message["parts"]
            if part["part_kind"] in ("tool-call", "tool-return")]


def test_a_run_calls_the_tool_of_an_mcp_stdio_server_and_gets_its_exact_answer(tmp_path: Path) -> None:
    history = tmp_path / "history.json"
    code, out, err = _run("run", "convert", "--mcp-stdio", _command(EXAMPLE), "--json", "--history", str(history))
    assert code == ExitCode.ok, err
    assert json.loads(out)["usage"]["tool_calls"] == 1
    call, answer = _tool_parts(history)
    celsius = json.loads(call["args"])["celsius"]  # TestModel chose the argument
    assert call["tool_name"] == answer["tool_name"] == "convert"
    assert answer["content"] == pytest.approx(celsius * 9 / 5 + 32)  # computed by the child process


def test_two_servers_offering_the_same_tool_name_are_refused_by_name() -> None:
    code, _, err = _run("run", "x", "--mcp-stdio", _command(EXAMPLE), "--mcp-stdio", _command(EXAMPLE))
    assert code == ExitCode.fault and "DuplicateToolName" in err and "'convert'" in err


@pytest.mark.parametrize(("command", "message"), [
    ("/nonexistent/mcp-server", "could not start the MCP stdio server"),
    ("'unclosed", "is not a valid command line"),
    ("   ", "--mcp-stdio needs a command"),
    (shlex.join([sys.executable, "-c", "import sys; sys.stdin.read()"]), "did not answer server/discover"),
])
def test_a_server_that_cannot_be_used_is_an_operator_error(command: str, message: str) -> None:
    code, out, err = _run("run", "x", "--mcp-stdio", command)
    assert code == ExitCode.usage and out == ""
    assert message in err


def test_too_many_servers_are_refused_before_any_starts() -> None:
    argv = ["run", "x"]
    for _ in range(MAX_MCP_SERVERS + 1):
        argv += ["--mcp-stdio", "/nonexistent/never-started"]
    code, _, err = _run(*argv)
    assert code == ExitCode.usage and f"at most {MAX_MCP_SERVERS}" in err


def test_mcp_stdio_in_config_files_and_pause_settings(tmp_path: Path) -> None:
    config = tmp_path / "zigai.json"
    config.write_text(json.dumps({"version": 1, "mcp_stdio": [_command(EXAMPLE)]}))
    assert load_config(config).mcp_stdio == (_command(EXAMPLE),)
    code, out, err = _run("run", "convert", "--config", str(config), "--json")
    assert code == ExitCode.ok and json.loads(out)["usage"]["tool_calls"] == 1, err
    settings = RunSettings(mcp_stdio=("a b", "c"))
    assert settings.to_json() == {"mcp_stdio": ["a b", "c"]}
    assert settings_from_json(json.loads(json.dumps(settings.to_json())), "pause") == settings
    limit = ["x"] * MAX_MCP_SERVERS
    assert settings_from_json({"mcp_stdio": limit}, "cfg").mcp_stdio == tuple(limit)
    for bad in (limit + ["x"], ["ok", ""], ["ok", 3], "python server.py"):
        with pytest.raises(InvalidCliConfig, match="mcp_stdio"):
            settings_from_json({"mcp_stdio": bad}, "cfg")
