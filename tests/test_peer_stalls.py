"""Peers that stop reading or flood us (issue 32, the same classes beyond defects 6 and 10).

Real child processes and real pipes: a stdio peer that never reads its input cannot block a
write past its deadline (MCP client and server, ACP), and an ACP agent cannot make the client
collect session updates without bound.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from zigai.acp import StdioTransport as AcpStdio
from zigai.acp.transport import AcpConnectionClosed
from zigai.child_process import exit_status
from zigai.pipe_write import write_before

NEVER_READS = [sys.executable, "-c", "import time; time.sleep(120)"]
BIG = b"x" * (4 * 1024 * 1024)  # far more than any pipe buffer


def _finishes(call: Callable[[], Any], within: float) -> tuple[bool, BaseException | None, Any]:
    """Run ``call`` on a thread; (finished in time, what it raised, what it returned)."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(within)
    return not thread.is_alive(), outcome.get("error"), outcome.get("value")


def _gone(process: subprocess.Popen[bytes], within: float = 10.0) -> bool:
    end = time.monotonic() + within
    while exit_status(process) is None and time.monotonic() < end:
        time.sleep(0.02)
    return exit_status(process) is not None


# -- the shared helper ---------------------------------------------------------------------------

def test_write_before_gives_up_at_the_deadline_and_writes_what_fits() -> None:
    read_end, write_end = os.pipe()
    try:
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            write_before(write_end, BIG, started + 0.5)
        assert 0.4 < time.monotonic() - started < 10
        buffered = b""
        os.set_blocking(read_end, False)
        while True:
            try:
                piece = os.read(read_end, 1 << 20)
            except BlockingIOError:
                break
            buffered += piece
        assert buffered and BIG.startswith(buffered)  # written in order, up to the pipe's room
        write_before(write_end, b"fits", time.monotonic() + 1)  # room again: no timeout
        assert os.read(read_end, 10) == b"fits"
    finally:
        os.close(read_end)
        os.close(write_end)


def test_write_before_reports_a_reader_that_is_gone() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        with pytest.raises(BrokenPipeError):
            write_before(write_end, b"hello", time.monotonic() + 1)
    finally:
        os.close(write_end)


def test_write_before_on_a_non_blocking_descriptor_waits_for_room_after_short_writes() -> None:
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    received = bytearray()

    def drain() -> None:
        while len(received) < len(BIG):
            received.extend(os.read(read_end, 1 << 16))

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        write_before(write_end, BIG, None)
        reader.join(30)
        assert bytes(received) == BIG
    finally:
        os.close(read_end)
        os.close(write_end)


# -- ACP -----------------------------------------------------------------------------------------

def test_acp_send_to_an_agent_that_never_reads_times_out_and_drops_the_connection() -> None:
    transport = AcpStdio(NEVER_READS, send_timeout_s=1.0)
    try:
        transport.send(b"x" * 4000)  # fits the pipe: a stalled reader is not noticed yet
        started = time.monotonic()
        finished, error, _ = _finishes(lambda: transport.send(BIG), within=20)
        assert finished, "send blocked past its timeout"
        assert isinstance(error, AcpConnectionClosed), error
        assert "did not read its input" in str(error)
        assert 0.9 < time.monotonic() - started < 20
        assert _gone(transport._process), "the agent was not stopped"
        with pytest.raises(AcpConnectionClosed):
            transport.send(b"{}")  # unusable from now on, at once
        assert transport.receive(10) is None  # and the reader sees the end
    finally:
        transport.close()


def test_acp_send_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="send_timeout_s"):
        AcpStdio(NEVER_READS, send_timeout_s=0)


# -- MCP client (stdio transport) ----------------------------------------------------------------

def _mcp_stdio(argv: list[str], **options: Any) -> Any:
    from zigai import mcp

    return mcp.StdioTransport(argv, mcp.StdioOptions(**options))


