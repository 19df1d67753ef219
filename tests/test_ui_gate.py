"""The UI endpoints' deployment gate (issue 32, defect 1), over real loopback sockets.

A web page the user visits can make the browser send a cross-site ``POST`` with
``Content-Type: text/plain`` (no preflight) or re-point its own name at 127.0.0.1 (DNS
rebinding).  Neither may start a run: the model and its tools must never be called, and the
refusal comes from the headers alone, before the body is read.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit
from wsgiref.simple_server import WSGIRequestHandler, make_server

import pytest

from zigai.agent import Agent
from zigai.http_gate import DeploymentPolicy
from zigai.messages import ToolReturnPart
from zigai.testing import DeltaToolCall, FunctionModel
from zigai.tool import Tool
from zigai.ui import LocalServer, ui_app

ARGS = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


class Recorder:
    """An agent whose model asks for a tool; both record every call."""

    def __init__(self) -> None:
        self.model_calls = 0
        self.tool_calls = 0

    def agent(self) -> Agent:
        def stream(messages: Any, info: Any) -> Iterator[Any]:
            self.model_calls += 1
            if not any(isinstance(part, ToolReturnPart) for part in messages[-1].parts):
                yield DeltaToolCall(name="delete", json_args='{"path": "x"}', tool_call_id="c1")
            else:
                yield "done"

        def delete(args: dict[str, Any]) -> str:
            self.tool_calls += 1
            return "deleted"

        tool = Tool.manual("delete", "Delete a file.", ARGS, delete)
        return Agent(FunctionModel(stream_function=stream), tools=[tool])


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - wsgiref's name
        pass


@contextmanager
def plain_wsgi(app: Any) -> Iterator[str]:
    """The standard library's single-threaded WSGI server on 127.0.0.1, port 0."""
    server = make_server("127.0.0.1", 0, app, handler_class=_Quiet)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@contextmanager
def local_server(app: Any) -> Iterator[str]:
    with LocalServer(app) as server:
        yield server.url


SERVERS = [pytest.param(local_server, id="LocalServer"), pytest.param(plain_wsgi, id="wsgiref")]


def exchange(url: str, head: str, body: bytes = b"", *, send_body: bool = True) -> tuple[int, dict[str, str], bytes]:
    """Send one raw request; answer (status, lower-cased headers, body).

    With ``send_body=False`` the declared body is never sent: a server that waits for it
    before answering makes this time out, so an answer proves the refusal came first.
    """
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(head.replace("\n", "\r\n").encode() + b"\r\n" + (body if send_body else b""))
        sock.shutdown(socket.SHUT_WR) if send_body else None
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            assert chunk, data
            data += chunk
        head_bytes, _, rest = data.partition(b"\r\n\r\n")
        lines = head_bytes.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "-1"))
        while length >= 0 and len(rest) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            rest += chunk
        if length < 0 and send_body:
            while chunk := sock.recv(65536):
                rest += chunk
        return int(lines[0].split()[1]), headers, rest


def run_head(port: int, *, host: str | None = None, content_type: str = "application/json",
             origin: str | None = None, length: int = 0, method: str = "POST", path: str = "/") -> str:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host or f'127.0.0.1:{port}'}", "Connection: close"]
    if content_type:
        lines.append(f"Content-Type: {content_type}")
    if origin:
        lines.append(f"Origin: {origin}")
    lines.append(f"Content-Length: {length}")
    return "\n".join(lines) + "\n"


def run_body(protocol: str) -> bytes:
    if protocol == "agui":
        document: dict[str, Any] = {"threadId": "t", "runId": "r", "messages": [
            {"id": "u", "role": "user", "content": "delete x"}]}
    else:
        document = {"id": "chat", "messages": [
            {"id": "u", "role": "user", "parts": [{"type": "text", "text": "delete x"}]}]}
    return json.dumps(document).encode()


