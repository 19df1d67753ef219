"""zigai.provider and zigai.providers.http.Configured: joining, headers, auth, errors, observer."""

from __future__ import annotations

import json
import pickle
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import pytest

from zigai.control import CancellationToken, Cancelled, RunControl
from zigai.errors import JsonError, ProviderRequestError
from zigai.model.profile import ModelProfile
from zigai.provider import (
    MAX_ERROR_CODE_CHARS,
    MAX_ERROR_MESSAGE_CHARS,
    Provider,
    ProviderAuthError,
    ProviderBadRequest,
    ProviderClientError,
    ProviderErrorView,
    ProviderHttpRequest,
    ProviderNotFound,
    ProviderResponseDecodeError,
    ProviderServerError,
    RateLimited,
    UnexpectedRedirect,
    decode_error_body,
)
from zigai.providers.http import (
    AuthStyle,
    Configured,
    InvalidProviderConfiguration,
    InvalidProviderRequest,
    ProviderHeaderConflict,
)
from zigai.security import REDACTED, UrlPolicy, UrlPolicyViolation
from zigai.transport import (
    Headers,
    Limits,
    MemoryStreamResponse,
    TransportRequest,
    TransportResponse,
)

ROOT = "https://api.example.com/v1"
SECRET = "sk-canary-0123456789abcdef"


class FakeTransport:
    """Records every TransportRequest; answers with ``handler(request) -> (status, headers, body)``."""

    def __init__(
        self,
        handler: Callable[[TransportRequest], tuple[int, list[tuple[str, str]], bytes]] | None = None,
    ) -> None:
        self.handler = handler or (lambda _: (200, [("content-type", "application/json")], b"{}"))
        self.requests: list[TransportRequest] = []

    def send(self, request: TransportRequest) -> TransportResponse:
        self.requests.append(request)
        status, headers, body = self.handler(request)
        response = MemoryStreamResponse(status, Headers.of(headers), body, Limits())
        return TransportResponse(
            status=status, headers=response.headers, body=body,
            request_id=response.request_id, retry_after_s=response.retry_after_s,
            date=response.date,
        )

    @contextmanager
    def stream_lines(self, request: TransportRequest) -> Iterator[MemoryStreamResponse]:
        self.requests.append(request)
        status, headers, body = self.handler(request)
        yield MemoryStreamResponse(status, Headers.of(headers), body, Limits())


def answer(status: int, body: bytes | str = b"{}", **headers: str) -> FakeTransport:
    data = body.encode() if isinstance(body, str) else body
    pairs = [(k.replace("_", "-"), v) for k, v in headers.items()]
    return FakeTransport(lambda _: (status, pairs, data))


def provider(transport: FakeTransport | None = None, **options: object) -> Configured:
    options.setdefault("credential", SECRET)
    return Configured("openai", ROOT, transport or FakeTransport(), **options)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- URL joining


@pytest.mark.parametrize(
    ("path", "url"),
    [
        ("responses", "https://api.example.com/v1/responses"),
        ("chat/completions", "https://api.example.com/v1/chat/completions"),
        (
            "models/gemini-2.5-flash:streamGenerateContent?alt=sse",
            "https://api.example.com/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
        ),
        ("files/file-abc/", "https://api.example.com/v1/files/file-abc/"),
        ("models/a%20b", "https://api.example.com/v1/models/a%20b"),
        ("models?page_size=50&page_token=x/y", "https://api.example.com/v1/models?page_size=50&page_token=x/y"),
    ],
)
def test_relative_endpoints_join_under_the_api_root(path: str, url: str) -> None:
    transport = FakeTransport()
    provider(transport).send(ProviderHttpRequest(path, json_body={}))
    assert transport.requests[0].url == url


@pytest.mark.parametrize(
    "path",
    [
        "", "https://evil.example/x", "http:evil", "//evil.example/x", "/v2/responses",
        "../responses", "a/../../x", "a/./b", ".", "..", "%2e%2e/x", "a/%2E%2e/b", "a/%2e",
        "a%2fb", "a%5Cb", "a%00b", "a\\b", "javascript:alert(1)", "evil.example:443/x", "a//b",
        "responses#frag", "a b", "a\nb", "?q=1", "caf\u00e9", "a/%zz", "a?b c", "a?b#c",
    ],
)
def test_endpoints_that_could_leave_the_api_root_are_rejected_before_io(path: str) -> None:
    transport = FakeTransport()
    with pytest.raises(InvalidProviderRequest):
        provider(transport).send(ProviderHttpRequest(path))
    assert transport.requests == []


