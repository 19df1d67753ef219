"""An `mcp` 1.x SDK client for the legacy-revision interop tests; runs in the peer venv.

    python mcp1_client.py stdio PYTHON SCRIPT     start the server command, then run the scenario
    python mcp1_client.py http URL                connect over Streamable HTTP
    python mcp1_client.py asks stdio|http ...     the server-to-client scenario instead: sampling,
                                                  elicitation and roots answered by this client,
                                                  list_changed and resources/updated received

Prints one JSON object: what each step of the scenario saw (the test asserts on it).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from datetime import timedelta

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client
from mcp.types import PromptReference


async def scenario(session: ClientSession) -> dict:
    seen: dict = {}
    init = await session.initialize()
    seen["protocol"] = init.protocolVersion
    seen["server"] = init.serverInfo.name
    seen["capabilities"] = init.capabilities.model_dump(exclude_none=True)
    seen["tools"] = sorted(tool.name for tool in (await session.list_tools()).tools)
    double = await session.call_tool("double_3", {"x": 14})
    seen["double"] = [block.text for block in double.content]
    failed = await session.call_tool("fail", {})
    seen["fail"] = {"isError": failed.isError, "text": failed.content[0].text}
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    slow = await session.call_tool("slow", {"steps": 3}, progress_callback=on_progress,
                                   read_timeout_seconds=timedelta(seconds=20))
    seen["slow"] = [block.text for block in slow.content]
    seen["progress"] = progress
    seen["resources"] = [str(r.uri) for r in (await session.list_resources()).resources]
    seen["read"] = (await session.read_resource("memo://greeting")).contents[0].text
    seen["templates"] = [t.uriTemplate for t in (await session.list_resource_templates()).resourceTemplates]
    seen["note"] = (await session.read_resource("notes://zig")).contents[0].text
    seen["prompts"] = [p.name for p in (await session.list_prompts()).prompts]
    prompt = await session.get_prompt("review", {"code": "x = 1"})
    seen["prompt"] = prompt.messages[0].content.text
    completion = await session.complete(PromptReference(type="ref/prompt", name="review"), {"name": "code", "value": "p"})
    seen["completion"] = completion.completion.values
    await session.set_logging_level("debug")
    await session.send_ping()
    seen["ping"] = True
    return seen


NOTES: list[str] = []
ASKED: list[str] = []


async def on_sampling(context, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    ASKED.append("sampling")
    prompt = params.messages[0].content.text
    return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text=f"<{prompt}>"),
                                     model="peer-model", stopReason="endTurn")


async def on_elicitation(context, params: types.ElicitRequestParams) -> types.ElicitResult:
    ASKED.append("elicitation")
    return types.ElicitResult(action="accept", content={"name": "Ada"})


async def on_roots(context) -> types.ListRootsResult:
    ASKED.append("roots")
    return types.ListRootsResult(roots=[types.Root(uri="file:///srv/project", name="project")])


async def on_message(message) -> None:
    if isinstance(message, types.ServerNotification):
        root = message.root
        NOTES.append(root.method + (f" {root.params.uri}" if root.method == "notifications/resources/updated" else ""))


async def asks(session: ClientSession) -> dict:
    seen: dict = {}
    init = await session.initialize()
    seen["capabilities"] = init.capabilities.model_dump(exclude_none=True)
    result = await session.call_tool("ask_everything", {"prompt": "six times seven"})
    seen["ask"] = [block.text for block in result.content]
    seen["ask_error"] = result.isError
    seen["asked"] = list(ASKED)
    await session.subscribe_resource("memo://watched")
    wanted = {"notifications/tools/list_changed", "notifications/resources/updated memo://watched"}
    end = time.monotonic() + 20  # over HTTP the GET stream opens in the background: touch until it is there
    while not wanted <= set(NOTES) and time.monotonic() < end:
        await session.call_tool("touch", {"uri": "memo://watched"})
        await session.call_tool("touch", {"uri": "memo://other"})
        for _ in range(20):
            if wanted <= set(NOTES):
                break
            await asyncio.sleep(0.05)
    await session.unsubscribe_resource("memo://watched")
    seen["notes"] = sorted(set(NOTES))
    return seen


async def main() -> None:
    run = scenario
    if sys.argv[1] == "asks":
        run = asks
        del sys.argv[1]
    callbacks = {"sampling_callback": on_sampling, "elicitation_callback": on_elicitation,
                 "list_roots_callback": on_roots, "message_handler": on_message} if run is asks else {}
    mode = sys.argv[1]
    if mode == "stdio":
        params = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:])
        async with stdio_client(params) as (read, write), ClientSession(read, write, **callbacks) as session:
            seen = await run(session)
    else:
        async with streamablehttp_client(sys.argv[2]) as (read, write, get_session_id), \
                ClientSession(read, write, **callbacks) as session:
            seen = await run(session)
            seen["session_id"] = get_session_id()
    print(json.dumps(seen))


if __name__ == "__main__":
    asyncio.run(main())
