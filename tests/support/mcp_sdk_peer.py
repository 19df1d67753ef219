"""The official-SDK (``mcp`` 2.3.0) test server; ``python tests/support/mcp_sdk_peer.py`` serves it on stdio.

No ``from __future__ import annotations`` here: the SDK reads the tool signatures at run time.
"""

import base64
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import (
    CallToolResult,
    Completion,
    CreateMessageRequest,
    CreateMessageRequestParams,
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequiredResult,
    SamplingMessage,
    TextContent,
)

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def build_sdk_server() -> MCPServer:
    server = MCPServer("sdk-peer", version="2.3.0", instructions="The official SDK.")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def fail(reason: str) -> str:
        """Always fails."""
        raise ValueError(reason)

    @server.tool()
    def picture() -> Image:
        """Returns a picture."""
        return Image(data=PNG, format="png")

    @server.tool()
    async def slow(steps: int, ctx: Context) -> str:
        """Reports progress."""
        for step in range(steps):
            await ctx.report_progress(step, steps, "working")
        return "slow done"

    @server.tool()
    async def touch(ctx: Context) -> str:
        """Publishes change events."""
        await ctx.notify_tools_changed()
        await ctx.notify_resource_updated("memo://greeting")
        return "touched"

    @server.tool()
    async def interview(topic: str, ctx: Context) -> CallToolResult | InputRequiredResult:
        """Two input rounds: elicit a name, then sample a summary (the 2026-07-28 MRTR flow)."""
        answers = ctx.input_responses or {}
        if ctx.request_state is None:
            schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
            ask = ElicitRequest(params=ElicitRequestFormParams(message=f"Who asks about {topic}?",
                                                               requested_schema=schema))
            return InputRequiredResult(input_requests={"who": ask}, request_state="round-1")
        if ctx.request_state == "round-1":
            who = answers["who"]
            if who.action != "accept":
                return CallToolResult(content=[TextContent(type="text", text=f"no name: {who.action}")])
            name = who.content["name"]
            sample = CreateMessageRequest(params=CreateMessageRequestParams(
                messages=[SamplingMessage(role="user", content=TextContent(type="text", text=f"Summarize {topic}"))],
                max_tokens=50))
            return InputRequiredResult(input_requests={"summary": sample}, request_state=f"round-2:{name}")
        summary = answers["summary"]
        name = ctx.request_state.split(":", 1)[1]
        text = f"{name} on {topic}: {summary.content.text} ({summary.model})"
        return CallToolResult(content=[TextContent(type="text", text=text)])

    @server.resource("memo://greeting", mime_type="text/plain")
    def greeting() -> str:
        return "hello"

    @server.resource("notes://{name}", mime_type="text/plain")
    def note(name: str) -> str:
        return f"note {name}"

    @server.prompt()
    def review(code: str) -> str:
        """Review code."""
        return f"Please review: {code}"

    @server.completion()
    async def complete(ref: Any, argument: Any, context: Any) -> Completion:
        return Completion(values=[v for v in ("python", "pascal", "perl", "zig") if v.startswith(argument.value)])

    return server


@contextmanager
def sdk_http_server(json_response: bool = False) -> Iterator[str]:
    """The SDK server over Streamable HTTP on 127.0.0.1, in a thread; yields the endpoint URL."""
    import uvicorn

    app = build_sdk_server().streamable_http_app(json_response=json_response)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="error", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the SDK HTTP server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


if __name__ == "__main__":  # pragma: no cover - runs in the child process
    build_sdk_server().run("stdio")
