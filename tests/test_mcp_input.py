"""Multi round-trip input: InputHandler answers, typed InputResponse builders, retries.

The retry path runs against a scripted loopback peer (exact wire asserted) and against the
official SDK (``mcp`` 2.3.0) server, whose tools return real ``input_required`` results.
"""

from __future__ import annotations

import importlib.util
import os
import pickle
from collections.abc import Iterator
from typing import Any

import pytest
from support.mcp_peers import ROOT, stdio_command
from support.mcp_stub import ScriptedPeer

from zigai import mcp
from zigai.security import UrlPolicy

SDK_INSTALLED = importlib.util.find_spec("mcp") is not None and importlib.util.find_spec("mcp_types") is not None
ELICIT = {"method": "elicitation/create", "params": {"message": "Your name?", "requestedSchema": {"type": "object"}}}
SAMPLE = {"method": "sampling/createMessage",
          "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5}}
ROOTS = {"method": "roots/list", "params": {}}
DONE = {"content": [{"type": "text", "text": "done"}], "resultType": "complete"}


def needs(requests: dict[str, Any] | None, state: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"resultType": "input_required"}
    if requests is not None:
        result["inputRequests"] = requests
    if state is not None:
        result["requestState"] = state
    return result


def answering(request: mcp.InputRequest) -> mcp.InputResponse:
    if request.kind is mcp.InputKind.elicitation:
        return mcp.InputResponse.accept({"name": "Ada", "age": 36, "ok": True, "tags": ["a", "b"]})
    if request.kind is mcp.InputKind.roots:
        return mcp.InputResponse.roots(["file:///work", ("file:///data", "data")])
    return mcp.InputResponse.sampled("hello", model="m-1")


# ----------------------------------------------------------------------------- builders


def test_builders_make_the_wire_objects_of_each_family() -> None:
    assert mcp.InputResponse.accept({"n": 1.5}).to_json() == {"action": "accept", "content": {"n": 1.5}}
    assert mcp.InputResponse.decline().to_json() == {"action": "decline"}
    assert mcp.InputResponse.cancel().to_json() == {"action": "cancel"}
    assert mcp.InputResponse.roots(["file:///a", ("file:///b", "B")]).to_json() == {
        "roots": [{"uri": "file:///a"}, {"uri": "file:///b", "name": "B"}]}
    assert mcp.InputResponse.sampled("x", model="m").to_json() == {
        "role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m", "stopReason": "endTurn"}
    image = {"type": "image", "data": "AA==", "mimeType": "image/png"}
    assert mcp.InputResponse.sampled(image, model="m", role="user", stop_reason=None).to_json() == {
        "role": "user", "content": image, "model": "m"}


@pytest.mark.parametrize("build, message", [
    (lambda: mcp.InputResponse.accept({"x": {"nested": 1}}), "field 'x' must be a string"),
    (lambda: mcp.InputResponse.accept({"x": [1]}), "list of strings"),
    (lambda: mcp.InputResponse.accept({1: "x"}), "names must be strings"),
    (lambda: mcp.InputResponse.roots(["https://example.com"]), "file:// URI"),
    (lambda: mcp.InputResponse.sampled("x", model="m", role="system"), "role must be"),
    (lambda: mcp.InputResponse.sampled("x", model=""), "model name"),
    (lambda: mcp.InputResponse.sampled({"text": "no type"}, model="m"), "content block"),
])
def test_builders_refuse_values_the_wire_cannot_carry(build: Any, message: str) -> None:
    with pytest.raises(mcp.InvalidMcpRequest, match=message):
        build()


@pytest.mark.parametrize("value, message", [
    ([], "must be a JSON object"),
    ({"method": "tools/call"}, "unsupported method"),
    ({"method": "roots/list", "params": []}, "params must be a JSON object"),
    ({"method": "elicitation/create", "params": {}}, "string message"),
    ({"method": "sampling/createMessage", "params": {}}, "messages array"),
])
def test_malformed_input_requests_are_invalid_messages(value: Any, message: str) -> None:
    peer = ScriptedPeer(lambda method, params: needs({"k": value}))
    with mcp.Client(peer, input_handler=answering) as client, pytest.raises(mcp.InvalidMcpMessage, match=message):
        client.call_tool("t", {})
    assert peer.methods() == ["tools/call"]


@pytest.mark.parametrize("result, message", [
    ({"resultType": "input_required"}, "needs inputRequests or requestState"),
    ({"resultType": "input_required", "inputRequests": []}, "inputRequests must be a JSON object"),
    ({"resultType": "input_required", "requestState": 7}, "requestState must be a string"),
])
def test_malformed_input_required_results_are_invalid_messages(result: dict[str, Any], message: str) -> None:
    with mcp.Client(ScriptedPeer(lambda m, p: result), input_handler=answering) as client, \
            pytest.raises(mcp.InvalidMcpMessage, match=message):
        client.call_tool("t", {})


# ----------------------------------------------------------------------------- retries on the wire


def test_the_client_answers_every_request_and_retries_with_responses_and_state() -> None:
    rounds = iter([needs({"a": ELICIT, "b": ROOTS, "c": SAMPLE}, "opaque-1"), needs(None, "opaque-2"), DONE])
    peer = ScriptedPeer(lambda method, params: next(rounds))
    seen: list[tuple[str, mcp.InputKind, str | None]] = []

    def handler(request: mcp.InputRequest) -> mcp.InputResponse:
        seen.append((request.key, request.kind, request.message))
        return answering(request)

    with mcp.Client(peer, input_handler=handler) as client:
        assert client.call_tool("t", {"x": 1}).text == "done"
    assert seen == [("a", mcp.InputKind.elicitation, "Your name?"), ("b", mcp.InputKind.roots, None),
                    ("c", mcp.InputKind.sampling, None)]
    first, second, third = (message["params"] for message in peer.sent)
    assert "inputResponses" not in first and "requestState" not in first
    assert second["arguments"] == {"x": 1} and second["requestState"] == "opaque-1"
    assert second["inputResponses"] == {"a": answering(mcp.InputRequest("a", mcp.InputKind.elicitation)).to_json(),
                                        "b": {"roots": [{"uri": "file:///work"}, {"uri": "file:///data", "name": "data"}]},
                                        "c": answering(mcp.InputRequest("c", mcp.InputKind.sampling)).to_json()}
    # a round with only state: the old responses are not resent, the new state is
    assert third["requestState"] == "opaque-2" and "inputResponses" not in third


def test_prompts_and_resources_retry_too() -> None:
    def reply(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if "requestState" not in params:
            return needs({"a": ELICIT}, "s")
        if method == "prompts/get":
            return {"messages": [], "resultType": "complete"}
        return {"contents": [{"uri": "memo://x", "text": "x"}], "resultType": "complete"}

    with mcp.Client(ScriptedPeer(reply), input_handler=answering) as client:
        assert client.get_prompt(mcp.PromptRequest("p")).messages == ()
        assert client.read_resource("memo://x").contents[0].text == "x"  # type: ignore[union-attr]


def test_the_round_bound_holds_at_the_limit_and_one_past_it() -> None:
    def peer_needing(rounds: int) -> ScriptedPeer:
        replies = iter([needs({"a": ELICIT}, f"s{n}") for n in range(rounds)] + [DONE])
        return ScriptedPeer(lambda method, params: next(replies))

    with mcp.Client(peer_needing(3), input_handler=answering, max_input_rounds=3) as client:
        assert client.call_tool("t", {}).text == "done"
    peer = peer_needing(4)
    with mcp.Client(peer, input_handler=answering, max_input_rounds=3) as client, \
            pytest.raises(mcp.McpInputRoundsExhausted, match="after 3 rounds") as caught:
        client.call_tool("t", {})
    assert len(peer.sent) == 4 and caught.value.result["requestState"] == "s3"
    assert isinstance(caught.value, mcp.McpInputRequired)


def test_a_response_of_the_wrong_family_never_reaches_the_server() -> None:
    peer = ScriptedPeer(lambda method, params: needs({"a": SAMPLE}))
    with mcp.Client(peer, input_handler=lambda request: mcp.InputResponse.decline()) as client, \
            pytest.raises(mcp.InvalidInputResponse, match="is sampling/createMessage, but the handler answered"):
        client.call_tool("t", {})
    def not_a_response(request: mcp.InputRequest) -> Any:
        return {"action": "accept"}

    with mcp.Client(peer, input_handler=not_a_response) as client, \
            pytest.raises(mcp.InvalidInputResponse, match="must return an InputResponse"):
        client.call_tool("t", {})
    assert peer.methods() == ["tools/call", "tools/call"]


@pytest.mark.parametrize("kind, payload, message", [
    (mcp.InputKind.elicitation, {"action": "maybe"}, "action must be one of"),
    (mcp.InputKind.elicitation, {"action": "decline", "content": {}}, "only an accepted"),
    (mcp.InputKind.elicitation, {"action": "accept", "content": []}, "content must be an object"),
    (mcp.InputKind.roots, {"roots": [{"uri": "http://x"}]}, "file:// roots"),
    (mcp.InputKind.sampling, {"role": "user", "content": {"type": "text"}}, "needs a role, a model"),
])
def test_hand_built_responses_are_checked_against_their_family(kind: mcp.InputKind, payload: dict[str, Any],
                                                               message: str) -> None:
    with pytest.raises(mcp.InvalidInputResponse, match=message):
        mcp.InputResponse(kind, payload).check_answers(mcp.InputRequest("k", kind))
    with pytest.raises(mcp.InvalidInputResponse, match="needs the InputRequest"):
        mcp.InputResponse.decline().check_answers("k")  # type: ignore[arg-type]


def test_without_a_handler_or_outside_the_carriers_input_required_still_raises() -> None:
    peer = ScriptedPeer(lambda method, params: needs({"a": ELICIT}, "s"))
    with mcp.Client(peer) as client, pytest.raises(mcp.McpInputRequired) as caught:
        client.call_tool("t", {})
    assert caught.value.result["requestState"] == "s"
    with mcp.Client(peer, input_handler=answering) as client, pytest.raises(mcp.McpInputRequired):
        client.list_tools()
    assert peer.methods() == ["tools/call", "tools/list"]


def test_client_options_are_checked() -> None:
    peer = ScriptedPeer(lambda method, params: DONE)
    with pytest.raises(mcp.InvalidMcpRequest, match="input_handler must be callable"):
        mcp.Client(peer, input_handler="yes")  # type: ignore[arg-type]
    for bad in (0, True, 1.5):
        with pytest.raises(mcp.InvalidMcpRequest, match="max_input_rounds"):
            mcp.Client(peer, max_input_rounds=bad)  # type: ignore[arg-type]


def test_requests_round_trip_and_errors_pickle() -> None:
    request = mcp.InputRequest.from_json("k", SAMPLE)
    assert request.to_json() == SAMPLE and request.method == "sampling/createMessage"
    error = pickle.loads(pickle.dumps(mcp.McpInputRoundsExhausted("m", result={"a": 1})))
    assert error.result == {"a": 1}


# ----------------------------------------------------------------------------- the official SDK


@pytest.fixture(scope="module", params=["stdio", "http"])
def sdk(request: pytest.FixtureRequest) -> Iterator[tuple[mcp.Client, list[mcp.InputRequest]]]:
    if not SDK_INSTALLED:
        pytest.skip("the MCP SDK is not installed (dev extra: pip install mcp==2.3.0)")
    from support.mcp_sdk_peer import sdk_http_server

    asked: list[mcp.InputRequest] = []

    def handler(request: mcp.InputRequest) -> mcp.InputResponse:
        asked.append(request)
        if request.kind is mcp.InputKind.elicitation:
            name = "Grace" if "decline" not in (request.message or "") else None
            return mcp.InputResponse.accept({"name": name}) if name else mcp.InputResponse.decline()
        return mcp.InputResponse.sampled("a short summary", model="zigai-test")

    options = dict(capabilities=mcp.ClientCapabilities(elicitation={}, sampling={}), input_handler=handler,
                   default_timeout_ms=20_000)
    if request.param == "stdio":
        quiet = mcp.StdioOptions(stderr=mcp.StderrMode.discard, env={**os.environ, "PYTHONPATH": str(ROOT)})
        with mcp.Client(mcp.StdioTransport(stdio_command("sdk-stdio"), quiet), **options) as client:  # type: ignore[arg-type]
            yield client, asked
    else:
        with sdk_http_server() as url, mcp.Client(
                mcp.StreamableHttpTransport(url, url_policy=UrlPolicy.local_development()), **options) as client:  # type: ignore[arg-type]
            yield client, asked


@pytest.mark.interop
@pytest.mark.timeout(60)
def test_sdk_server_elicits_then_samples_and_the_handler_answers_both(
        sdk: tuple[mcp.Client, list[mcp.InputRequest]]) -> None:
    client, asked = sdk
    asked.clear()
    result = client.call_tool("interview", {"topic": "tasks"})
    assert not result.is_error and result.text == "Grace on tasks: a short summary (zigai-test)"
    assert [(r.key, r.kind) for r in asked] == [("who", mcp.InputKind.elicitation), ("summary", mcp.InputKind.sampling)]
    assert asked[0].message == "Who asks about tasks?"
    assert asked[0].params["requestedSchema"]["required"] == ["name"]
    assert asked[1].params["messages"][0]["content"]["text"] == "Summarize tasks"


@pytest.mark.interop
@pytest.mark.timeout(60)
def test_sdk_server_sees_a_declined_elicitation(sdk: tuple[mcp.Client, list[mcp.InputRequest]]) -> None:
    client, asked = sdk
    asked.clear()
    assert client.call_tool("interview", {"topic": "decline"}).text == "no name: decline"
    assert [r.kind for r in asked] == [mcp.InputKind.elicitation]



# ----------------------------------------------------------------------------- the zigai server side


def test_a_zigai_tool_asks_twice_and_the_retries_carry_each_round() -> None:
    server = mcp.Server("asker", "1.0")
    rounds: list[dict[str, Any]] = []

    def ask(arguments: dict[str, Any], request: Any) -> Any:
        rounds.append({"inputResponses": request.params.get("inputResponses"), "state": request.request_state,
                       "wire": request.params.get("requestState")})
        if request.request_state is None:
            return mcp.InputRequired((mcp.InputRequest.from_json("r", ROOTS),), "one")
        if request.request_state == "one":
            return mcp.InputRequired((mcp.InputRequest.from_json("e", ELICIT),), "two")
        return "ok"

    server.add_tool(mcp.ToolInfo("ask", {"type": "object"}), ask)
    capabilities = mcp.ClientCapabilities(roots={}, elicitation={})
    with mcp.Client(mcp.InProcessTransport(server), input_handler=answering, capabilities=capabilities) as client:
        assert client.call_tool("ask", {}).text == "ok"
    assert rounds[0] == {"inputResponses": None, "state": None, "wire": None}
    assert rounds[1]["state"] == "one" and list(rounds[1]["inputResponses"]) == ["r"]
    assert rounds[2]["state"] == "two" and list(rounds[2]["inputResponses"]) == ["e"]
    assert rounds[1]["wire"] != "one" and rounds[2]["wire"].startswith("zs1.")  # the client echoed the sealed state


def test_input_required_values_are_checked_when_built() -> None:
    request = mcp.InputRequest("a", mcp.InputKind.roots)
    assert mcp.InputRequired((), "s").to_json() == {"resultType": "input_required", "requestState": "s"}
    for requests, state, message in [((), None, "needs input requests or a request state"),
                                      ((request, request), None, "keys must be unique"),
                                      (("a",), None, "must be InputRequest values"),
                                      ((request,), 5, "requestState must be a string")]:
        with pytest.raises(mcp.InvalidMcpRequest, match=message):
            mcp.InputRequired(requests, state)  # type: ignore[arg-type]
