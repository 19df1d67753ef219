"""zigai.acp: the client drives an agent built with the official ``agent-client-protocol`` SDK."""

from __future__ import annotations

import json
import os
import queue
import sys
from pathlib import Path
from typing import Any

import pytest

from zigai.acp import (
    AcpClient,
    AcpConnectionClosed,
    AcpPathOutsideRoot,
    AcpPermissionRejected,
    AcpProtocolError,
    AcpRemoteError,
    AcpRequestTimedOut,
    AcpStateError,
    EditorHandlers,
    PermissionRequest,
    StdioTransport,
)
from zigai.acp.editor import AcpInvalidParams
from zigai.acp.transport import AcpMessageTooLarge

AGENT = str(Path(__file__).resolve().parent / "support" / "acp_agent.py")
pytest.importorskip("acp", reason="install the dev extra (agent-client-protocol): pip install -e '.[dev]'")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    directory = tmp_path / "project"
    directory.mkdir()
    (directory / "notes.txt").write_text("buy milk\nand bread\n")
    return directory


def sdk_client(root: Path, choose: Any = lambda request: "allow", **kwargs: Any) -> tuple[AcpClient, list[Any]]:
    updates: list[Any] = []
    editor = EditorHandlers(root, choose=choose)
    client = AcpClient(lambda: StdioTransport([sys.executable, AGENT]), editor,
                       on_update=lambda session, update: updates.append((session, update)),
                       request_timeout_s=20, prompt_timeout_s=20, **kwargs)
    return client, updates


def test_client_drives_the_sdk_agent_through_a_prompt(root: Path) -> None:
    seen: list[PermissionRequest] = []

    def choose(request: PermissionRequest) -> str:
        seen.append(request)
        return "allow"

    client, updates = sdk_client(root, choose)
    with client:
        with pytest.raises(AcpStateError):
            client.prompt("too early")
        info = client.initialize()
        assert info["protocolVersion"] == 1 and client.can_load_sessions
        session = client.new_session()
        assert client.state == "in_session"
        result = client.prompt("read my notes")
    assert result.stop_reason == "end_turn"
    assert result.text.startswith("prompt 1: read my notes. permission selected:allow. "
                                  "notes: buy milk\nand bread. escape: refused (")
    assert "outside the session root" in result.text
    assert [u["sessionUpdate"] for u in result.updates] == ["agent_message_chunk"] * 4
    assert [s for s, _ in updates] == [session] * 4
    (request,) = seen
    assert request.option_ids == ("allow", "deny") and request.tool_call["toolCallId"] == "read-1"
    assert client.state == "closed"


def test_permission_denied_cancelled_and_invented_options(root: Path) -> None:
    for choose, expected in ((lambda r: "deny", "permission selected:deny. "),
                             (lambda r: None, "permission cancelled:None. ")):
        client, _ = sdk_client(root, choose)
        with client:
            client.initialize()
            client.new_session()
            assert client.prompt("notes?").text == f"prompt 1: notes?. {expected}"
    client, _ = sdk_client(root, lambda r: "allow_always")  # never advertised
    with client:
        client.initialize()
        client.new_session()
        with pytest.raises(AcpRemoteError) as caught:
            client.prompt("notes?")
        assert "allow_always" in str(caught.value.data) + str(caught.value)


def test_reconnect_resumes_the_session_and_never_resends_a_prompt(root: Path) -> None:
    client, _ = sdk_client(root)
    with client:
        client.initialize()
        session = client.new_session()
        assert client.prompt("first").text.startswith("prompt 1: first.")
        with pytest.raises(AcpConnectionClosed) as caught:
            client.prompt("hang up")  # the agent process exits mid-prompt
        assert caught.value.prompt_in_flight
        assert client.state == "disconnected"
        with pytest.raises(AcpStateError):
            client.prompt("while down")
        client.reconnect()
        assert (client.state, client.session_id) == ("in_session", session)
        # a fresh agent process: its first prompt is the next one we send, nothing resent
        assert client.prompt("after").text.startswith("prompt 1: after.")


# -- the editor handlers ---------------------------------------------------------------------------


