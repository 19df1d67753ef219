"""mcp.Client: the MCP client over any :class:`McpTransport`, for 2026-07-28 and the 2025 revisions.

Job
    Agree on a protocol revision with the server on first use (the stateless 2026-07-28, or the
    session-based 2025-11-25 / 2025-06-18 through ``initialize``; see :mod:`zigai.mcp.wire.revisions`
    and :mod:`zigai.mcp.client.legacy`), put the per-request envelope on every 2026-07-28
    request (protocol version, client identity, capabilities, plus the caller's progress token
    and log level), send it through the transport under one deadline and cancellation, and turn
    the reply into a typed result or a named error.  Typed helpers cover every core client method; :meth:`Client.request_json`
    is the open path for extension methods and fields this revision does not know.

Invariants
    * ``protocol_version=None`` (the default) negotiates: the newest revision both sides speak
      wins, once per client; a named revision pins the client to it.  Under 2026-07-28 there is
      no handshake and no session: every request is self-contained.  Under a 2025 revision the
      requests carry no envelope, the transport keeps the session, and a method of the other
      era raises :class:`FeatureNotInRevision` before I/O.  A client can be shared by threads.
    * The envelope keys cannot be overridden by caller metadata or params; caller params are
      copied, never mutated.
    * Every reply was bounded by the MCP message JSON profile in the transport.  Error replies
      raise the :class:`McpErrorResponse` subclass of their code; ``resultType`` other than
      ``complete`` raises :class:`McpInputRequired` (input required) or
      :class:`InvalidMcpMessage` (unknown) from the typed helpers.  With an ``input_handler``,
      ``tools/call``, ``prompts/get`` and ``resources/read`` answer each input request through
      it and retry with ``inputResponses`` and the verbatim ``requestState``, at most
      ``max_input_rounds`` times (then :class:`McpInputRoundsExhausted`).
    * Over a header-mirroring transport, tools whose ``x-mcp-header`` annotations are invalid
      are left out of listings (reported in ``Page.rejected``); calls mirror annotated
      arguments into ``Mcp-Param-*`` headers, and one ``HeaderMismatch`` triggers a re-list and
      one retry.
    * A -32022 (unsupported protocol version) answer listing a version this client speaks is
      retried once with that version, for that request only; anything else raises.
    * An expired HTTP session (404, :class:`McpSessionExpired`) re-initializes and retries the
      request once.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from zigai.control import CancellationToken
from zigai.mcp.client import legacy as legacy_client
from zigai.mcp.client import task_watch
from zigai.mcp.client import tasks as task_client
from zigai.mcp.client.options import EventSink, RequestOptions, _checked_options
from zigai.mcp.client.task_store import TaskStore
from zigai.mcp.client.tasks import TaskPolling, completed_result, track_created, wait_task
from zigai.mcp.errors import (
    UNSUPPORTED_PROTOCOL_VERSION,
    HeaderMismatch,
    InvalidMcpMessage,
    InvalidMcpRequest,
    McpClientClosed,
    McpInputRequired,
    McpInputRoundsExhausted,
    McpSessionExpired,
    TaskExtensionRequired,
    error_for_code,
)
from zigai.mcp.wire.headers import header_parameters, invalid_header_annotation, param_headers
from zigai.mcp.wire.input import (
    DEFAULT_MAX_INPUT_ROUNDS,
    MRTR_METHODS,
    InputHandler,
    answer_inputs,
    parse_input_required,
)
from zigai.mcp.wire.jsonrpc import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    NAME_BEARING_METHODS,
    PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    JsonRpcError,
    JsonRpcNotification,
    JsonRpcRequest,
    RequestId,
    check_request_id,
    encode,
    notification_message,
    request_message,
)
from zigai.mcp.wire.primitives import (
    ClientCapabilities,
    CompletionRequest,
    Implementation,
    LogLevel,
    Notification,
    PromptRequest,
    RequestMetadata,
    ServerCapabilities,
    SubscriptionFilter,
)
from zigai.mcp.wire.results import (
    CallToolResult,
    Completion,
    DiscoverResult,
    GetPromptResult,
    Page,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    ToolInfo,
    parse_page,
)
from zigai.mcp.wire.revisions import CLIENT_VERSIONS, check_method, is_legacy
from zigai.mcp.wire.tasks import TASKS_EXTENSION, TaskState, parse_task
from zigai.mcp.wire.transport import McpTransport, OutgoingRequest

__all__ = ["Client", "RequestOptions", "ListenResult", "EventSink", "DEFAULT_MAX_PAGES"]

_log = logging.getLogger("zigai.mcp.client")
DEFAULT_MAX_PAGES = 100


@dataclass(frozen=True, slots=True)
class ListenResult:
    """How a ``subscriptions/listen`` stream ended gracefully (the server closed it)."""

    subscription_id: RequestId
    acknowledged: SubscriptionFilter
    raw: dict[str, Any]


def _retry_version(reply: JsonRpcError) -> str | None:
    """The version to retry a -32022 answer with: the first one the server lists that we speak."""
    if reply.code != UNSUPPORTED_PROTOCOL_VERSION or not isinstance(reply.data, dict):
        return None
    supported = reply.data.get("supported")
    if not isinstance(supported, list):
        return None
    return next((v for v in supported if isinstance(v, str) and v in SUPPORTED_VERSIONS), None)


class Client:
    """An MCP client bound to one transport (see module docstring).  Thread-safe; a context manager."""

    def __init__(
        self,
        transport: McpTransport,
        *,
        client_info: Implementation | None = None,
        capabilities: ClientCapabilities | None = None,
        protocol_version: str | None = None,
        default_timeout_ms: int | None = None,
        on_notification: EventSink | None = None,
        max_pages: int = DEFAULT_MAX_PAGES,
        input_handler: InputHandler | None = None,
        max_input_rounds: int = DEFAULT_MAX_INPUT_ROUNDS,
        task_store: TaskStore | None = None,
        task_polling: TaskPolling | None = None,
    ) -> None:
        if not isinstance(transport, McpTransport):
            raise InvalidMcpRequest("Client needs an McpTransport (StdioTransport, StreamableHttpTransport, ...)")
        from zigai import __version__

        self.transport = transport
        self.client_info = client_info or Implementation("zigai", __version__)
        self.capabilities = capabilities or ClientCapabilities()
        if protocol_version is not None and (not isinstance(protocol_version, str) or not protocol_version):
            raise InvalidMcpRequest("protocol_version must be a revision string or None (negotiate)")
        self.offered_versions: tuple[str, ...] = CLIENT_VERSIONS if protocol_version is None else (protocol_version,)
        self.protocol_version = protocol_version or PROTOCOL_VERSION
        # a pinned 2026-07-28 client needs no negotiation; everything else agrees on first use
        self._agreed = protocol_version is not None and not is_legacy(protocol_version)
        self.initialize_result: dict[str, Any] | None = None
        self._era_lock = threading.Lock()
        self._handshakes = 0
        self.default_timeout_ms = default_timeout_ms
        self.on_notification = on_notification
        self.max_pages = max_pages
        if input_handler is not None and not callable(input_handler):
            raise InvalidMcpRequest("input_handler must be callable (InputRequest -> InputResponse)")
        if isinstance(max_input_rounds, bool) or not isinstance(max_input_rounds, int) or max_input_rounds < 1:
            raise InvalidMcpRequest("max_input_rounds must be a positive integer")
        self.input_handler = input_handler
        self.max_input_rounds = max_input_rounds
        if task_store is not None and not isinstance(task_store, TaskStore):
            raise InvalidMcpRequest("task_store must implement load/save/remove (for example mcp.FileStore)")
        if task_polling is not None and not isinstance(task_polling, TaskPolling):
            raise InvalidMcpRequest("task_polling must be a TaskPolling")
        self.task_store = task_store
        self.task_polling = task_polling or TaskPolling()
        self.server_capabilities: ServerCapabilities | None = None
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._in_flight: dict[RequestId, CancellationToken] = {}
        self._header_params: dict[str, dict[tuple[str, ...], tuple[str, str]]] = {}
        self._closed = False
        attach = getattr(transport, "set_request_handler", None)
        if callable(attach):
            attach(self._answer_server_request)
        attach_sink = getattr(transport, "set_unrouted_sink", None)
        if callable(attach_sink):
            attach_sink(self._unrouted)

    # -- lifecycle ------------------------------------------------------------------------

    def close(self) -> None:
        """Close the transport (for stdio: stop and reap the server process)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            tokens = list(self._in_flight.values())
        for token in tokens:
            token.cancel("the MCP client was closed")
        self.transport.close()

    def deinit(self) -> None:
        self.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- revision agreement (see wire.revisions / client.legacy) ----------------------------

    def _ensure_agreed(self, options: RequestOptions) -> None:
        if self._agreed:
            return
        with self._era_lock:
            if not self._agreed:
                legacy_client.negotiate(self, options)

    def _agree(self, version: str, initialize_result: dict[str, Any] | None = None) -> None:
        self.protocol_version = version
        self.initialize_result = initialize_result
        self._agreed = True
        self._handshakes += 1

    def _answer_server_request(self, request: JsonRpcRequest) -> dict[str, Any]:
        return legacy_client.answer_server_request(self, request)

    def _unrouted(self, note: JsonRpcNotification) -> None:
        """A notification of no request (a 2025 session's own, or stdio's unrouted ones)."""
        self._deliver(legacy_client.session_notification(note) if self.legacy else note, self.on_notification)

    def _notify_internal(self, method: str, params: Mapping[str, Any] | None) -> None:
        self.transport.notify(method, encode(notification_message(method, params)),
                              protocol_version=self.protocol_version, deadline=None)

    @property
    def legacy(self) -> bool:
        """True once the client agreed on a session-based (2025) revision with its server."""
        return self._agreed and is_legacy(self.protocol_version)

    # -- the one request path ---------------------------------------------------------------

    def envelope(self, metadata: RequestMetadata | None = None, base: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The ``_meta`` object of one request: caller entries first, envelope keys last."""
        meta: dict[str, Any] = dict(base or {})
        if metadata is not None:
            meta.update(metadata.to_meta())
        meta[META_PROTOCOL_VERSION] = self.protocol_version
        meta[META_CLIENT_INFO] = self.client_info.to_json()
        meta[META_CLIENT_CAPABILITIES] = self.capabilities.to_json()
        return meta

    def _deadline(self, options: RequestOptions) -> float | None:
        candidates = []
        if options.control is not None and options.control.deadline is not None:
            candidates.append(options.control.deadline)
        for timeout_ms in (options.timeout_ms, self.default_timeout_ms):
            if timeout_ms is not None:
                candidates.append(time.monotonic() + timeout_ms / 1000.0)
        return min(candidates) if candidates else None

    def _exchange(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        options: RequestOptions | None,
        *,
        param_header_pairs: tuple[tuple[str, str], ...] = (),
        stream: bool = False,
        on_raw: Callable[[JsonRpcNotification], None] | None = None,
        version: str | None = None,
        internal: bool = False,
        deadline: float | None = None,
        renewed: bool = False,
    ) -> dict[str, Any]:
        """Send one request; return its result object or raise its error (see module docstring).

        A -32022 answer whose ``data.supported`` names a version this client speaks is retried
        once with that version (for this request only; ``protocol_version`` is not changed).
        ``internal`` marks the negotiation's own requests (no agreement, no revision check);
        ``deadline`` can only shorten the options' deadline.
        """
        options = _checked_options(options)
        if params is not None and not isinstance(params, Mapping):
            raise InvalidMcpRequest(f"{method} params must be a JSON object")
        body_params = dict(params or {})
        base_meta = body_params.get("_meta")
        if base_meta is not None and not isinstance(base_meta, Mapping):
            raise InvalidMcpRequest("params._meta must be a JSON object")
        name_key = NAME_BEARING_METHODS.get(method)
        name = body_params.get(name_key) if name_key else None
        if name is not None and not isinstance(name, str):
            raise InvalidMcpRequest(f"{method} {name_key} must be a string")
        if not internal:
            self._ensure_agreed(options)
            check_method(method, self.protocol_version)
        legacy = is_legacy(version or self.protocol_version)
        if legacy:  # no envelope: identity and capabilities went with initialize
            meta = dict(base_meta or {})
            if options.metadata is not None:
                meta.update(options.metadata.to_meta())
            meta.pop(META_LOG_LEVEL, None)
            if meta:
                body_params["_meta"] = meta
            else:
                body_params.pop("_meta", None)
        else:
            body_params["_meta"] = self.envelope(options.metadata, base_meta)
        if version is not None and not legacy:
            body_params["_meta"][META_PROTOCOL_VERSION] = version
        token = CancellationToken()
        with self._lock:
            if self._closed:
                raise McpClientClosed("the MCP client is closed")
            request_id = options.request_id if options.request_id is not None else next(self._ids)
            if request_id in self._in_flight:
                raise InvalidMcpRequest(f"request id {request_id!r} is already in flight")
            self._in_flight[request_id] = token
        progress = options.metadata.progress_token if options.metadata is not None else None
        outgoing = OutgoingRequest(
            id=request_id, method=method, body=encode(request_message(request_id, method, body_params)),
            protocol_version=version or self.protocol_version, name=name, param_headers=param_header_pairs,
            stream=stream, progress_token=progress,
        )
        sink = options.on_notification or self.on_notification
        deliver = on_raw or (lambda note: self._deliver(note, sink))

        def cancelled() -> bool:
            return (token.cancelled or (options.cancel is not None and options.cancel.cancelled)
                    or (options.control is not None and options.control.cancelled))

        handshakes = self._handshakes
        wait_until = self._deadline(options)
        if deadline is not None:
            wait_until = deadline if wait_until is None else min(wait_until, deadline)
        try:
            reply = self.transport.request(outgoing, deadline=wait_until,
                                           is_cancelled=cancelled, on_notification=deliver)
        except McpSessionExpired:
            if internal or renewed:
                raise
            with self._era_lock:  # the server forgot the session: a new handshake (once), then one retry
                if self._handshakes == handshakes:
                    legacy_client.renew(self, options)
            return self._exchange(method, params, options, param_header_pairs=param_header_pairs, stream=stream,
                                  on_raw=on_raw, renewed=True)
        finally:
            with self._lock:
                self._in_flight.pop(request_id, None)
        if isinstance(reply, JsonRpcError):
            retry = _retry_version(reply) if version is None and not legacy else None
            if retry is not None:
                return self._exchange(method, params, options, param_header_pairs=param_header_pairs,
                                      stream=stream, on_raw=on_raw, version=retry)
            raise error_for_code(reply.code, reply.message, reply.data)
        return reply.result

    @staticmethod
    def _deliver(note: JsonRpcNotification, sink: EventSink | None) -> None:
        if sink is None:
            return
        try:
            notification = Notification.from_wire(note.method, note.params)
        except InvalidMcpMessage as exc:
            _log.warning("dropped an invalid %s notification: %s", note.method, exc)
            return
        sink(notification)

    def _complete(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        kind = result.get("resultType", "complete")
        if kind == "complete":
            return result
        if kind == "input_required":
            raise McpInputRequired(f"{method}: the server needs input from the client (multi round-trip)",
                                   result=result)
        raise InvalidMcpMessage(f"{method}: unknown resultType {kind!r}")

    def _typed(self, method: str, params: Mapping[str, Any] | None, options: RequestOptions | None,
               **kwargs: Any) -> dict[str, Any]:
        result = self._exchange(method, params, options, **kwargs)
        if self.input_handler is not None and method in MRTR_METHODS:
            result = self._input_rounds(method, params, options, result, kwargs)
        if result.get("resultType") == "task" and method == "tools/call" and \
                TASKS_EXTENSION in (self.capabilities.extensions or {}):
            state = parse_task(result, f"{method} task")
            track_created(self, state, method, (params or {}).get("name"), options)
            final = state if state.terminal else wait_task(self, state.task_id, options=options)
            result = completed_result(final, method)
        return self._complete(method, result)

    def _input_rounds(self, method: str, params: Mapping[str, Any] | None, options: RequestOptions | None,
                      result: dict[str, Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        assert self.input_handler is not None
        retry = dict(params or {})
        for _ in range(self.max_input_rounds):
            if result.get("resultType", "complete") != "input_required":
                return result
            needed = parse_input_required(result, f"{method} result")
            retry.pop("inputResponses", None)
            retry.pop("requestState", None)
            if needed.requests:
                retry["inputResponses"] = answer_inputs(self.input_handler, needed.requests)
            if needed.request_state is not None:
                retry["requestState"] = needed.request_state
            result = self._exchange(method, retry, options, **kwargs)
        if result.get("resultType", "complete") == "input_required":
            raise McpInputRoundsExhausted(
                f"{method}: the server still needs input after {self.max_input_rounds} rounds "
                "(raise Client(max_input_rounds=...) if the server legitimately asks more)", result=result)
        return result

    # -- the Tasks extension (see client.tasks) -----------------------------------------------

    def get_task(self, task_id: str, options: RequestOptions | None = None) -> TaskState:
        return task_client.get_task(self, task_id, options)

    def update_task(self, task_id: str, responses: Mapping[str, Any],
                    options: RequestOptions | None = None) -> dict[str, Any]:
        return task_client.update_task(self, task_id, responses, options)

    def cancel_task(self, task_id: str, options: RequestOptions | None = None) -> TaskState | None:
        return task_client.cancel_task(self, task_id, options)

    def wait_task(self, task_id: str, *, options: RequestOptions | None = None, polling: TaskPolling | None = None,
                  on_state: Callable[[TaskState], None] | None = None) -> TaskState:
        return task_client.wait_task(self, task_id, options=options, polling=polling, on_state=on_state)

    def watch_task(self, task_id: str, *, options: RequestOptions | None = None, polling: TaskPolling | None = None,
                   on_state: Callable[[TaskState], None] | None = None) -> TaskState:
        """:meth:`wait_task` driven by the task's status stream (``notifications/tasks``) instead of
        polling alone; falls back to polling where the server does not stream task status."""
        return task_watch.watch_task(self, task_id, options=options, polling=polling, on_state=on_state)

    def resume_tasks(self, *, options: RequestOptions | None = None,
                     polling: TaskPolling | None = None) -> list[TaskState]:
        return task_client.resume_tasks(self, options=options, polling=polling)

    # -- generic paths ----------------------------------------------------------------------

    def request_json(self, method: str, params: Mapping[str, Any] | None = None,
                     options: RequestOptions | None = None) -> dict[str, Any]:
        """Any method with any params: the result object exactly as received (unknown fields kept)."""
        if not isinstance(method, str) or not method:
            raise InvalidMcpRequest("method must be a non-empty string")
        return self._exchange(method, params, options)

    def send_notification(self, notification: Notification, options: RequestOptions | None = None) -> None:
        """Send one typed notification (for example :meth:`Notification.cancelled`)."""
        with self._lock:
            if self._closed:
                raise McpClientClosed("the MCP client is closed")
        body = encode(notification_message(notification.method, notification.to_json().get("params")))
        self.transport.notify(notification.method, body, protocol_version=self.protocol_version,
                              deadline=self._deadline(_checked_options(options)))

    def cancel(self, request_id: RequestId, reason: str = "cancelled by the client") -> bool:
        """Cancel an in-flight request of this client; False when it is not in flight.

        Over stdio the transport sends ``notifications/cancelled`` with this id; over HTTP it
        closes the request's response stream, which is the cancellation signal there.
        """
        with self._lock:
            token = self._in_flight.get(check_request_id(request_id))
        if token is None:
            return False
        token.cancel(reason)
        return True

    # -- discovery and tools ----------------------------------------------------------------

    def discover(self, options: RequestOptions | None = None) -> DiscoverResult:
        """What the server reports about itself; under a 2025 revision, what ``initialize`` said."""
        self._ensure_agreed(_checked_options(options))
        if self.legacy:
            return legacy_client.legacy_discover(self)
        result = DiscoverResult.from_json(self._typed("server/discover", None, options))
        self.server_capabilities = result.capabilities
        return result

    # -- methods of the 2025 revisions (FeatureNotInRevision under 2026-07-28) ----------------

    def ping(self, options: RequestOptions | None = None) -> None:
        """``ping``: raises when the server does not answer in time."""
        self._exchange("ping", None, options)

    def set_logging_level(self, level: LogLevel, options: RequestOptions | None = None) -> None:
        """``logging/setLevel`` (2025 revisions; under 2026-07-28 pass ``RequestMetadata(log_level=...)``)."""
        if not isinstance(level, LogLevel):
            raise InvalidMcpRequest("set_logging_level needs a LogLevel")
        self._exchange("logging/setLevel", {"level": level.value}, options)

    def subscribe_resource(self, uri: str, options: RequestOptions | None = None) -> None:
        """``resources/subscribe`` (2025 revisions): updates arrive as ``notifications/resources/updated``."""
        self._exchange("resources/subscribe", {"uri": _uri(uri)}, options)

    def unsubscribe_resource(self, uri: str, options: RequestOptions | None = None) -> None:
        self._exchange("resources/unsubscribe", {"uri": _uri(uri)}, options)

    def list_tools(self, cursor: str | None = None, options: RequestOptions | None = None) -> Page[ToolInfo]:
        """One page of tools.  Over HTTP, tools with invalid ``x-mcp-header`` annotations are rejected."""
        result = self._typed("tools/list", _cursor(cursor), options)
        page = parse_page(result, "tools", lambda v, w: v, "tools/list result")
        tools, rejected = [], []
        for index, raw in enumerate(page.items):
            tool = ToolInfo.from_json(raw, f"tools/list tools[{index}]")
            reason = invalid_header_annotation(tool.input_schema) if self.transport.mirrors_headers else None
            if reason is not None:
                _log.warning("MCP tool %r rejected: %s", tool.name, reason)
                rejected.append((tool.name, reason))
                continue
            with self._lock:
                self._header_params[tool.name] = header_parameters(tool.input_schema)
            tools.append(tool)
        return Page(tuple(tools), page.next_cursor, page.ttl_ms, page.cache_scope, page.server_info,
                    tuple(rejected), result)

    def list_all_tools(self, options: RequestOptions | None = None) -> list[Page[ToolInfo]]:
        """Every page of tools, following cursors (at most ``max_pages``; a cursor cycle is refused)."""
        return self._all_pages(self.list_tools, options)

    def _all_pages(self, fetch: Callable[..., Page[Any]], options: RequestOptions | None) -> list[Page[Any]]:
        pages: list[Page[Any]] = []
        seen: set[str] = set()
        cursor: str | None = None
        while True:
            page = fetch(cursor, options)
            pages.append(page)
            cursor = page.next_cursor
            if cursor is None:
                return pages
            if cursor in seen:
                raise InvalidMcpMessage("the server repeated a pagination cursor")
            if len(pages) >= self.max_pages:
                raise InvalidMcpMessage(f"the listing did not end within {self.max_pages} pages")
            seen.add(cursor)

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                  tool: ToolInfo | None = None, options: RequestOptions | None = None) -> CallToolResult:
        """Call a tool.  ``tool`` (its listed definition) decides the mirrored parameter headers;
        without it the client uses the definition from its latest listing, if any."""
        if not isinstance(name, str) or not name:
            raise InvalidMcpRequest("tool name must be a non-empty string")
        if arguments is not None and not isinstance(arguments, Mapping):
            raise InvalidMcpRequest("tool arguments must be a JSON object")
        params: dict[str, Any] = {"name": name, "arguments": dict(arguments or {})}
        try:
            return CallToolResult.from_json(
                self._typed("tools/call", params, options, param_header_pairs=self._param_headers(name, tool, params)))
        except HeaderMismatch:
            if not self.transport.mirrors_headers:
                raise
            before = self._header_params.get(name)
            self.list_all_tools(options)  # the schema may have changed: re-list, then retry once
            if self._header_params.get(name) == before and tool is None:
                raise
            return CallToolResult.from_json(
                self._typed("tools/call", params, options, param_header_pairs=self._param_headers(name, None, params)))

    def _param_headers(self, name: str, tool: ToolInfo | None, params: dict[str, Any]) -> tuple[tuple[str, str], ...]:
        if not self.transport.mirrors_headers:
            return ()
        if tool is not None:
            reason = invalid_header_annotation(tool.input_schema)
            if reason is not None:
                raise InvalidMcpRequest(f"tool {name!r} cannot be called over HTTP: {reason}")
            parameters = header_parameters(tool.input_schema)
        else:
            with self._lock:
                parameters = self._header_params.get(name, {})
        return param_headers(parameters, params["arguments"])

    # -- resources, prompts, completion -----------------------------------------------------

    def list_resources(self, cursor: str | None = None, options: RequestOptions | None = None) -> Page[Resource]:
        return parse_page(self._typed("resources/list", _cursor(cursor), options), "resources",
                          Resource.from_json, "resources/list result")

    def list_resource_templates(self, cursor: str | None = None,
                                options: RequestOptions | None = None) -> Page[ResourceTemplate]:
        return parse_page(self._typed("resources/templates/list", _cursor(cursor), options), "resourceTemplates",
                          ResourceTemplate.from_json, "resources/templates/list result")

    def read_resource(self, uri: str, options: RequestOptions | None = None) -> ReadResourceResult:
        if not isinstance(uri, str) or not uri:
            raise InvalidMcpRequest("resource uri must be a non-empty string")
        return ReadResourceResult.from_json(self._typed("resources/read", {"uri": uri}, options))

    def list_prompts(self, cursor: str | None = None, options: RequestOptions | None = None) -> Page[Prompt]:
        return parse_page(self._typed("prompts/list", _cursor(cursor), options), "prompts",
                          Prompt.from_json, "prompts/list result")

    def get_prompt(self, request: PromptRequest, options: RequestOptions | None = None) -> GetPromptResult:
        if not isinstance(request, PromptRequest):
            raise InvalidMcpRequest("get_prompt needs a PromptRequest")
        return GetPromptResult.from_json(self._typed("prompts/get", request.to_params(), options))

    def get_prompt_json(self, params: Mapping[str, Any], options: RequestOptions | None = None) -> dict[str, Any]:
        """``prompts/get`` with raw params; the raw result (the open escape hatch)."""
        return self._exchange("prompts/get", params, options)

    def complete(self, request: CompletionRequest, options: RequestOptions | None = None) -> Completion:
        if not isinstance(request, CompletionRequest):
            raise InvalidMcpRequest("complete needs a CompletionRequest")
        return Completion.from_json(self._typed("completion/complete", request.to_params(), options))

    def complete_json(self, params: Mapping[str, Any], options: RequestOptions | None = None) -> dict[str, Any]:
        """``completion/complete`` with raw params; the raw result (the open escape hatch)."""
        return self._exchange("completion/complete", params, options)

    # -- subscriptions ----------------------------------------------------------------------

    def listen(self, notifications: SubscriptionFilter, on_event: EventSink,
               options: RequestOptions | None = None) -> ListenResult:
        """Open a ``subscriptions/listen`` stream and deliver its events until it ends.

        The first event must be the acknowledgement for this stream (it is delivered too);
        later events outside the acknowledged filter are dropped.  Returns when the server ends
        the stream gracefully; raises on interruption, cancellation, deadline or a sink error.
        """
        if not isinstance(notifications, SubscriptionFilter):
            raise InvalidMcpRequest("listen needs a SubscriptionFilter")
        if notifications.task_ids and TASKS_EXTENSION not in (self.capabilities.extensions or {}):
            raise TaskExtensionRequired(f"task status streams need the {TASKS_EXTENSION} extension: declare it with "
                                        f"ClientCapabilities(extensions={{{TASKS_EXTENSION!r}: {{}}}})")
        return self._listen(notifications.to_json(), on_event, options,
                            lambda ack: ack.narrowed_to(notifications), True)

    def listen_json(self, notifications: Mapping[str, Any], on_event: EventSink,
                    options: RequestOptions | None = None) -> ListenResult:
        """:meth:`listen` with a raw filter object (members this revision does not know pass through).

        Every event carrying this stream's subscription id after the acknowledgement is
        delivered; filtering is left to the server and the application.
        """
        if not isinstance(notifications, Mapping):
            raise InvalidMcpRequest("listen_json needs a filter object")
        return self._listen(dict(notifications), on_event, options, lambda ack: ack, False)

    def _listen(self, filter_json: dict[str, Any], on_event: EventSink, options: RequestOptions | None,
                honor: Callable[[SubscriptionFilter], SubscriptionFilter], typed: bool) -> ListenResult:
        options = _checked_options(options)
        if options.request_id is None:
            options = _with_id(options, next(self._ids))
        subscription_id = options.request_id
        assert subscription_id is not None
        state: dict[str, SubscriptionFilter] = {}

        def collect(note: JsonRpcNotification) -> None:
            notification = Notification.from_wire(note.method, note.params)
            if notification.subscription_id != subscription_id:
                return
            honored = state.get("honored")
            if honored is None:
                acknowledged = notification.acknowledged_filter
                if acknowledged is None:
                    raise InvalidMcpMessage(f"{note.method} arrived before the subscription acknowledgement")
                state["honored"] = honor(acknowledged)
                on_event(notification)
            elif not typed or honored.admits(notification):
                on_event(notification)

        result = self._typed("subscriptions/listen", {"notifications": filter_json}, options,
                             stream=True, on_raw=collect)
        return ListenResult(subscription_id, state.get("honored", SubscriptionFilter()), result)

def _uri(uri: object) -> str:
    if not isinstance(uri, str) or not uri:
        raise InvalidMcpRequest("resource uri must be a non-empty string")
    return uri


def _cursor(cursor: str | None) -> dict[str, Any] | None:
    if cursor is None:
        return None
    if not isinstance(cursor, str):
        raise InvalidMcpRequest("cursor must be a string")
    return {"cursor": cursor}


def _with_id(options: RequestOptions, request_id: RequestId) -> RequestOptions:
    return RequestOptions(options.control, options.timeout_ms, options.cancel, options.metadata,
                          options.on_notification, request_id)
