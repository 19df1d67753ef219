"""A WSGI application serving one agent to browsers over SSE, as AG-UI or Vercel UI streams.

:func:`ui_app` returns a plain WSGI callable (any WSGI server runs it: wsgiref, gunicorn,
waitress, uWSGI).  Routes, relative to ``path``:

* ``POST {path}`` — the protocol's run request (AG-UI ``RunAgentInput`` or the Vercel
  ``useChat`` body).  The answer is ``text/event-stream``; every frame has an SSE ``id``.
  The run is started on a background thread and writes encoded frames into its
  :class:`~zigai.ui.replay.ReplayLog`; the response reads that log, so a dropped
  connection does not stop the run and the ``X-Zigai-Run-Id`` header names it;
* ``GET {path}runs/<run_id>/events`` with ``Last-Event-ID`` (or ``?after=N``) — reconnect:
  frames after N, then live frames until the run ends (``410`` once they were evicted);
* ``POST {path}runs/<run_id>/cancel`` — set the run's cancellation token (``202``);

With ``store=`` (e.g. :class:`zigai.ui.sqlite.SqliteUiStore`) the histories, pauses and
replay logs live in that shared store, so any worker process answers any of these routes:
a run's frames are read from the store, and a cancel is flagged there for the worker that
produces the run (it polls the flag);
* with ``page=True`` (AG-UI only): ``GET {path}`` is the built-in chat page and
  ``GET {path}static/page.js`` / ``static/page.css`` its files (:mod:`zigai.ui.page`).

Every request first passes the deployment gate (:class:`~zigai.http_gate.DeploymentPolicy`,
the MCP server's policy), decided from headers alone before any body is read: a ``Host`` that is
not served -> ``421 HostNotAllowed`` (by default only loopback names: a DNS-rebinding page's
``Host`` names its own site); cleartext where TLS is required -> ``403 TlsRequired``; a browser
``Origin`` not allowed -> ``403 OriginNotAllowed`` (by default only loopback pages).  Every
``POST`` must then say ``Content-Type: application/json`` (``415 UnsupportedMediaType``), which a
cross-site page cannot send without a CORS preflight.  ``OPTIONS`` (the preflight) is answered
``204`` for a route, with CORS headers echoing an allowed ``Origin``; every answer to an allowed
``Origin`` carries ``Access-Control-Allow-Origin`` so the page can read it.

Requests then cross the trust boundary of :mod:`zigai.ui.trust`; a refused request gets
``400``/``413`` with ``{"error": {"code", "message"}}`` before any run starts.  At most
``max_active_runs`` runs execute at once (``503`` beyond).  The server keeps canonical
history per thread (:class:`HistoryStore`): once a thread has history, only the client's
trailing *new* user messages are read from a request, so a browser that echoes tool
messages back does not inject them — the server's own record is used instead.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qs

from zigai.control import CancellationToken
from zigai.errors import UiError
from zigai.hooks import Correlation
from zigai.http_gate import DeploymentPolicy
from zigai.messages import Message
from zigai.ui.agui import AguiEncoder, AguiRunInput, parse_run_input
from zigai.ui.bridge import CustomEvents, UiBridge, resume_run, start_run
from zigai.ui.events import RunFailure, UiEvent
from zigai.ui.files import FileLimits
from zigai.ui.page import SECURITY_HEADERS, page_asset
from zigai.ui.pauses import ApprovalReply, InvalidApprovalReply, PauseStore
from zigai.ui.replay import ReplayGap, ReplayLog, ReplayTimedOut
from zigai.ui.state import ClientStateLimits, FrontendTool, SharedState, StateTooLarge
from zigai.ui.trust import (
    ClientMessage,
    ClientMessageLimits,
    ClientMessagesTooLarge,
    client_id,
    parse_body,
    to_history,
)
from zigai.ui.vercel import DONE, STREAM_HEADER, VercelEncoder, parse_chat_request

__all__ = ["HistoryStore", "RunRequest", "UiApp", "ui_app", "ui_page", "encode_sse"]

Protocol = Literal["agui", "vercel"]
_RUN_ROUTE = re.compile(r"^runs/([A-Za-z0-9._:-]{1,128})/(events|cancel)$")


class HistoryStore:
    """Bounded, thread-safe canonical history per thread id (oldest thread evicted)."""

    def __init__(self, max_threads: int = 1024) -> None:
        if isinstance(max_threads, bool) or not isinstance(max_threads, int) or max_threads < 1:
            raise ValueError("max_threads must be a positive int")
        self.max_threads = max_threads
        self._lock = threading.Lock()
        self._threads: OrderedDict[str, tuple[Message, ...]] = OrderedDict()

    def get(self, thread_id: str) -> tuple[Message, ...] | None:
        with self._lock:
            return self._threads.get(thread_id)

    def put(self, thread_id: str, messages: Sequence[Message]) -> None:
        with self._lock:
            self._threads[thread_id] = tuple(messages)
            self._threads.move_to_end(thread_id)
            while len(self._threads) > self.max_threads:
                self._threads.popitem(last=False)


@dataclass(frozen=True, slots=True)
class RunRequest:
    """What ``run_options`` sees for each run: ids, the custom-event outbox and the token."""

    protocol: Protocol
    thread_id: str
    run_id: str
    custom: CustomEvents
    cancellation: CancellationToken
    resume: bool = False
    shared: SharedState | None = None  # AG-UI: the client's state, context and forwarded props


@dataclass
class _Run:
    run_id: str
    log: ReplayLog
    token: CancellationToken
    encoder: Any
    thread_id: str
    done: threading.Event = field(default_factory=threading.Event)


def encode_sse(sequence: int | None, payload: str) -> bytes:
    """One SSE frame (``id`` line when ``sequence`` is given, one ``data`` line)."""
    head = f"id: {sequence}\n" if sequence is not None else ""
    return f"{head}data: {payload}\n\n".encode()


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class _HttpError(Exception):
    def __init__(self, status: str, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


class UiApp:
    """The WSGI callable :func:`ui_app` builds (see module docs)."""

    def __init__(
        self, agent: Any, protocol: Protocol, *, path: str = "/",
        pauses: PauseStore | None = None, histories: HistoryStore | None = None,
        limits: ClientMessageLimits | None = None, replay_max_events: int = 4096,
        replay_max_bytes: int = 8 * 1024 * 1024, max_active_runs: int = 8,
        max_retained_runs: int = 64, read_timeout_s: float = 30.0,
        run_options: Callable[[RunRequest], Mapping[str, Any]] | None = None,
        page: bool = False, state_limits: ClientStateLimits | None = None,
        file_limits: FileLimits | None = None, store: Any = None,
        policy: DeploymentPolicy | None = None,
    ) -> None:
        if protocol not in ("agui", "vercel"):
            raise ValueError("protocol must be 'agui' or 'vercel'")
        if page and protocol != "agui":
            raise ValueError("the built-in page speaks AG-UI: use protocol 'agui' with page=True")
        if not path.startswith("/"):
            raise ValueError("path must start with '/'")
        self.agent = agent
        self.protocol: Protocol = protocol
        self.path = path if path.endswith("/") else path + "/"
        self.store = store
        if pauses is None:
            pauses = store.pauses if store is not None else PauseStore()
        if histories is None:
            histories = store.histories if store is not None else HistoryStore()
        self.pauses = pauses
        self.histories = histories
        self.limits = limits if limits is not None else ClientMessageLimits()
        self.replay_max_events = replay_max_events
        self.replay_max_bytes = replay_max_bytes
        self.max_retained_runs = max_retained_runs
        self.read_timeout_s = read_timeout_s
        self.run_options = run_options
        self.page = page
        self.state_limits = state_limits if state_limits is not None else ClientStateLimits()
        self.file_limits = file_limits if file_limits is not None else FileLimits()
        self.policy = policy if policy is not None else DeploymentPolicy()
        self._slots = threading.BoundedSemaphore(max_active_runs)
        self._lock = threading.Lock()
        self._runs: OrderedDict[str, _Run] = OrderedDict()

    # -- WSGI ------------------------------------------------------------------------------

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        try:
            cors = self._admit(environ)
            if cors:
                start_response = _adding(start_response, cors)
            if environ.get("REQUEST_METHOD") == "OPTIONS":
                return self._preflight(environ, start_response, bool(cors))
            return self._route(environ, start_response)
        except _HttpError as exc:
            body = _dumps({"error": {"code": exc.code, "message": str(exc)}}).encode()
            start_response(exc.status, [("Content-Type", "application/json"),
                                        ("Content-Length", str(len(body)))])
            return [body]

    def _admit(self, environ: Mapping[str, Any]) -> list[tuple[str, str]]:
        """Apply the deployment gate; the CORS headers an allowed browser Origin gets."""
        headers = {name: (str(environ[key]).strip(" \t"),)
                   for key, name in (("HTTP_HOST", "host"), ("HTTP_ORIGIN", "origin")) if key in environ}
        tls = environ.get("wsgi.url_scheme") == "https" or str(environ.get("HTTPS", "")).lower() in ("on", "1")
        refused = self.policy.check(headers, tls)
        if refused is not None:
            phrase = {421: "421 Misdirected Request", 403: "403 Forbidden"}[refused.status]
            raise _HttpError(phrase, refused.code, refused.reason)
        if "origin" not in headers:
            return []
        return [("Access-Control-Allow-Origin", headers["origin"][0]), ("Vary", "Origin"),
                ("Access-Control-Expose-Headers", _EXPOSED)]

    def _allow(self, path: str) -> str:
        if path in (self.path, self.path.rstrip("/")):
            return "POST, OPTIONS"
        matched = _RUN_ROUTE.match(path[len(self.path):]) if path.startswith(self.path) else None
        if matched is None:
            raise _HttpError("404 Not Found", "NotFound", f"no route for {path}")
        return "POST, OPTIONS" if matched.group(2) == "cancel" else "GET, OPTIONS"

    def _preflight(self, environ: Mapping[str, Any], start_response: Callable[..., Any],
                   cors: bool) -> Iterable[bytes]:
        allow = self._allow(environ.get("PATH_INFO", "") or "/")
        headers = [("Allow", allow), ("Content-Length", "0")]
        if cors:
            headers += [("Access-Control-Allow-Methods", allow),
                        ("Access-Control-Allow-Headers", "Content-Type, Accept, Last-Event-ID"),
                        ("Access-Control-Max-Age", "600")]
        start_response("204 No Content", headers)
        return [b""]

    def _route(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        method = environ.get("REQUEST_METHOD", "GET")
        path = environ.get("PATH_INFO", "") or "/"
        if self.page and method in ("GET", "HEAD") and path.startswith(self.path):
            asset = page_asset(path[len(self.path):], self.path)
            if asset is not None:
                return _page_response(asset, method, start_response)
        if method == "POST":
            content_type = str(environ.get("CONTENT_TYPE") or "").split(";", 1)[0].strip().lower()
            if content_type != "application/json":
                raise _HttpError("415 Unsupported Media Type", "UnsupportedMediaType",
                                 "send the request with Content-Type: application/json")
        if path in (self.path, self.path.rstrip("/")):
            if method != "POST":
                raise _HttpError("405 Method Not Allowed", "MethodNotAllowed", "POST a run request")
            return self._start(environ, start_response)
        if not path.startswith(self.path):
            raise _HttpError("404 Not Found", "NotFound", f"no route for {path}")
        matched = _RUN_ROUTE.match(path[len(self.path):])
        if matched is None:
            raise _HttpError("404 Not Found", "NotFound", f"no route for {path}")
        run_id, action = matched.groups()
        with self._lock:
            run = self._runs.get(run_id)
        if run is None:
            run = self._shared_run(run_id)
        if run is None:
            raise _HttpError("404 Not Found", "UnknownRun", f"run {run_id!r} is unknown or expired")
        if action == "cancel":
            if method != "POST":
                raise _HttpError("405 Method Not Allowed", "MethodNotAllowed", "POST to cancel")
            run.token.cancel("cancelled by the client")
            if self.store is not None:  # the run may be producing on another worker
                self.store.request_cancel(run_id)
            start_response("202 Accepted", [("Content-Length", "0")])
            return [b""]
        if method != "GET":
            raise _HttpError("405 Method Not Allowed", "MethodNotAllowed", "GET the events")
        after = _after(environ)
        if after + 1 < run.log.first_sequence:
            raise _HttpError("410 Gone", "ReplayGap",
                             f"events after {after} were evicted from the replay log; start a new run")
        return self._respond(run, after, start_response)

    def _respond(self, run: _Run, after: int, start_response: Callable[..., Any]) -> Iterable[bytes]:
        headers = [("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-cache"),
                   ("X-Accel-Buffering", "no"), ("X-Zigai-Run-Id", run.run_id)]
        if self.protocol == "vercel":
            headers.append(STREAM_HEADER)
        start_response("200 OK", headers)
        return self._frames(run, after)

    def _frames(self, run: _Run, after: int) -> Iterator[bytes]:
        try:
            for sequence, payload in run.log.read(after, timeout=self.read_timeout_s):
                yield encode_sse(sequence, payload.decode())
        except (ReplayGap, ReplayTimedOut) as exc:
            failure = RunFailure(run.thread_id, run.run_id, str(exc), type(exc).__name__)
            for item in type(run.encoder)().encode(failure):
                yield encode_sse(None, _dumps(item))

    # -- starting runs -----------------------------------------------------------------------

    def _read_body(self, environ: dict[str, Any]) -> dict[str, Any]:
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            raise _HttpError("400 Bad Request", "InvalidClientMessages", "bad Content-Length") from None
        ceiling = self.limits.body.max_document_bytes
        if length > ceiling:
            raise _HttpError("413 Content Too Large", "ClientMessagesTooLarge",
                             f"the body is {length} bytes; the limit is {ceiling}")
        body = environ["wsgi.input"].read(length) if length > 0 else b""
        try:
            return parse_body(body, self.limits)
        except ClientMessagesTooLarge as exc:
            raise _HttpError("413 Content Too Large", type(exc).__name__, str(exc)) from None
        except UiError as exc:
            raise _HttpError("400 Bad Request", type(exc).__name__, str(exc)) from None

    def _new_input(self, thread_id: str,
                   messages: Sequence[ClientMessage]) -> tuple[tuple[Message, ...], str | tuple[Any, ...]]:
        stored = self.histories.get(thread_id)
        if stored is None:
            return to_history(messages, self.limits)
        start = len(messages)
        while start > 0 and messages[start - 1].role == "user":
            start -= 1
        history, prompt = to_history(messages[start:], self.limits)
        return stored + history, prompt

    def _start(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        document = self._read_body(environ)
        custom = CustomEvents()
        try:
            thread_id, run_id, messages, replies, parsed = self._parse(document)
            prepared = None if replies else self._new_input(thread_id, messages)
            shared = None if parsed is None else SharedState(
                parsed.state, parsed.context, parsed.forwarded_props, outbox=custom,
                limits=self.state_limits)
        except (StateTooLarge, ClientMessagesTooLarge) as exc:
            raise _HttpError("413 Content Too Large", type(exc).__name__, str(exc)) from None
        except UiError as exc:
            raise _HttpError("400 Bad Request", type(exc).__name__, str(exc)) from None
        frontend = () if parsed is None else parsed.tools
        if not self._slots.acquire(blocking=False):
            raise _HttpError("503 Service Unavailable", "TooManyRuns",
                             "too many runs are active; retry shortly")
        try:
            run = self._register(thread_id, run_id, frozenset(tool.name for tool in frontend))
            request = RunRequest(self.protocol, thread_id, run.run_id, custom, run.token, bool(replies),
                                 shared)
            options = dict(self.run_options(request)) if self.run_options is not None else {}
            options["cancellation"] = run.token
            options.setdefault("correlation", Correlation(conversation_id=thread_id))
            if shared is not None and "deps" not in options:
                options["deps"] = shared
            if frontend:
                options["capabilities"] = (*options.get("capabilities", ()), frontend_capability(frontend))
            bridge = UiBridge(thread_id, run.run_id, custom=custom)
            if replies:
                events = resume_run(self.agent, bridge, self.pauses, replies,
                                    on_outcome=self._save_history, **options)
            else:
                assert prepared is not None
                history, prompt = prepared
                events = start_run(self.agent, bridge, self.pauses, prompt=prompt, history=history,
                                   on_outcome=self._save_history, **options)
            worker = threading.Thread(target=self._produce, args=(run, events), daemon=True,
                                      name=f"zigai-ui-run-{run.run_id}")
            worker.start()
        except BaseException:
            self._slots.release()
            raise
        return self._respond(run, 0, start_response)

    def _parse(self, document: dict[str, Any]) -> tuple[str, str, tuple[ClientMessage, ...],
                                                          tuple[ApprovalReply, ...], AguiRunInput | None]:
        if self.protocol == "agui":
            parsed = parse_run_input(document, self.state_limits, self.file_limits)
            replies = list(parsed.replies)
            for call_id, content in parsed.tool_results:
                interrupt_id = self.pauses.interrupt_for_call(parsed.thread_id, call_id)
                if interrupt_id is not None:
                    replies.append(ApprovalReply(interrupt_id, "result", result=content))
            if parsed.tool_results and not replies:
                raise InvalidApprovalReply("the tool messages answer no waiting frontend tool call")
            return parsed.thread_id, parsed.run_id, parsed.messages, tuple(replies), parsed
        chat = parse_chat_request(document, self.file_limits)
        replies = []
        for answer in chat.answers:
            if answer.approval_id is not None:
                replies.append(ApprovalReply(answer.approval_id, answer.decision,  # type: ignore[arg-type]
                                             answer.reason))
            elif answer.call_id is not None:
                interrupt_id = self.pauses.interrupt_for_call(chat.chat_id, answer.call_id)
                if interrupt_id is not None:
                    replies.append(ApprovalReply(interrupt_id, "result", result=answer.result))
        if not replies and chat.messages and chat.messages[-1].role == "assistant":
            raise InvalidApprovalReply("the last message is the assistant's and answers no waiting call")
        return chat.chat_id, client_id(None), chat.messages, tuple(replies), None

    def _shared_run(self, run_id: str) -> _Run | None:
        """A run another worker produces, read through the shared store (None without one)."""
        found = self.store.open_replay(run_id) if self.store is not None else None
        if found is None:
            return None
        log, thread_id = found
        encoder: Any = AguiEncoder() if self.protocol == "agui" else VercelEncoder()
        return _Run(run_id, log, CancellationToken(), encoder, thread_id)

    def _register(self, thread_id: str, run_id: str, frontend: frozenset[str] = frozenset()) -> _Run:
        encoder: Any = AguiEncoder(frontend) if self.protocol == "agui" else VercelEncoder()
        with self._lock:
            if run_id in self._runs or (self.store is not None and self.store.open_replay(run_id)):
                run_id = client_id(None)
            log: Any = (ReplayLog(self.replay_max_events, self.replay_max_bytes) if self.store is None else
                        self.store.replay_log(run_id, thread_id, self.replay_max_events, self.replay_max_bytes))
            run = _Run(run_id, log, CancellationToken(), encoder, thread_id)
            self._runs[run_id] = run
            finished = [key for key, item in self._runs.items() if item.done.is_set()]
            while len(self._runs) > self.max_retained_runs and finished:
                self._runs.pop(finished.pop(0), None)
        return run

    def _save_history(self, thread_id: str, outcome: Any) -> None:
        messages = outcome.paused.messages if outcome.is_paused else outcome.result.messages
        self.histories.put(thread_id, messages)

    def _produce(self, run: _Run, events: Iterator[UiEvent]) -> None:
        if self.store is not None:
            threading.Thread(target=self._watch_cancel, args=(run,), daemon=True,
                             name=f"zigai-ui-cancel-{run.run_id}").start()
        try:
            for event in events:
                for item in run.encoder.encode(event):
                    run.log.append(_dumps(item).encode())
            if self.protocol == "vercel":
                run.log.append(DONE.encode())
        finally:
            run.log.close()
            run.done.set()
            self._slots.release()

    def _watch_cancel(self, run: _Run) -> None:
        """Cancel a store-backed run when any worker flagged it (polled until the run ends)."""
        while not run.done.wait(self.store.poll_s * 4):
            if getattr(run.log, "cancel_requested", False):
                run.token.cancel("cancelled by the client")
                return

    def cancel(self, run_id: str) -> bool:
        """Cancel a live run by id; False when the id is unknown."""
        with self._lock:
            run = self._runs.get(run_id)
        if run is None:
            return False
        run.token.cancel("cancelled by the application")
        return True

    def wait(self, run_id: str, timeout: float | None = None) -> bool:
        """Block until the run's producer finished (True) or ``timeout`` passed."""
        with self._lock:
            run = self._runs.get(run_id)
        return run is not None and run.done.wait(timeout)


