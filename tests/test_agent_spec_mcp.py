"""Agent specs with ``mcp_servers``: the documented default connector (stdio ``command`` and
Streamable HTTP ``url``), its refusals, and the override.

The servers are real: the docs' example server in a child process, and a zigai server on
loopback HTTP.
"""

from __future__ import annotations

import functools
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from support.mcp_peers import build_zigai_server

from zigai import mcp
from zigai.agent_spec import Catalogs, InvalidAgentSpec, model_string_catalog, parse, resolve
from zigai.mcp.client.connect import connect_server
from zigai.security import UrlPolicy, UrlPolicyViolation
from zigai.testing import TestModel

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "mcp_server.py"
CATALOGS = Catalogs(providers=model_string_catalog())


def spec(server: dict[str, Any], env: tuple[str, ...] = ()) -> str:
    return json.dumps({"version": 1, "model": {"provider": "test", "name": "default"},
                       "env": list(env), "mcp_servers": [server]})


def factory(ref: Any, env: Any) -> TestModel:
    return TestModel(call_tools=["convert"])


def test_a_stdio_server_resolves_with_the_default_connector(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    resolved = resolve(parse(spec({"name": "units", "command": [sys.executable, str(EXAMPLE)]})), CATALOGS,
                       factory)
    with resolved:
        result = resolved.agent.run("convert something")
        returns = [part for message in result.all_messages() for part in message.parts
                   if getattr(part, "part_kind", "") == "tool-return"]
        assert [part.tool_name for part in returns] == ["convert"]
        toolset = resolved.agent.toolsets[0]
        assert isinstance(toolset, mcp.McpToolset) and toolset.client.protocol_version == "2026-07-28"
    assert toolset.client.transport.returncode is not None  # closing the resolution stopped the child


def test_an_http_server_resolves_and_the_url_policy_is_the_default_one() -> None:
    server = build_zigai_server()
    server.add_tool(mcp.ToolInfo("convert", {"type": "object", "properties": {"celsius": {"type": "number"}}}),
                    lambda args, request: str(args.get("celsius", 0) * 9 / 5 + 32))
    with mcp.serve_http(server) as handle:
        document = parse(spec({"name": "remote", "url": "${MCP_URL}"}, env=("MCP_URL",)))
        # the default policy refuses cleartext loopback URLs, as for every zigai HTTP client
        with pytest.raises(UrlPolicyViolation):
            resolve(document, CATALOGS, factory, {"MCP_URL": handle.url})
        local = functools.partial(connect_server, url_policy=UrlPolicy.local_development())
        with resolve(document, CATALOGS, factory, {"MCP_URL": handle.url}, mcp_connector=local) as resolved:
            result = resolved.agent.run("convert")
            assert "convert" in [part.tool_name for message in result.all_messages() for part in message.parts
                                 if getattr(part, "part_kind", "") == "tool-return"]


def test_a_server_that_does_not_answer_is_named_and_stopped() -> None:
    silent = {"name": "mute", "command": [sys.executable, "-c", "import time; time.sleep(30)"], "timeout_ms": 300}
    with pytest.raises(mcp.McpConnectionFailed, match="mcp server 'mute' did not answer discovery"):
        resolve(parse(spec(silent)), CATALOGS, factory)


@pytest.mark.parametrize("server, message", [
    ({"name": "both", "command": ["x"], "url": "https://mcp.example.com/mcp"}, "exactly one of 'command'"),
    ({"name": "neither"}, "exactly one of 'command'"),
    ({"name": "secret", "url": "https://${TOKEN}@mcp.example.com"}, "TOKEN"),
])
def test_a_server_declares_exactly_one_of_command_and_url(server: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidAgentSpec, match=message) as caught:
        parse(spec(server))
    assert caught.value.path.startswith("$.mcp_servers[0]")


def test_connect_server_refuses_a_declaration_without_a_transport() -> None:
    from zigai.agent_spec import McpServerDoc

    with pytest.raises(mcp.InvalidMcpRequest, match="exactly one"):
        connect_server(McpServerDoc("none"))


def test_zigai_run_spec_names_a_refused_http_server(tmp_path: Path) -> None:
    from zigai.cli import ExitCode, main

    path = tmp_path / "agent.json"
    path.write_text(spec({"name": "remote", "url": "http://127.0.0.1:9/mcp"}))
    err = io.StringIO()
    code = main(["run", "x", "--spec", str(path)], env=dict(os.environ), out=io.StringIO(), err=err)
    assert code == ExitCode.usage and "mcp server 'remote'" in err.getvalue()
    assert "UrlPolicyViolation" in err.getvalue()
