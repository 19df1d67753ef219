"""Server-side multi round-trip input: ServerRequest.ask, sealed requestState, answers carried.

The wire is asserted through ``Server.handle_value`` (what any MCP client sends); the whole
loop runs against the zigai Client with an InputHandler over the in-process transport and
against the official SDK client (``mcp`` 2.3.0) over 127.0.0.1 HTTP.  The
official conformance suite's SEP-2322 server scenarios run in ``test_mcp_conformance_suite``.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from zigai import mcp
from zigai.mcp.server import input as server_input
from zigai.tool import Tool

SDK_INSTALLED = importlib.util.find_spec("mcp") is not None and importlib.util.find_spec("mcp_types") is not None
ALL = {"sampling": {}, "roots": {}, "elicitation": {}}
FORM = {"type": "object", "properties": {"name": {"type": "string"}, "color": {"type": "string"}}}
NAME = mcp.InputRequest("name", mcp.InputKind.elicitation, {"message": "Your name?", "requestedSchema": FORM})
COLOR = mcp.InputRequest("color", mcp.InputKind.elicitation, {"message": "Favourite colour?", "requestedSchema": FORM})
ROOTS = mcp.InputRequest("roots", mcp.InputKind.roots)
ACCEPT_ADA = {"action": "accept", "content": {"name": "Ada"}}


def _message(method: str, params: dict[str, Any], capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": ALL if capabilities is None else capabilities}
    return {"jsonrpc": "2.0", "id": 7, "method": method, "params": {**params, "_meta": meta}}


def _call(server: mcp.Server, params: dict[str, Any], method: str = "tools/call",
          capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    reply = server.handle_value(_message(method, params, capabilities))
    assert reply is not None
    return reply


def _server(calls: list[Any] | None = None, **options: Any) -> mcp.Server:
    server = mcp.Server("asker", "1.0", **options)

    def greet(arguments: dict[str, Any], request: mcp.ServerRequest) -> str:
        if calls is not None:
            calls.append(request.request_state)
        first = request.ask(NAME, state="asked-name")["name"]
        second = request.ask(COLOR, state="asked-color")["color"]
        return f"{first['content']['name']} likes {second['content']['color']}"

    server.add_tool(mcp.ToolInfo("greet", {"type": "object"}), greet)
    return server


def _first_round(server: mcp.Server, tool: str = "greet") -> dict[str, Any]:
    result = _call(server, {"name": tool, "arguments": {}})["result"]
    assert result["resultType"] == "input_required"
    return result


# ----------------------------------------------------------------------------- the wire


def test_rounds_carry_answers_in_a_sealed_state_and_never_re_ask() -> None:
    calls: list[Any] = []
    server = _server(calls)
    first = _first_round(server)
    assert first["inputRequests"] == {"name": {"method": "elicitation/create",
                                               "params": {"message": "Your name?", "requestedSchema": FORM}}}
    assert first["requestState"].startswith("zs1.") and "asked-name" not in first["requestState"]
    assert first["_meta"] == {"io.modelcontextprotocol/serverInfo": {"name": "asker", "version": "1.0"}}

    second = _call(server, {"name": "greet", "arguments": {}, "inputResponses": {"name": ACCEPT_ADA},
                            "requestState": first["requestState"]})["result"]
    assert second["resultType"] == "input_required" and list(second["inputRequests"]) == ["color"]
    assert second["requestState"] != first["requestState"]

    # The third round answers only the colour: the name travels in the sealed state.
    done = _call(server, {"name": "greet", "arguments": {}, "requestState": second["requestState"],
                          "inputResponses": {"color": {"action": "accept", "content": {"color": "teal"}}}})["result"]
    assert done["resultType"] == "complete" and done["content"][0]["text"] == "Ada likes teal"
    assert calls == [None, "asked-name", "asked-color"]


def test_a_missing_answer_is_asked_again_and_extra_keys_are_ignored() -> None:
    server = _server()
    again = _call(server, {"name": "greet", "arguments": {}, "inputResponses": {"wrong": ACCEPT_ADA}})["result"]
    assert again["resultType"] == "input_required" and list(again["inputRequests"]) == ["name"]
    extra = _call(server, {"name": "greet", "arguments": {},
                           "inputResponses": {"name": ACCEPT_ADA, "other": {"action": "accept", "content": {}}}})
    assert list(extra["result"]["inputRequests"]) == ["color"]


@pytest.mark.parametrize("responses, message", [
    (None, "inputResponses must be an object"),
    ([], "inputResponses must be an object"),
    ({"name": 12345}, "input response 'name' must be an object"),
    ({"name": {"action": "maybe"}}, "elicitation action must be one of"),
    ({"name": {"roots": []}}, "elicitation action must be one of"),
])
def test_malformed_answers_are_invalid_params(responses: Any, message: str) -> None:
    reply = _call(_server(), {"name": "greet", "arguments": {}, "inputResponses": responses})
    assert reply["error"]["code"] == -32602 and message in reply["error"]["message"]


def test_an_answer_of_the_wrong_family_is_refused() -> None:
    server = mcp.Server("s", "1")
    server.add_tool(mcp.ToolInfo("where", {"type": "object"}),
                    lambda arguments, request: str(request.ask(ROOTS)["roots"]["roots"]))
    reply = _call(server, {"name": "where", "arguments": {}, "inputResponses": {"roots": ACCEPT_ADA}})
    assert reply["error"]["code"] == -32602 and "roots must be a list of file:// roots" in reply["error"]["message"]
    ok = _call(server, {"name": "where", "arguments": {},
                        "inputResponses": {"roots": {"roots": [{"uri": "file:///w"}]}}})["result"]
    assert ok["content"][0]["text"] == "[{'uri': 'file:///w'}]"


def _tampered(state: str) -> list[str]:
    version, body, mac = state.split(".")
    flipped = body[:-1] + ("A" if body[-1] != "A" else "B")
    return [state + "-TAMPERED", f"{version}.{flipped}.{mac}", f"zs0.{body}.{mac}", "nonsense", "zs1.%%%.%%%", ""]


def test_a_changed_state_is_refused_before_the_handler_runs() -> None:
    calls: list[Any] = []
    server = _server(calls)
    state = _first_round(server)["requestState"]
    for bad in _tampered(state):
        reply = _call(server, {"name": "greet", "arguments": {}, "inputResponses": {"name": ACCEPT_ADA},
                               "requestState": bad})
        assert reply["error"]["code"] == -32602, bad
        assert "integrity check" in reply["error"]["message"]
    assert calls == [None]  # only the first round reached the tool
    reply = _call(server, {"name": "greet", "arguments": {}, "requestState": 5})
    assert reply["error"]["code"] == -32602 and "must be the string" in reply["error"]["message"]


def test_a_state_is_bound_to_its_method_and_target() -> None:
    server = _server()
    server.add_tool(mcp.ToolInfo("other", {"type": "object"}), lambda arguments, request: "never")
    server.add_prompt("greet", lambda args, request: "never")
    state = _first_round(server)["requestState"]
    for method, params in (("tools/call", {"name": "other", "arguments": {}}), ("prompts/get", {"name": "greet"})):
        reply = _call(server, {**params, "requestState": state}, method)
        assert reply["error"]["code"] == -32602 and "issued for another request" in reply["error"]["message"]


def test_replicas_sharing_a_state_key_accept_each_others_states_others_do_not() -> None:
    key = b"k" * 32
    state = _first_round(_server(state_key=key))["requestState"]
    retry = {"name": "greet", "arguments": {}, "inputResponses": {"name": ACCEPT_ADA}, "requestState": state}
    assert _call(_server(state_key=key), retry)["result"]["resultType"] == "input_required"
    assert "integrity check" in _call(_server(), retry)["error"]["message"]
    with pytest.raises(mcp.InvalidServerDefinition, match="at least 16 bytes"):
        mcp.Server("s", "1", state_key=b"short")
    mcp.Server("s", "1", state_key=b"x" * 16)  # exactly the minimum


def test_a_state_expires_at_its_age_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1_000_000.0]
    monkeypatch.setattr(server_input.time, "time", lambda: now[0])
    server = _server(request_state_max_age_s=60)
    state = _first_round(server)["requestState"]
    retry = {"name": "greet", "arguments": {}, "inputResponses": {"name": ACCEPT_ADA}, "requestState": state}
    now[0] += 60
    assert _call(server, retry)["result"]["resultType"] == "input_required"  # exactly at the bound
    now[0] += 1
    reply = _call(server, retry)
    assert reply["error"]["code"] == -32602 and "expired" in reply["error"]["message"]
    assert isinstance(pickle_round_trip(mcp.InvalidRequestState("x")), mcp.InvalidParams)


def pickle_round_trip(error: Exception) -> Exception:
    import pickle

    return pickle.loads(pickle.dumps(error))


def test_input_the_client_did_not_declare_is_refused_with_the_capability() -> None:
    server = _server()
    reply = _call(server, {"name": "greet", "arguments": {}}, capabilities={"sampling": {}})
    assert reply["error"]["code"] == -32021
    assert reply["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}
    returned = mcp.Server("s", "1")
    returned.add_tool(mcp.ToolInfo("t", {"type": "object"}), lambda arguments, request: mcp.InputRequired((ROOTS,)))
    reply = _call(returned, {"name": "t", "arguments": {}}, capabilities={})
    assert reply["error"]["data"] == {"requiredCapabilities": {"roots": {}}}


def test_prompts_and_resources_ask_too_and_other_methods_may_not() -> None:
    server = mcp.Server("s", "1")
    server.add_prompt("brief", lambda args, request: f"context: {request.ask(NAME)['name']['content']['name']}")
    server.add_resource("test://who", lambda uri, request: request.ask(NAME)["name"]["content"]["name"])
    server.add_method("x/ask", lambda params, request: request.ask(NAME))
    for method, params in (("prompts/get", {"name": "brief"}), ("resources/read", {"uri": "test://who"})):
        first = _call(server, params, method)["result"]
        assert first["resultType"] == "input_required" and list(first["inputRequests"]) == ["name"]
        done = _call(server, {**params, "inputResponses": {"name": ACCEPT_ADA},
                              "requestState": first["requestState"]}, method)["result"]
        assert done["resultType"] == "complete" and "Ada" in str(done)
    reply = _call(server, {"inputResponses": {"name": ACCEPT_ADA}}, "x/ask")
    assert reply["error"]["code"] == -32603
    # A request that is not a carrier never reads inputResponses at all.
    assert _call(server, {"inputResponses": None}, "tools/list")["result"]["tools"] == []
    server.add_tool(mcp.ToolInfo("sloppy", {"type": "object"}), lambda arguments, request: request.ask("name"))
    reply = _call(server, {"name": "sloppy", "arguments": {}})
    assert reply["result"]["isError"] is True  # a handler bug (ask needs InputRequest values) is a tool error
    formless = mcp.InputRequest("who", mcp.InputKind.elicitation, {"message": "Who?"})
    linked = mcp.InputRequest("site", mcp.InputKind.elicitation, {"message": "Sign in", "mode": "url",
                                                                   "url": "https://example.com/login"})
    server.add_tool(mcp.ToolInfo("formless", {"type": "object"}), lambda arguments, request: request.ask(formless))
    server.add_tool(mcp.ToolInfo("linked", {"type": "object"}), lambda arguments, request: request.ask(linked))
    assert _call(server, {"name": "formless", "arguments": {}})["result"]["isError"] is True  # never sent
    assert list(_call(server, {"name": "linked", "arguments": {}})["result"]["inputRequests"]) == ["site"]


# ----------------------------------------------------------------------------- against the zigai client


def test_the_zigai_client_answers_each_key_once_through_its_input_handler() -> None:
    asked: list[str] = []

    def handler(request: mcp.InputRequest) -> mcp.InputResponse:
        asked.append(request.key)
        return mcp.InputResponse.accept({"name": "Ada"} if request.key == "name" else {"color": "red"})

    capabilities = mcp.ClientCapabilities(elicitation={})
    with mcp.Client(mcp.InProcessTransport(_server()), input_handler=handler, capabilities=capabilities) as client:
        assert client.call_tool("greet", {}).text == "Ada likes red"
    assert asked == ["name", "color"]


def test_a_zigai_tool_asks_through_current_request() -> None:
    def confirm(args: dict[str, Any]) -> str:
        request = mcp.current_request()
        assert request is not None
        action = args["action"]
        answer = request.ask(mcp.InputRequest("ok", mcp.InputKind.elicitation, {"message": f"{action}?", "requestedSchema": FORM}))["ok"]
        return f"{action}: {answer['action']}"

    server = mcp.Server("s", "1")
    schema = {"type": "object", "properties": {"action": {"type": "string"}}, "required": ["action"]}
    server.add_tool(Tool.manual("confirm", "Confirm an action with the user", schema, confirm))
    with mcp.Client(mcp.InProcessTransport(server), input_handler=lambda request: mcp.InputResponse.decline(),
                    capabilities=mcp.ClientCapabilities(elicitation={})) as client:
        assert client.call_tool("confirm", {"action": "deploy"}).text == "deploy: decline"


def test_a_correctly_signed_but_malformed_state_is_refused() -> None:
    key = b"k" * 32
    server = _server(state_key=key)

    def signed(body: str) -> str:
        return f"zs1.{body}.{server_input._b64(server_input._mac(key, body))}"

    def payload(**fields: Any) -> str:
        import json

        document = {"m": "tools/call", "t": "greet", "iat": server_input.time.time(), "s": None, "a": {}, **fields}
        return server_input._b64(json.dumps(document).encode())

    for state, message in ((signed("not~base64"), "integrity check"), (signed(server_input._b64(b"[1]")), "integrity"),
                           (signed(payload(iat="yesterday")), "expired"),
                           (signed(payload(iat=server_input.time.time() + 3600)), "expired"),
                           (signed(payload(a=[])), "malformed"), (signed(payload(s=5)), "malformed")):
        reply = _call(server, {"name": "greet", "arguments": {}, "requestState": state})
        assert reply["error"]["code"] == -32602 and message in reply["error"]["message"], state
    assert _call(server, {"name": "greet", "arguments": {}, "requestState": signed(payload())})["result"][
        "resultType"] == "input_required"


# ----------------------------------------------------------------------------- the official SDK client


@pytest.mark.interop
@pytest.mark.timeout(60)
@pytest.mark.skipif(not SDK_INSTALLED, reason="the MCP SDK is not installed (dev extra: pip install mcp==2.3.0)")
def test_the_official_sdk_client_answers_a_zigai_tool_that_asks_three_times() -> None:
    import asyncio

    import mcp_types as types
    from mcp import Client

    server = mcp.Server("asker", "1.0")
    asked: list[str] = []

    def book(arguments: dict[str, Any], request: mcp.ServerRequest) -> str:
        name = request.ask(NAME, state="asked-name")["name"]["content"]["name"]
        note = request.ask(mcp.InputRequest("note", mcp.InputKind.sampling, {
            "messages": [{"role": "user", "content": {"type": "text", "text": "a note"}}], "maxTokens": 9}))["note"]
        roots = request.ask(ROOTS)["roots"]["roots"]
        return f"{name}: {note['content']['text']} in {roots[0]['uri']}"

    server.add_tool(mcp.ToolInfo("book", {"type": "object"}), book)

    async def elicit(context: Any, params: Any) -> Any:
        asked.append("elicitation")
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def sample(context: Any, params: Any) -> Any:
        asked.append("sampling")
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="aisle seat"),
                                         model="sdk-model", stop_reason="endTurn")

    async def roots(context: Any) -> Any:
        asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri="file:///trips", name="trips")])

    async def main(url: str) -> str:
        async with Client(url, mode="auto", read_timeout_seconds=20, elicitation_callback=elicit,
                          sampling_callback=sample, list_roots_callback=roots) as client:
            result = await client.call_tool("book", {})
            return str(result.content[0].text)

    with mcp.serve_http(server) as running:
        text = asyncio.run(asyncio.wait_for(main(running.url), 40))
    assert text == "Ada: aisle seat in file:///trips"
    assert asked == ["elicitation", "sampling", "roots"]  # each question once: answers ride in the sealed state
