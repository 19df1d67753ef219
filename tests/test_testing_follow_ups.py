"""TestModel treats a tool's follow-up prompt as part of the turn that called the tool
(issue 31, defect 7): a run whose tool returns follow-up messages — an MCP image tool, a
``ToolReturn`` with extra messages — finishes instead of calling every tool again until
the request limit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from zigai.agent import Agent, RunLimits
from zigai.messages import BinaryContent, RequestMessage, TextContent
from zigai.testing import TestModel
from zigai.tool import Tool, ToolReturn


def _snapshot_tool(calls: list[int], follow_ups: int = 1) -> Tool:
    def snapshot(args: dict[str, Any]) -> ToolReturn[str]:
        calls.append(1)
        image = BinaryContent(b"\x89PNG\r\n\x1a\n", "image/png")
        message = RequestMessage.user([TextContent("the snapshot:"), image])
        return ToolReturn("see the image", (message,) * follow_ups)

    return Tool.manual("snapshot", "Take a snapshot.", {"type": "object", "properties": {}}, snapshot)


@pytest.mark.parametrize("follow_ups", [1, 2])
def test_a_tools_follow_up_prompt_does_not_start_a_new_turn(follow_ups: int) -> None:
    calls: list[int] = []
    agent = Agent(TestModel(), tools=[_snapshot_tool(calls, follow_ups)], limits=RunLimits(max_requests=3))
    with agent.run("look") as result:
        assert result.output == '{"snapshot":"see the image"}'
        assert result.usage.requests == 2
    assert calls == [1]


def test_a_new_prompt_after_a_finished_run_starts_a_new_turn() -> None:
    calls: list[int] = []
    agent = Agent(TestModel(), tools=[_snapshot_tool(calls)], limits=RunLimits(max_requests=3))
    with agent.run("look") as first:
        history = first.messages
    with agent.run("look again", message_history=history) as second:
        assert second.usage.requests == 2
    assert calls == [1, 1]


@dataclass
class Seen:
    text: str


def test_an_output_tool_result_ends_the_turn_even_after_tool_results() -> None:
    calls: list[int] = []
    agent = Agent(TestModel(), tools=[_snapshot_tool(calls)], limits=RunLimits(max_requests=3))
    with agent.run_typed(Seen, "look", mode="tool") as first:
        history = first.messages
    with agent.run_typed(Seen, "look again", mode="tool", message_history=history) as second:
        assert isinstance(second.output, Seen)
    assert calls == [1, 1]
