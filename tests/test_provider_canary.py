"""Canary credential: a provider built with a recognizable secret leaks it nowhere.

The same scenario (success, rate limit with retry, an error body that echoes the key, a
stream, a streamed error) runs through MockTransport and through the real HttpTransport
against a 127.0.0.1 server this test starts and stops.  The secret must be absent from every
observer view, error (message, attributes, pickle), retry-hook payload, response header view,
repr, log record (DEBUG, all loggers) and recorded cassette.
"""

from __future__ import annotations

import json
import logging
import pickle
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from support.cassettes import RecordingTransport
from support.mock_transport import MockResponse, MockTransport

from zigai.control import RunControl
from zigai.errors import ProviderRequestError
from zigai.provider import ProviderErrorView, ProviderHttpRequest
from zigai.providers.http import AuthStyle, Configured
from zigai.retry import RetryAttempt, RetryPolicy, run_with_retries
from zigai.security import UrlPolicy
from zigai.transport import HttpTransport, Transport, TransportRequest

CANARY = "sk-canary-7f3a9c2e4b1d8f6a0e5c"


def _route(method: str, path: str, auth: str | None) -> tuple[int, list[tuple[str, str]], bytes]:
    """The fake provider: checks the credential arrived, then misbehaves in every way it can."""
    if auth not in (f"Bearer {CANARY}", CANARY):
        return 400, [("content-type", "application/json")], b'{"error":{"message":"no key"}}'
    echo = [("x-echo-authorization", auth or ""), ("set-cookie", f"s={CANARY}")]
    name = path.rsplit("/", 1)[-1].split("?")[0]
    if name == "ok":
        body = json.dumps({"id": "resp_1", "output": []}).encode()
        return 200, [("content-type", "application/json"), ("x-request-id", "req_ok"), *echo], body
    if name == "busy":
        body = b'{"error":{"message":"slow down","type":"rate_limit_error"}}'
        return 429, [("retry-after", "0"), ("x-request-id", "req_busy"), *echo], body
    if name == "fail":
        body = json.dumps(
            {"error": {"message": f"Incorrect API key provided: {CANARY}",
                       "type": "invalid_request_error", "code": f"key_{CANARY}"}}
        ).encode()
        return 401, [("x-request-id", f"req-{CANARY}"), *echo], body
    if name == "stream":
        body = b'data: {"delta":"hi"}\n\ndata: [DONE]\n\n'
        return 200, [("content-type", "text/event-stream"), ("x-request-id", "req_s"), *echo], body
    if name == "stream-fail":
        body = f'{{"type":"error","error":{{"type":"overloaded_error","message":"{CANARY}"}}}}'
        return 529, [("request-id", f"{CANARY}"), *echo], body.encode()
    return 404, [], b""


def _credential_of(headers: Any) -> str | None:
    """What the fake provider treats as the credential: the bearer/header value, or for a
    SigV4-signed request its session token (the one secret SigV4 puts on the wire)."""
    authorization = headers.get("authorization") or ""
    if authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDCANARY/"):
        return headers.get("x-amz-security-token")
    return authorization or headers.get("x-api-key")


class _Handler(BaseHTTPRequestHandler):
    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        status, headers, body = _route(self.command, self.path, _credential_of(self.headers))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = _answer
    do_POST = _answer

    def log_message(self, *args: Any) -> None:  # keep stderr quiet
        return None


@contextmanager
def _server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _mock_transport() -> MockTransport:
    def handler(request: TransportRequest) -> MockResponse:
        headers = dict((k.lower(), v) for k, v in request.headers)
        status, pairs, body = _route(request.method, request.url, _credential_of(headers))
        return MockResponse(status, tuple(pairs), body)

    return MockTransport(handler)