HOSTILE = [
    pytest.param({"content_type": "text/plain", "origin": "https://evil.example"}, 403, "OriginNotAllowed",
                 id="cross-site-text-plain"),
    pytest.param({"origin": "https://evil.example"}, 403, "OriginNotAllowed", id="foreign-origin-json"),
    pytest.param({"origin": "null"}, 403, "OriginNotAllowed", id="opaque-origin"),
    pytest.param({"host": "attacker.example"}, 421, "HostNotAllowed", id="dns-rebinding-host"),
    pytest.param({"host": "attacker.example", "origin": "http://attacker.example"}, 421, "HostNotAllowed",
                 id="dns-rebinding-page"),
    pytest.param({"content_type": "text/plain"}, 415, "UnsupportedMediaType", id="text-plain-no-origin"),
    pytest.param({"content_type": "application/x-www-form-urlencoded", "origin": "http://127.0.0.1:9"}, 415,
                 "UnsupportedMediaType", id="form-from-loopback-page"),
    pytest.param({"content_type": ""}, 415, "UnsupportedMediaType", id="no-content-type"),
]


@pytest.mark.parametrize("serve", SERVERS)
@pytest.mark.parametrize("protocol", ["agui", "vercel"])
@pytest.mark.parametrize(("request_kw", "status", "code"), HOSTILE)
def test_hostile_requests_are_refused_before_the_body_and_nothing_runs(
        serve: Any, protocol: str, request_kw: dict[str, Any], status: int, code: str) -> None:
    recorder = Recorder()
    app = ui_app(recorder.agent(), protocol)
    body = run_body(protocol)
    with serve(app) as url:
        port = urlsplit(url).port
        assert port is not None
        got, headers, answer = exchange(url, run_head(port, length=len(body), **request_kw), body,
                                        send_body=False)
        assert (got, json.loads(answer)["error"]["code"]) == (status, code)
        if status != 415:  # a refused page must not read the refusal either
            assert "access-control-allow-origin" not in headers
        # the same request sent whole is refused the same way
        got, _headers, answer = exchange(url, run_head(port, length=len(body), **request_kw), body)
        assert (got, json.loads(answer)["error"]["code"]) == (status, code)
    assert (recorder.model_calls, recorder.tool_calls) == (0, 0)


@pytest.mark.parametrize("serve", SERVERS)
@pytest.mark.parametrize("protocol", ["agui", "vercel"])
def test_a_loopback_page_with_json_runs_and_may_read_the_answer(serve: Any, protocol: str) -> None:
    recorder = Recorder()
    app = ui_app(recorder.agent(), protocol)
    body = run_body(protocol)
    with serve(app) as url:
        port = urlsplit(url).port
        assert port is not None
        status, headers, answer = exchange(url, run_head(port, length=len(body), origin="http://localhost:5173"),
                                           body)
        assert status == 200 and b"done" in answer
        assert headers["access-control-allow-origin"] == "http://localhost:5173"
        assert "x-zigai-run-id" in headers["access-control-expose-headers"].lower()
        assert headers["vary"] == "Origin"
        # a non-browser client on loopback (no Origin) runs too, and gets no CORS headers
        status, headers, _answer = exchange(url, run_head(port, length=len(body), host=f"localhost:{port}"), body)
        assert status == 200 and "access-control-allow-origin" not in headers
    assert (recorder.model_calls, recorder.tool_calls) == (4, 2)


