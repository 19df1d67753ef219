"""AG-UI frontend tools, shared state and context (``zigai.ui.state`` and the app's use of it).

The official ``@ag-ui/client`` round trip is in ``tests/test_ui_node.py``; here every event
the app sends is validated with the Python ``ag-ui-protocol`` models, and the bounds are
tested at the limit and one past it.
"""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest
from ag_ui.core import RunAgentInput
from pydantic import TypeAdapter
from support.ui_agents import frontend_agent, text_agent

from zigai import Agent
from zigai.testing import FunctionModel
from zigai.tool import Tool
from zigai.ui import LocalServer, ui_app
from zigai.ui.bridge import CustomEvents
from zigai.ui.state import (
    STATE_DELTA,
    STATE_SNAPSHOT,
    ClientStateLimits,
    ContextEntry,
    InvalidClientState,
    SharedState,
    StateTooLarge,
    parse_context,
    parse_tools,
)

PICK = {"name": "pick_color", "description": "Ask the user.",
        "parameters": {"type": "object", "properties": {"options": {"type": "array"}}}}


def post(url: str, body: Any) -> tuple[int, list[dict[str, Any]] | dict[str, Any]]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    connection.request("POST", "/", json.dumps(body).encode(), {"Content-Type": "application/json"})
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    if response.status != 200:
        return response.status, json.loads(text)
    return 200, [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


def validated(events: Any) -> list[dict[str, Any]]:
    from ag_ui.core import Event

    adapter: TypeAdapter[Any] = TypeAdapter(Event)
    for event in events:
        adapter.validate_python(event)
    return list(events)


def run_input(thread: str, run: str, messages: list[dict[str, Any]], check: bool = True,
              **extra: Any) -> dict[str, Any]:
    body = {"threadId": thread, "runId": run, "messages": messages, "tools": [], "context": [],
            "state": None, "forwardedProps": None, **extra}
    if check:
        RunAgentInput.model_validate(body)  # what we send is the protocol's input
    return body


# -- parsing and bounds ---------------------------------------------------------------------


def test_client_tools_are_parsed_and_bounded_at_the_limit() -> None:
    limits = ClientStateLimits(max_tools=2)
    tools = parse_tools([PICK, {"name": "ask-user"}], limits)
    assert [(t.name, t.parameters["type"]) for t in tools] == [("pick_color", "object"), ("ask-user", "object")]
    assert parse_tools(None, limits) == ()
    with pytest.raises(StateTooLarge, match="3 client tools; the limit is 2"):
        parse_tools([PICK, {"name": "a"}, {"name": "b"}], limits)
    size = len(json.dumps(PICK, separators=(",", ":")).encode())
    assert parse_tools([PICK], ClientStateLimits(max_tool_bytes=size))
    with pytest.raises(StateTooLarge, match="over"):
        parse_tools([PICK], ClientStateLimits(max_tool_bytes=size - 1))
    for bad, message in (({"name": "has space"}, "must match"), ("x", "needs a name"),
                         ({"name": "a", "description": 3}, "description must be a string"),
                         ({"name": "a", "parameters": {"type": "string"}}, "type object")):
        with pytest.raises(InvalidClientState, match=message):
            parse_tools([bad], limits)
    with pytest.raises(InvalidClientState, match="declared twice"):
        parse_tools([PICK, PICK], limits)
    with pytest.raises(InvalidClientState, match="must be an array"):
        parse_tools({"name": "a"}, limits)


def test_context_entries_are_parsed_and_bounded() -> None:
    limits = ClientStateLimits(max_context_entries=2)
    entry = {"description": "user", "value": "ana"}
    assert parse_context([entry, entry], limits) == (ContextEntry("user", "ana"),) * 2
    assert parse_context(None, limits) == ()
    with pytest.raises(StateTooLarge, match="3 context entries"):
        parse_context([entry] * 3, limits)
    with pytest.raises(StateTooLarge, match="over 10 bytes"):
        parse_context([entry], ClientStateLimits(max_context_bytes=10))
    with pytest.raises(InvalidClientState, match="description and value strings"):
        parse_context([{"description": "n", "value": 3}], limits)
    with pytest.raises(InvalidClientState, match="must be an array"):
        parse_context("text", limits)


# -- SharedState ----------------------------------------------------------------------------


def test_shared_state_updates_emit_snapshots_and_json_patch_deltas() -> None:
    outbox = CustomEvents()
    shared = SharedState({"items": ["a"], "n": 1}, (ContextEntry("user", "ana"),), {"x": 1}, outbox=outbox)
    view = shared.state
    view["n"] = 99  # a copy: the run's state is not changed behind its back
    assert shared.state == {"items": ["a"], "n": 1} and shared.forwarded_props == {"x": 1}
    shared.patch([{"op": "add", "path": "/items/-", "value": "b"},
                  {"op": "add", "path": "/items/0", "value": "z"},
                  {"op": "replace", "path": "/n", "value": 2},
                  {"op": "test", "path": "/n", "value": 2},
                  {"op": "add", "path": "/a~1b", "value": {"c~d": 1}},
                  {"op": "remove", "path": "/a~1b/c~0d"}])
    assert shared.state == {"items": ["z", "a", "b"], "n": 2, "a/b": {}}
    shared.set({"fresh": True})
    events = outbox.drain()
    assert [e.name for e in events] == [STATE_DELTA, STATE_SNAPSHOT]
    assert events[0].value[0] == {"op": "add", "path": "/items/-", "value": "b"}
    assert events[1].value == {"fresh": True}
    shared.patch([{"op": "replace", "path": "", "value": [1]}, {"op": "test", "path": "", "value": [1]}])
    shared.patch([{"op": "remove", "path": ""}])
    assert shared.state is None


@pytest.mark.parametrize(("operation", "message"), [
    ({"op": "move", "path": "/n", "from": "/m"}, "op must be add, remove, replace or test"),
    ({"op": "add", "path": "n", "value": 1}, "JSON Pointer"),
    ({"op": "replace", "path": "/missing", "value": 1}, "does not exist"),
    ({"op": "remove", "path": "/items/5"}, "does not exist"),
    ({"op": "add", "path": "/items/5", "value": 1}, "past the end"),
    ({"op": "add", "path": "/items/01", "value": 1}, "not an array index"),
    ({"op": "add", "path": "/n/x", "value": 1}, "not a container"),
    ({"op": "add", "path": "/no/x", "value": 1}, "does not exist"),
    ({"op": "test", "path": "/n", "value": 2}, "test failed"),
    ({"op": "test", "path": "", "value": 2}, "test failed"),
    ({"op": "add", "path": "/n"}, "needs a value"),
    ("add", "must be an object"),
])
def test_a_failing_patch_changes_nothing_and_emits_nothing(operation: Any, message: str) -> None:
    outbox = CustomEvents()
    shared = SharedState({"items": ["a"], "n": 1}, outbox=outbox)
    with pytest.raises(InvalidClientState, match=message):
        shared.patch([{"op": "replace", "path": "/n", "value": 7}, operation])
    assert shared.state == {"items": ["a"], "n": 1} and outbox.drain() == []


def test_state_size_and_patch_length_are_bounded_at_the_limit() -> None:
    limits = ClientStateLimits(max_state_bytes=len(b'{"v":"xx"}'), max_patch_operations=2)
    shared = SharedState({"v": "xx"}, limits=limits)  # exactly at the limit
    with pytest.raises(StateTooLarge, match="the limit is 10"):
        shared.set({"v": "xxx"})
    with pytest.raises(StateTooLarge):
        shared.patch([{"op": "replace", "path": "/v", "value": "xxx"}])
    assert shared.state == {"v": "xx"}
    shared.patch([{"op": "replace", "path": "/v", "value": "a"}] * 2)
    with pytest.raises(StateTooLarge, match="3 patch operations"):
        shared.patch([{"op": "replace", "path": "/v", "value": "a"}] * 3)
    with pytest.raises(InvalidClientState, match="non-empty array"):
        shared.patch([])
    with pytest.raises(InvalidClientState, match="must be JSON"):
        shared.set({"v": object()})
    with pytest.raises(StateTooLarge):
        SharedState({"v": "xxx"}, limits=limits)


# -- through the app ------------------------------------------------------------------------


def test_frontend_tool_run_ends_for_the_browser_and_the_next_run_carries_the_result() -> None:
    app = ui_app(frontend_agent(), "agui")
    state = {"theme": "none"}
    context = [{"description": "user", "value": "ana"}]
    user = {"id": "u1", "role": "user", "content": "Pick a theme"}
    with LocalServer(app) as server:
        status, first = post(server.url, run_input("t-front", "r1", [user], tools=[PICK], state=state,
                                                   context=context))
        assert status == 200
        events = validated(first)
        assert [e["type"] for e in events][-4:] == ["TOOL_CALL_ARGS", "TOOL_CALL_END", "STEP_FINISHED",
                                                    "RUN_FINISHED"]
        assert "outcome" not in events[-1]  # nothing for the browser to resume: it runs the tool
        call = {"id": "a1", "role": "assistant",
                "toolCalls": [{"id": "call_pick_1", "type": "function",
                               "function": {"name": "pick_color", "arguments": "{}"}}]}
        tool = {"id": "t1", "role": "tool", "toolCallId": "call_pick_1", "content": "blue"}
        status, second = post(server.url, run_input("t-front", "r2", [user, call, tool], tools=[PICK],
                                                    state=state, context=context))
        assert status == 200
        events = validated(second)
        types = [e["type"] for e in events]
        delta = next(e for e in events if e["type"] == "STATE_DELTA")
        assert delta["delta"] == [{"op": "replace", "path": "/theme", "value": "blue"}]
        assert events[-1]["result"] == "Done: theme blue saved for ana"
        results = [e["toolCallId"] for e in events if e["type"] == "TOOL_CALL_RESULT"]
        assert results == ["call_save_1"] and types.count("RUN_FINISHED") == 1
        # the same tool message again answers nothing: the pause was answered once
        status, refused = post(server.url, run_input("t-front", "r3", [user, call, tool], tools=[PICK]))
        assert status == 400 and refused["error"]["code"] == "InvalidApprovalReply"


def test_state_and_context_reach_tools_through_deps_or_run_request() -> None:
    seen: list[Any] = []

    def stream(messages: Any, info: Any) -> Any:
        from zigai.testing import DeltaToolCall

        if not any(p.part_kind == "tool-return" for m in messages for p in m.parts):
            yield DeltaToolCall(name="look", json_args="{}", tool_call_id="c1")
        else:
            yield "ok"

    def look(args: Any, ctx: Any) -> str:
        shared = ctx.deps["shared"]
        seen.append((shared.state, shared.context, shared.forwarded_props, ctx.deps["app"]))
        shared.set({"seen": True})
        return "looked"

    agent = Agent(FunctionModel(stream_function=stream),
                  tools=[Tool.manual("look", "Look.", {"type": "object"}, look, takes_context=True)])
    app = ui_app(agent, "agui", run_options=lambda request: {"deps": {"shared": request.shared, "app": 1}})
    with LocalServer(app) as server:
        status, events = post(server.url, run_input(
            "t", "r", [{"id": "u", "role": "user", "content": "hi"}], state={"a": [1]},
            context=[{"description": "d", "value": "v"}], forwardedProps={"p": 2}))
    assert status == 200
    assert seen == [({"a": [1]}, (ContextEntry("d", "v"),), {"p": 2}, 1)]
    snapshot = next(e for e in validated(events) if e["type"] == "STATE_SNAPSHOT")
    assert snapshot["snapshot"] == {"seen": True}


def test_oversized_client_state_is_refused_before_any_run() -> None:
    app = ui_app(text_agent(), "agui", state_limits=ClientStateLimits(max_state_bytes=8, max_tools=1))
    user = [{"id": "u", "role": "user", "content": "hi"}]
    with LocalServer(app) as server:
        assert post(server.url, run_input("t", "r1", user, state={"a": 1}))[0] == 200  # 7 bytes
        status, body = post(server.url, run_input("t2", "r2", user, state={"a": 12}))  # 8 bytes
        assert status == 200
        status, body = post(server.url, run_input("t3", "r3", user, state={"a": 123}))
        assert (status, body["error"]["code"]) == (413, "StateTooLarge")
        status, body = post(server.url, run_input("t4", "r4", user, tools=[PICK, {**PICK, "name": "b"}]))
        assert (status, body["error"]["code"]) == (413, "StateTooLarge")
        status, body = post(server.url, run_input("t5", "r5", user, tools=[{"name": "bad name"}], check=False))
        assert (status, body["error"]["code"]) == (400, "InvalidClientState")
        tool = {"id": "t1", "role": "tool", "toolCallId": "nobody", "content": "x"}
        status, body = post(server.url, run_input("t6", "r6", [*user, tool]))
        assert (status, body["error"]["code"]) == (400, "InvalidApprovalReply")
        status, body = post(server.url, run_input("t7", "r7", [*user, {"id": "t", "role": "tool", "content": "x"}],
                                                    check=False))
        assert (status, body["error"]["code"]) == (400, "InvalidClientMessages")


def test_a_cancelled_run_ends_with_the_protocols_cancelled_outcome() -> None:
    from zigai.ui.agui import AguiEncoder
    from zigai.ui.events import RunFailure, UsageEntry

    (event,) = AguiEncoder().encode(RunFailure("t", "r", "cancelled by the client", "Cancelled",
                                               (UsageEntry("p", "m", 1, 2),)))
    assert validated([event]) == [{"type": "RUN_FINISHED", "threadId": "t", "runId": "r",
                                   "outcome": {"type": "cancelled"},
                                   "usage": [{"provider": "p", "model": "m", "inputTokens": 1,
                                              "outputTokens": 2, "totalTokens": 3}]}]
    (failed,) = AguiEncoder().encode(RunFailure("t", "r", "boom", "RunTimedOut"))
    assert failed["type"] == "RUN_ERROR"