def test_api_root_gets_a_trailing_slash_and_keeps_its_path() -> None:
    assert provider().api_root == "https://api.example.com/v1/"
    assert Configured("x", "https://api.example.com/", FakeTransport()).api_root == (
        "https://api.example.com/"
    )


@pytest.mark.parametrize(
    "root",
    ["http://api.example.com/v1", "https://localhost/v1", "https://10.0.0.1/v1",
     "https://user:pw@api.example.com/v1", "ftp://api.example.com", "https://intranet/v1"],
)
def test_api_root_is_checked_by_the_url_policy_at_construction(root: str) -> None:
    with pytest.raises(UrlPolicyViolation):
        Configured("openai", root, FakeTransport(), credential=SECRET)


@pytest.mark.parametrize(
    "root",
    ["https://api.example.com/v1?key=1", "https://api.example.com/v1#x",
     "https://api.example.com/a/../b", "https://api.example.com/a/%2e%2e/b",
     "https://api.example.com/a//b", "https://api.example.com/a%2fb", ""],
)
def test_api_root_with_query_fragment_or_dot_segments_is_a_configuration_error(root: str) -> None:
    with pytest.raises(InvalidProviderConfiguration):
        Configured("openai", root, FakeTransport(), credential=SECRET)


def test_local_development_policy_allows_a_loopback_http_root() -> None:
    transport = FakeTransport()
    local = Configured(
        "local", "http://127.0.0.1:8080/v1", transport, url_policy=UrlPolicy.local_development()
    )
    local.send(ProviderHttpRequest("chat/completions", json_body={}))
    assert transport.requests[0].url == "http://127.0.0.1:8080/v1/chat/completions"


def test_final_url_is_rechecked_against_the_policy_allowlist() -> None:
    transport = FakeTransport()
    narrowed = Configured(
        "openai", ROOT, transport, credential=SECRET,
        url_policy=UrlPolicy(allowed_hosts=frozenset({"api.example.com"})),
    )
    narrowed.send(ProviderHttpRequest("responses", json_body={}))
    assert len(transport.requests) == 1


# ----------------------------------------------------------------------------- headers, auth


def test_wire_request_has_exact_headers_body_and_method() -> None:
    transport = FakeTransport()
    p = provider(transport, headers=(("OpenAI-Organization", "org-1"),))
    p.send(
        ProviderHttpRequest(
            "responses", json_body={"model": "m", "input": "h\u00e9", "n": 1},
            headers=(("OpenAI-Beta", "assistants=v2"),),
        )
    )
    sent = transport.requests[0]
    assert sent.method == "POST"
    assert sent.body == '{"model":"m","input":"hé","n":1}'.encode()
    assert sent.headers == (
        ("OpenAI-Organization", "org-1"),
        ("OpenAI-Beta", "assistants=v2"),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", f"Bearer {SECRET}"),
    )


def test_get_without_body_sends_no_content_type() -> None:
    transport = FakeTransport()
    provider(transport).send(ProviderHttpRequest("models", method="GET"))
    sent = transport.requests[0]
    assert sent.method == "GET" and sent.body is None
    assert [name for name, _ in sent.headers] == ["Accept", "Authorization"]


def test_raw_body_is_sent_unchanged_with_the_adapter_content_type() -> None:
    transport = FakeTransport()
    payload = b"--b\r\nbinary \x00\xff\r\n--b--\r\n"
    provider(transport).send(
        ProviderHttpRequest(
            "files", body=payload, headers=(("Content-Type", "multipart/form-data; boundary=b"),)
        )
    )
    sent = transport.requests[0]
    assert sent.body == payload
    assert sent.headers == (
        ("Content-Type", "multipart/form-data; boundary=b"),
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", f"Bearer {SECRET}"),
    )


def test_raw_body_and_json_body_are_exclusive_and_raw_must_be_bytes() -> None:
    with pytest.raises(ValueError, match="not both"):
        ProviderHttpRequest("files", json_body={}, body=b"x")
    with pytest.raises(TypeError, match="bytes"):
        ProviderHttpRequest("files", body="text")  # type: ignore[arg-type]