def _browser_runs_it(args: Any) -> Any:  # pragma: no cover - external tools are never called
    raise RuntimeError("a frontend tool runs in the browser")


def frontend_capability(tools: Sequence[FrontendTool]) -> Any:
    """A run capability declaring the browser's tools as ``external`` (the run pauses on a call)."""
    from zigai.capability import Capability
    from zigai.tool import Tool, ToolExecution

    return Capability(tools=tuple(Tool.manual(t.name, t.description, t.parameters, _browser_runs_it,
                                              execution=ToolExecution.external) for t in tools))


def _page_response(asset: tuple[bytes, str], method: str,
                   start_response: Callable[..., Any]) -> Iterable[bytes]:
    body, content_type = asset
    start_response("200 OK", [("Content-Type", content_type), ("Content-Length", str(len(body))),
                              *SECURITY_HEADERS])
    return [b""] if method == "HEAD" else [body]
_EXPOSED = ", ".join(("X-Zigai-Run-Id", STREAM_HEADER[0]))


def _adding(start_response: Callable[..., Any], extra: list[tuple[str, str]]) -> Callable[..., Any]:
    def wrapped(status: str, headers: list[tuple[str, str]], *exc_info: Any) -> Any:
        return start_response(status, [*headers, *extra], *exc_info)
    return wrapped


def _after(environ: Mapping[str, Any]) -> int:
    raw = environ.get("HTTP_LAST_EVENT_ID")
    if raw is None:
        values = parse_qs(environ.get("QUERY_STRING", "")).get("after")
        raw = values[0] if values else "0"
    if not str(raw).isdigit():
        raise _HttpError("400 Bad Request", "InvalidLastEventId", "Last-Event-ID must be a sequence number")
    return int(raw)


def ui_app(agent: Any, protocol: Protocol = "agui", **options: Any) -> UiApp:
    """The WSGI app serving ``agent`` over ``protocol`` (keyword options: see :class:`UiApp`)."""
    return UiApp(agent, protocol, **options)


def ui_page(agent: Any, **options: Any) -> UiApp:
    """``ui_app(agent, "agui", page=True, ...)``: the AG-UI endpoint plus the built-in chat page."""
    return UiApp(agent, "agui", page=True, **options)
