"""A zigai server whose handlers ask the client and publish changes: the 2025-session interop peer.

``python tests/support/mcp_session_peer.py`` serves it over stdio; the HTTP tests serve
:func:`build_asking_server` in process.  ``ask_everything`` asks the client for a sampled
message, an elicited name and its roots (in that order, one ``ask`` each); ``touch`` publishes
``tools/list_changed`` and ``resources/updated`` for its ``uri`` argument.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # pragma: no cover - the child process sees the repository root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from zigai import mcp

SCRIPT = Path(__file__).resolve()


def _ask_everything(args: dict[str, Any], request: mcp.ServerRequest) -> str:
    sampled = request.ask(mcp.InputRequest("model", mcp.InputKind.sampling, {
        "messages": [{"role": "user", "content": {"type": "text", "text": args.get("prompt", "hi")}}],
        "maxTokens": 50}))["model"]
    elicited = request.ask(mcp.InputRequest("who", mcp.InputKind.elicitation, {
        "message": "Your name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}},
                                                     "required": ["name"]}}))["who"]
    roots = request.ask(mcp.InputRequest("roots", mcp.InputKind.roots, {}))["roots"]
    return (f"model said {sampled['content']['text']}; user {elicited['action']}ed "
            f"{elicited.get('content', {}).get('name')}; roots {[root['uri'] for root in roots['roots']]}")


def build_asking_server() -> mcp.Server:
    server = mcp.Server("zigai-asking-peer", "1.0")
    server.add_tool(mcp.ToolInfo("ask_everything", {"type": "object", "properties": {"prompt": {"type": "string"}}},
                                 "Asks the client for sampling, elicitation and roots."), _ask_everything)

    def touch(args: dict[str, Any], request: mcp.ServerRequest) -> str:
        server.notify_tools_changed()
        server.notify_resource_updated(args.get("uri", "memo://watched"))
        return "touched"

    server.add_tool(mcp.ToolInfo("touch", {"type": "object", "properties": {"uri": {"type": "string"}}},
                                 "Publishes change events."), touch)
    server.add_resource("memo://watched", lambda uri, request: "watched", name="watched", mime_type="text/plain")
    return server


if __name__ == "__main__":  # pragma: no cover - runs in the child process
    mcp.serve_stdio(build_asking_server())
