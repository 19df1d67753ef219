"""Cassetter-compatible YAML cassettes: strict ReplayTransport and filtering RecordingTransport.

Format (``version: 1``)::

    interactions:
    - request:  {method, uri, headers: {}, body: {type: json|text, content} | {type: none}}
      response: {status, headers: {name: [values]}, body: {type: json|text, content} | {type: none}}

Parsing is :mod:`zigai.conformance.cassette`'s (the one cassette parser; its ``Body`` and
``Interaction`` are the values here), with :class:`InvalidCassette` raised again as
:class:`CassetteFormatError` so pytest reports a bad recording as a test failure.
``body: {type: none}`` (or no ``body`` key) records an exchange without a body: GET and DELETE
requests, or a response that sent none (Google's resumable-upload start).  A binary AWS EventStream
response (``application/vnd.amazon.eventstream``) is recorded as ``{type: eventstream, content:
[{headers, payload}]}``, its decoded messages (the format of :mod:`zigai.conformance.cassette`).

Replay is strict and in order: method, URI (after the shared URL filter) and body must match.
JSON bodies compare by *value* (key order irrelevant, types significant: ``1 != 1.0 != true``);
text bodies compare exactly.  Request headers are not matched, and no cassette may contain a
conventionally sensitive header name (authentication is outside the schema).  Text response
bodies are served line by line through ``stream_lines`` with the same limits as production.

This is test support: the ``zigai`` package never imports it.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import yaml

from support.mock_transport import respond_buffered, respond_streamed
from zigai.conformance import cassette as kit
from zigai.conformance.cassette import (
    Body,
    Interaction,
    InvalidCassette,
    check_event_messages,
    json_diff,
    strict_json_equal,
)
from zigai.security import is_sensitive_header_name, redact_bytes, redact_text
from zigai.transport import (
    Headers,
    Limits,
    Transport,
    TransportRequest,
    TransportResponse,
)

__all__ = [
    "Body",
    "CassetteError",
    "CassetteFilters",
    "CassetteFormatError",
    "CassetteMismatch",
    "Interaction",
    "RecordingTransport",
    "ReplayTransport",
    "dump_cassette",
    "load_cassette",
    "parse_cassette",
    "strict_json_equal",
]


class CassetteError(AssertionError):
    """Base of cassette failures (an AssertionError so pytest reports them as test failures)."""


class CassetteFormatError(CassetteError):
    """The YAML is not a valid version-1 cassette, or contains a sensitive header."""


class CassetteMismatch(CassetteError):
    """A request did not match the next recorded interaction, or interactions were left over."""


# ------------------------------------------------------------------------------ filters


def _omit_keys(value: Any, keys: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {k: _omit_keys(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_omit_keys(v, keys) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class CassetteFilters:
    """Filters shared by recording and replay so sanitized cassettes still replay strictly.

    ``json_omit_keys`` recursively drops volatile keys from JSON bodies; ``url`` rewrites
    request URLs (e.g. to strip a session id); ``request_body`` maps a whole request to the
    body bytes a recording keeps (e.g. :mod:`support.file_redaction`).  Filters only ever
    touch recorded copies.  ``secrets`` are values (keys, tokens) scrubbed from every recorded
    response body and header in any spelling JSON allows; :class:`RecordingTransport` adds
    the values of each request's sensitive headers and query parameters on its own.  (Request
    URLs and bodies are matched on replay, so ``url`` / ``request_body`` filters own those.)
    """

    json_omit_keys: frozenset[str] = frozenset()
    url: Callable[[str], str] | None = None
    request_body: Callable[[TransportRequest], bytes | None] | None = None
    secrets: tuple[str, ...] = ()

    def apply_url(self, url: str) -> str:
        return url if self.url is None else self.url(url)

    def apply_body(self, request: TransportRequest) -> bytes | None:
        return request.body if self.request_body is None else self.request_body(request)

    def apply_json(self, value: Any) -> Any:
        return _omit_keys(value, self.json_omit_keys) if self.json_omit_keys else value


# ------------------------------------------------------------------------------ comparison


def _diff(expected: list[str], actual: list[str]) -> str:
    lines = difflib.unified_diff(expected, actual, "recorded", "actual", lineterm="")
    return "\n".join(lines)


# ------------------------------------------------------------------------------ loading


def parse_cassette(text: str, source: str = "<cassette>") -> tuple[Interaction, ...]:
    """The kit's parser (:func:`zigai.conformance.cassette.parse_cassette`), failing as a test."""
    try:
        return kit.parse_cassette(text, source)
    except InvalidCassette as exc:
        raise CassetteFormatError(str(exc)) from None


