"""A capability load in history crosses every first-party wire as a call + result pair.

The history comes from a real on-demand load run through the agent (FunctionModel); each
encoder's body is serialized, parsed back and checked for a well-formed function call and
its result — same id, result after call, no orphan on either side.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from zigai import Agent
from zigai.capability import Capability, CapabilityLoading
from zigai.messages import (
    CapabilityLoadCallPart,
    CapabilityLoadReturnPart,
    ResponseMessage,
    TextPart,
    ToolCallPart,
    ToolOutcome,
)
from zigai.model import ModelRequest
from zigai.providers.anthropic import _encode as anthropic
from zigai.providers.google import _encode as google
from zigai.providers.openai import encode as responses
from zigai.providers.openai_compatible import encode as chat
from zigai.testing import FunctionModel


def _history() -> tuple[Any, ...]:
    """One successful dependency-chain load and one refused load, then a final answer."""
    turns = iter([
        [ToolCallPart("load_capability", '{"capability_id": "sql"}', "load-1")],
        [ToolCallPart("load_capability", '{"capability_id": "nosql"}', "load-2")],
        [TextPart("done")],
    ])
    model = FunctionModel(lambda messages, info: ResponseMessage(tuple(next(turns))))
    caps = [
        Capability("sql", description="SQL", loading=CapabilityLoading.on_demand,
                   dependencies=["auth"], instructions="Use SQL."),
        Capability("auth", description="auth", loading=CapabilityLoading.on_demand, instructions="Sign in."),
        Capability("nosql", description="documents", loading=CapabilityLoading.on_demand, conflicts=["sql"]),
    ]
    result = Agent(model, capabilities=caps).run("report")
    messages = result.messages
    calls = [p for m in messages for p in m.parts if isinstance(p, CapabilityLoadCallPart)]
    returns = [p for m in messages for p in m.parts if isinstance(p, CapabilityLoadReturnPart)]
    assert [c.tool_call_id for c in calls] == ["load-1", "load-2"]
    assert [r.outcome for r in returns] == [ToolOutcome.success, ToolOutcome.error]
    return messages


def _round_trip(body: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(body))


def _pairs_in_order(events: list[tuple[str, str]]) -> None:
    """``events`` is the wire order of ("call", id) / ("result", id); each result follows its call."""
    called: list[str] = []
    answered: list[str] = []
    for kind, call_id in events:
        if kind == "call":
            assert call_id not in called, f"call {call_id} sent twice"
            called.append(call_id)
        else:
            assert call_id in called, f"orphaned result {call_id}"
            assert call_id not in answered, f"result {call_id} sent twice"
            answered.append(call_id)
    assert called == answered == ["load-1", "load-2"], (called, answered)


def test_openai_responses_sends_function_call_and_output() -> None:
    body = _round_trip(responses.encode_request(ModelRequest(messages=_history()), "gpt-5"))
    events: list[tuple[str, str]] = []
    for item in body["input"]:
        if item.get("type") == "function_call":
            assert item["name"] == "load_capability"
            assert json.loads(item["arguments"])["capability_id"] in ("sql", "nosql")
            events.append(("call", item["call_id"]))
        elif item.get("type") == "function_call_output":
            events.append(("result", item["call_id"]))
            if item["call_id"] == "load-1":
                assert json.loads(item["output"]) == {
                    "loaded": ["auth", "sql"], "instructions": ["Sign in.", "Use SQL."],
                }
    _pairs_in_order(events)


def test_chat_completions_sends_tool_calls_and_tool_messages() -> None:
    body = _round_trip(chat.encode_request(ModelRequest(messages=_history()), "gpt-4o"))
    events: list[tuple[str, str]] = []
    for message in body["messages"]:
        for call in message.get("tool_calls") or ():
            assert message["role"] == "assistant" and call["type"] == "function"
            assert call["function"]["name"] == "load_capability"
            json.loads(call["function"]["arguments"])
            events.append(("call", call["id"]))
        if message["role"] == "tool":
            events.append(("result", message["tool_call_id"]))
    _pairs_in_order(events)


def test_anthropic_sends_tool_use_and_tool_result_blocks() -> None:
    body = _round_trip(anthropic.encode_request(
        ModelRequest(messages=_history()), model_name="claude-x", max_tokens=64,
    ))
    events: list[tuple[str, str]] = []
    previous_uses: set[str] = set()
    for message in body["messages"]:
        blocks = message["content"] if isinstance(message["content"], list) else []
        uses = set()
        for block in blocks:
            if block["type"] == "tool_use":
                assert message["role"] == "assistant" and block["name"] == "load_capability"
                assert block["input"]["capability_id"] in ("sql", "nosql")
                uses.add(block["id"])
                events.append(("call", block["id"]))
            elif block["type"] == "tool_result":
                # Messages API rule: a result answers a tool_use of the immediately preceding turn
                assert message["role"] == "user" and block["tool_use_id"] in previous_uses
                assert block.get("is_error", False) is (block["tool_use_id"] == "load-2")
                events.append(("result", block["tool_use_id"]))
        previous_uses = uses
    _pairs_in_order(events)


def test_gemini_sends_function_call_and_function_response_parts() -> None:
    body = _round_trip(google.encode_request(ModelRequest(messages=_history())))
    events: list[tuple[str, str]] = []
    previous_calls: dict[str, str] = {}
    for content in body["contents"]:
        calls = {}
        for part in content["parts"]:
            if "functionCall" in part:
                call = part["functionCall"]
                assert content["role"] == "model" and call["name"] == "load_capability"
                assert call["args"]["capability_id"] in ("sql", "nosql")
                calls[call["id"]] = call["name"]
                events.append(("call", call["id"]))
            elif "functionResponse" in part:
                response = part["functionResponse"]
                # the response names the function of the preceding model turn's call
                assert content["role"] == "user"
                assert previous_calls.get(response["id"]) == response["name"]
                events.append(("result", response["id"]))
        previous_calls = calls
    _pairs_in_order(events)


@pytest.mark.parametrize("wire", ["anthropic", "gemini"])
def test_a_typed_call_carries_no_stale_arguments(wire: str) -> None:
    """The typed call encodes exactly ``{"capability_id": ...}`` as its arguments."""
    messages = _history()
    if wire == "anthropic":
        body = anthropic.encode_request(ModelRequest(messages=messages), model_name="c", max_tokens=8)
        inputs = [b["input"] for m in body["messages"] if isinstance(m["content"], list)
                  for b in m["content"] if b["type"] == "tool_use"]
    else:
        body = google.encode_request(ModelRequest(messages=messages))
        inputs = [p["functionCall"]["args"] for c in body["contents"] for p in c["parts"] if "functionCall" in p]
    assert inputs == [{"capability_id": "sql"}, {"capability_id": "nosql"}]
