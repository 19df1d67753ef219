"""RunOptions.prompt_parts: rich user content sent before the prompt (issue 31, #8)."""

from __future__ import annotations

from typing import Any

import pytest

from zigai.agent import Agent, InvalidAgentConfiguration, ResumeDecision, RunOptions
from zigai.messages import (
    BytesSource,
    ImageContent,
    PromptPart,
    RequestMessage,
    ResponseMessage,
    SystemPromptPart,
    TextContent,
    TextPart,
    ToolCallPart,
    UserContent,
    UserPromptPart,
)
from zigai.testing import FunctionModel
from zigai.tool import Tool, ToolExecution

IMAGE = ImageContent(BytesSource(b"\x89PNG\r\n\x1a\n", "image/png"))
CAPTION = TextContent("A photo from the trip.")


def _shape(message: RequestMessage) -> list[tuple[type, Any]]:
    return [(type(part), part.content) for part in message.parts]


def _echo_agent(seen: list[tuple[Any, ...]], **options: Any) -> Agent:
    def answer(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        seen.append(messages)
        return ResponseMessage((TextPart("a harbour"),))

    return Agent(FunctionModel(answer), **options)


def test_prompt_parts_come_first_each_as_its_own_user_prompt_part() -> None:
    seen: list[tuple[Any, ...]] = []
    agent = _echo_agent(seen, system_prompt="Describe images.")
    with agent.run("What is this?", prompt_parts=[IMAGE, CAPTION]) as result:
        assert result.output == "a harbour"
    (first,) = seen[0]
    assert _shape(first) == [
        (SystemPromptPart, "Describe images."),
        (UserPromptPart, (IMAGE,)),
        (UserPromptPart, (CAPTION,)),
        (UserPromptPart, "What is this?"),
    ]
    assert PromptPart is UserContent


def test_prompt_parts_alone_start_a_run_and_follow_a_history() -> None:
    seen: list[tuple[Any, ...]] = []
    agent = _echo_agent(seen)
    with agent.run(options=RunOptions(prompt_parts=(IMAGE,))) as first:
        history = first.messages
    assert _shape(history[0]) == [(UserPromptPart, (IMAGE,))]
    with agent.run("And now?", options=RunOptions(message_history=history, prompt_parts=[CAPTION])):
        pass
    assert _shape(seen[1][-1]) == [(UserPromptPart, (CAPTION,)), (UserPromptPart, "And now?")]


@pytest.mark.parametrize("value, words", [
    ("look at this", "sequence of UserContent"),
    (b"\x89PNG", "sequence of UserContent"),
    ([IMAGE, "plain text"], "prompt_parts[1] is str, not UserContent"),
    ([UserPromptPart("hi")], "prompt_parts[0] is UserPromptPart"),
])
def test_prompt_parts_must_be_user_content(value: Any, words: str) -> None:
    with pytest.raises(InvalidAgentConfiguration, match=words.replace("[", r"\[").replace("]", r"\]")):
        RunOptions(prompt_parts=value)


def test_a_run_without_prompt_parts_or_prompt_still_needs_a_request() -> None:
    with pytest.raises(InvalidAgentConfiguration, match="a prompt, prompt parts, or a message history"):
        _echo_agent([]).run(options=RunOptions(prompt_parts=()))


def test_a_resumed_run_refuses_new_prompt_parts() -> None:
    publish = Tool.manual("publish", "Publish.", {"type": "object", "properties": {}},
                          lambda args: "published", execution=ToolExecution.requires_approval)

    def decide(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        if len(messages) == 1:
            return ResponseMessage((ToolCallPart("publish", "{}", "c1"),))
        return ResponseMessage((TextPart("done"),))

    agent = Agent(FunctionModel(decide), tools=[publish])
    with agent.run_until_pause(options=RunOptions(prompt_parts=[IMAGE])) as outcome:
        state = outcome.paused.state_json
    with pytest.raises(InvalidAgentConfiguration, match="pass no prompt, prompt parts or history"):
        agent.resume_run(state, [ResumeDecision.approve("c1")], prompt_parts=[CAPTION])