def load_cassette(path: str | Path) -> tuple[Interaction, ...]:
    try:
        return kit.load_cassette(path)
    except InvalidCassette as exc:
        raise CassetteFormatError(str(exc)) from None


# ------------------------------------------------------------------------------ dumping


class _Quoted(str):
    pass


class _Literal(str):
    pass


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Quoted, lambda d, v: d.represent_scalar("tag:yaml.org,2002:str", v, style='"'))
_Dumper.add_representer(_Literal, lambda d, v: d.represent_scalar("tag:yaml.org,2002:str", v, style="|"))


def _quote_values(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _quote_values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_quote_values(v) for v in value]
    if isinstance(value, str):
        return _Quoted(value)
    return value


def _body_yaml(body: Body | None) -> Any:
    if body is None:
        return None
    if body.type == "text":
        content: Any = _Literal(body.content) if "\n" in body.content else _Quoted(body.content)
    else:
        content = _quote_values(body.content)
    return {"type": body.type, "content": content}


def dump_cassette(interactions: Iterable[Interaction]) -> str:
    items = []
    for it in interactions:
        headers: dict[str, list[_Quoted]] = {}
        for name, value in it.response_headers:
            headers.setdefault(name, []).append(_Quoted(value))
        request: dict[str, Any] = {"method": it.method, "uri": _Quoted(it.uri), "headers": {}}
        if it.request_body is not None:
            request["body"] = _body_yaml(it.request_body)
        response: dict[str, Any] = {"status": it.status, "headers": headers}
        if it.response_body is not None:
            response["body"] = _body_yaml(it.response_body)
        items.append({"request": request, "response": response})
    document = {"version": 1, "interactions": items}
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=4096)


# ------------------------------------------------------------------------------ replay