def test_preflight_is_answered_for_allowed_origins_and_refused_for_others() -> None:
    recorder = Recorder()
    app = ui_app(recorder.agent(), "agui", path="/api")
    with LocalServer(app) as server:
        port = urlsplit(server.url).port
        assert port is not None
        head = run_head(port, method="OPTIONS", path="/api", origin="http://127.0.0.1:3000", content_type="")
        status, headers, _ = exchange(server.url, head + "Access-Control-Request-Method: POST\n")
        assert status == 204
        assert headers["access-control-allow-origin"] == "http://127.0.0.1:3000"
        assert headers["access-control-allow-methods"] == "POST, OPTIONS"
        assert "content-type" in headers["access-control-allow-headers"].lower()
        events = run_head(port, method="OPTIONS", path="/api/runs/r/events", origin="http://[::1]:3000",
                          content_type="")
        status, headers, _ = exchange(server.url, events)
        assert (status, headers["allow"]) == (204, "GET, OPTIONS")
        status, headers, _ = exchange(server.url, run_head(port, method="OPTIONS", path="/api/runs/r/cancel",
                                                           content_type=""))
        assert (status, headers["allow"]) == (204, "POST, OPTIONS")
        assert "access-control-allow-origin" not in headers
        status, _, answer = exchange(server.url, run_head(port, method="OPTIONS", path="/nowhere", content_type=""))
        assert (status, json.loads(answer)["error"]["code"]) == (404, "NotFound")
        for origin, code in (("https://evil.example", 403), ("http://localhost.evil.example", 403)):
            status, headers, _ = exchange(server.url, run_head(port, method="OPTIONS", path="/api", origin=origin,
                                                               content_type=""))
            assert status == code and "access-control-allow-origin" not in headers
    assert recorder.model_calls == 0


def test_an_explicit_allowlist_replaces_the_loopback_rule() -> None:
    recorder = Recorder()
    policy = DeploymentPolicy(allowed_hosts=("agent.example:*",), allowed_origins=("https://app.example",),
                              require_tls=False)
    app = ui_app(recorder.agent(), "agui", policy=policy)
    body = run_body("agui")
    with LocalServer(app) as server:
        port = urlsplit(server.url).port
        assert port is not None
        allowed = run_head(port, host=f"agent.example:{port}", origin="https://app.example", length=len(body))
        status, headers, answer = exchange(server.url, allowed, body)
        assert status == 200 and headers["access-control-allow-origin"] == "https://app.example"
        for kw, code in (({"origin": "http://localhost:3000", "host": f"agent.example:{port}"}, 403),
                         ({}, 421),  # loopback is no longer served once hosts are listed
                         ({"host": "agent.example"}, 421)):  # the pattern asks for a port
            status, _, answer = exchange(server.url, run_head(port, length=len(body), **kw), body)
            assert status == code, kw
    tls_app = ui_app(Recorder().agent(), "agui", policy=DeploymentPolicy(require_tls=True))
    with LocalServer(tls_app) as server:
        port = urlsplit(server.url).port
        assert port is not None
        status, _, answer = exchange(server.url, run_head(port, length=len(body)), body)
        assert (status, json.loads(answer)["error"]["code"]) == (403, "TlsRequired")
    assert recorder.model_calls == 2


def test_cancel_and_reconnect_pass_the_same_gate() -> None:
    recorder = Recorder()
    app = ui_app(recorder.agent(), "agui")
    with LocalServer(app) as server:
        port = urlsplit(server.url).port
        assert port is not None
        for head in (run_head(port, path="/runs/r/cancel", origin="https://evil.example"),
                     run_head(port, path="/runs/r/cancel", content_type="text/plain"),
                     run_head(port, method="GET", path="/runs/r/events", host="attacker.example", content_type="")):
            status, _, answer = exchange(server.url, head)
            assert status in (403, 415, 421), head
            assert json.loads(answer)["error"]["code"] != "UnknownRun"  # refused before routing
        status, _, answer = exchange(server.url, run_head(port, path="/runs/r/cancel"))
        assert (status, json.loads(answer)["error"]["code"]) == (404, "UnknownRun")


def test_a_request_without_host_is_refused() -> None:
    recorder = Recorder()
    with LocalServer(ui_app(recorder.agent(), "agui")) as server:
        body = run_body("agui")
        head = f"POST / HTTP/1.0\nContent-Type: application/json\nContent-Length: {len(body)}\n"
        status, _, answer = exchange(server.url, head, body)
        assert (status, json.loads(answer)["error"]["code"]) == (421, "HostNotAllowed")
    assert recorder.model_calls == 0