def test_custom_header_auth_sends_the_raw_credential_under_that_name() -> None:
    transport = FakeTransport()
    provider(transport, auth=AuthStyle.header("x-api-key")).send(
        ProviderHttpRequest("messages", json_body={}, headers=(("anthropic-version", "2023-06-01"),))
    )
    assert transport.requests[0].headers[-1] == ("x-api-key", SECRET)
    assert ("anthropic-version", "2023-06-01") in transport.requests[0].headers


def test_no_auth_sends_no_credential_header() -> None:
    transport = FakeTransport()
    Configured("ollama", ROOT, transport).send(ProviderHttpRequest("chat", json_body={}))
    names = {name.lower() for name, _ in transport.requests[0].headers}
    assert "authorization" not in names


@pytest.mark.parametrize(
    ("credential", "auth"),
    [
        (None, AuthStyle.bearer()),
        ("", AuthStyle.bearer()),
        (f"{SECRET}\r\nX-Evil: 1", AuthStyle.bearer()),
        (f"{SECRET} trailing", AuthStyle.header("x-api-key")),
        (SECRET, AuthStyle.none()),
    ],
)
def test_bad_credential_and_auth_combinations_fail_without_echoing_the_secret(
    credential: str | None, auth: AuthStyle
) -> None:
    with pytest.raises(InvalidProviderConfiguration) as raised:
        Configured("openai", ROOT, FakeTransport(), credential=credential, auth=auth)
    assert SECRET not in str(raised.value)


@pytest.mark.parametrize("name", ["bad name", "", "x:y", "Content-Length", "host"])
def test_custom_auth_header_name_is_validated(name: str) -> None:
    with pytest.raises(InvalidProviderConfiguration):
        AuthStyle.header(name)


@pytest.mark.parametrize(
    "headers",
    [
        (("X-Team", "a"), ("x-team", "b")),
        (("Authorization", "Bearer other"),),
        (("Content-Length", "5"),),
        (("Transfer-Encoding", "chunked"),),
        (("Accept-Encoding", "zstd"),),
        (("X-Team", "a\r\nInjected: 1"),),
        (("bad name", "a"),),
    ],
)
def test_configured_header_problems_are_construction_errors(
    headers: tuple[tuple[str, str], ...]
) -> None:
    with pytest.raises(InvalidProviderConfiguration):
        provider(headers=headers)


@pytest.mark.parametrize(
    ("headers", "conflict"),
    [
        ((("openai-organization", "org-2"),), True),
        ((("Authorization", "Bearer x"),), True),
        ((("X-Api-Key", "k"),), True),
        ((("Cookie", "a=b"),), True),
        ((("x-session-token", "t"),), True),
        ((("A", "1"), ("a", "2")), True),
        ((("Host", "evil.example"),), False),
        ((("Content-Length", "1"),), False),
        ((("Connection", "close"),), False),
        ((("X-Ok", "line\nbreak"),), False),
        ((("X-Ok", "caf\u00e9"),), False),
    ],
)
def test_adapter_header_conflicts_and_invalid_headers_fail_before_io(
    headers: tuple[tuple[str, str], ...], conflict: bool
) -> None:
    transport = FakeTransport()
    p = provider(transport, headers=(("OpenAI-Organization", "org-1"),))
    with pytest.raises(ProviderHeaderConflict if conflict else InvalidProviderRequest):
        p.send(ProviderHttpRequest("responses", json_body={}, headers=headers))
    assert transport.requests == []


def test_adapter_may_override_content_type() -> None:
    transport = FakeTransport()
    provider(transport).send(
        ProviderHttpRequest("x", json_body={}, headers=(("Content-Type", "application/json; charset=utf-8"),))
    )
    content_types = [v for k, v in transport.requests[0].headers if k.lower() == "content-type"]
    assert content_types == ["application/json; charset=utf-8"]


def test_idempotency_key_travels_under_the_named_header_only() -> None:
    transport = FakeTransport()
    p = provider(transport)
    p.send(ProviderHttpRequest("r", json_body={}, idempotency_key="k-1"))
    p.send(ProviderHttpRequest("r", json_body={}, idempotency_key="k-2",
                               idempotency_header="Idempotency-Key"))
    gateway = provider(transport, idempotency_header="X-Idempotency")
    gateway.send(ProviderHttpRequest("r", json_body={}, idempotency_key="k-3"))
    first, second, third = (dict(r.headers) for r in transport.requests)
    assert "k-1" not in first.values()
    assert second["Idempotency-Key"] == "k-2"
    assert third["X-Idempotency"] == "k-3"


