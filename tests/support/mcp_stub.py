"""A scripted loopback MCP peer: a transport whose replies come from a Python function.

``ScriptedPeer(reply)`` calls ``reply(method, params)`` for every request and answers with the
returned result object (or raises the returned :class:`McpErrorResponse`); every decoded
request is kept in ``sent`` so tests can assert exactly what went on the wire.  It is a
2026-07-28 server: the ``server/discover`` probe a negotiating client sends first is answered
here (and counted in ``probes``, not in ``sent``) unless ``answer_probe=False``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from zigai.mcp.errors import McpErrorResponse
from zigai.mcp.wire.jsonrpc import JsonRpcError, JsonRpcResponse
from zigai.mcp.wire.transport import NotificationSink, OutgoingRequest, Reply

Replier = Callable[[str, dict[str, Any]], Any]


class ScriptedPeer:
    mirrors_headers = False

    def __init__(self, reply: Replier, *, answer_probe: bool = True) -> None:
        self.reply = reply
        self.answer_probe = answer_probe
        self.probes = 0
        self.sent: list[dict[str, Any]] = []
        self.routes: list[tuple[str, str | None]] = []
        self._lock = threading.Lock()

    def request(self, request: OutgoingRequest, *, deadline: float | None,
                is_cancelled: Callable[[], bool], on_notification: NotificationSink) -> Reply:
        message = json.loads(request.body)
        if self.answer_probe and message["method"] == "server/discover":
            self.probes += 1
            return JsonRpcResponse(request.id, {"supportedVersions": ["2026-07-28"], "capabilities": {}})
        with self._lock:
            self.sent.append(message)
            self.routes.append((request.method, request.name))
        params = message.get("params", {})
        answer = self.reply(message["method"], params)
        if isinstance(answer, McpErrorResponse):
            return JsonRpcError(request.id, answer.code, str(answer), answer.data)
        if isinstance(answer, BaseException):
            raise answer
        return JsonRpcResponse(request.id, dict(answer))

    def notify(self, method: str, body: bytes, *, protocol_version: str, deadline: float | None) -> None:
        with self._lock:
            self.sent.append(json.loads(body))

    def close(self) -> None:
        pass

    def methods(self) -> list[str]:
        return [message["method"] for message in self.sent]
