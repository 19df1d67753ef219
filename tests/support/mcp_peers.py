"""MCP peers for the tests: a zigai server and an official-SDK (``mcp`` 2.3.0) server.

The zigai server runs over stdio as ``python tests/support/mcp_peers.py``, the SDK server as
``python tests/support/mcp_sdk_peer.py``; over HTTP they are started in-process by
:func:`mcp_sdk_peer.sdk_http_server` and ``zigai.mcp.serve_http``.
Both servers offer the same small catalogue so the interop tests read alike in all four
directions.
"""

from __future__ import annotations

import base64
import sys
import threading
import time
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # pragma: no cover - the child process sees the repository root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from zigai import mcp
from zigai.messages import BytesSource, ImageContent, RequestMessage
from zigai.tool import ModelRetry, Tool, ToolOutput

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
ROOT = Path(__file__).resolve().parents[2]


def _number_tool(index: int) -> Tool:
    return Tool.manual(f"double_{index}", f"Multiply x by {index}.",
                       {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
                       lambda args: args["x"] * index)


def _slow(args: dict[str, Any]) -> str:
    request = mcp.current_request()
    assert request is not None
    for step in range(args.get("steps", 2)):
        request.progress(step, args.get("steps", 2), "working")
        request.log(mcp.LogLevel.info, {"step": step})
    if args.get("block"):
        while not request.control.cancelled:
            time.sleep(0.01)
        SEEN_CANCELLED.set()
    return "slow done"


SEEN_CANCELLED = threading.Event()


def _fail(args: dict[str, Any]) -> str:
    raise ModelRetry("the disk is full")


def build_zigai_server(page_size: int = 2) -> mcp.Server:
    server = mcp.Server("zigai-peer", "1.0", instructions="A test server.", page_size=page_size,
                        extensions={"com.example/echo": {}})
    for index in range(5):
        server.add_tool(_number_tool(index))
    server.add_tool(Tool.manual(
        "sql", "Run a query in a region.",
        {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"},
                                          "query": {"type": "string"}}, "required": ["region"]},
        lambda args: f"{args['region']}: {args.get('query', '')}", check_arguments=False))
    server.add_tool(Tool.manual("fail", "Always fails.", {"type": "object", "properties": {}}, _fail))
    server.add_tool(Tool.manual(
        "picture", "Returns a picture.", {"type": "object", "properties": {}},
        lambda args: ToolOutput("a red pixel", (RequestMessage.user([ImageContent(BytesSource(PNG, "image/png"))]),))))
    server.add_tool(Tool.manual("slow", "Reports progress.", {"type": "object", "properties": {
        "steps": {"type": "integer"}, "block": {"type": "boolean"}}}, _slow))

    def touch(args: dict[str, Any], request: mcp.ServerRequest) -> str:
        server.notify_tools_changed()
        server.notify_prompts_changed()
        server.notify_resource_updated(args.get("uri", "memo://greeting"))
        return "touched"

    server.add_tool(mcp.ToolInfo("touch", {"type": "object", "properties": {"uri": {"type": "string"}}},
                                 "Publishes change events."), touch)
    server.add_tool(mcp.ToolInfo("ask_model", {"type": "object"}, "Needs sampling."),
                    lambda args, request: "sampled", requires=mcp.ClientCapabilities(sampling={}))
    server.add_resource("memo://greeting", lambda uri, request: "hello", name="greeting", mime_type="text/plain")
    server.add_resource_template("notes://{name}", lambda uri, values, request: f"note {values['name']}",
                                 name="note", mime_type="text/plain")
    server.add_prompt("review", lambda args, request: f"Please review: {args['code']}", description="Review code.",
                      arguments=[mcp.PromptArgument("code", "the code", True)])
    server.set_completion(lambda ref, name, value, context, request:
                          [v for v in ("python", "pascal", "perl", "zig") if v.startswith(value)])
    server.add_method("com.example/echo", lambda params, request: {"echo": params},
                      requires=mcp.ClientCapabilities(extensions={"com.example/echo": {}}))
    return server


def stdio_command(kind: str) -> list[str]:
    """The command running the zigai (``"zigai-stdio"``) or SDK (``"sdk-stdio"``) peer over stdio."""
    script = Path(__file__).resolve() if kind == "zigai-stdio" else Path(__file__).with_name("mcp_sdk_peer.py")
    return [sys.executable, str(script)]


if __name__ == "__main__":  # pragma: no cover - runs in the child process
    mcp.serve_stdio(build_zigai_server())