def test_paths_are_reduced_to_the_root(root: Path) -> None:
    editor = EditorHandlers(root)
    real = os.path.realpath(root)
    assert editor.relative(f"{real}/notes.txt") == "notes.txt"
    assert editor.relative(f"{real}/a/../notes.txt") == "notes.txt"
    for path in ("notes.txt", f"{real}/../escape.txt", "/etc/passwd", real, f"{real}-sibling/x"):
        with pytest.raises(AcpPathOutsideRoot):
            editor.relative(path)
    assert editor.read_text_file({"path": f"{real}/notes.txt", "line": 2, "limit": 1}) == {"content": "and bread\n"}
    assert editor.read_text_file({"path": f"{real}/notes.txt", "limit": 1}) == {"content": "buy milk\n"}
    assert editor.write_text_file({"path": f"{real}/out.txt", "content": "x"}) is None
    assert (root / "out.txt").read_text() == "x"
    (root / "link").symlink_to("/etc/hostname")
    from zigai.errors import ExecutionEnvironmentError

    with pytest.raises(ExecutionEnvironmentError):
        editor.read_text_file({"path": f"{real}/link"})
    for params in ({"path": 3}, {"path": f"{real}/notes.txt", "line": 0},
                   {"path": f"{real}/notes.txt", "limit": True}):
        with pytest.raises(AcpInvalidParams):
            editor.read_text_file(params)
    with pytest.raises(AcpInvalidParams):
        editor.request_permission({"sessionId": "s", "options": "x"})
    with pytest.raises(AcpPermissionRejected):
        EditorHandlers(root, choose=lambda r: "z").request_permission(
            {"sessionId": "s", "options": [{"optionId": "a"}], "toolCall": None})
    assert editor.capabilities() == {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": False}
    editor.close()


class Terminals:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def _record(self, name: str) -> Any:
        def call(params: dict[str, Any]) -> dict[str, Any]:
            self.calls.append(name)
            return {"terminalId": "t1"} if name == "create" else {}
        return call

    def __getattr__(self, name: str) -> Any:
        if name in ("create", "output", "wait_for_exit", "kill", "release"):
            return self._record(name)
        raise AttributeError(name)


# -- JSON-RPC behaviour over an in-memory transport -----------------------------------------------------


class MemoryTransport:
    """The agent side is the test: ``incoming`` feeds the client, ``sent`` records its messages."""

    def __init__(self) -> None:
        self.incoming: queue.Queue[bytes | None] = queue.Queue()
        self.sent: queue.Queue[dict[str, Any]] = queue.Queue()
        self.closed = False

    def send(self, message: bytes) -> None:
        self.sent.put(json.loads(message))

    def receive(self, timeout: float | None) -> bytes | None:
        return self.incoming.get(timeout=timeout)

    def close(self) -> None:
        self.closed = True
        self.incoming.put(None)

    def reply(self, result: Any) -> dict[str, Any]:
        request = self.sent.get(timeout=5)
        self.incoming.put(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode())
        return request


def memory_client(root: Path, **kwargs: Any) -> tuple[AcpClient, MemoryTransport]:
    transport = MemoryTransport()
    client = AcpClient(lambda: transport, EditorHandlers(root, **kwargs), request_timeout_s=5)
    return client, transport


def initialized(root: Path, **kwargs: Any) -> tuple[AcpClient, MemoryTransport]:
    import threading

    client, transport = memory_client(root, **kwargs)
    threading.Thread(target=transport.reply, args=({"protocolVersion": 1},), daemon=True).start()
    client.initialize()
    return client, transport


def test_agent_requests_interleave_with_a_pending_request(root: Path) -> None:
    import threading

    terminals = Terminals()
    client, transport = initialized(root, terminals=terminals)
    assert client.editor.capabilities()["terminal"] is True
    outcome: dict[str, Any] = {}
    threading.Thread(target=lambda: outcome.update(r=client.request("custom/slow", {})), daemon=True).start()
    pending = transport.sent.get(timeout=5)
    real = os.path.realpath(root)
    for ident, method, params in ((90, "fs/read_text_file", {"path": f"{real}/notes.txt"}),
                                  (91, "terminal/create", {"command": "ls"}),
                                  (92, "fs/read_text_file", {"path": "/etc/passwd"}),
                                  (93, "editor/unknown", {}),
                                  (94, "fs/write_text_file", {"path": f"{real}/x", "content": 5})):
        transport.incoming.put(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method,
                                           "params": params}).encode())
    answers = {a["id"]: a for a in (transport.sent.get(timeout=5) for _ in range(5))}
    assert answers[90]["result"] == {"content": "buy milk\nand bread\n"}
    assert answers[91]["result"] == {"terminalId": "t1"} and terminals.calls == ["create"]
    assert answers[92]["error"]["code"] == -32602
    assert answers[93]["error"]["code"] == -32601
    assert answers[94]["error"]["code"] == -32602
    transport.incoming.put(json.dumps({"jsonrpc": "2.0", "method": "session/update",
                                       "params": {"sessionId": "x", "update": {"a": 1}}}).encode())
    transport.incoming.put(json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": 3}).encode())
    transport.incoming.put(json.dumps({"jsonrpc": "2.0", "id": pending["id"], "result": "done"}).encode())
    for _ in range(50):
        if "r" in outcome:
            break
        import time

        time.sleep(0.02)
    assert outcome == {"r": "done"}
    client.close()


def test_errors_timeouts_and_protocol_violations(root: Path) -> None:
    import threading

    client, transport = initialized(root)
    with pytest.raises(AcpStateError):
        client.cancel()
    with pytest.raises(AcpStateError):
        client.load_session("s")  # the agent did not advertise loadSession

    def answer_error() -> None:
        request = transport.sent.get(timeout=5)
        transport.incoming.put(json.dumps({"jsonrpc": "2.0", "id": request["id"],
                                           "error": {"code": -32000, "message": "nope", "data": 1}}).encode())

    threading.Thread(target=answer_error, daemon=True).start()
    with pytest.raises(AcpRemoteError) as caught:
        client.request("x/y", {})
    assert (caught.value.code, caught.value.data, str(caught.value)) == (-32000, 1, "nope")
    with pytest.raises(AcpRequestTimedOut):
        client.request("x/slow", {}, timeout=0.05)
    assert transport.sent.get(timeout=5)["method"] == "x/slow"  # never answered
    threading.Thread(target=transport.reply, args=({"noSession": True},), daemon=True).start()
    with pytest.raises(AcpProtocolError, match="without a sessionId"):
        client.new_session()
    assert client.state == "initialized"
    transport.incoming.put(json.dumps({"jsonrpc": "2.0", "id": 999, "result": {}}).encode())
    for _ in range(100):
        if client.state == "disconnected":
            break
        import time

        time.sleep(0.02)
    assert client.state == "disconnected"  # an answer to an unknown id ends the connection
    with pytest.raises(AcpStateError, match="disconnected"):
        client.request("x/y", {})
    client.close()
    with pytest.raises(AcpStateError):
        client.initialize()
    with pytest.raises(AcpStateError):
        client.reconnect()

    for line in (b"not json", b"[1]", b'{"jsonrpc": "2.0", "id": 1}'):
        other, channel = memory_client(root)
        other._open()
        future_error: list[BaseException] = []
        threading.Thread(target=channel.incoming.put, args=(line,), daemon=True).start()
        try:
            other.request("initialize", {}, timeout=2)
        except (AcpProtocolError, AcpConnectionClosed, AcpStateError) as exc:
            future_error.append(exc)
        assert future_error  # the connection ended: never a silent success
        assert other.state == "disconnected"
        other.close()

    wrong, channel = memory_client(root)
    threading.Thread(target=channel.reply, args=({"protocolVersion": 2},), daemon=True).start()
    with pytest.raises(AcpProtocolError, match="version 2"):
        wrong.initialize()
    wrong.close()


def test_stdio_transport_bounds_lines_and_reports_the_end(tmp_path: Path) -> None:
    script = tmp_path / "talk.py"
    script.write_text("import sys\nsys.stdout.write('x' * 50 + '\\n')\nsys.stdout.flush()\n")
    transport = StdioTransport([sys.executable, str(script)], max_message_bytes=10)
    assert transport.pid > 0
    with pytest.raises(AcpMessageTooLarge):
        transport.receive(5)
    assert transport.receive(5) is None
    transport.close()
    script.write_text("import sys\nprint('{\"a\": 1}')\nprint()\n")
    transport = StdioTransport([sys.executable, str(script)])
    assert transport.receive(5) == b'{"a": 1}'
    assert transport.receive(5) is None and transport.receive(5) is None
    with pytest.raises(AcpConnectionClosed):
        for _ in range(100):
            transport.send(b"{}" * 10_000)
    transport.close()
    sleeper = StdioTransport([sys.executable, "-c", "import time; time.sleep(30)"])
    with pytest.raises(TimeoutError):
        sleeper.receive(0.05)
    sleeper.close()
    with pytest.raises(ValueError):
        StdioTransport([])


def test_cancel_stops_the_sdk_agents_prompt(root: Path) -> None:
    import threading

    client, _ = sdk_client(root)
    with client:
        client.initialize()
        client.new_session()
        outcome: dict[str, Any] = {}
        worker = threading.Thread(target=lambda: outcome.update(r=client.prompt("wait for cancel")))
        worker.start()
        for _ in range(200):  # the agent streams its first chunk once it has the prompt
            if client._collecting:
                break
            import time

            time.sleep(0.02)
        with pytest.raises(AcpStateError, match="already in flight"):
            client.prompt("a second turn at once")
        client.cancel()
        worker.join(timeout=20)
        assert outcome["r"].stop_reason == "cancelled"
        assert outcome["r"].text == "prompt 1: wait for cancel. "


def test_a_prompt_timeout_cancels_the_turn_and_update_callbacks_fail_loudly(root: Path) -> None:
    import threading

    client, transport = initialized(root)
    threading.Thread(target=transport.reply, args=({"sessionId": "s"},), daemon=True).start()
    client.new_session()
    client.prompt_timeout_s = 0.1
    with pytest.raises(AcpRequestTimedOut):
        client.prompt("slow")
    sent = [transport.sent.get(timeout=5) for _ in range(2)]
    assert [m["method"] for m in sent] == ["session/prompt", "session/cancel"]
    assert "id" not in sent[1] and sent[1]["params"] == {"sessionId": "s"}

    def broken(session: str, update: dict[str, Any]) -> None:
        raise RuntimeError("renderer crashed")

    client.on_update = broken
    client.prompt_timeout_s = 5

    def answer_with_an_update() -> None:
        request = transport.sent.get(timeout=5)
        transport.incoming.put(json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {
            "sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk",
                                         "content": {"type": "text", "text": "hi"}}}}).encode())
        transport.incoming.put(json.dumps({"jsonrpc": "2.0", "method": "other/notice",
                                           "params": {}}).encode())
        transport.incoming.put(json.dumps({"jsonrpc": "2.0", "id": request["id"],
                                           "result": {"stopReason": "end_turn"}}).encode())

    threading.Thread(target=answer_with_an_update, daemon=True).start()
    with pytest.raises(RuntimeError, match="renderer crashed"):
        client.prompt("hello")
    client.on_update = None  # the connection survived the callback's failure
    threading.Thread(target=transport.reply, args=({"stop": 1},), daemon=True).start()
    with pytest.raises(AcpProtocolError, match="stopReason"):
        client.prompt("again")
    client.close()
    client.close()  # closing twice is harmless