def _mcp_request(request_id: int, method: str, params: dict[str, Any]) -> Any:
    from zigai import mcp
    from zigai.mcp.wire.jsonrpc import encode, request_message
    from zigai.mcp.wire.transport import OutgoingRequest

    return OutgoingRequest(id=request_id, method=method, body=encode(request_message(request_id, method, params)),
                           protocol_version=mcp.PROTOCOL_VERSION)


def _ask(transport: Any, request: Any, seconds: float) -> Any:
    return transport.request(request, deadline=time.monotonic() + seconds, is_cancelled=lambda: False,
                             on_notification=lambda note: None)


def test_mcp_request_to_a_server_that_never_reads_stops_it_and_fails_later_requests_at_once() -> None:
    from zigai import mcp

    transport = _mcp_stdio(NEVER_READS)
    try:
        started = time.monotonic()
        finished, error, _ = _finishes(
            lambda: _ask(transport, _mcp_request(1, "tools/call", {"blob": BIG.decode()}), 1.0), within=20)
        assert finished
        assert isinstance(error, (mcp.McpRequestTimedOut, mcp.McpConnectionFailed)), error
        assert time.monotonic() - started < 20
        assert _gone(transport._child.process), "the server that stopped reading was left running"
        started = time.monotonic()
        with pytest.raises(mcp.McpConnectionFailed, match="did not read its input"):
            _ask(transport, _mcp_request(2, "ping", {}), 30)
        assert time.monotonic() - started < 5  # at once, not after another deadline
    finally:
        transport.close()


def test_mcp_notification_to_a_server_that_never_reads_is_bounded_by_its_deadline() -> None:
    from zigai import mcp
    from zigai.mcp.wire.jsonrpc import encode, notification_message

    transport = _mcp_stdio(NEVER_READS)
    try:
        small = encode(notification_message("notifications/initialized", {}))
        transport.notify("notifications/initialized", small, protocol_version=mcp.PROTOCOL_VERSION,
                         deadline=time.monotonic() + 5)  # fits the pipe: written, no error
        body = encode(notification_message("notifications/message", {"data": BIG.decode()}))
        started = time.monotonic()
        finished, error, _ = _finishes(lambda: transport.notify(
            "notifications/message", body, protocol_version=mcp.PROTOCOL_VERSION,
            deadline=time.monotonic() + 1.0), within=20)
        assert finished
        assert isinstance(error, mcp.McpConnectionFailed), error
        assert 0.9 < time.monotonic() - started < 20
        assert _gone(transport._child.process)
    finally:
        transport.close()


# writes one server request after another and never reads a single answer
REQUEST_FLOOD = r"""
import sys
out = sys.stdout.buffer
n = 0
while True:
    n += 1
    out.write(b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":{}}\n' % n)
    out.flush()
"""


def test_mcp_server_sending_requests_without_reading_answers_is_dropped_at_the_backlog_bound() -> None:
    from zigai import mcp

    transport = _mcp_stdio([sys.executable, "-c", REQUEST_FLOOD], max_line_bytes=4096, send_timeout_s=60)
    try:
        started = time.monotonic()
        with pytest.raises(mcp.McpConnectionFailed, match="faster than it reads the answers"):
            _ask(transport, _mcp_request(1, "never/answer", {}), 30)
        assert time.monotonic() - started < 30
        assert transport._child.answer_backlog <= 4096
        assert _gone(transport._child.process)
    finally:
        transport.close()


def test_a_child_reads_only_once_the_transport_holds_it() -> None:
    """A server may be dropped on its very first line, and dropping compares the child with the
    transport's ``_child``: the reader must not start before that assignment (under load the old
    order met a transport without ``_child`` -- an AttributeError in the reader, no kill)."""
    from zigai.mcp.client.stdio import _Child

    transport = _mcp_stdio([sys.executable, "-c", REQUEST_FLOOD], max_line_bytes=64)
    try:
        assert _gone(transport._child.process)  # dropped at once: the first answer overflows
        spare = _Child(transport, [sys.executable, "-c", "import time; time.sleep(30)"])
        try:
            assert not spare.reader.is_alive() and not spare.writer.is_alive()
        finally:
            spare.process.kill()
            spare.process.wait()
            spare.finalizer.detach()
    finally:
        transport.close()