class ReplayTransport:
    """Serve recorded interactions strictly in order; a Transport for wire tests."""

    def __init__(
        self,
        interactions: Iterable[Interaction],
        *,
        limits: Limits | None = None,
        filters: CassetteFilters | None = None,
        source: str = "<cassette>",
    ) -> None:
        self.interactions = tuple(interactions)
        self.limits = limits or Limits()
        self.filters = filters or CassetteFilters()
        self.source = source
        self.position = 0

    @classmethod
    def load(cls, path: str | Path, **kwargs: Any) -> ReplayTransport:
        return cls(load_cassette(path), source=str(path), **kwargs)

    @property
    def remaining(self) -> int:
        return len(self.interactions) - self.position

    def assert_all_consumed(self) -> None:
        if self.remaining:
            pending = ", ".join(
                f"#{i} {it.method} {it.uri}"
                for i, it in enumerate(self.interactions)
                if i >= self.position
            )
            raise CassetteMismatch(f"{self.source}: {self.remaining} unconsumed interaction(s): {pending}")

    def __enter__(self) -> ReplayTransport:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self.assert_all_consumed()

    def _match(self, request: TransportRequest) -> Interaction:
        if self.position >= len(self.interactions):
            raise CassetteMismatch(
                f"{self.source}: unexpected request #{self.position} {request.method} "
                f"{request.url}: all {len(self.interactions)} interactions were already used"
            )
        index, expected = self.position, self.interactions[self.position]
        where = f"{self.source} interaction #{index}"
        if request.method != expected.method:
            raise CassetteMismatch(f"{where}: method {request.method!r} != recorded {expected.method!r}")
        uri = self.filters.apply_url(request.url)
        if uri != expected.uri:
            raise CassetteMismatch(f"{where}: uri mismatch\n{_diff([expected.uri], [uri])}")
        self._match_body(self.filters.apply_body(request), expected.request_body, where)
        self.position += 1
        return expected

    def _match_body(self, actual: bytes | None, expected: Body | None, where: str) -> None:
        if expected is None:
            if actual:
                raise CassetteMismatch(f"{where}: request has a body but none was recorded")
            return
        if actual is None:
            raise CassetteMismatch(f"{where}: request has no body but one was recorded")
        if expected.type == "text":
            text = actual.decode("utf-8", errors="replace")
            if text != expected.content:
                diff = _diff(expected.content.splitlines(), text.splitlines())
                raise CassetteMismatch(f"{where}: text body mismatch\n{diff}")
            return
        try:
            value = json.loads(actual)
        except ValueError:
            raise CassetteMismatch(f"{where}: request body is not JSON but JSON was recorded") from None
        value = self.filters.apply_json(value)
        if not strict_json_equal(value, expected.content):
            diff = json_diff(expected.content, value)
            raise CassetteMismatch(f"{where}: JSON body mismatch (types matter)\n{diff}")

    def _reply(self, request: TransportRequest) -> tuple[int, Headers, bytes]:
        interaction = self._match(request)
        body = b"" if interaction.response_body is None else interaction.response_body.to_bytes()
        return interaction.status, Headers(interaction.response_headers), body

    def send(self, request: TransportRequest) -> TransportResponse:
        status, headers, body = self._reply(request)
        return respond_buffered(request, status, headers, body, self.limits)

    def stream_lines(self, request: TransportRequest) -> Any:
        status, headers, body = self._reply(request)
        return respond_streamed(request, status, headers, body, self.limits)


# ------------------------------------------------------------------------------ recording


def _is_event_stream(headers: Headers) -> bool:
    return any(k.lower() == "content-type" and v.split(";")[0].strip() == "application/vnd.amazon.eventstream"
               for k, v in headers)


def _event_stream_body(data: bytes) -> Body:
    """AWS EventStream frames as stored messages (JSON payloads; string, boolean or integer
    header values); replay frames them again (compact JSON payloads, int64 integers)."""
    from zigai.providers.eventstream import iter_messages

    messages = []
    for message in iter_messages([data]):
        try:
            payload = json.loads(message.payload)
        except ValueError:
            raise CassetteError("an event stream message payload is not JSON") from None
        messages.append({"headers": dict(message.headers), "payload": payload})
    try:
        return Body("eventstream", check_event_messages(messages, "event stream response"))
    except InvalidCassette as exc:
        raise CassetteError(str(exc)) from None


def _classify(body: bytes | None, filters: CassetteFilters) -> Body | None:
    if body is None or body == b"":
        return None
    try:
        return Body("json", filters.apply_json(json.loads(body)))
    except ValueError:
        pass
    try:
        return Body("text", body.decode("utf-8"))
    except UnicodeDecodeError:
        raise CassetteError("binary bodies cannot be recorded in a YAML cassette") from None


@dataclass
class _RecordingStream:
    inner: Any
    recorded: list[bytes] = field(default_factory=list)
    read_whole_body: bool = False

    @property
    def status(self) -> int:
        return int(self.inner.status)

    @property
    def headers(self) -> Headers:
        return self.inner.headers

    @property
    def request_id(self) -> str | None:
        return self.inner.request_id

    @property
    def retry_after_s(self) -> float | None:
        return self.inner.retry_after_s

    @property
    def date(self) -> Any:
        return self.inner.date

    def lines(self) -> Iterator[bytes]:
        for line in self.inner.lines():
            self.recorded.append(line + b"\n")
            yield line

    def chunks(self) -> Iterator[bytes]:
        for piece in self.inner.chunks():
            self.recorded.append(piece)
            yield piece

    def read_body(self) -> bytes:
        body: bytes = self.inner.read_body()
        self.read_whole_body = True
        self.recorded.append(body)
        return body