def test_broken_transports_and_handlers_end_or_answer_cleanly(root: Path) -> None:
    import threading

    class Exploding(MemoryTransport):
        def receive(self, timeout: float | None) -> bytes | None:
            item = self.incoming.get(timeout=timeout)
            if item == b"boom":
                raise RuntimeError("socket bug")
            return item

    transport = Exploding()
    client = AcpClient(lambda: transport, EditorHandlers(root), request_timeout_s=5)
    with pytest.raises(AcpStateError):
        client.notify("x", {})  # never connected
    client._open()
    transport.incoming.put(b"boom")
    with pytest.raises(AcpConnectionClosed, match="socket bug"):
        client.request("initialize", {})
    client.close()

    def failing(request: PermissionRequest) -> str:
        raise KeyError("no user")

    client, transport = initialized(root, choose=failing)
    transport.incoming.put(json.dumps({"jsonrpc": "2.0", "id": "p", "method": "session/request_permission",
                                       "params": {"sessionId": "s", "options": []}}).encode())
    answer = transport.sent.get(timeout=5)
    assert answer["id"] == "p" and answer["error"]["code"] == -32603 and "no user" in answer["error"]["message"]
    # a request waiting while the connection is replaced fails instead of hanging
    outcome: list[BaseException] = []

    def wait() -> None:
        try:
            client.request("x/long", {})
        except AcpConnectionClosed as exc:
            outcome.append(exc)

    waiter = threading.Thread(target=wait)
    waiter.start()
    transport.sent.get(timeout=5)
    client._drop_transport()
    waiter.join(timeout=5)
    assert outcome and "replaced" in str(outcome[0])
    client.close()
    bad, channel = memory_client(root)
    threading.Thread(target=channel.reply, args=(["not", "an", "object"],), daemon=True).start()
    with pytest.raises(AcpProtocolError, match="version None"):
        bad.initialize()
    bad.close()