def test_idempotency_header_conflicting_with_an_adapter_header_is_rejected() -> None:
    with pytest.raises(ProviderHeaderConflict):
        provider().send(
            ProviderHttpRequest("r", json_body={}, headers=(("X-Idem", "a"),),
                                idempotency_key="k", idempotency_header="x-idem")
        )


def test_request_timeout_tightens_the_deadline() -> None:
    transport = FakeTransport()
    p = provider(transport, request_timeout_ms=1000)
    before = time.monotonic()
    p.send(ProviderHttpRequest("r", json_body={}, deadline=before + 60.0))
    after = time.monotonic()
    p.send(ProviderHttpRequest("r", json_body={}, deadline=before + 0.25))
    p.send(ProviderHttpRequest("r", json_body={}, control=RunControl(deadline=before + 0.5)))
    loose, tight, run = (r.deadline for r in transport.requests)
    assert loose is not None and before + 1.0 <= loose <= after + 1.0
    assert tight == before + 0.25
    assert run == before + 0.5


def test_without_any_bound_the_transport_gets_no_deadline() -> None:
    transport = FakeTransport()
    provider(transport).send(ProviderHttpRequest("r", json_body={}))
    assert transport.requests[0].deadline is None


def test_a_cancelled_run_sends_nothing() -> None:
    token = CancellationToken()
    token.cancel()
    transport = FakeTransport()
    with pytest.raises(Cancelled):
        provider(transport).send(ProviderHttpRequest("r", control=RunControl(token=token)))
    assert transport.requests == []


def test_unsupported_method_is_rejected() -> None:
    with pytest.raises(InvalidProviderRequest):
        provider().send(ProviderHttpRequest("r", method="TRACE"))


# ----------------------------------------------------------------------------- responses


def test_success_response_exposes_redacted_headers_request_id_and_bounded_json() -> None:
    transport = answer(
        200, '{"id":"resp_1","output":[]}', x_request_id="req_123",
        set_cookie="session=abc", x_ratelimit_remaining_requests="99",
    )
    response = provider(transport).send(ProviderHttpRequest("responses", json_body={}))
    assert response.status == 200
    assert response.request_id == "req_123"
    assert response.json() == {"id": "resp_1", "output": []}
    assert response.headers.get("Set-Cookie") == REDACTED
    assert response.headers.get("x-ratelimit-remaining-requests") == "99"


def test_malformed_success_json_is_a_decode_error_and_oversized_json_keeps_its_limit_error() -> None:
    bad = provider(answer(200, b'{"id": ')).send(ProviderHttpRequest("r", json_body={}))
    with pytest.raises(ProviderResponseDecodeError) as raised:
        bad.json()
    assert raised.value.status == 200
    deep = provider(answer(200, b"[" * 200 + b"]" * 200)).send(ProviderHttpRequest("r", json_body={}))
    with pytest.raises(JsonError) as limit:
        deep.json()
    assert not isinstance(limit.value, ProviderResponseDecodeError)


def test_stream_yields_lines_with_redacted_headers() -> None:
    body = b"event: a\ndata: {\"x\":1}\n\ndata: [DONE]\n"
    transport = answer(200, body, content_type="text/event-stream", request_id="req_s",
                       x_goog_upload_url="https://upload.example/secret")
    with provider(transport).stream_lines(ProviderHttpRequest("r?alt=sse", json_body={})) as stream:
        assert stream.status == 200 and stream.request_id == "req_s"
        assert stream.headers.get("x-goog-upload-url") == REDACTED
        lines = list(stream)
    assert lines == [b"event: a", b'data: {"x":1}', b"", b"data: [DONE]"]
    assert stream.closed


def test_stream_checks_the_run_control_between_lines() -> None:
    token = CancellationToken()
    transport = answer(200, b"a\nb\nc\n")
    request = ProviderHttpRequest("r", json_body={}, control=RunControl(token=token))
    seen = []
    with pytest.raises(Cancelled):
        with provider(transport).stream_lines(request) as stream:
            for line in stream:
                seen.append(line)
                token.cancel()
    assert seen == [b"a"]


