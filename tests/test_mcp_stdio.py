"""StdioTransport against small child processes: correlation, bounds, routing, shutdown and reaping."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

import pytest
from support.timing import (
    CANCEL_SLACK_S,
    DEADLINE_SLACK_S,
    CancelLater,
    StallMeter,
    assert_ended_within,
)

from zigai import mcp
from zigai.control import CancellationToken
from zigai.mcp.wire.jsonrpc import (
    JsonRpcError,
    JsonRpcNotification,
    JsonRpcResponse,
    encode,
    request_message,
)
from zigai.mcp.wire.transport import OutgoingRequest

# A child that answers requests in reverse order of arrival once two are waiting, echoes
# notifications/cancelled back as a log line, and emits routed notifications on demand.
REVERSER = r"""
import json, sys
waiting = []
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "info", "data": {"seen": msg.get("method", "response"),
                                                   "params": msg.get("params", msg.get("error"))}}})
        continue
    method = msg["method"]
    if method == "ping/now":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"echo": msg["params"]}})
    elif method == "notes/then":
        token = msg["params"]["_meta"].get("progressToken")
        send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": 1}})
        send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "other", "progress": 1}})
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
              "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": msg["id"]}}})
        send({"jsonrpc": "2.0", "id": 999, "result": {}})
        send({"jsonrpc": "2.0", "id": 77, "method": "sampling/createMessage", "params": {}})
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"done": True}})
    elif method == "end/stream":
        send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": msg["id"]}})
    elif method == "never/answer":
        pass
    else:
        waiting.append(msg)
        if len(waiting) == 2:
            for item in reversed(waiting):
                send({"jsonrpc": "2.0", "id": item["id"], "result": {"method": item["method"]}})
            waiting.clear()
"""

STUBBORN = r"""
import pathlib, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
pathlib.Path(sys.argv[1]).write_text("ready")
while True:
    time.sleep(0.05)
