"""An `mcp` 1.x (FastMCP) server for the legacy-revision interop tests; runs in the peer venv.

    python mcp1_server.py stdio            serve on stdin/stdout
    python mcp1_server.py stdio-small      the same with only the add and echo tools (agent runs)
    python mcp1_server.py http PORTFILE    serve Streamable HTTP on 127.0.0.1, a free port written
                                           to PORTFILE once listening

Tools cover plain and structured results, progress, logging, sampling, elicitation and roots
(each answered by the client through a server-initiated request); resources, a template,
a prompt with argument completion and a subscribable resource complete the surface.
"""

from __future__ import annotations

import socket
import sys

from mcp.server.fastmcp import Context, FastMCP
from mcp.types import (
    Completion,
    PromptReference,
    ResourceTemplateReference,
    SamplingMessage,
    TextContent,
)
from pydantic import BaseModel

server = FastMCP("mcp1-peer", host="127.0.0.1")


class Sum(BaseModel):
    total: int


@server.tool()
def add(a: int, b: int) -> Sum:
    """Add two integers (structured result)."""
    return Sum(total=a + b)


@server.tool()
def echo(text: str) -> str:
    """Echo the text."""
    return f"echo: {text}"


@server.tool()
async def slow_count(steps: int, ctx: Context) -> str:
    """Report progress for each step, log once, then answer."""
    await ctx.info(f"counting to {steps}")
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return f"counted {steps}"


@server.tool()
async def ask_model(question: str, ctx: Context) -> str:
    """Ask the client's model (sampling/createMessage)."""
    reply = await ctx.session.create_message(
        [SamplingMessage(role="user", content=TextContent(type="text", text=question))], max_tokens=50)
    return f"model said: {reply.content.text}"


class Confirm(BaseModel):
    name: str


@server.tool()
async def ask_user(ctx: Context) -> str:
    """Ask the user for a name (elicitation/create)."""
    answer = await ctx.elicit("What is your name?", Confirm)
    return f"user {answer.action}: {answer.data.name if answer.action == 'accept' else '-'}"


@server.tool()
async def list_roots(ctx: Context) -> str:
    """Report the client's roots (roots/list)."""
    roots = await ctx.session.list_roots()
    return ",".join(str(root.uri) for root in roots.roots)


@server.tool()
def fail() -> str:
    """Always fails."""
    raise ValueError("this tool always fails")


@server.resource("memo://greeting", mime_type="text/plain")
def greeting() -> str:
    return "hello from mcp 1.x"


@server.resource("memo://notes/{topic}")
def note(topic: str) -> str:
    return f"note about {topic}"


@server.prompt()
def review(language: str, code: str = "") -> str:
    """Review some code."""
    return f"Review this {language} code: {code}"


@server.completion()
async def complete(ref: PromptReference | ResourceTemplateReference, argument, context) -> Completion | None:
    if isinstance(ref, PromptReference) and argument.name == "language":
        options = [lang for lang in ("python", "pascal", "perl", "zig") if lang.startswith(argument.value)]
        return Completion(values=options, total=len(options), hasMore=False)
    return None


LEVELS: list[str] = []


@server._mcp_server.set_logging_level()
async def set_level(level) -> None:
    LEVELS.append(level)


@server.tool()
def log_levels() -> str:
    """The levels the client set so far (logging/setLevel)."""
    return ",".join(LEVELS)


def main() -> None:
    mode = sys.argv[1]
    if mode == "stdio-small":
        for name in [tool.name for tool in server._tool_manager.list_tools()]:
            if name not in ("add", "echo"):
                server.remove_tool(name)
        mode = "stdio"
    if mode == "stdio":
        server.run("stdio")
        return
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    server.settings.port = port
    if len(sys.argv) > 3 and sys.argv[3] == "stateless":
        server.settings.stateless_http = True
    with open(sys.argv[2], "w") as handle:
        handle.write(str(port))
    server.run("streamable-http")


if __name__ == "__main__":
    main()