def test_stream_hands_over_decoded_pieces_and_checks_the_control_between_them() -> None:
    body = b"event: a\ndata: 1\n\n" * 10_000  # 180 kB: several transport pieces
    with provider(answer(200, body)).stream_lines(ProviderHttpRequest("r", json_body={})) as stream:
        assert b"".join(stream.chunks()) == body
    token = CancellationToken()
    request = ProviderHttpRequest("r", json_body={}, control=RunControl(token=token))
    seen = []
    with pytest.raises(Cancelled):
        with provider(answer(200, body)).stream_lines(request) as stream:
            for piece in stream.chunks():
                seen.append(piece)
                token.cancel()
    assert len(seen) == 1 and body.startswith(seen[0])


class LinesOnlyTransport(FakeTransport):
    """A custom transport whose stream responses offer only the required ``lines()``."""

    @contextmanager
    def stream_lines(self, request: TransportRequest) -> Iterator[Any]:
        with super().stream_lines(request) as response:
            yield SimpleNamespace(
                status=response.status, headers=response.headers,
                request_id=response.request_id, retry_after_s=response.retry_after_s,
                date=response.date, lines=response.lines, read_body=response.read_body,
            )


def test_stream_pieces_are_rebuilt_from_lines_for_a_transport_without_chunks() -> None:
    body = b"event: a\r\ndata: 1\r\n\r\ndata: 2"
    transport = LinesOnlyTransport(lambda _: (200, [], body))
    with provider(transport).stream_lines(ProviderHttpRequest("r", json_body={})) as stream:
        assert b"".join(stream.chunks()) == b"event: a\ndata: 1\n\ndata: 2\n"


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, ProviderBadRequest), (401, ProviderAuthError), (403, ProviderAuthError),
        (404, ProviderNotFound), (409, ProviderBadRequest), (413, ProviderBadRequest),
        (418, ProviderClientError), (422, ProviderBadRequest), (429, RateLimited),
        (500, ProviderServerError), (503, ProviderServerError), (529, ProviderServerError),
        (302, UnexpectedRedirect),
    ],
)
def test_non_success_status_maps_to_its_named_error(status: int, cls: type) -> None:
    body = json.dumps({"error": {"message": "nope", "type": "some_error"}})
    transport = answer(status, body, x_request_id="req_9", retry_after="7")
    with pytest.raises(ProviderRequestError) as raised:
        provider(transport).send(ProviderHttpRequest("r", json_body={}))
    error = raised.value
    assert type(error) is cls
    assert (error.status, error.code, error.message) == (status, "some_error", "nope")
    assert (error.request_id, error.retry_after_s, error.provider_name) == ("req_9", 7.0, "openai")
    assert str(error) == f"openai answered HTTP {status} (some_error): nope"
    clone = pickle.loads(pickle.dumps(error))
    assert (clone.status, clone.code, clone.message, str(clone)) == (
        status, "some_error", "nope", str(error)
    )


def test_client_error_subclasses_share_the_4xx_base() -> None:
    for cls in (ProviderAuthError, ProviderNotFound, ProviderBadRequest):
        assert issubclass(cls, ProviderClientError)
    assert not issubclass(RateLimited, ProviderClientError)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"error":{"message":"Bad key","type":"invalid_request_error","param":null,'
         b'"code":"invalid_api_key"}}', ("invalid_api_key", "Bad key")),
        (b'{"error":{"message":"Bad","type":"invalid_request_error","code":null}}',
         ("invalid_request_error", "Bad")),
        (b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
         ("overloaded_error", "Overloaded")),
        (b'{"error":{"code":400,"message":"Invalid","status":"INVALID_ARGUMENT"}}',
         ("INVALID_ARGUMENT", "Invalid")),
        (b'{"error":{"code":429,"message":"Quota"}}', ("429", "Quota")),
        (b'{"error":"model not found"}', (None, "model not found")),
        (b'{"message":"top level","code":"E42"}', ("E42", "top level")),
        (b'{"detail":"something else"}', (None, None)),
        (b"<html>502 Bad Gateway</html>", (None, None)),
        (b"[1,2]", (None, None)),
        (b"", (None, None)),
        (b'{"error":{"message":true,"code":false}}', (None, None)),
    ],
)
def test_decode_error_body_understands_the_common_shapes(
    body: bytes, expected: tuple[str | None, str | None]
) -> None:
    assert decode_error_body(body) == expected


def test_decoded_messages_and_codes_have_their_own_caps() -> None:
    body = json.dumps({"error": {"message": "m" * 5000, "code": "c" * 500}}).encode()
    code, message = decode_error_body(body)
    assert code == "c" * MAX_ERROR_CODE_CHARS
    assert message == "m" * MAX_ERROR_MESSAGE_CHARS