class RecordingTransport:
    """Wrap a real transport and keep sanitized copies of each completed exchange.

    An exchange is recorded when it completes without an exception (for streams: when the
    ``with`` block exits normally; each consumed line is recorded with a ``\n`` terminator).

    Request headers are never recorded.  Response headers are dropped unless named in
    ``safe_response_headers``; naming a conventionally sensitive header there is refused.
    """

    def __init__(
        self,
        inner: Transport,
        *,
        filters: CassetteFilters | None = None,
        safe_response_headers: Iterable[str] = (),
    ) -> None:
        safe = frozenset(name.lower() for name in safe_response_headers)
        refused = sorted(name for name in safe if is_sensitive_header_name(name))
        if refused:
            raise CassetteFormatError(f"sensitive headers cannot be recorded: {refused}")
        self.inner = inner
        self.filters = filters or CassetteFilters()
        self.safe_response_headers = safe
        self.interactions: list[Interaction] = []

    def _secrets(self, request: TransportRequest) -> tuple[str, ...]:
        """The filters' secrets plus the credentials this request carries (header values, with
        an auth scheme word stripped, and sensitive query parameters)."""
        found = set(self.filters.secrets)
        for name, value in request.headers:
            if is_sensitive_header_name(name) and value.strip():
                found.add(value.strip())
                scheme, _, credential = value.strip().partition(" ")
                if credential.strip() and scheme.isalpha():
                    found.add(credential.strip())
        for name, value in parse_qsl(urlsplit(request.url).query, keep_blank_values=False):
            if is_sensitive_header_name(name) or name.lower() in ("key", "api_key", "apikey"):
                found.add(value)
        return tuple(sorted(value for value in found if len(value) >= 4))

    def _record(
        self, request: TransportRequest, status: int, headers: Headers, body: bytes | None,
        *, as_text: bool = False,
    ) -> None:
        secrets = self._secrets(request)
        kept = tuple(
            (k.lower(), redact_text(v, secrets))
            for k, v in headers if k.lower() in self.safe_response_headers
        )
        scrubbed = None if body is None else redact_bytes(body, secrets)
        if scrubbed and _is_event_stream(headers):  # binary frames become readable messages
            recorded: Body | None = _event_stream_body(scrubbed)
        elif as_text:  # SSE and other line streams stay text (a literal block in YAML)
            recorded = Body("text", scrubbed.decode("utf-8")) if scrubbed else None
        else:
            recorded = _classify(scrubbed, self.filters)
        self.interactions.append(
            Interaction(
                method=request.method,
                uri=self.filters.apply_url(request.url),
                request_body=_classify(self.filters.apply_body(request), self.filters),
                status=status,
                response_headers=kept,
                response_body=recorded,
            )
        )

    def send(self, request: TransportRequest) -> TransportResponse:
        response = self.inner.send(request)
        self._record(request, response.status, response.headers, response.body)
        return response

    @contextmanager
    def _stream(self, request: TransportRequest) -> Iterator[_RecordingStream]:
        with self.inner.stream_lines(request) as inner:
            recorder = _RecordingStream(inner)
            yield recorder
        data = b"".join(recorder.recorded)
        self._record(request, recorder.status, recorder.headers, data,
                     as_text=not recorder.read_whole_body)

    def stream_lines(self, request: TransportRequest) -> Any:
        return self._stream(request)

    def dump(self) -> str:
        return dump_cassette(self.interactions)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.dump(), encoding="utf-8")
