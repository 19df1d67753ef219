"""The conformance server: the provider side of every recorded route, with verdicts.

Job
    Serve each catalog entry under ``/s/<scenario-id>/``: the request target after that prefix
    is compared with the recorded URI's path and query, so an implementation reaches a
    scenario by using ``http://HOST:PORT/s/<id>`` as the *origin* of its usual API root
    (``https://api.openai.com/v1`` becomes ``http://HOST:PORT/s/<id>/v1``).

Checks (strict and in order, per scenario)
    method, target and body of the *next* recorded interaction; JSON bodies by value with
    types significant, text bodies exactly, after only the normalizations the scenario names.
    A request matching a later interaction is *out of order*; one after the last is *extra*;
    a target under no scenario prefix is *unrouted*.  Each failure is answered ``400`` with a
    JSON ``{"error": {"type": "conformance_mismatch", "message": ...}}`` body and the header
    ``X-Zigai-Conformance: mismatch``; the first one is the scenario's verdict (``fail``) and
    every later request to it is refused the same way.

Answers
    The recorded status, headers (framing headers dropped) and body.  A text body holding SSE
    fields is streamed one recorded event per write (events end at a blank line); with
    ``rechunk`` each event is further cut into small pieces at seeded random points (inside
    UTF-8 sequences and line endings too).  An ``eventstream`` body is framed and streamed one
    EventStream message per write, cut the same way with ``rechunk``.  Absolute URLs inside
    recorded responses (Google's upload session URL and file URIs) keep the recorded origin:
    an implementation swaps that origin for the scenario prefix as it does for its API root.

Concurrency
    Scenarios are independent and may run at once; requests of one scenario are taken one at a
    time (a conversation is sequential), so two cannot claim the same interaction.

Verdicts (:meth:`ConformanceServer.status`)
    ``pass`` (every interaction consumed, no failure), ``fail`` (first failure kept, with a
    JSON Pointer and a diff), ``incomplete`` (some consumed) or ``not-run``.

Who may call
    Bound to a loopback address, the server answers only requests whose ``Host`` is loopback
    and whose browser ``Origin`` (if any) is a loopback page
    (:class:`~zigai.http_gate.DeploymentPolicy`), so a web page cannot spoil a run's verdicts
    by DNS rebinding or a cross-site ``POST``; a refusal (``421`` / ``403``) is not a mismatch.
    Bound elsewhere (an explicit ``--allow-remote``) there is no gate unless ``policy`` is given.

Bounds
    Loopback by default; built on :mod:`zigai.http_server` (connection cap, head/body/write
    timeouts); a body over ``max_body_bytes`` is answered ``413`` unread and fails the scenario.
    It never opens an outbound connection.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from zigai.conformance.cassette import Interaction, first_difference, json_diff, strict_json_equal
from zigai.conformance.catalog import Entry
from zigai.conformance.normalize import normalize_body, normalize_target
from zigai.http_gate import DeploymentPolicy, fold_headers
from zigai.http_server import HttpServer, Request, Response, ServerLimits
from zigai.security import is_loopback_host

__all__ = ["DEFAULT_MAX_BODY_BYTES", "ConformanceServer", "ScenarioState"]

DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
_EVENTSTREAM = "application/vnd.amazon.eventstream"
_DROPPED = frozenset({"content-length", "transfer-encoding", "connection", "content-encoding"})


@dataclass
class ScenarioState:
    """What one scenario has seen so far: changed under the server's lock while the scenario's
    own ``lock`` is held (one request of a scenario at a time), read under the server's lock."""

    entry: Entry
    consumed: int = 0
    requests: int = 0
    failure: dict[str, Any] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def verdict(self) -> str:
        if self.failure is not None:
            return "fail"
        if self.consumed == len(self.entry.interactions):
            return "pass"
        return "incomplete" if self.consumed else "not-run"

    def to_json(self, base: str) -> dict[str, Any]:
        first = self.entry.interactions[0]
        return {
            "id": self.entry.id, "cassette": self.entry.relative, "verdict": self.verdict,
            "consumed": self.consumed, "interactions": len(self.entry.interactions),
            "requests": self.requests, "prefix": f"{base}/s/{self.entry.id}",
            "recorded_origin": first.origin,
            "routes": [f"{it.method} {it.target}" for it in self.entry.interactions],
            "normalize": sorted(self.entry.scenario.normalize) if self.entry.scenario else [],
            "first_mismatch": self.failure,
        }


@dataclass
class _Mismatch(Exception):
    kind: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)


