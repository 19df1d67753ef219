"""Interop with the ``mcp`` 1.30.0 SDK, which speaks the session-based 2025-11-25 revision.

zigai client -> mcp 1.30.0 server over stdio and Streamable HTTP (negotiation falls back to
``initialize``; every 2025 feature through the same public API; the session's headers, GET
stream, 404 re-initialization and DELETE); mcp 1.30.0 client -> zigai server over stdio and
HTTP (``initialize``, a session, DELETE at the end; a zigai tool asking the SDK client for sampling,
elicitation and roots; list changes and a subscribed resource's updates pushed to it); agent runs (TestModel) using the mcp 1.30.0
server's tools through the toolset API and ``zigai run --mcp-stdio``.  The peer is a real process from the venv that
``scripts/mcp_peers.sh`` builds; without it these tests skip and say so.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.mcp1_peer import PEER_PYTHON, PEERS, SKIP_REASON, mcp1_http_server, server_command
from support.mcp_peers import ROOT, build_zigai_server, stdio_command
from support.mcp_session_peer import SCRIPT as ASKING_PEER
from support.mcp_session_peer import build_asking_server

from zigai import Agent, mcp
from zigai.cli import ExitCode, main
from zigai.security import UrlPolicy
from zigai.testing import TestModel

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(SKIP_REASON is not None, reason=SKIP_REASON or ""),
    pytest.mark.timeout(90),
]
LOCAL = UrlPolicy.local_development()
QUIET = mcp.StdioOptions(stderr=mcp.StderrMode.discard, env=dict(os.environ))


def answer(request: mcp.InputRequest) -> mcp.InputResponse:
    if request.kind is mcp.InputKind.sampling:
        return mcp.InputResponse.sampled("forty-two", model="scripted")
    if request.kind is mcp.InputKind.elicitation:
        return mcp.InputResponse.accept({"name": "Ada"})
    return mcp.InputResponse.roots(["file:///srv/project"])


@pytest.fixture(scope="module", params=["stdio", "http"])
def legacy(request: pytest.FixtureRequest) -> Iterator[mcp.Client]:
    """A default (negotiating) zigai client connected to the mcp 1.30.0 server."""
    if request.param == "stdio":
        with mcp.Client(mcp.StdioTransport(server_command("stdio"), QUIET), input_handler=answer,
                        default_timeout_ms=30_000) as client:
            yield client
    else:
        with mcp1_http_server() as url, mcp.Client(mcp.StreamableHttpTransport(url, url_policy=LOCAL),
                                                   input_handler=answer, default_timeout_ms=30_000) as client:
            yield client


def test_the_client_falls_back_to_the_newest_2025_revision(legacy: mcp.Client) -> None:
    tools = {tool.name for tool in legacy.list_tools().items}
    assert {"add", "echo", "ask_model", "ask_user", "list_roots"} <= tools
    assert legacy.protocol_version == "2025-11-25" and legacy.legacy
    found = legacy.discover()  # what initialize said, in the discover shape
    assert found.supported_versions == ("2025-11-25",)
    assert found.server_info is not None and found.server_info.name == "mcp1-peer"
    assert found.capabilities.tools is not None and legacy.server_capabilities == found.capabilities


def test_tools_with_structured_content_and_errors(legacy: mcp.Client) -> None:
    result = legacy.call_tool("add", {"a": 2, "b": 40})
    assert result.structured_content == {"total": 42} and not result.is_error
    listed = {tool.name: tool for tool in legacy.list_tools().items}
    assert listed["add"].output_schema is not None
    failed = legacy.call_tool("fail", {})
    assert failed.is_error and "always fails" in failed.text


def test_server_requests_are_answered_by_the_input_handler(legacy: mcp.Client) -> None:
    assert legacy.call_tool("ask_model", {"question": "meaning?"}).text == "model said: forty-two"
    assert legacy.call_tool("ask_user", {}).text == "user accept: Ada"
    assert legacy.call_tool("list_roots", {}).text == "file:///srv/project"
    legacy.ping()


def test_progress_and_log_notifications_reach_the_request_sink(legacy: mcp.Client) -> None:
    seen: list[mcp.Notification] = []
    legacy.set_logging_level(mcp.LogLevel.debug)
    options = mcp.RequestOptions(metadata=mcp.RequestMetadata(progress_token="count"), on_notification=seen.append)
    assert legacy.call_tool("slow_count", {"steps": 3}, options=options).text == "counted 3"
    progress = [note for note in seen if note.method == "notifications/progress"]
    assert [note.params["progress"] for note in progress] == [1, 2, 3]
    assert all(note.params["progressToken"] == "count" for note in progress)
    assert legacy.call_tool("log_levels", {}).text.endswith("debug")
    assert legacy.server_capabilities is not None and legacy.server_capabilities.logging is not None


def test_resources_templates_prompts_and_completion(legacy: mcp.Client) -> None:
    assert [r.uri for r in legacy.list_resources().items] == ["memo://greeting"]
    assert legacy.read_resource("memo://greeting").contents[0].text == "hello from mcp 1.x"  # type: ignore[union-attr]
    assert [t.uri_template for t in legacy.list_resource_templates().items] == ["memo://notes/{topic}"]
    assert legacy.read_resource("memo://notes/zig").contents[0].text == "note about zig"  # type: ignore[union-attr]
    assert [p.name for p in legacy.list_prompts().items] == ["review"]
    prompt = legacy.get_prompt(mcp.PromptRequest("review", {"language": "zig", "code": "x"}))
    assert "Review this zig code: x" in prompt.messages[0].content.text  # type: ignore[union-attr]
    completion = legacy.complete(mcp.CompletionRequest(mcp.PromptReference("review"), "language", "p"))
    assert completion.values == ("python", "pascal", "perl")


def test_a_2026_only_feature_fails_before_io_naming_the_revision(legacy: mcp.Client) -> None:
    with pytest.raises(mcp.FeatureNotInRevision, match="agreed on 2025-11-25") as caught:
        legacy.listen(mcp.SubscriptionFilter(tools_list_changed=True), lambda note: None)
    assert caught.value.revision == "2025-11-25" and caught.value.feature == "subscriptions/listen"
    with pytest.raises(mcp.FeatureNotInRevision, match="2025-11-25"):
        legacy.request_json("tasks/get", {"taskId": "t"})


def test_a_pinned_2025_06_18_client_initializes_with_that_revision() -> None:
    with mcp.Client(mcp.StdioTransport(server_command("stdio"), QUIET), protocol_version="2025-06-18",
                    default_timeout_ms=30_000) as client:
        assert client.call_tool("echo", {"text": "hi"}).text == "echo: hi"
        assert client.protocol_version == "2025-06-18"


def _raw(url: str, method: str, session: str, body: dict[str, object] | None = None) -> int:
    request = urllib.request.Request(url, method=method, data=None if body is None else json.dumps(body).encode(),
                                     headers={"Mcp-Session-Id": session, "Content-Type": "application/json",
                                              "Accept": "application/json, text/event-stream",
                                              "MCP-Protocol-Version": "2025-11-25"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_http_sessions_expire_renew_and_end_with_delete() -> None:
    ping = {"jsonrpc": "2.0", "id": 99, "method": "ping"}
    with mcp1_http_server() as url:
        transport = mcp.StreamableHttpTransport(url, url_policy=LOCAL)
        with mcp.Client(transport, default_timeout_ms=30_000) as client:
            assert client.call_tool("echo", {"text": "one"}).text == "echo: one"
            first = transport.session_id
            assert first is not None and _raw(url, "POST", first, ping) == 200
            assert _raw(url, "DELETE", first) == 200  # the server forgets the session behind our back
            # the next call meets 404, initializes a new session and retries once
            assert client.call_tool("echo", {"text": "two"}).text == "echo: two"
            second = transport.session_id
            assert second is not None and second != first
        assert transport.session_id is None
        assert _raw(url, "POST", second, ping) == 404  # close() sent DELETE for it


# ----------------------------------------------------------------------------- mcp 1.30.0 -> zigai


def _run_sdk_client(*args: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the zigai stdio server child imports zigai
    done = subprocess.run([str(PEER_PYTHON), str(PEERS / "mcp1_client.py"), *args], capture_output=True,
                          timeout=60, env=env, check=False)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    return json.loads(done.stdout.decode().strip().splitlines()[-1])


def _check_sdk_saw_zigai(seen: dict[str, Any]) -> None:
    assert seen["protocol"] == "2025-11-25" and seen["server"] == "zigai-peer"
    assert seen["tools"][:2] == ["double_0", "double_1"]
    assert seen["double"] == ["42"]
    assert seen["fail"] == {"isError": True, "text": "the disk is full"}
    assert seen["slow"] == ["slow done"] and seen["progress"] == [0.0, 1.0, 2.0]
    assert seen["resources"] == ["memo://greeting"] and seen["read"] == "hello"
    assert seen["templates"] == ["notes://{name}"] and seen["note"] == "note zig"
    assert seen["prompts"] == ["review"] and seen["prompt"] == "Please review: x = 1"
    assert seen["completion"] == ["python", "pascal", "perl"] and seen["ping"] is True


def test_the_sdk_client_uses_a_zigai_server_over_stdio() -> None:
    _check_sdk_saw_zigai(_run_sdk_client("stdio", *stdio_command("zigai-stdio")))


def test_the_sdk_client_uses_a_zigai_server_over_http() -> None:
    server = build_zigai_server(page_size=2)
    with mcp.serve_http(server) as handle:
        seen = _run_sdk_client("http", handle.url)
        assert len(server.sessions) == 0  # the SDK client ended its session with DELETE
    _check_sdk_saw_zigai(seen)
    assert isinstance(seen["session_id"], str) and len(seen["session_id"]) == 32


def _check_sdk_was_asked(seen: dict[str, Any]) -> None:
    assert seen["ask"] == ["model said <six times seven>; user accepted Ada; roots ['file:///srv/project']"]
    assert seen["ask_error"] is False and seen["asked"] == ["sampling", "elicitation", "roots"]
    assert seen["capabilities"]["resources"] == {"subscribe": True, "listChanged": True}
    # the subscribed URI's update and the list change arrive; the unsubscribed URI's update does not
    assert seen["notes"] == ["notifications/resources/updated memo://watched", "notifications/tools/list_changed"]


def test_a_zigai_tool_asks_the_sdk_client_over_stdio_and_pushes_it_changes() -> None:
    _check_sdk_was_asked(_run_sdk_client("asks", "stdio", sys.executable, str(ASKING_PEER)))


def test_a_zigai_tool_asks_the_sdk_client_over_http_and_pushes_it_changes_on_the_get_stream() -> None:
    server = build_asking_server()
    with mcp.serve_http(server) as handle:
        seen = _run_sdk_client("asks", "http", handle.url)
        assert len(server.sessions) == 0  # DELETE ended the session (and its GET stream)
    _check_sdk_was_asked(seen)


# ----------------------------------------------------------------------------- agent runs


def test_an_agent_run_uses_the_tools_of_an_mcp_1_server_through_the_toolset_api() -> None:
    transport = mcp.StdioTransport(server_command("stdio-small"), QUIET)
    with mcp.Client(transport, default_timeout_ms=30_000) as client:
        agent = Agent(TestModel(call_tools=["add", "echo"]), toolsets=[mcp.McpToolset(client)])
        result = agent.run("use the tools")
        returns = {part.tool_name: part.content for message in result.all_messages() for part in message.parts
                   if getattr(part, "part_kind", "") == "tool-return"}
        assert client.legacy
    assert set(returns) == {"add", "echo"}
    assert returns["echo"]["result"].startswith("echo: ")  # FastMCP wraps a str result as structured content
    assert set(returns["add"]) == {"total"}


def test_zigai_run_mcp_stdio_uses_an_mcp_1_server(tmp_path: Path) -> None:
    history = tmp_path / "history.json"
    out, err = io.StringIO(), io.StringIO()
    command = shlex.join(server_command("stdio-small"))
    code = main(["run", "add and echo", "--mcp-stdio", command, "--json", "--history", str(history)],
                env=dict(os.environ), out=out, err=err)
    assert code == ExitCode.ok, err.getvalue()
    assert json.loads(out.getvalue())["usage"]["tool_calls"] == 2
    parts = [part for message in json.loads(history.read_text())["messages"] for part in message["parts"]
             if part["part_kind"] == "tool-return"]
    assert sorted(part["tool_name"] for part in parts) == ["add", "echo"]