def test_decoded_message_is_redacted_before_it_is_cut() -> None:
    text = "x" * (MAX_ERROR_MESSAGE_CHARS - 5) + SECRET
    _, message = decode_error_body(json.dumps({"message": text}).encode(), [SECRET])
    assert message is not None and len(message) == MAX_ERROR_MESSAGE_CHARS
    assert "sk-c" not in message and message.endswith("[REDA")


def _observe(
    status: int, body: bytes, **request_options: object
) -> tuple[list[ProviderErrorView], ProviderRequestError]:
    views: list[ProviderErrorView] = []
    transport = answer(status, body, request_id="req_o", retry_after="3")
    with pytest.raises(ProviderRequestError) as raised:
        provider(transport).send(
            ProviderHttpRequest("r", json_body={}, error_observer=views.append, **request_options)  # type: ignore[arg-type]
        )
    return views, raised.value


def test_observer_gets_status_code_message_and_no_body_by_default() -> None:
    views, error = _observe(429, b'{"error":{"message":"slow","type":"rate_limit_error"}}')
    assert views == [
        ProviderErrorView("openai", 429, "rate_limit_error", "slow", "req_o", 3.0, None, False)
    ]
    assert isinstance(error, RateLimited)


def test_captured_body_exactly_at_the_cap_is_complete() -> None:
    body = b'{"error":{"message":"' + b"a" * 100 + b'"}}'
    views, _ = _observe(500, body, capture_error_body=True, max_error_body_bytes=len(body))
    assert views[0].body == body and views[0].body_truncated is False


def test_captured_body_one_byte_over_the_cap_is_truncated() -> None:
    body = b'{"error":{"message":"' + b"a" * 100 + b'"}}'
    views, _ = _observe(500, body, capture_error_body=True, max_error_body_bytes=len(body) - 1)
    assert views[0].body == body[:-1] and views[0].body_truncated is True
    assert views[0].message == "a" * 100  # decoding uses the whole body, not the capture


def test_a_failing_observer_is_logged_and_the_provider_error_still_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class ObserverBug(Exception):
        pass

    def broken(_: ProviderErrorView) -> None:
        raise ObserverBug()

    request = ProviderHttpRequest("r", json_body={}, error_observer=broken)
    with caplog.at_level("WARNING", logger="zigai.provider"):
        with pytest.raises(ProviderServerError) as caught:
            provider(answer(500)).send(request)
    assert caught.value.status == 500
    assert "ObserverBug" in caplog.text and "HTTP 500" in caplog.text


def test_streamed_error_is_read_as_a_body_observed_and_raised_before_yielding() -> None:
    views: list[ProviderErrorView] = []
    transport = answer(529, b'{"type":"error","error":{"type":"overloaded_error","message":"busy"}}')
    request = ProviderHttpRequest("messages", json_body={"stream": True}, error_observer=views.append,
                                  capture_error_body=True)
    entered = False
    with pytest.raises(ProviderServerError) as raised:
        with provider(transport).stream_lines(request):
            entered = True
    assert not entered
    assert raised.value.code == "overloaded_error"
    assert views[0].status == 529 and views[0].body is not None


# ----------------------------------------------------------------------------- identity


def test_repr_and_pickle_never_expose_the_credential() -> None:
    p = provider(headers=(("X-Goog-Api-Key", "second-secret"), ("X-Team", "a")))
    text = repr(p)
    assert SECRET not in text and "second-secret" not in text
    assert "[REDACTED]" in text and "X-Team" in text
    with pytest.raises(TypeError):
        pickle.dumps(p)


def test_configured_is_a_provider_with_profile_lookup() -> None:
    profile = ModelProfile(json_schema_output=True)
    p = provider(profile_lookup=lambda name: profile if name == "gpt" else None)
    assert isinstance(p, Provider)
    assert p.profile_for("gpt") is profile
    assert p.profile_for("other") is None
    assert provider().profile_for("gpt") is None
    assert p.provider() is p


def test_transport_must_be_a_transport() -> None:
    with pytest.raises(InvalidProviderConfiguration):
        Configured("openai", ROOT, object(), credential=SECRET)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["", "OpenAI", "a b", "x" * 65])
def test_provider_name_is_a_stable_identifier(name: str) -> None:
    with pytest.raises(InvalidProviderConfiguration):
        Configured(name, ROOT, FakeTransport())
