"""The npm reference MCP server (@modelcontextprotocol/server-everything) driven by zigai's client.

It speaks the session-based 2025-11-25 revision, so every test here also exercises the
negotiation.  Over stdio and Streamable HTTP: tools (plain, structured), resources and
templates, prompts, completion, progress, and the server's sampling, elicitation and roots
requests answered by a zigai input handler.  ``scripts/node_peers.sh`` installs the server
(pinned by tests/node_mcp/package-lock.json); without Node or the install these tests skip.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from zigai import mcp
from zigai.security import UrlPolicy

FOLDER = Path(__file__).resolve().parent / "node_mcp"
ENTRY = FOLDER / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
NODE = shutil.which("node")
pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(NODE is None or not ENTRY.exists(),
                       reason="the npm reference MCP server is not installed; run scripts/node_peers.sh (needs Node.js)"),
    pytest.mark.timeout(90),
]
ASKED: list[mcp.InputRequest] = []


def answer(request: mcp.InputRequest) -> mcp.InputResponse:
    ASKED.append(request)
    if request.kind is mcp.InputKind.sampling:
        return mcp.InputResponse.sampled("an answer from zigai", model="scripted")
    if request.kind is mcp.InputKind.elicitation:
        return mcp.InputResponse.accept({"name": "Ada Lovelace", "check": True})
    return mcp.InputResponse.roots([("file:///srv/project", "project")])


@pytest.fixture(scope="module", params=["stdio", "http"])
def everything(request: pytest.FixtureRequest) -> Iterator[mcp.Client]:
    assert NODE is not None
    if request.param == "stdio":
        transport: mcp.McpTransport = mcp.StdioTransport(
            [NODE, str(ENTRY), "stdio"], mcp.StdioOptions(stderr=mcp.StderrMode.discard, env=dict(os.environ)))
        with mcp.Client(transport, input_handler=answer, default_timeout_ms=30_000) as client:
            yield client
        return
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    child = subprocess.Popen([NODE, "--require", str(FOLDER / "loopback.cjs"), str(ENTRY), "streamableHttp"],
                             env={**os.environ, "PORT": str(port)}, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert child.poll() is None and time.monotonic() < end, "the npm MCP server did not start"
                time.sleep(0.05)
        transport = mcp.StreamableHttpTransport(f"http://127.0.0.1:{port}/mcp",
                                                url_policy=UrlPolicy.local_development())
        with mcp.Client(transport, input_handler=answer, default_timeout_ms=30_000) as client:
            yield client
    finally:
        child.terminate()
        try:
            child.wait(5)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def test_the_client_agrees_on_2025_11_25_and_lists_the_tools(everything: mcp.Client) -> None:
    names = {tool.name for page in everything.list_all_tools() for tool in page.items}
    assert {"echo", "get-sum", "get-structured-content", "trigger-long-running-operation",
            "trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"} <= names
    assert everything.protocol_version == "2025-11-25" and everything.legacy
    assert everything.discover().server_info is not None


def test_tools_plain_and_structured(everything: mcp.Client) -> None:
    assert everything.call_tool("echo", {"message": "hi"}).text == "Echo: hi"
    assert everything.call_tool("get-sum", {"a": 2, "b": 3}).text == "The sum of 2 and 3 is 5."
    structured = everything.call_tool("get-structured-content", {"location": "New York"}).structured_content
    assert isinstance(structured, dict) and {"temperature", "conditions", "humidity"} <= set(structured)


def test_resources_templates_prompts_and_completion(everything: mcp.Client) -> None:
    uris = [resource.uri for resource in everything.list_resources().items]
    assert "demo://resource/static/document/features.md" in uris
    read = everything.read_resource("demo://resource/static/document/features.md")
    assert read.contents and read.contents[0].uri == "demo://resource/static/document/features.md"
    templates = [template.uri_template for template in everything.list_resource_templates().items]
    assert "demo://resource/dynamic/text/{resourceId}" in templates
    assert everything.read_resource("demo://resource/dynamic/text/1").contents
    prompts = {prompt.name for prompt in everything.list_prompts().items}
    assert {"simple-prompt", "args-prompt", "completable-prompt"} <= prompts
    got = everything.get_prompt(mcp.PromptRequest("args-prompt", {"city": "Paris"}))
    assert "Paris" in got.messages[0].content.text  # type: ignore[union-attr]
    completion = everything.complete(mcp.CompletionRequest(mcp.PromptReference("completable-prompt"), "department",
                                                           "E"))
    assert "Engineering" in completion.values


def test_progress_reaches_the_request_sink(everything: mcp.Client) -> None:
    seen: list[mcp.Notification] = []
    options = mcp.RequestOptions(metadata=mcp.RequestMetadata(progress_token="long"), on_notification=seen.append)
    result = everything.call_tool("trigger-long-running-operation", {"duration": 1, "steps": 3}, options=options)
    assert "completed" in result.text
    progress = [note.params["progress"] for note in seen if note.method == "notifications/progress"]
    assert progress == [1, 2, 3]


def test_sampling_elicitation_and_roots_are_answered_by_the_zigai_handler(everything: mcp.Client) -> None:
    ASKED.clear()
    sampled = everything.call_tool("trigger-sampling-request", {"prompt": "hello", "maxTokens": 10}).text
    assert "an answer from zigai" in sampled
    elicited = everything.call_tool("trigger-elicitation-request", {}).text
    assert "Ada Lovelace" in elicited
    roots = everything.call_tool("get-roots-list", {}).text  # the server asked roots/list after initialize
    assert "file:///srv/project" in roots
    kinds = {request.kind for request in ASKED}
    assert {mcp.InputKind.sampling, mcp.InputKind.elicitation} <= kinds