class Sink:
    """Everything a diagnostic consumer could have seen, rendered to text for the search."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, value: Any) -> None:
        self.items.append(repr(value))
        if isinstance(value, BaseException):
            self.items.append(str(value))
            self.items.append(repr(vars(value)))
            self.items.append(repr(pickle.dumps(value)))

    def view(self, view: ProviderErrorView) -> None:
        self.add(view)

    def hook(self, attempt: RetryAttempt) -> None:
        self.add(attempt)
        self.add(attempt.error)


def _exercise(provider: Configured, sink: Sink) -> None:
    sink.add(provider)
    common: dict[str, Any] = {
        "json_body": {"model": "m"}, "error_observer": sink.view, "capture_error_body": True,
        "max_error_body_bytes": 100_000,
    }
    ok = provider.send(ProviderHttpRequest("ok", **common))
    assert ok.json() == {"id": "resp_1", "output": []}
    sink.add(ok)
    sink.add(ok.headers.items)

    calls: list[str] = []

    def attempt(number: int, key: str | None) -> Any:
        calls.append("busy" if number == 1 else "ok")
        return provider.send(ProviderHttpRequest(calls[-1], **common))

    policy = RetryPolicy(initial_delay_ms=0, max_delay_ms=0, jitter=False, before_retry=sink.hook)
    sink.add(run_with_retries(attempt, policy=policy, control=RunControl()))
    assert calls == ["busy", "ok"]

    with pytest.raises(ProviderRequestError) as failed:
        provider.send(ProviderHttpRequest("fail", **common))
    sink.add(failed.value)
    assert failed.value.status == 401 and failed.value.message is not None
    assert failed.value.message.startswith("Incorrect API key provided: ")

    with provider.stream_lines(ProviderHttpRequest("stream", **common)) as stream:
        sink.add(stream)
        sink.add(stream.headers.items)
        assert list(stream)[0] == b'data: {"delta":"hi"}'

    with pytest.raises(ProviderRequestError) as stream_failed:
        with provider.stream_lines(ProviderHttpRequest("stream-fail", **common)):
            pass
    sink.add(stream_failed.value)
    assert stream_failed.value.status == 529


def _assert_clean(sink: Sink, caplog: pytest.LogCaptureFixture) -> None:
    assert any("[REDACTED]" in item for item in sink.items), "the canary never came back"
    leaks = [item for item in sink.items if CANARY in item]
    assert leaks == []
    for record in caplog.records:
        assert CANARY not in record.getMessage()
        assert CANARY not in repr(record.args)
    # the observer saw every non-2xx answer, bodies included
    assert sum("ProviderErrorView(" in item for item in sink.items) == 3


@pytest.mark.parametrize("auth", [AuthStyle.bearer(), AuthStyle.header("x-api-key")], ids=str)
def test_canary_secret_never_leaks_through_mock_transport(
    auth: AuthStyle, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    sink = Sink()
    transport = _mock_transport()
    _exercise(Configured("openai", "https://api.example.com/v1", transport, credential=CANARY,
                         auth=auth), sink)
    _assert_clean(sink, caplog)
    # the credential really was sent
    assert any(CANARY in value for r in transport.requests for _, value in r.headers)


def _bearer(root: str, transport: Transport, policy: UrlPolicy | None = None) -> Configured:
    return Configured("openai", root, transport, credential=CANARY, url_policy=policy,
                      request_timeout_ms=10_000)


def _bedrock(root: str, transport: Transport, policy: UrlPolicy | None = None) -> Configured:
    from zigai.providers.bedrock import AwsCredentials, Provider

    # the session token is the canary the server echoes; the secret key never travels
    credentials = AwsCredentials("AKIDCANARY", SECRET_KEY_CANARY, CANARY)
    return Provider(region="us-east-1", base_url=root, transport=transport, url_policy=policy,
                    credentials=credentials, request_timeout_ms=10_000)


SECRET_KEY_CANARY = "wJalr-canary-secret-key-4e8d1c"


@pytest.mark.parametrize("build", [_bearer, _bedrock], ids=["bearer", "bedrock-sigv4"])
def test_canary_secret_never_leaks_through_real_http_transport(
    build: Any, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    sink = Sink()
    local = UrlPolicy.local_development()
    with _server() as root, HttpTransport(url_policy=local, default_timeout_s=10) as transport:
        _exercise(build(root, transport, local), sink)
    _assert_clean(sink, caplog)
    assert any("urllib3" in record.name for record in caplog.records)  # DEBUG capture was live
    assert not any(SECRET_KEY_CANARY in item for item in sink.items)
    assert not any(SECRET_KEY_CANARY in record.getMessage() for record in caplog.records)


def test_bedrock_sigv4_secrets_never_leak_through_mock_transport(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    sink = Sink()
    transport = _mock_transport()
    _exercise(_bedrock("https://bedrock-runtime.us-east-1.amazonaws.com", transport), sink)
    _assert_clean(sink, caplog)
    assert not any(SECRET_KEY_CANARY in item for item in sink.items)
    sent = [value for r in transport.requests for _, value in r.headers]
    assert CANARY in sent and not any(SECRET_KEY_CANARY in value for value in sent)


def test_recorded_cassette_never_holds_the_credential() -> None:
    local = UrlPolicy.local_development()
    with _server() as root, HttpTransport(url_policy=local, default_timeout_s=10) as http:
        recorder = RecordingTransport(http, safe_response_headers=("content-type", "x-request-id"))
        transport: Transport = recorder
        provider = Configured("openai", root, transport, credential=CANARY, url_policy=local)
        provider.send(ProviderHttpRequest("ok", json_body={"model": "m"}))
        with pytest.raises(ProviderRequestError):
            provider.send(ProviderHttpRequest("busy", json_body={"model": "m"}))
        with provider.stream_lines(ProviderHttpRequest("stream", json_body={})) as stream:
            list(stream)
    cassette = recorder.dump()
    assert len(recorder.interactions) == 3
    assert "req_ok" in cassette and "slow down" in cassette
    assert CANARY not in cassette
