"""Version-1 cassettes as the conformance kit reads them, strict JSON comparison and its diff.

Job
    Parse one recording (YAML, safe loader) into :class:`Interaction` values, compare a live
    request body with a recorded one, and describe the first difference as a JSON diff.  This
    is zigai's one cassette parser: the conformance server, ``zigai demo``
    (:mod:`zigai.cli.replay`) and the test suite's replay/recording transports all read
    recordings through it and wrap :class:`InvalidCassette` in their own named errors.

Bodies
    ``json`` (a value), ``text`` (exact characters; SSE streams keep their lines and blank-line
    event boundaries) or, in responses only, ``eventstream``: AWS EventStream messages as
    ``{headers: {name: string | boolean | integer}, payload: <JSON>}``, framed (lengths, CRCs)
    when served.

Invariants
    * Parsing is strict: unknown keys, a version other than ``1``, non-JSON values, a status
      outside 100..599 and any conventionally sensitive header name (credentials are never part
      of a recording) raise :class:`InvalidCassette` naming the file and interaction.
    * JSON values compare with their types: ``1``, ``1.0`` and ``true`` all differ, key order
      does not matter.
    * A cassette file is read only up to :data:`MAX_CASSETTE_BYTES`; YAML ints and floats are
      bounded by their text before they are built (:func:`zigai._strict_yaml.bounded_loader`).
"""

from __future__ import annotations

import difflib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from zigai._strict_yaml import bounded_loader
from zigai.errors import ConformanceError
from zigai.security import is_sensitive_header_name

__all__ = [
    "MAX_CASSETTE_BYTES",
    "Body",
    "Interaction",
    "InvalidCassette",
    "check_event_messages",
    "load_cassette",
    "parse_cassette",
    "strict_json_equal",
    "first_difference",
    "json_diff",
]

MAX_CASSETTE_BYTES = 16 * 1024 * 1024
# A session URL a recorder keeps once its session id became REDACTED (Google resumable uploads).
_SESSION_URL_HEADERS = frozenset({"x-goog-upload-url"})
_BODY_TYPES = "json, text (a string), none or, for a response, eventstream"


class InvalidCassette(ConformanceError):
    """The file is not a valid version-1 cassette (the message names the file and the place)."""


@dataclass(frozen=True, slots=True)
class Body:
    """A recorded body: ``json`` (any JSON value), ``text`` (exact characters) or, for responses,
    ``eventstream`` (AWS EventStream messages, each ``{headers: {name: value}, payload: JSON}``)."""

    type: Literal["json", "text", "eventstream"]
    content: Any

    def frames(self) -> list[bytes]:
        """The wire form of an ``eventstream`` body, one framed message each."""
        from zigai.providers.eventstream import encode_message

        return [encode_message(m["headers"], json.dumps(m["payload"], separators=(",", ":"),
                                                         ensure_ascii=False).encode())
                for m in self.content]

    def to_bytes(self) -> bytes:
        if self.type == "json":
            return json.dumps(self.content, separators=(",", ":"), ensure_ascii=False).encode()
        if self.type == "eventstream":
            return b"".join(self.frames())
        return str(self.content).encode()


@dataclass(frozen=True, slots=True)
class Interaction:
    """One recorded exchange; ``target`` is the URI's path and query (what a server sees)."""

    method: str
    uri: str
    request_body: Body | None
    status: int
    response_headers: tuple[tuple[str, str], ...]
    response_body: Body | None

    @property
    def target(self) -> str:
        parts = urlsplit(self.uri)
        return parts.path + (f"?{parts.query}" if parts.query else "")

    @property
    def origin(self) -> str:
        parts = urlsplit(self.uri)
        return f"{parts.scheme}://{parts.netloc}"


