"""RealtimeSession over a loopback WebSocket server speaking the OpenAI Realtime GA wire, and
over a Gemini Live peer (in memory and on a loopback WebSocket): text turns, tool turns, reconnects, history, observer."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from zigai.messages import (
    RequestMessage,
    ResponseMessage,
    SpeechPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from zigai.messages import UserPromptPart as User
from zigai.realtime import (
    OPENAI,
    ConfigureSession,
    GeminiLiveCodec,
    OpenAIRealtimeCodec,
    RealtimeCodecError,
    RealtimeConnectionError,
    RealtimeConnectionLost,
    RealtimeEventInfo,
    RealtimeFrameTooLarge,
    RealtimeSession,
    RealtimeSessionClosed,
    RealtimeSessionError,
    Reconnected,
    ReconnectPolicy,
)
from zigai.reflect import tool
from zigai.tool import ModelRetry

websockets_server = pytest.importorskip(
    "websockets.sync.server", reason="install the websockets extra: pip install -e '.[dev]'")
from zigai.realtime.websocket import WebSocketConnection  # noqa: E402


def weather(city: str) -> str:
    """Current weather for a city."""
    if city == "Atlantis":
        raise ModelRetry("no such city; ask for another")
    return f"20C in {city}"


WEATHER = tool("weather", None, weather)
USAGE = {"input_tokens": 10, "output_tokens": 5, "input_token_details": {"cached_tokens": 2}}


class OpenAIRealtimeServer:
    """A scripted OpenAI Realtime GA server on 127.0.0.1 (one thread per connection)."""

    def __init__(self) -> None:
        self.connections: list[list[dict[str, Any]]] = []
        self._server = websockets_server.serve(self._handle, "127.0.0.1", 0)
        self.port = self._server.socket.getsockname()[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._thread.join(timeout=5)

    def _handle(self, conn: Any) -> None:
        received: list[dict[str, Any]] = []
        self.connections.append(received)
        index = len(self.connections)
        send = lambda frame: conn.send(json.dumps(frame))  # noqa: E731
        send({"type": "session.created", "session": {"id": f"sess_{index}"}})
        texts: list[str] = []
        outputs: list[str] = []
        for raw in conn:
            message = json.loads(raw)
            received.append(message)
            kind = message["type"]
            if kind == "session.update":
                send({"type": "session.updated", "session": message["session"]})
            elif kind == "conversation.item.create":
                item = message["item"]
                if item["type"] == "message":
                    texts.append(item["content"][0]["text"])
                    outputs.clear()
                else:
                    outputs.append(item["output"])
                send({"type": "conversation.item.added", "item": {"id": "x"}})
            elif kind == "response.cancel":
                send({"type": "response.done", "response": {"id": "slow", "status": "cancelled"}})
            elif kind == "response.create":
                rid = f"resp_{len(received)}"
                send({"type": "response.created", "response": {"id": rid, "status": "in_progress"}})
                text = texts[-1]
                if text == "drop":
                    send({"type": "response.output_text.delta", "response_id": rid, "item_id": "m", "delta": "par"})
                    conn.close(code=1011, reason="overloaded")
                    return
                if text == "slow":
                    send({"type": "response.output_text.delta", "response_id": rid, "item_id": "m", "delta": "Let"})
                    continue
                if text == "bye":
                    conn.close(code=1000)
                    return
                if text.startswith("weather") and not outputs:
                    city = text.split()[-1]
                    send({"type": "response.output_item.done", "response_id": rid, "item": {
                        "id": "fc", "type": "function_call", "call_id": "call_1", "name": "weather",
                        "arguments": json.dumps({"city": city})}})
                    send({"type": "response.done", "response": {"id": rid, "status": "completed", "usage": USAGE}})
                    continue
                answer = f"It is {outputs[-1]}" if outputs else f"echo: {text}"
                for piece in (answer[:4], answer[4:]):
                    send({"type": "response.output_text.delta", "response_id": rid, "item_id": "m", "delta": piece})
                send({"type": "response.output_text.done", "response_id": rid, "item_id": "m", "text": answer})
                send({"type": "response.done", "response": {"id": rid, "status": "completed", "usage": USAGE}})


@pytest.fixture
def server() -> Iterator[OpenAIRealtimeServer]:
    running = OpenAIRealtimeServer()
    yield running
    running.close()


class Recorder:
    def __init__(self) -> None:
        self.infos: list[RealtimeEventInfo] = []

    def on_realtime_event(self, info: RealtimeEventInfo) -> None:
        self.infos.append(info)


def openai_session(server: OpenAIRealtimeServer, **kwargs: Any) -> RealtimeSession:
    return RealtimeSession(lambda: WebSocketConnection(f"ws://127.0.0.1:{server.port}", headers={
        "Authorization": "Bearer test-key"}), OpenAIRealtimeCodec(OPENAI),
        config=ConfigureSession(instructions="be brief"), tools=[WEATHER],
        reconnect=ReconnectPolicy(max_attempts=2, delay_s=0), receive_timeout_s=10, **kwargs)


def test_text_turn_tool_turn_and_reconnect_over_a_loopback_websocket(server: OpenAIRealtimeServer) -> None:
    observer = Recorder()
    with openai_session(server, observer=observer) as session:
        session.start()
        assert session.session_id == "sess_1"
        configure = server.connections[0][0]
        assert configure["session"]["tools"][0]["name"] == "weather"
        assert configure["session"]["instructions"] == "be brief"

        turn = session.ask("hello")
        assert (turn.status, turn.text) == ("completed", "echo: hello")
        assert turn.usage.input_tokens == 10 and turn.usage.cache_read_tokens == 2
        assert turn.messages == (RequestMessage((User("hello"),)),) + turn.messages[1:]
        (reply,) = turn.messages[1:]
        assert isinstance(reply, ResponseMessage) and reply.parts == (TextPart("echo: hello"),)
        assert reply.provider_response_id == "resp_3" and reply.provider_name == "openai"

        turn = session.ask("weather Oslo")
        assert (turn.status, turn.text) == ("completed", "It is 20C in Oslo")
        assert turn.tool_calls == (ToolCallPart("weather", '{"city": "Oslo"}', "call_1"),)
        user, call, result, answer = turn.messages
        assert isinstance(call, ResponseMessage) and call.parts == turn.tool_calls
        assert isinstance(result, RequestMessage)
        assert result.parts[0] == ToolReturnPart("weather", "call_1", "20C in Oslo")
        assert isinstance(answer, ResponseMessage) and answer.parts == (TextPart("It is 20C in Oslo"),)
        assert turn.usage.input_tokens == 20  # both responses of the turn
        sent_output = [m for m in server.connections[0] if m["type"] == "conversation.item.create"][-1]
        assert sent_output["item"] == {"type": "function_call_output", "call_id": "call_1", "output": "20C in Oslo"}

        turn = session.ask("drop")  # the server fails mid-response with 1011
        assert turn.status == "lost" and turn.text == "par"
        (reconnected,) = turn.reconnects
        assert reconnected == Reconnected(1, server_state_survived=False, response_lost=True, code=1011)
        assert session.session_id == "sess_2" and len(server.connections) == 2
        assert [m["type"] for m in server.connections[1]] == ["session.update"]  # nothing resent
        assert TextPart("par") not in [p for m in session.history for p in m.parts]  # a lost response

        assert session.ask("again").text == "echo: again"
        assert session.usage.input_tokens == 40
        history_kinds = [type(m).__name__ for m in session.history]
        assert history_kinds == ["RequestMessage", "ResponseMessage"] * 2 + ["RequestMessage", "ResponseMessage"] \
            + ["RequestMessage"] + ["RequestMessage", "ResponseMessage"]

        with pytest.raises(RealtimeSessionClosed, match="code 1000"):
            session.ask("bye")  # a normal close is not reconnectable
        assert session.state == "closed"
    kinds = {i.kind for i in observer.infos}
    assert {"connected", "reconnected", "closed", "SendText", "TextDelta", "ResponseDone",
            "ToolCallRequested", "SendToolResults"} <= kinds
    for info in observer.infos:  # metadata only: no prompt, answer or tool content
        for secret in ("hello", "echo", "Oslo", "be brief", "20C"):
            assert secret not in repr(info)
    sizes = [i.text_chars for i in observer.infos if i.kind == "SendText"]
    assert sizes[0] == len("hello")
    assert any(i.tool_name == "weather" and i.call_id == "call_1" for i in observer.infos)


def test_tool_failures_are_answered_to_the_model(server: OpenAIRealtimeServer) -> None:
    with openai_session(server) as session:
        session.start()
        turn = session.ask("weather Atlantis")
        assert turn.text == "It is no such city; ask for another"
        returns = [p for m in turn.messages for p in m.parts if isinstance(p, ToolReturnPart)]
        assert returns[0].outcome.value == "error"


def test_websocket_urls_and_connect_failures() -> None:
    for url in ("ws://example.com/realtime", "http://127.0.0.1:1/", "ws://10.0.0.1/"):
        with pytest.raises(RealtimeConnectionError):
            WebSocketConnection(url)
    with pytest.raises(RealtimeConnectionLost) as caught:  # nothing listens on this loopback port
        WebSocketConnection("ws://127.0.0.1:9/", open_timeout_s=2)
    assert caught.value.reconnectable


# -- Gemini Live through an in-memory peer --------------------------------------------------------


class GeminiPeer:
    """The server side of Gemini Live, answering frames synchronously into a queue."""

    def __init__(self) -> None:
        self.setups: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []
        self.drop_next_receive = False

    def connect(self) -> GeminiConnection:
        return GeminiConnection(self)


class GeminiConnection:
    def __init__(self, peer: GeminiPeer) -> None:
        self.peer = peer
        self.frames: queue.Queue[str] = queue.Queue()

    def push(self, frame: dict[str, Any]) -> None:
        self.frames.put(json.dumps(frame))

    def send(self, frame: str, timeout: float | None = None) -> None:
        message = json.loads(frame)
        self.peer.sent.append(message)
        if "setup" in message:
            self.peer.setups.append(message["setup"])
            self.push({"setupComplete": {}})
            self.push({"sessionResumptionUpdate": {"newHandle": f"h{len(self.peer.setups)}", "resumable": True}})
        elif "clientContent" in message:
            text = message["clientContent"]["turns"][0]["parts"][0]["text"]
            if text == "weather":
                self.push({"serverContent": {"inputTranscription": {"text": "weather "},
                                             "modelTurn": {"parts": [{"text": "Checking. "}]}}})
                self.push({"toolCall": {"functionCalls": [{"id": "g1", "name": "weather", "args": {"city": "Rome"}},
                                                          {"id": "g2", "name": "nowhere", "args": {}}]}})
            elif text == "interrupt":
                self.push({"serverContent": {"modelTurn": {"parts": [{"text": "Lon"}]}}})
                self.push({"serverContent": {"interrupted": True}})
                self.push({"serverContent": {"turnComplete": True}})
            elif text == "drop":
                self.push({"serverContent": {"modelTurn": {"parts": [{"text": "half"}]}}})
                self.peer.drop_next_receive = True
            else:
                self.push({"serverContent": {"modelTurn": {"parts": [{"text": f"echo {text}"}]},
                                             "outputTranscription": {"text": f"echo {text}"}}})
                self.push({"serverContent": {"turnComplete": True},
                           "usageMetadata": {"promptTokenCount": 3, "responseTokenCount": 4}})
        elif "toolResponse" in message:
            answers = [r["response"]["output"] for r in message["toolResponse"]["functionResponses"]]
            self.push({"serverContent": {"modelTurn": {"parts": [{"text": " | ".join(answers)}]}}})
            self.push({"serverContent": {"turnComplete": True}})

    def receive(self, timeout: float | None) -> str | bytes:
        if self.peer.drop_next_receive and self.frames.empty():
            self.peer.drop_next_receive = False
            raise RealtimeConnectionLost("reset by peer", reconnectable=True)
        try:
            return self.frames.get(timeout=timeout).encode()
        except queue.Empty:
            raise TimeoutError from None

    def close(self) -> None:
        pass


def test_gemini_session_turns_tools_interruptions_and_resumption() -> None:
    peer = GeminiPeer()
    session = RealtimeSession(peer.connect, GeminiLiveCodec("gemini-live-2.5-flash"), tools=[WEATHER],
                              config=ConfigureSession(output_modalities=("text",)),
                              reconnect=ReconnectPolicy(delay_s=0), receive_timeout_s=5)
    with session:
        session.start()
        turn = session.ask("hi")
        assert (turn.status, turn.text, turn.transcript) == ("completed", "echo hi", "echo hi")
        assert turn.usage.input_tokens == 3 and turn.usage.output_tokens == 4
        assert turn.messages[1] == ResponseMessage(
            (TextPart("echo hi"), SpeechPart(transcript="echo hi")), usage=turn.messages[1].usage,
            provider_name="gemini_live", finish_reason=turn.messages[1].finish_reason, raw_finish_reason="completed")
        assert turn.messages[1].usage.input_tokens == 3

        turn = session.ask("weather")
        assert turn.status == "completed"
        assert turn.text == "Checking. 20C in Rome | unknown tool 'nowhere'; available: ['weather']"
        response = peer.sent[-1]["toolResponse"]["functionResponses"]
        assert [r["id"] for r in response] == ["g1", "g2"]  # one batch for one toolCall frame
        kinds = [(type(m).__name__, [type(p).__name__ for p in m.parts]) for m in turn.messages]
        assert kinds == [("RequestMessage", ["UserPromptPart"]), ("RequestMessage", ["UserPromptPart"]),
                         ("ResponseMessage", ["TextPart", "ToolCallPart", "ToolCallPart"]),
                         ("RequestMessage", ["ToolReturnPart", "ToolReturnPart"]),
                         ("ResponseMessage", ["TextPart"])]
        assert turn.messages[1].parts[0] == User("weather ")  # the user's speech transcript

        turn = session.ask("interrupt")
        assert (turn.status, turn.text) == ("cancelled", "Lon")
        assert session.ask("after").text == "echo after"  # the stray turnComplete was absorbed

        turn = session.ask("drop")
        assert turn.status == "lost"
        assert turn.reconnects[0].server_state_survived is True
        assert peer.setups[-1]["sessionResumption"] == {"handle": "h1"}
        assert session.ask("back").text == "echo back"
        with pytest.raises(RealtimeCodecError, match="no frame"):
            session.cancel_response()
    with pytest.raises(RealtimeSessionClosed):
        session.send_text("late")
    with pytest.raises(RealtimeSessionClosed):
        session.receive()


class ScriptedConnection:
    """Frames given up front; ``receive`` raises what the script says."""

    def __init__(self, script: list[Any]) -> None:
        self.script = list(script)
        self.sent: list[str] = []
        self.closed = False

    def send(self, frame: str, timeout: float | None = None) -> None:
        self.sent.append(frame)

    def receive(self, timeout: float | None) -> str | bytes:
        if not self.script:
            raise TimeoutError
        item = self.script.pop(0)
        if isinstance(item, BaseException):
            raise item
        return json.dumps(item)

    def close(self) -> None:
        self.closed = True


def test_session_states_errors_and_reconnect_limits() -> None:
    configured = [{"type": "session.created", "session": {"id": "s"}}, {"type": "session.updated", "session": {}}]
    connection = ScriptedConnection(configured + [
        {"type": "error", "error": {"type": "invalid_request_error", "message": "bad item"}}])
    session = RealtimeSession(lambda: connection, OpenAIRealtimeCodec(), receive_timeout_s=0.5)
    with pytest.raises(RealtimeSessionError, match="start the realtime session"):
        session.send_text("early")
    session.start()
    with pytest.raises(RealtimeSessionError, match="already started"):
        session.start()
    with pytest.raises(RealtimeSessionError, match="bad item"):
        session.run_turn()
    with pytest.raises(RealtimeSessionError, match="in time"):
        session.run_turn(timeout=0.01)
    session.append_audio(b"\x00\x01")
    session.commit_audio()
    session.clear_audio()
    session.request_response()
    session.cancel_response()
    assert [json.loads(f)["type"] for f in connection.sent[-5:]] == [
        "input_audio_buffer.append", "input_audio_buffer.commit", "input_audio_buffer.clear",
        "response.create", "response.cancel"]
    session.close()
    session.close()
    assert connection.closed
    with pytest.raises(RealtimeSessionClosed):
        session.start()

    refused = ScriptedConnection([{"type": "error", "error": {"message": "unknown voice"}}])
    with pytest.raises(RealtimeSessionError, match="unknown voice"):
        RealtimeSession(lambda: refused, OpenAIRealtimeCodec()).start()

    # reconnectable losses, at most max_attempts in a row; then the session closes
    lost = RealtimeConnectionLost("gone", reconnectable=True, code=1006)
    connections = iter([ScriptedConnection(configured + [lost]), ScriptedConnection(configured + [lost]),
                        ScriptedConnection(configured + [lost])])
    session = RealtimeSession(lambda: next(connections), OpenAIRealtimeCodec(),
                              reconnect=ReconnectPolicy(max_attempts=1, delay_s=0), receive_timeout_s=1)
    session.start()
    assert session.receive() == Reconnected(1, False, False, 1006)
    with pytest.raises(RealtimeSessionClosed, match="gone"):
        session.receive()
    assert session.state == "closed"
    with pytest.raises(ValueError):
        ReconnectPolicy(max_attempts=-1)
    with pytest.raises(ValueError, match="unique"):
        RealtimeSession(lambda: connection, OpenAIRealtimeCodec(), tools=[WEATHER, WEATHER])


def test_audio_turns_transcripts_and_a_failing_observer() -> None:
    audio = "AAEC"  # b"\x00\x01\x02"
    connection = ScriptedConnection([
        {"type": "session.created", "session": {"id": "s"}}, {"type": "session.updated", "session": {}},
        {"type": "input_audio_buffer.speech_started", "item_id": "u1"},
        {"type": "conversation.item.input_audio_transcription.delta", "item_id": "u1", "delta": "hel"},
        {"type": "response.created", "response": {"id": "r1"}},
        {"type": "response.output_audio.delta", "response_id": "r1", "item_id": "m", "delta": audio},
        {"type": "response.output_audio_transcript.delta", "response_id": "r1", "item_id": "m", "delta": "Hi"},
        {"type": "conversation.item.input_audio_transcription.completed", "item_id": "u1", "transcript": "hello"},
        {"type": "response.output_audio_transcript.done", "response_id": "r1", "item_id": "m", "transcript": "Hi."},
        {"type": "response.output_audio.delta", "response_id": "r1", "item_id": "m", "delta": audio},
        {"type": "response.done", "response": {"id": "r1", "status": "incomplete"}},
    ])

    class Broken:
        def on_realtime_event(self, info: RealtimeEventInfo) -> None:
            raise RuntimeError("exporter down")

    session = RealtimeSession(lambda: connection, OpenAIRealtimeCodec(), observer=Broken(), receive_timeout_s=1)
    session.start()
    session.append_audio(b"\x00")
    turn = session.run_turn()
    assert (turn.status, turn.transcript, turn.audio) == ("incomplete", "Hi", b"\x00\x01\x02" * 2)
    assert turn.messages == (
        RequestMessage((User("hello"),)),
        ResponseMessage((SpeechPart(transcript="Hi."),), usage=turn.messages[1].usage, provider_name="openai",
                        provider_response_id="r1", finish_reason=turn.messages[1].finish_reason,
                        raw_finish_reason="incomplete"),
    )
    assert turn.messages[1].finish_reason is not None and turn.messages[1].finish_reason.value == "length"
    with pytest.raises(RealtimeSessionError, match="in time"):
        next(session.events(timeout=0.01))
    session.close()
    assert list(session.events()) == []


def test_reconnect_retries_a_failed_connect_and_usage_between_responses() -> None:
    configured = [{"setupComplete": {}}]
    lost = RealtimeConnectionLost("reset", reconnectable=True)
    attempts: list[str] = []
    scripts = [
        configured + [{"usageMetadata": {"promptTokenCount": 2}},
                      {"serverContent": {"modelTurn": {"parts": [{"text": "a"}]}}},
                      {"toolCall": {"functionCalls": [{"id": "t", "name": "weather", "args": {"city": "Bern"}}]}},
                      {"serverContent": {"turnComplete": True}}, lost],
        None,  # the first reconnect attempt cannot connect
        configured + [{"serverContent": {"turnComplete": True}}],
    ]

    def connect() -> ScriptedConnection:
        script = scripts.pop(0)
        attempts.append("ok" if script is not None else "refused")
        if script is None:
            raise RealtimeConnectionLost("connection refused", reconnectable=True)
        return ScriptedConnection(script)

    session = RealtimeSession(connect, GeminiLiveCodec("m"), tools=[WEATHER],
                              reconnect=ReconnectPolicy(max_attempts=3, delay_s=0.001), receive_timeout_s=2)
    session.start()
    assert not session.responding
    turn = session.run_turn()
    assert turn.status == "completed" and turn.text == "a"
    assert turn.messages[0].parts[-1] == ToolCallPart("weather", '{"city": "Bern"}', "t")
    assert turn.messages[0].usage.input_tokens == 2  # usage reported before the first output counts for it
    event = session.receive()
    assert isinstance(event, Reconnected) and event.attempt == 2 and attempts == ["ok", "refused", "ok"]
    assert event.server_state_survived is False  # no resumption handle was ever offered
    assert session.run_turn().messages == ()  # a terminal with nothing in it adds no message
    session.close()
    with pytest.raises(RealtimeSessionClosed):
        session.run_turn()


def test_tool_results_that_are_not_text_are_sent_as_json() -> None:
    def lookup(key: str) -> dict[str, int]:
        """A structured result."""
        return {key: 1}

    connection = ScriptedConnection([
        {"setupComplete": {}},
        {"toolCall": {"functionCalls": [{"id": "t", "name": "lookup", "args": {"key": "k"}}]}},
        {"serverContent": {"turnComplete": True}}])
    session = RealtimeSession(lambda: connection, GeminiLiveCodec("m"), tools=[tool("lookup", None, lookup)],
                              receive_timeout_s=1)
    session.start()
    session.run_turn()
    assert json.loads(connection.sent[-1])["toolResponse"]["functionResponses"][0]["response"] == {"k": 1}


def test_websocket_refusals_oversize_frames_and_closed_sends(server: OpenAIRealtimeServer) -> None:
    from zigai.realtime import websocket

    assert websocket.openai_realtime_url("gpt-realtime") == "wss://api.openai.com/v1/realtime?model=gpt-realtime"
    assert websocket.azure_realtime_url("res", "dep") == "wss://res.openai.azure.com/openai/v1/realtime?model=dep"
    assert websocket.xai_realtime_url().startswith("wss://api.x.ai/")
    assert websocket.gemini_live_url().endswith("BidiGenerateContent")
    websocket._check_url("wss://api.openai.com/v1/realtime")

    def refuse(connection: Any, request: Any) -> Any:
        return connection.respond(403, "no key\n")

    refusing = websockets_server.serve(lambda c: None, "127.0.0.1", 0, process_request=refuse)
    thread = threading.Thread(target=refusing.serve_forever, daemon=True)
    thread.start()
    try:
        port = refusing.socket.getsockname()[1]
        with pytest.raises(RealtimeConnectionError, match="upgrade") as caught:
            WebSocketConnection(f"ws://127.0.0.1:{port}/?key=secret")
        assert "secret" not in str(caught.value)
    finally:
        refusing.shutdown()
        thread.join(timeout=5)

    small = WebSocketConnection(f"ws://127.0.0.1:{server.port}", max_frame_bytes=10)
    with pytest.raises(RealtimeFrameTooLarge):
        small.receive(5)  # session.created is longer than 10 bytes
    small.close()
    connection = WebSocketConnection(f"ws://127.0.0.1:{server.port}")
    with pytest.raises(TimeoutError):
        connection.receive(5) and connection.receive(0.05)
    connection.close()
    with pytest.raises(RealtimeConnectionLost) as closed:
        connection.send("{}")
    assert closed.value.code == 1000 and not closed.value.reconnectable


def test_a_cancelled_turn_cancels_the_response_and_drains_it(server: OpenAIRealtimeServer) -> None:
    from zigai.control import CancellationToken, Cancelled, RunControl, RunTimedOut

    with openai_session(server) as session:
        session.start()
        token = CancellationToken()
        threading.Timer(0.3, token.cancel, args=("user hung up",)).start()
        with pytest.raises(Cancelled, match="hung up"):
            session.ask("slow", control=RunControl(token=token))
        assert not session.responding
        assert [m["type"] for m in server.connections[0]][-1] == "response.cancel"
        (cancelled,) = [m for m in session.history if isinstance(m, ResponseMessage)]
        assert cancelled.parts == (TextPart("Let"),) and cancelled.raw_finish_reason == "cancelled"
        assert session.ask("next").text == "echo: next"  # the drained terminal does not end this turn
        with pytest.raises(RunTimedOut):
            session.ask("slow", control=RunControl.start(200))


def test_a_response_that_never_ends_is_discarded_after_the_drain_window() -> None:
    from zigai.control import CancellationToken, Cancelled, RunControl

    token = CancellationToken()
    connection = ScriptedConnection([{"setupComplete": {}}, {"serverContent": {"modelTurn": {"parts": [{"text": "x"}]}}}])
    session = RealtimeSession(lambda: connection, GeminiLiveCodec("m"), receive_timeout_s=1)
    session.drain_timeout_s = 0.1
    session.start()
    original = connection.receive

    def receive(timeout: float | None) -> str | bytes:
        frame = original(timeout)
        token.cancel()  # cancelled as soon as the first output arrived
        return frame

    connection.receive = receive  # type: ignore[method-assign]
    with pytest.raises(Cancelled):
        session.run_turn(control=RunControl(token=token))
    assert not session.responding and session.history == ()


def test_gemini_live_over_a_loopback_websocket_with_binary_frames() -> None:
    peer = GeminiPeer()

    def handle(conn: Any) -> None:
        logic = GeminiConnection(peer)
        for raw in conn:
            logic.send(raw)
            while not logic.frames.empty():
                conn.send(logic.frames.get().encode())  # Gemini Live sends JSON in binary frames

    server = websockets_server.serve(handle, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.socket.getsockname()[1]
        session = RealtimeSession(lambda: WebSocketConnection(f"ws://127.0.0.1:{port}/ws"),
                                  GeminiLiveCodec("gemini-live-2.5-flash"), tools=[WEATHER], receive_timeout_s=10)
        with session:
            session.start()
            assert session.ask("hi").text == "echo hi"
            turn = session.ask("weather")
            assert turn.text.startswith("Checking. 20C in Rome")
            assert [p.tool_name for p in turn.tool_calls] == ["weather", "nowhere"]
        assert peer.setups[0]["model"] == "models/gemini-live-2.5-flash"
    finally:
        server.shutdown()
        thread.join(timeout=5)