class ConformanceServer:
    """Serves ``entries`` on ``host:port`` (see the module docstring); a context manager."""

    def __init__(self, entries: list[Entry], host: str = "127.0.0.1", port: int = 0, *,
                 max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, rechunk: bool = False, seed: int = 0,
                 limits: ServerLimits | None = None,
                 on_change: Callable[[ConformanceServer], None] | None = None,
                 policy: DeploymentPolicy | None = None) -> None:
        self.policy = policy if policy is not None else (DeploymentPolicy() if loopback(host) else None)
        self._states = {entry.id: ScenarioState(entry) for entry in entries}
        self._lock = threading.Lock()
        self._unrouted: list[dict[str, Any]] = []
        self.max_body_bytes = max_body_bytes
        self.rechunk = rechunk
        self._random = random.Random(seed)
        self._on_change = on_change
        self._httpd = HttpServer(self._handle, host, port, limits=limits, name="zigai-conformance")

    @property
    def base_url(self) -> str:
        host, port = self._httpd.address
        return f"http://{f'[{host}]' if ':' in host else host}:{port}"

    def prefix(self, scenario_id: str) -> str:
        """The origin an implementation uses for scenario ``scenario_id``."""
        return f"{self.base_url}/s/{scenario_id}"

    def scenario_status(self, scenario_id: str) -> dict[str, Any]:
        """One scenario's entry of :meth:`status`."""
        with self._lock:
            return self._states[scenario_id].to_json(self.base_url)

    # -- reporting -----------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """Every scenario's verdict, consumed count and first mismatch, plus unrouted requests."""
        with self._lock:
            scenarios = [state.to_json(self.base_url) for state in self._states.values()]
            unrouted = list(self._unrouted)
        counts = {v: sum(1 for s in scenarios if s["verdict"] == v)
                  for v in ("pass", "fail", "incomplete", "not-run")}
        return {"base_url": self.base_url, "summary": counts, "unrouted": unrouted, "scenarios": scenarios}

    def close(self) -> None:
        self._httpd.close()

    def __enter__(self) -> ConformanceServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- handling ------------------------------------------------------------------------

    def _handle(self, request: Request) -> Response:
        if self.policy is not None:
            refused = self.policy.check(fold_headers(request.headers), request.tls)
            if refused is not None:
                return _json(refused.status, {"error": {"type": refused.code, "message": refused.reason}},
                             [("Connection", "close")])
        path = request.target.split("?", 1)[0]
        if path == "/_status" and request.method in ("GET", "HEAD"):
            return _json(200, self.status())
        if not request.target.startswith("/s/"):
            return self._unrouted_answer(request, "a scenario is reached under /s/<scenario-id>/; "
                                                  "GET /_status lists the ids")
        ident, _, rest = request.target[len("/s/"):].partition("/")
        state = self._states.get(ident)
        if state is None:
            return self._unrouted_answer(request, f"unknown scenario id {ident!r}; GET /_status lists the ids")
        # One request of a scenario at a time: the next interaction is taken (or the failure
        # recorded) atomically, so concurrent requests cannot both claim one interaction.
        with state.lock:
            try:
                interaction = self._match(state, request, "/" + rest)
            except _Mismatch as mismatch:
                answer = self._refuse(state, mismatch)
            else:
                answer = self._answer(interaction)
        self._changed()
        return answer

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self)

    def _unrouted_answer(self, request: Request, message: str) -> Response:
        with self._lock:
            if len(self._unrouted) < 100:
                self._unrouted.append({"method": request.method, "target": request.target[:300],
                                       "message": message})
        self._changed()
        return _mismatch_response(f"unrouted request {request.method} {request.target[:300]}: {message}",
                                  404)

    def _match(self, state: ScenarioState, request: Request, target: str) -> Interaction:
        entry = state.entry
        names = entry.scenario.normalize if entry.scenario is not None else frozenset()
        with self._lock:
            state.requests += 1
        if state.failure is not None:
            raise _Mismatch("after_failure", "this scenario already failed: " + str(state.failure["message"]))
        index = state.consumed
        if request.content_length > self.max_body_bytes:
            raise _Mismatch("body_too_large", f"request body of {request.content_length} bytes is over "
                            f"the server's limit of {self.max_body_bytes} bytes")
        body = request.read_body()
        target = normalize_target(target, names)
        where = f"request #{state.requests - 1} ({request.method} {target})"
        if index >= len(entry.interactions):
            raise _Mismatch("extra", f"{where}: extra request: all {len(entry.interactions)} recorded "
                            "interactions were already used")
        expected = entry.interactions[index]
        if request.method != expected.method or target != expected.target:
            later = next((i for i in range(index + 1, len(entry.interactions))
                          if entry.interactions[i].method == request.method
                          and entry.interactions[i].target == target), None)
            if later is not None:
                raise _Mismatch("out_of_order", f"{where}: out of order: it matches recorded interaction "
                                f"#{later}, but #{index} ({expected.method} {expected.target}) comes first")
            kind = "method" if target == expected.target else "route"
            raise _Mismatch(kind, f"{where}: expected interaction #{index}: {expected.method} "
                            f"{expected.target}", {"expected": f"{expected.method} {expected.target}",
                                                   "actual": f"{request.method} {target}"})
        _check_body(normalize_body(body, request.headers, names), expected, f"{where}, interaction #{index}")
        with self._lock:
            state.consumed += 1
        return expected

    def _refuse(self, state: ScenarioState, mismatch: _Mismatch) -> Response:
        with self._lock:
            if state.failure is None:
                state.failure = {"kind": mismatch.kind, "message": mismatch.message,
                                 "interaction": state.consumed, **mismatch.details}
        headers = [("Connection", "close")] if mismatch.kind == "body_too_large" else []
        return _mismatch_response(mismatch.message, 413 if mismatch.kind == "body_too_large" else 400, headers)

    def _answer(self, interaction: Interaction) -> Response:
        headers: list[tuple[str, str]] = []
        for name, value in interaction.response_headers:
            if name.lower() in _DROPPED:
                continue
            headers.append((name, value))
        body = interaction.response_body
        if body is None:
            return Response(interaction.status, headers, b"")
        payload = body.to_bytes()
        if body.type == "eventstream":
            kind, events = _EVENTSTREAM, body.frames()
        elif body.type == "text" and _is_sse(body.content):
            kind, events = "text/event-stream", list(_events(payload))
        else:
            kind, events = ("application/json" if body.type == "json" else "text/plain; charset=utf-8"), []
        if not any(name.lower() == "content-type" for name, _ in headers):
            headers.append(("Content-Type", kind))
        if not events:
            return Response(interaction.status, headers, payload)
        headers.append(("Content-Length", str(len(payload))))
        return Response(interaction.status, headers, self._pieces(events))

    def _pieces(self, events: list[bytes]) -> Iterator[bytes]:
        for event in events:
            if not self.rechunk:
                yield event
                continue
            with self._lock:
                cuts = sorted(self._random.sample(range(1, len(event)), min(len(event) - 1, 1 + len(event) // 7)))
            start = 0
            for cut in [*cuts, len(event)]:
                yield event[start:cut]  # each piece is one send; the network may still merge them
                start = cut


def _is_sse(text: str) -> bool:
    return any(line.startswith(("data:", "event:")) for line in text.splitlines()[:50])


def _events(payload: bytes) -> Iterator[bytes]:
    """``payload`` cut after every blank line (the recording's event boundaries)."""
    start = 0
    while start < len(payload):
        end = payload.find(b"\n\n", start)
        end = len(payload) if end < 0 else end + 2
        yield payload[start:end]
        start = end


def _check_body(actual: bytes, expected: Interaction, where: str) -> None:
    recorded = expected.request_body
    if recorded is None:
        if actual:
            raise _Mismatch("body", f"{where}: the request has a body but none was recorded")
        return
    if not actual:
        raise _Mismatch("body", f"{where}: the request has no body but one was recorded")
    if recorded.type == "text":
        text = actual.decode("utf-8", errors="replace")
        if text != recorded.content:
            raise _Mismatch("body", f"{where}: text body differs from the recording",
                            {"diff": json_diff(recorded.content.splitlines(), text.splitlines())})
        return
    try:
        value = json.loads(actual)
    except ValueError:
        raise _Mismatch("body", f"{where}: the request body is not JSON but JSON was recorded") from None
    if not strict_json_equal(recorded.content, value):
        difference = first_difference(recorded.content, value) or {}
        raise _Mismatch("body", f"{where}: JSON body differs from the recording at "
                        f"{difference.get('pointer', '/')} (types matter)",
                        {"difference": difference, "diff": json_diff(recorded.content, value)})


def _json(status: int, value: Any, headers: list[tuple[str, str]] | None = None) -> Response:
    data = json.dumps(value, indent=1, ensure_ascii=False).encode()
    return Response(status, [("Content-Type", "application/json"), *(headers or [])], data)


def _mismatch_response(message: str, status: int, headers: list[tuple[str, str]] | None = None) -> Response:
    return _json(status, {"error": {"type": "conformance_mismatch", "message": message}},
                 [("X-Zigai-Conformance", "mismatch"), *(headers or [])])


def loopback(host: str) -> bool:
    """True for the loopback addresses the server binds by default."""
    return is_loopback_host(host)