def strict_json_equal(a: Any, b: Any) -> bool:
    """JSON value equality where types matter (``1``, ``1.0`` and ``True`` all differ)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strict_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(strict_json_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _pointer(path: list[str | int]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path) or "/"


def first_difference(expected: Any, actual: Any, path: list[str | int] | None = None) -> dict[str, Any] | None:
    """The first place (a JSON Pointer) where ``actual`` departs from ``expected``, or None."""
    path = path or []
    if type(expected) is not type(actual):
        return {"pointer": _pointer(path), "expected": expected, "actual": actual}
    if isinstance(expected, dict):
        for key in expected:
            if key not in actual:
                return {"pointer": _pointer(path + [key]), "expected": expected[key], "missing": True}
            found = first_difference(expected[key], actual[key], path + [key])
            if found is not None:
                return found
        for key in actual:
            if key not in expected:
                return {"pointer": _pointer(path + [key]), "actual": actual[key], "unexpected": True}
        return None
    if isinstance(expected, list):
        for index, (want, got) in enumerate(zip(expected, actual, strict=False)):
            found = first_difference(want, got, path + [index])
            if found is not None:
                return found
        if len(expected) != len(actual):
            return {"pointer": _pointer(path), "expected_length": len(expected), "actual_length": len(actual)}
        return None
    return None if expected == actual else {"pointer": _pointer(path), "expected": expected, "actual": actual}


def json_diff(expected: Any, actual: Any) -> str:
    """A unified diff of the two values pretty-printed with sorted keys."""
    def pretty(value: Any) -> list[str]:
        return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).splitlines()

    return "\n".join(difflib.unified_diff(pretty(expected), pretty(actual), "recorded", "actual", lineterm=""))


# ------------------------------------------------------------------------------ parsing


def _json_value(value: Any, where: str) -> None:
    if value is None or isinstance(value, (bool, int, str)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidCassette(f"{where}: non-finite number")
        return
    if isinstance(value, list):
        for item in value:
            _json_value(item, where)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidCassette(f"{where}: non-string key {key!r}")
            _json_value(item, where)
        return
    raise InvalidCassette(f"{where}: {type(value).__name__} is not a JSON value")


def _body(raw: Any, where: str) -> Body | None:
    if raw is None:
        return None
    if isinstance(raw, dict) and raw.get("type") == "none":
        if set(raw) != {"type"}:
            raise InvalidCassette(f"{where}: a body of type none has no content")
        return None
    if not isinstance(raw, dict) or set(raw) != {"type", "content"}:
        raise InvalidCassette(f"{where}: a body is {{type: json|text, content}} or {{type: none}}")
    if raw["type"] == "json":
        _json_value(raw["content"], where)
        return Body("json", raw["content"])
    if raw["type"] == "text":
        if not isinstance(raw["content"], str):
            raise InvalidCassette(f"{where}: a text body's content must be a string")
        return Body("text", raw["content"])
    if raw["type"] == "eventstream" and where.endswith("response"):
        return Body("eventstream", check_event_messages(raw["content"], where))
    raise InvalidCassette(f"{where}: unknown body type {raw['type']!r}; body type must be {_BODY_TYPES}")


def check_event_messages(content: Any, where: str) -> list[dict[str, Any]]:
    """``content`` if it is a valid list of stored EventStream messages, else InvalidCassette."""
    if not isinstance(content, list) or not content:
        raise InvalidCassette(f"{where}: an eventstream body is a non-empty list of messages")
    for index, message in enumerate(content):
        here = f"{where} message #{index}"
        if not isinstance(message, dict) or set(message) != {"headers", "payload"}:
            raise InvalidCassette(f"{here}: a message is {{headers: {{name: value}}, payload: <JSON>}}")
        headers = message["headers"]
        if not isinstance(headers, dict) or not all(
                isinstance(name, str) and 1 <= len(name.encode()) <= 255
                and isinstance(value, (str, bool, int)) for name, value in headers.items()):
            raise InvalidCassette(f"{here}: headers map names to strings, booleans or integers")
        _json_value(message["payload"], here)
    return content


def _headers(raw: Any, where: str) -> tuple[tuple[str, str], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise InvalidCassette(f"{where}: headers must be a mapping of name to [values]")
    pairs = []
    for name, values in raw.items():
        for value in values if isinstance(values, list) else [values]:
            if not isinstance(name, str) or not isinstance(value, str):
                raise InvalidCassette(f"{where}: header {name!r} must map a string name to strings")
            if is_sensitive_header_name(name) and not _redacted_session_url(name, value):
                raise InvalidCassette(f"{where}: sensitive header {name!r} is refused in cassettes")
            pairs.append((name, value))
    return tuple(pairs)


def _redacted_session_url(name: str, value: str) -> bool:
    """A session-URL header whose session id a recorder replaced with ``REDACTED`` (nothing after it)."""
    parts = urlsplit(value)
    return (name.lower() in _SESSION_URL_HEADERS and not parts.query and not parts.fragment
            and parts.path.rsplit("/", 1)[-1] == "REDACTED")


def _keys(raw: Any, required: set[str], optional: set[str], where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise InvalidCassette(f"{where}: expected a mapping")
    missing, extra = required - set(raw), set(raw) - required - optional
    if missing or extra:
        raise InvalidCassette(f"{where}: missing {sorted(missing)}, unexpected {sorted(extra)}")
    return raw


def parse_cassette(text: str, source: str = "<cassette>") -> tuple[Interaction, ...]:
    """The interactions of one version-1 cassette document."""
    import yaml

    try:
        document = yaml.load(text, Loader=bounded_loader())  # noqa: S506 - a safe loader subclass
    except yaml.YAMLError as exc:
        raise InvalidCassette(f"{source}: not YAML, so not a readable cassette ({exc})") from None
    document = _keys(document, {"version", "interactions"}, set(), source)
    if document["version"] != 1 or isinstance(document["version"], bool):
        raise InvalidCassette(f"{source}: unsupported version {document['version']!r} (expected 1)")
    if not isinstance(document["interactions"], list) or not document["interactions"]:
        raise InvalidCassette(f"{source}: 'interactions' must be a non-empty list")
    found = []
    for index, item in enumerate(document["interactions"]):
        where = f"{source} interaction #{index}"
        item = _keys(item, {"request", "response"}, set(), where)
        request = _keys(item["request"], {"method", "uri"}, {"headers", "body"}, where)
        response = _keys(item["response"], {"status"}, {"headers", "body"}, where)
        _headers(request.get("headers"), f"{where} request")
        if not isinstance(request["method"], str) or not isinstance(request["uri"], str):
            raise InvalidCassette(f"{where}: method and uri must be strings")
        status = response["status"]
        if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
            raise InvalidCassette(f"{where}: invalid status {status!r}")
        found.append(Interaction(
            method=request["method"].upper(), uri=request["uri"],
            request_body=_body(request.get("body"), f"{where} request"), status=status,
            response_headers=_headers(response.get("headers"), f"{where} response"),
            response_body=_body(response.get("body"), f"{where} response"),
        ))
    return tuple(found)


def load_cassette(path: str | Path) -> tuple[Interaction, ...]:
    """Read and parse one cassette file (refusing one over :data:`MAX_CASSETTE_BYTES`)."""
    with Path(path).open("rb") as handle:
        data = handle.read(MAX_CASSETTE_BYTES + 1)
    if len(data) > MAX_CASSETTE_BYTES:
        raise InvalidCassette(f"{path}: larger than {MAX_CASSETTE_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidCassette(f"{path}: not UTF-8 text") from None
    return parse_cassette(text, str(path))