"""


def _request(request_id: int | str, method: str, params: dict | None = None, *,
             progress: int | str | None = None) -> OutgoingRequest:
    body = params or {}
    if progress is not None:
        body = {**body, "_meta": {"progressToken": progress}}
    return OutgoingRequest(id=request_id, method=method, body=encode(request_message(request_id, method, body)),
                           protocol_version=mcp.PROTOCOL_VERSION, progress_token=progress)


def _send(transport: mcp.StdioTransport, request: OutgoingRequest, *, deadline_s: float = 5.0,
          token: CancellationToken | None = None, notes: list | None = None):
    sink = notes.append if notes is not None else (lambda note: None)
    return transport.request(request, deadline=time.monotonic() + deadline_s,
                             is_cancelled=lambda: token is not None and token.cancelled, on_notification=sink)


def _reaped(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True  # no such child: it was reaped
    return False


def _py(code: str, **options: object) -> mcp.StdioTransport:
    return mcp.StdioTransport([sys.executable, "-c", code], mcp.StdioOptions(**options))  # type: ignore[arg-type]


def test_responses_are_correlated_by_id_when_they_arrive_out_of_order() -> None:
    with _py(REVERSER) as transport:
        results: dict[str, object] = {}

        def call(request_id: str, method: str) -> None:
            results[request_id] = _send(transport, _request(request_id, method))

        threads = [threading.Thread(target=call, args=(f"r{i}", f"m/{i}")) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert results == {"r0": JsonRpcResponse("r0", {"method": "m/0"}),
                           "r1": JsonRpcResponse("r1", {"method": "m/1"})}


def test_notifications_are_routed_to_their_request_and_the_rest_is_unrouted() -> None:
    unrouted: list[JsonRpcNotification] = []
    with _py(REVERSER, on_unrouted=unrouted.append) as transport:
        notes: list[JsonRpcNotification] = []
        reply = _send(transport, _request(5, "notes/then", progress="tok"), notes=notes)
        assert reply == JsonRpcResponse(5, {"done": True})
        assert [n.method for n in notes] == ["notifications/progress", "notifications/tools/list_changed"]
        assert notes[0].params["progressToken"] == "tok"
        # the server's request was refused with -32601; the stray progress went unrouted
        transport.notify("notifications/x", encode({"jsonrpc": "2.0", "method": "notifications/x"}),
                         protocol_version=mcp.PROTOCOL_VERSION, deadline=None)
        assert _send(transport, _request(6, "ping/now", {"a": 1})).result == {"echo": {"a": 1}}
        deadline = time.monotonic() + 5
        while len(unrouted) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert [n.method for n in unrouted] == ["notifications/progress", "notifications/message",
                                                "notifications/message"]
        assert unrouted[0].params["progressToken"] == "other"
        refusal = unrouted[1].params["data"]
        assert refusal["seen"] == "response" and refusal["params"]["code"] == -32601
        assert unrouted[2].params["data"]["seen"] == "notifications/x"


def test_a_server_cancelled_listen_stream_ends_with_stream_ended() -> None:
    with _py(REVERSER) as transport, pytest.raises(mcp.McpStreamEnded):
        _send(transport, _request(8, "end/stream"))


def test_timeout_and_cancellation_send_notifications_cancelled() -> None:
    unrouted: list[JsonRpcNotification] = []
    with _py(REVERSER, on_unrouted=unrouted.append) as transport, StallMeter() as meter:
        deadline = time.monotonic() + 0.2
        with pytest.raises(mcp.McpRequestTimedOut):
            transport.request(_request(10, "never/answer"), deadline=deadline, is_cancelled=lambda: False,
                              on_notification=lambda note: None)
        assert time.monotonic() >= deadline
        assert_ended_within(deadline, DEADLINE_SLACK_S, meter)
        token = CancellationToken()
        with CancelLater(token, 0.1) as cancel, pytest.raises(mcp.McpRequestCancelled):
            _send(transport, _request(11, "never/answer"), token=token)
        assert_ended_within(cancel.cancelled_at, CANCEL_SLACK_S, meter)
        deadline = time.monotonic() + 5
        while len(unrouted) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        cancelled = [n.params["data"]["params"]["requestId"] for n in unrouted
                     if n.params["data"]["seen"] == "notifications/cancelled"]
        assert cancelled == [10, 11]


def test_pending_requests_are_bounded() -> None:
    with _py(REVERSER, max_pending=1) as transport:
        waiter = threading.Thread(target=lambda: pytest.raises(mcp.McpRequestTimedOut, _send, transport,
                                                               _request(1, "never/answer"), deadline_s=1.0))
        waiter.start()
        time.sleep(0.2)
        with pytest.raises(mcp.McpRequestQueueFull) as caught:
            _send(transport, _request(2, "ping/now"))
        assert caught.value.limit == 1
        waiter.join(5)
        assert _send(transport, _request(3, "ping/now", {})).result == {"echo": {}}


def test_duplicate_in_flight_ids_are_refused() -> None:
    with _py(REVERSER) as transport:
        waiter = threading.Thread(target=lambda: pytest.raises(mcp.McpRequestTimedOut, _send, transport,
                                                               _request(1, "never/answer"), deadline_s=0.5))
        waiter.start()
        time.sleep(0.1)
        with pytest.raises(mcp.InvalidMcpRequest, match="already in flight"):
            _send(transport, _request(1, "ping/now"))
        waiter.join(5)


def _flood(size: int) -> str:
    return f"import sys; sys.stdout.write('x' * {size} + '\\n'); sys.stdout.flush(); sys.stdin.read()"


def test_a_line_exactly_at_the_bound_is_read_and_one_more_byte_is_a_named_error() -> None:
    limit = 4096
    unrouted: list[JsonRpcNotification] = []
    note = json.dumps({"jsonrpc": "2.0", "method": "n", "params": {"p": ""}})
    exact = json.dumps({"jsonrpc": "2.0", "method": "n", "params": {"p": "y" * (limit - len(note))}})
    assert len(exact) == limit
    code = (f"import sys; sys.stdout.write({exact!r} + '\\n' + {exact[:-2] + 'y' + exact[-2:]!r} + '\\n');"
            "sys.stdout.flush(); sys.stdin.read()")
    transport = _py(code, max_line_bytes=limit, on_unrouted=unrouted.append)
    try:
        with pytest.raises(mcp.StdioLineTooLarge) as caught:
            _send(transport, _request(1, "never/answer"))
        assert caught.value.limit == limit
        assert len(unrouted) == 1 and len(unrouted[0].params["p"]) == limit - len(note)
        with pytest.raises(mcp.StdioLineTooLarge):  # the transport stays failed
            _send(transport, _request(2, "never/answer"))
    finally:
        transport.close()
    assert _reaped(transport.pid)


def test_a_child_flooding_stdout_without_newlines_gets_the_named_error() -> None:
    transport = _py("import sys\nwhile True: sys.stdout.write('x' * 65536); sys.stdout.flush()",
                    max_line_bytes=100_000, shutdown_timeout_s=0.1)
    try:
        with pytest.raises(mcp.StdioLineTooLarge):
            _send(transport, _request(1, "never/answer"))
    finally:
        transport.close()
    assert _reaped(transport.pid)


def test_a_child_that_ignores_stdin_close_and_sigterm_is_killed_and_reaped_at_the_deadline(
    tmp_path: Path,
) -> None:
    ready = tmp_path / "ready"
    transport = mcp.StdioTransport(
        [sys.executable, "-c", STUBBORN, str(ready)],
        mcp.StdioOptions(shutdown_timeout_s=0.3, terminate_timeout_s=0.3),
    )
    pid = transport.pid
    # A loaded machine can take longer than any fixed sleep to start the child; until its
    # SIGTERM handler is installed, the terminate step would end it early.
    give_up = time.monotonic() + 30.0
    while not ready.exists():
        assert time.monotonic() < give_up, "the stubborn child never started"
        time.sleep(0.02)
    with StallMeter() as meter:
        started = time.monotonic()
        transport.close()
        elapsed = time.monotonic() - started
        assert elapsed >= 0.55, elapsed  # stdin close wait + terminate wait, then SIGKILL
        assert_ended_within(started + 0.6, 1.4, meter, "close")
    assert transport.returncode == -9
    assert _reaped(pid)
    assert not Path(f"/proc/{pid}").exists()  # no zombie left behind
    transport.close()  # idempotent


def test_a_cooperative_child_exits_when_stdin_closes() -> None:
    transport = _py("import sys; sys.stdin.read()", shutdown_timeout_s=5.0)
    with StallMeter() as meter:
        started = time.monotonic()
        transport.close()
        # half the 5 s shutdown timeout: a close that waited it out (or signalled the child)
        # still fails, while a loaded machine (a child under coverage writes its data on exit)
        # has room
        assert_ended_within(started, 2.5, meter, "close")
    assert transport.returncode == 0 and _reaped(transport.pid)


def test_an_exiting_child_fails_requests_and_may_be_restarted(tmp_path: Path) -> None:
    counter = tmp_path / "starts"
    code = (f"import sys, pathlib; p = pathlib.Path({str(counter)!r}); "
            "p.write_text(str(int(p.read_text() or 0) + 1) if p.exists() else '1'); "
            "line = sys.stdin.readline(); sys.exit(3)")
    transport = _py(code, max_restarts=1)
    try:
        with pytest.raises(mcp.McpServerExited) as caught:
            _send(transport, _request(1, "any/thing"))
        assert caught.value.returncode == 3
        first = transport.pid
        with pytest.raises(mcp.McpServerExited):
            _send(transport, _request(2, "any/thing"))  # a fresh child, which exits again
        assert transport.pid != first
        with pytest.raises(mcp.McpServerExited):  # restarts are used up
            _send(transport, _request(3, "any/thing"))
        assert counter.read_text() == "2"
    finally:
        transport.close()
    assert _reaped(transport.pid)


def test_stderr_is_discarded_or_inherited(capfd: pytest.CaptureFixture[str]) -> None:
    code = "import sys; sys.stderr.write('diagnostic\\n'); sys.stderr.flush(); sys.stdin.read()"
    for mode, expected in ((mcp.StderrMode.discard, ""), (mcp.StderrMode.inherit, "diagnostic\n")):
        transport = _py(code, stderr=mode)
        transport.close()  # the child writes, then exits when its stdin closes
        assert capfd.readouterr().err == expected


def test_close_fails_pending_requests_and_later_use_raises() -> None:
    transport = _py(REVERSER)
    errors: list[BaseException] = []

    def wait() -> None:
        try:
            _send(transport, _request(1, "never/answer"))
        except BaseException as exc:  # noqa: BLE001 - recorded for the assertion
            errors.append(exc)

    thread = threading.Thread(target=wait)
    thread.start()
    time.sleep(0.2)
    transport.close()
    thread.join(5)
    assert len(errors) == 1 and isinstance(errors[0], mcp.McpClientClosed)
    with pytest.raises(mcp.McpClientClosed):
        _send(transport, _request(2, "ping/now"))
    with pytest.raises(mcp.McpClientClosed):
        transport.notify("n", b"{}", protocol_version=mcp.PROTOCOL_VERSION, deadline=None)


def test_options_and_commands_are_validated() -> None:
    for bad in ({"max_pending": 0}, {"max_line_bytes": True}, {"shutdown_timeout_s": -1},
                {"stderr": "loud"}, {"backlog": 0}):
        with pytest.raises(mcp.InvalidMcpRequest):
            mcp.StdioOptions(**bad)  # type: ignore[arg-type]
    for command in ("python", [], [1]):
        with pytest.raises(mcp.InvalidMcpRequest):
            mcp.StdioTransport(command)  # type: ignore[arg-type]
    with pytest.raises(mcp.McpConnectionFailed, match="could not start"):
        mcp.StdioTransport(["/nonexistent/zigai-mcp-server"])


def test_invalid_lines_are_skipped_and_error_replies_are_correlated() -> None:
    code = ("import sys, json\nsys.stdout.write('not json\\n\\n')\nline = json.loads(sys.stdin.readline())\n"
            "sys.stdout.write(json.dumps({'jsonrpc': '2.0', 'id': line['id'], 'error': {'code': -32601, "
            "'message': 'nope'}}) + '\\r\\n'); sys.stdout.flush(); sys.stdin.read()")
    with _py(code) as transport:
        assert _send(transport, _request(4, "x/y")) == JsonRpcError(4, -32601, "nope", None)
