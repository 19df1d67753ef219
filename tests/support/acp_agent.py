"""An ACP agent written with the official ``agent-client-protocol`` SDK, for the client tests.

Run as ``python acp_agent.py`` (stdio).  On a prompt it streams two message chunks, asks for
permission to read ``notes.txt``, reads it through the client when allowed, tries to read a
file outside the session root, and reports every answer back as message chunks.
``hang up`` exits mid-prompt; ``wait for cancel`` answers ``cancelled`` once
``session/cancel`` arrives.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from acp import PROTOCOL_VERSION, Agent, run_agent, text_block, update_agent_message
from acp.schema import (
    AgentCapabilities,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    ToolCallUpdate,
)


class NotesAgent(Agent):
    def __init__(self) -> None:
        self.sessions: dict[str, str] = {}
        self.prompts = 0
        self.cancelled: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None,
                         client_info: Any = None, **kwargs: Any) -> InitializeResponse:
        self.client_capabilities = client_capabilities
        return InitializeResponse(protocol_version=PROTOCOL_VERSION,
                                  agent_capabilities=AgentCapabilities(load_session=True))

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> NewSessionResponse:
        session_id = f"session-{len(self.sessions) + 1}-{os.getpid()}"
        self.sessions[session_id] = cwd
        return NewSessionResponse(session_id=session_id)

    async def load_session(self, cwd: str, session_id: str, mcp_servers: Any = None,
                           **kwargs: Any) -> LoadSessionResponse:
        self.sessions[session_id] = cwd
        return LoadSessionResponse()

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self.cancelled.setdefault(session_id, asyncio.Event()).set()

    async def say(self, session_id: str, text: str) -> None:
        await self.conn.session_update(session_id, update_agent_message(text_block(text)))

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        self.prompts += 1
        cwd = self.sessions[session_id]
        asked = "".join(getattr(block, "text", "") for block in prompt)
        await self.say(session_id, f"prompt {self.prompts}: {asked}. ")
        if asked == "hang up":
            os._exit(3)
        if asked == "wait for cancel":
            event = self.cancelled.setdefault(session_id, asyncio.Event())
            await event.wait()
            return PromptResponse(stop_reason="cancelled")
        options = [PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                   PermissionOption(option_id="deny", name="Deny", kind="reject_once")]
        answer = await self.conn.request_permission(
            session_id, ToolCallUpdate(tool_call_id="read-1", title="Read notes.txt"), options)
        outcome = answer.outcome
        chosen = getattr(outcome, "option_id", None)
        await self.say(session_id, f"permission {outcome.outcome}:{chosen}. ")
        if chosen == "allow":
            notes = await self.conn.read_text_file(session_id, os.path.join(cwd, "notes.txt"))
            await self.say(session_id, f"notes: {notes.content.strip()}. ")
            try:
                await self.conn.read_text_file(session_id, "/etc/hostname")
                await self.say(session_id, "escape: allowed. ")
            except Exception as exc:  # the client must refuse it
                await self.say(session_id, f"escape: refused ({getattr(exc, 'message', exc)}). ")
        return PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(run_agent(NotesAgent()))
