"""mcp.Server edges: tool failures become error results (never protocol errors), follow-up
prompts of a zigai tool become extra content blocks, registration refuses malformed entries,
and resources, templates and prompts are listed as registered."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from zigai import mcp
from zigai.messages import RequestMessage, UserPromptPart
from zigai.tool import ModelRetry, Tool, ToolReturn

ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def _call(server: mcp.Server, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**(params or {}), "_meta": ENVELOPE}}
    reply = server.handle(json.dumps(body).encode())
    assert reply is not None
    return reply


def _native(server: mcp.Server, name: str, handler: Any) -> None:
    server.add_tool(mcp.ToolInfo.from_json({"name": name, "inputSchema": {"type": "object"}}), handler)


def _retry(args: dict[str, Any], request: Any) -> Any:
    raise ModelRetry("give me a city")


def _boom(args: dict[str, Any], request: Any) -> Any:
    raise RuntimeError("secret internal detail")


def test_native_tool_failures_are_error_results_without_internal_detail(caplog: pytest.LogCaptureFixture) -> None:
    server = mcp.Server("s", "1")
    _native(server, "retry", _retry)
    _native(server, "boom", _boom)
    retried = _call(server, "tools/call", {"name": "retry", "arguments": {}})["result"]
    assert retried["isError"] is True and retried["content"][0]["text"] == "give me a city"
    with caplog.at_level(logging.ERROR, logger="zigai.mcp.server"):
        failed = _call(server, "tools/call", {"name": "boom", "arguments": {}})["result"]
    assert failed["isError"] is True and failed["content"][0]["text"] == "tool 'boom' failed"
    assert "secret internal detail" not in json.dumps(failed)
    assert "boom" in caplog.text  # the operator still sees it in the log


def test_a_failing_zigai_tool_is_an_error_result() -> None:
    def explode(args: dict[str, Any]) -> str:
        raise ValueError("hidden")

    server = mcp.Server("s", "1")
    server.add_tool(Tool.manual("explode", "Explode.", TEXT, explode))
    result = _call(server, "tools/call", {"name": "explode", "arguments": {"text": "x"}})["result"]
    assert result["isError"] is True and result["content"][0]["text"] == "tool 'explode' failed"


def test_a_zigai_tools_follow_up_prompts_become_extra_content_blocks() -> None:
    def look(args: dict[str, Any]) -> ToolReturn[str]:
        follow = RequestMessage((UserPromptPart("and here is more"),))
        return ToolReturn("seen", follow_up_messages=(follow,))

    server = mcp.Server("s", "1")
    server.add_tool(Tool.manual("look", "Look.", TEXT, look, return_json_schema={"type": "object"}))
    listed = _call(server, "tools/list")["result"]["tools"]
    assert listed[0]["outputSchema"] == {"type": "object"}
    result = _call(server, "tools/call", {"name": "look", "arguments": {"text": "x"}})["result"]
    assert [block["text"] for block in result["content"]] == ["seen", "and here is more"]


@pytest.mark.parametrize(
    ("register", "message"),
    [
        (lambda s: s.add_resource("", lambda uri, request: "x"), "add_resource needs a non-empty uri"),
        (lambda s: s.add_resource("mem://a", "not callable"), "add_resource needs a non-empty uri"),
        (lambda s: s.add_prompt("", lambda args, request: "x"), "add_prompt needs a name"),
        (lambda s: s.add_prompt("p", None), "add_prompt needs a name"),
    ],
)
def test_malformed_registrations_are_refused(register: Any, message: str) -> None:
    with pytest.raises(mcp.InvalidServerDefinition, match=message):
        register(mcp.Server("s", "1"))


def test_resources_templates_and_prompts_are_listed_as_registered() -> None:
    server = mcp.Server("s", "1")
    server.add_resource("mem://notes", lambda uri, request: "n", name="notes", description="Notes.",
                        mime_type="text/plain")
    server.add_resource_template("mem://notes/{id}", lambda uri, args, request: args["id"], name="note")
    server.add_prompt("greet", lambda args, request: "Hello", description="Greets.")
    resources = _call(server, "resources/list")["result"]["resources"]
    assert [(r["uri"], r["name"], r.get("mimeType")) for r in resources] == [("mem://notes", "notes", "text/plain")]
    templates = _call(server, "resources/templates/list")["result"]["resourceTemplates"]
    assert [(t["uriTemplate"], t["name"]) for t in templates] == [("mem://notes/{id}", "note")]
    prompts = _call(server, "prompts/list")["result"]["prompts"]
    assert [(p["name"], p.get("description")) for p in prompts] == [("greet", "Greets.")]
    read = _call(server, "resources/read", {"uri": "mem://notes/42"})["result"]["contents"]
    assert read[0]["text"] == "42"
