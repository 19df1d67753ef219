"""Shared pieces of the MCP Tasks tests: wire values, input answers and a zigai task server.

``build_task_server`` makes a :class:`zigai.mcp.TaskServer` with three task tools --
``interview`` (asks ``who`` then ``note``), ``forever`` (runs until cancelled, then sets
``seen["cancelled"]``) and ``broken`` (fails with ``InvalidParams`` or a plain exception) --
and ``served`` yields a transport to it, in process or over 127.0.0.1 HTTP.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from zigai import mcp
from zigai.security import UrlPolicy

__all__ = ["ELICIT", "EXT", "FAST", "RESULT", "SAMPLE", "Counting", "answer", "build_task_server", "served",
           "task"]

EXT = mcp.ClientCapabilities(extensions={mcp.TASKS_EXTENSION: {}}, elicitation={}, sampling={})
FAST = mcp.TaskPolling(min_interval_ms=1, max_interval_ms=20, max_polls=500)
ELICIT = {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": {"type": "object"}}}
SAMPLE = {"method": "sampling/createMessage",
          "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5}}
RESULT = {"content": [{"type": "text", "text": "done"}], "resultType": "complete"}


def task(status: str, task_id: str = "t1", **extra: Any) -> dict[str, Any]:
    """A task object as a server sends it (``extra`` adds or replaces fields)."""
    return {"taskId": task_id, "status": status, "createdAt": "2026-07-28T00:00:00Z",
            "lastUpdatedAt": "2026-07-28T00:00:00Z", "ttlMs": 60_000, "pollIntervalMs": 0, **extra}


def answer(request: mcp.InputRequest) -> mcp.InputResponse:
    """Accept an elicitation with the name Ada; answer a sampling request with "a note"."""
    if request.kind is mcp.InputKind.elicitation:
        return mcp.InputResponse.accept({"name": "Ada"})
    return mcp.InputResponse.sampled("a note", model="m")


class Counting:
    """An input handler that answers like :func:`answer` and records each key it was asked."""

    def __init__(self) -> None:
        self.keys: list[str] = []

    def __call__(self, request: mcp.InputRequest) -> mcp.InputResponse:
        self.keys.append(request.key)
        return answer(request)


def build_task_server(poll_interval_ms: int = 1, *, first_question_after_s: float = 0.0,
                      ) -> tuple[mcp.Server, mcp.TaskServer, dict[str, Any]]:
    server = mcp.Server("tasks", "1.0")
    tasks = mcp.TaskServer(server, poll_interval_ms=poll_interval_ms)
    seen: dict[str, Any] = {"cancelled": threading.Event()}

    def interview(arguments: dict[str, Any], context: mcp.TaskContext) -> str:
        if first_question_after_s:
            time.sleep(first_question_after_s)
        who = context.ask(mcp.InputRequest.from_json("who", ELICIT))["who"]
        context.status("writing a note")
        note = context.ask(mcp.InputRequest.from_json("note", SAMPLE))["note"]
        return f"{who['content']['name']}: {note['content']['text']}"

    def forever(arguments: dict[str, Any], context: mcp.TaskContext) -> str:
        while not context.cancelled:
            time.sleep(0.005)
        seen["cancelled"].set()
        raise mcp.McpRequestCancelled("stopped")

    def broken(arguments: dict[str, Any], context: mcp.TaskContext) -> str:
        if arguments.get("kind") == "params":
            raise mcp.InvalidParams("bad city")
        raise RuntimeError("secret detail")

    tasks.add_tool(mcp.ToolInfo("interview", {"type": "object"}), interview)
    tasks.add_tool(mcp.ToolInfo("forever", {"type": "object"}), forever)
    tasks.add_tool(mcp.ToolInfo("broken", {"type": "object"}), broken)
    return server, tasks, seen


@contextmanager
def served(kind: str, server: mcp.Server,
           in_process: Callable[[mcp.Server], mcp.McpTransport] = mcp.InProcessTransport) -> Iterator[mcp.McpTransport]:
    """A transport to ``server``: ``kind`` is ``"in-process"`` or ``"http"`` (127.0.0.1)."""
    if kind == "in-process":
        yield in_process(server)
        return
    with mcp.serve_http(server) as running:
        yield mcp.StreamableHttpTransport(running.url, url_policy=UrlPolicy.local_development())