def test_mcp_send_timeout_is_validated() -> None:
    from zigai import mcp

    with pytest.raises(mcp.InvalidMcpRequest, match="send_timeout_s"):
        mcp.StdioOptions(send_timeout_s=-1)


# -- MCP server (serve_stdio) --------------------------------------------------------------------

SERVE_STDIO = r"""
import sys
from zigai import mcp
mcp.serve_stdio(mcp.Server("stalled", "1.0"), send_timeout_s=float(sys.argv[1]))
"""


def test_serve_stdio_whose_client_stops_reading_gives_up_and_exits_when_input_ends() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    child = subprocess.Popen([sys.executable, "-c", SERVE_STDIO, "1.0"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, env=env)
    try:
        assert child.stdin is not None
        # 3,000 unparsable lines (6 KB) earn 3,000 -32700 replies (over 200 KB): the pipe fills
        finished, error, _ = _finishes(lambda: (child.stdin.write(b"x\n" * 3000), child.stdin.close()),  # type: ignore[union-attr]
                                       within=30)
        assert finished and error is None, error
        started = time.monotonic()
        try:
            code = child.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pytest.fail("serve_stdio never returned: a write to a client that stopped reading blocked")
        assert code == 0
        assert time.monotonic() - started < 20
    finally:
        child.kill()
        child.wait()
        assert child.stdout is not None
        child.stdout.close()


# -- ACP: a prompt's session updates -------------------------------------------------------------

# answers the lifecycle; a prompt gets argv[1] updates of argv[2] padding bytes each, then its answer
# (stopReason "cancelled" if a session/cancel arrived first, as the protocol asks)
UPDATING_AGENT = r"""
import json, sys
count, pad = int(sys.argv[1]), int(sys.argv[2])
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n"); sys.stdout.flush()
cancelled = False
for line in sys.stdin:
    msg = json.loads(line)
    method = msg.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": 1, "agentCapabilities": {}}})
    elif method == "session/new":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"sessionId": "s1"}})
    elif method == "session/cancel":
        cancelled = True
        sys.stderr.write("got session/cancel\n")
    elif method == "session/prompt":
        prompt_id = msg["id"]
        for n in range(count):
            send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": {
                "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x" * pad}}}})
        send({"jsonrpc": "2.0", "id": prompt_id, "result": {"stopReason": "end_turn"}})
"""


def _updating_client(tmp_path: Any, count: int, pad: int = 1, **limits: Any) -> tuple[Any, list[Any]]:
    from zigai.acp import AcpClient, EditorHandlers

    seen: list[Any] = []
    client = AcpClient(lambda: AcpStdio([sys.executable, "-c", UPDATING_AGENT, str(count), str(pad)]),
                       EditorHandlers(tmp_path), on_update=lambda session, update: seen.append(update),
                       request_timeout_s=20, prompt_timeout_s=20, **limits)
    client.initialize()
    client.new_session()
    return client, seen


def test_acp_prompt_updates_exactly_at_the_count_bound_are_all_collected(tmp_path: Any) -> None:
    client, _ = _updating_client(tmp_path, 50, max_prompt_updates=50)
    with client:
        result = client.prompt("go")
    assert len(result.updates) == 50 and result.text == "x" * 50


def test_acp_prompt_updates_one_past_the_count_bound_raise_the_named_error_and_cancel(tmp_path: Any) -> None:
    from zigai.acp import AcpPromptUpdatesTooLarge

    client, seen = _updating_client(tmp_path, 51, max_prompt_updates=50)
    with client:
        with pytest.raises(AcpPromptUpdatesTooLarge, match="more than 50 session updates") as caught:
            client.prompt("go")
        assert caught.value.limit == 50
        assert len(seen) == 51  # on_update still saw every one
        assert client._collecting is None and client.state == "in_session"
        client.max_prompt_updates = 51
        assert len(client.prompt("again").updates) == 51  # the connection goes on


def test_acp_prompt_updates_past_the_byte_bound_raise_the_named_error(tmp_path: Any) -> None:
    from zigai.acp import AcpPromptUpdatesTooLarge

    client, _ = _updating_client(tmp_path, 20, pad=10_000, max_prompt_update_bytes=100_000)
    with client, pytest.raises(AcpPromptUpdatesTooLarge, match="exceed 100000 bytes"):
        client.prompt("go")


def test_acp_update_bounds_are_validated(tmp_path: Any) -> None:
    from zigai.acp import AcpClient, EditorHandlers

    for bad in ({"max_prompt_updates": 0}, {"max_prompt_update_bytes": True}):
        with pytest.raises(ValueError, match="must be an int >= 1"):
            AcpClient(lambda: AcpStdio(NEVER_READS), EditorHandlers(tmp_path), **bad)


# -- MCP client: server requests answered at once are bounded -------------------------------------

# sends 40 server requests at once, then answers the client's request with how many were refused busy
ASKING_SERVER = r"""
import json, sys
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n"); sys.stdout.flush()
first = json.loads(sys.stdin.readline())
for n in range(40):
    send({"jsonrpc": "2.0", "id": 1000 + n, "method": "sampling/createMessage", "params": {}})
busy = 0
while busy < 40 - int(sys.argv[1]):
    message = json.loads(sys.stdin.readline())
    if message.get("error", {}).get("code") == -32603 and "client busy" in message["error"]["message"]:
        busy += 1
send({"jsonrpc": "2.0", "id": first["id"], "result": {"busy": busy}})
sys.stdin.read()
"""


def test_mcp_stdio_answers_at_most_the_bound_of_server_requests_at_once() -> None:
    from zigai.mcp.wire.transport import MAX_SERVER_REQUESTS

    release = threading.Event()
    started: list[Any] = []

    def handler(request: Any) -> dict[str, Any]:
        started.append(request.id)
        release.wait(30)
        return {"jsonrpc": "2.0", "id": request.id, "result": {}}

    transport = _mcp_stdio([sys.executable, "-c", ASKING_SERVER, str(MAX_SERVER_REQUESTS)])
    transport.set_request_handler(handler)
    try:
        reply = _ask(transport, _mcp_request(1, "tools/call", {}), 20)
        assert reply.result == {"busy": 40 - MAX_SERVER_REQUESTS}
        end = time.monotonic() + 10  # the handler threads were started; under load they may run late
        while len(started) < MAX_SERVER_REQUESTS and time.monotonic() < end:
            time.sleep(0.01)
        time.sleep(0.2)
        assert len(started) == MAX_SERVER_REQUESTS  # exactly the bound ran; one more was refused
    finally:
        release.set()
        transport.close()


def test_mcp_http_answers_at_most_the_bound_of_server_requests_at_once(caplog: pytest.LogCaptureFixture) -> None:
    from zigai import mcp
    from zigai.mcp.wire.jsonrpc import JsonRpcRequest
    from zigai.mcp.wire.transport import MAX_SERVER_REQUESTS
    from zigai.security import UrlPolicy

    release = threading.Event()
    started: list[Any] = []

    def handler(request: Any) -> dict[str, Any]:
        started.append(request.id)
        release.wait(30)
        return {"jsonrpc": "2.0", "id": request.id, "result": {}}

    # nothing listens on the discard port: the eventual replies fail and are only logged
    transport = mcp.StreamableHttpTransport("http://127.0.0.1:9/mcp", url_policy=UrlPolicy.local_development())
    transport.set_request_handler(handler)
    try:
        for n in range(MAX_SERVER_REQUESTS + 1):
            transport._start_answer(JsonRpcRequest(n, "sampling/createMessage", {}), "2025-11-25")
        end = time.monotonic() + 10
        while len(started) < MAX_SERVER_REQUESTS and time.monotonic() < end:
            time.sleep(0.01)
        time.sleep(0.2)
        assert len(started) == MAX_SERVER_REQUESTS
        assert any("already in flight" in r.getMessage() for r in caplog.records)
    finally:
        release.set()
        transport.close()


def test_serve_stdio_on_real_pipes_stops_writing_to_a_client_that_does_not_read() -> None:
    from zigai import mcp

    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    source, sink = os.fdopen(in_read, "rb", buffering=0), os.fdopen(out_write, "wb")
    try:
        os.write(in_write, b"x\n" * 3000)  # 3,000 parse errors: far more reply bytes than the pipe holds
        os.close(in_write)
        in_write = -1
        finished, error, _ = _finishes(lambda: mcp.serve_stdio(mcp.Server("s", "1"), source, sink,
                                                               send_timeout_s=0.5), within=20)
        assert finished, "serve_stdio blocked on a client that stopped reading"
        assert error is None, error
        first = os.read(out_read, 200)
        assert first.startswith(b'{"jsonrpc":"2.0"') and b"-32700" in first  # written whole, in order
    finally:
        if in_write != -1:
            os.close(in_write)
        source.close()
        sink.close()
        os.close(out_read)


# -- realtime: one turn's output is bounded ------------------------------------------------------

def _streaming_realtime_server() -> tuple[Any, int, threading.Thread, list[str]]:
    """An OpenAI-wire peer: the text "N" is answered with N 100-byte text deltas and a terminal."""
    server_module = pytest.importorskip(
        "websockets.sync.server", reason="install the websockets extra: pip install -e '.[dev]'")
    seen: list[str] = []

    def handle(conn: Any) -> None:
        send = lambda frame: conn.send(__import__("json").dumps(frame))  # noqa: E731
        send({"type": "session.created", "session": {"id": "s"}})
        count = 0
        for raw in conn:
            message = __import__("json").loads(raw)
            seen.append(message["type"])
            if message["type"] == "session.update":
                send({"type": "session.updated", "session": message["session"]})
            elif message["type"] == "conversation.item.create":
                count = int(message["item"]["content"][0]["text"])
                send({"type": "conversation.item.added", "item": {"id": "x"}})
            elif message["type"] == "response.create":
                rid = f"r{len(seen)}"
                send({"type": "response.created", "response": {"id": rid, "status": "in_progress"}})
                for _ in range(count):
                    send({"type": "response.output_text.delta", "response_id": rid, "item_id": "m",
                          "delta": "x" * 100})
                send({"type": "response.done", "response": {"id": rid, "status": "completed"}})
            # a cancel after the terminal finds no active response: nothing to answer

    server = server_module.serve(handle, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, server.socket.getsockname()[1], thread, seen


def test_realtime_turn_output_is_bounded_at_the_limit_and_one_delta_past_it_is_refused() -> None:
    from zigai.realtime import OPENAI, OpenAIRealtimeCodec, RealtimeSession, RealtimeTurnTooLarge
    from zigai.realtime.websocket import WebSocketConnection

    server, port, thread, seen = _streaming_realtime_server()
    session = RealtimeSession(lambda: WebSocketConnection(f"ws://127.0.0.1:{port}"), OpenAIRealtimeCodec(OPENAI),
                              receive_timeout_s=10, max_turn_bytes=1000)
    try:
        session.start()
        assert session.ask("10", timeout=10).text == "x" * 1000  # exactly at the bound
        with pytest.raises(RealtimeTurnTooLarge, match="exceed 1000 bytes") as caught:
            session.ask("11", timeout=10)
        assert caught.value.limit == 1000
        end = time.monotonic() + 10  # the peer reads the cancel on its own thread
        while "response.cancel" not in seen and time.monotonic() < end:
            time.sleep(0.01)
        assert "response.cancel" in seen
        assert session.ask("1", timeout=10).text == "x" * 100  # the next turn starts clean
    finally:
        session.close()
        server.shutdown()
        thread.join(5)


def test_realtime_turn_bound_is_validated() -> None:
    from zigai.realtime import OpenAIRealtimeCodec, RealtimeSession

    with pytest.raises(ValueError, match="max_turn_bytes"):
        RealtimeSession(lambda: None, OpenAIRealtimeCodec(), max_turn_bytes=0)  # type: ignore[arg-type,return-value]
