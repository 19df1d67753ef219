"""The agent ``zigai web --agent`` serves in the browser tests (a FunctionModel, no network).

The last user prompt picks the scenario: ``hello`` streams text in chunks, ``think``
thinks first, ``weather`` calls a tool, ``delete`` and ``drop`` call approval-gated tools,
``long`` streams slowly until stopped, ``count`` answers how many user prompts the thread
holds, ``fail`` raises.  Every tool execution appends a line to the file
named by ``ZIGAI_WEB_LEDGER`` so a test can count how often a tool really ran.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

from zigai.agent import Agent
from zigai.messages import ToolReturnPart, UserPromptPart
from zigai.testing import DeltaThinking, DeltaToolCall, FunctionModel
from zigai.tool import Tool, ToolExecution

CHUNKS = ("Streamed ", "text ", "arrives ", "in ", "order.")
TARGET = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def _record(line: str) -> None:
    with open(os.environ["ZIGAI_WEB_LEDGER"], "a", encoding="utf-8") as ledger:
        ledger.write(line + "\n")


def _prompt(messages: tuple[Any, ...]) -> str:
    for message in reversed(messages):
        for part in getattr(message, "parts", ()):
            if isinstance(part, UserPromptPart):
                if isinstance(part.content, str):
                    return part.content
                return " ".join(item.text if item.kind == "text" else
                                f"[{item.kind} {item.source.media_type} {len(item.source.data)} bytes]"
                                for item in part.content)
    return ""


def _returns(messages: tuple[Any, ...]) -> list[ToolReturnPart]:
    current: list[ToolReturnPart] = []
    for message in messages:
        for part in getattr(message, "parts", ()):
            if isinstance(part, UserPromptPart):
                current = []
            elif isinstance(part, ToolReturnPart):
                current.append(part)
    return current


def stream(messages: tuple[Any, ...], info: Any) -> Iterator[Any]:
    prompt = _prompt(messages).lower()
    returns = _returns(messages)
    if "long" in prompt:
        for index in range(600):
            time.sleep(0.1)
            yield f"tick {index} "
        return
    if "attached" in prompt:
        yield "I received: " + prompt
        return
    if "count" in prompt:
        asked = sum(isinstance(p, UserPromptPart) for m in messages for p in getattr(m, "parts", ()))
        yield f"You have sent {asked} messages."
        return
    if "fail" in prompt:
        raise RuntimeError("the scripted model broke")
    if "think" in prompt:
        yield DeltaThinking("Weighing the question.")
        yield "Thought it through."
        return
    for word, tool in (("weather", "get_weather"), ("delete", "delete_file"), ("drop", "drop_table")):
        if word in prompt:
            if not returns:
                args = '{"city": "Lisbon"}' if tool == "get_weather" else '{"name": "notes.txt"}'
                yield DeltaToolCall(name=tool, json_args=args, tool_call_id=f"call_{tool}")
            else:
                content = returns[-1].content
                yield f"{tool} finished: {content if isinstance(content, str) else 'ok'}"
            return
    for chunk in CHUNKS:
        time.sleep(0.25)  # apart enough that the browser sees the text grow step by step
        yield chunk


def _get_weather(args: dict[str, Any]) -> dict[str, Any]:
    _record("get_weather")
    return {"city": args["city"], "sky": "sunny"}


def _delete_file(args: dict[str, Any]) -> str:
    _record("delete_file " + args["name"])
    return "deleted " + args["name"]


def _drop_table(args: dict[str, Any]) -> str:
    _record("drop_table " + args["name"])
    return "dropped " + args["name"]


CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
agent = Agent(
    FunctionModel(stream_function=stream),
    tools=[
        Tool.manual("get_weather", "Weather in a city.", CITY, _get_weather),
        Tool.manual("delete_file", "Delete a file.", TARGET, _delete_file,
                    execution=ToolExecution.requires_approval),
        Tool.manual("drop_table", "Drop a table.", TARGET, _drop_table,
                    execution=ToolExecution.requires_approval),
    ],
)
# the same script under a priced model identity, so the page can show a cost
priced_agent = Agent(FunctionModel(stream_function=stream, model_name="gpt-5-mini", provider_name="openai"))
