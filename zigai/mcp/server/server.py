"""mcp.Server: a transport-neutral MCP 2026-07-28 dispatcher with tools, resources and prompts.

Job
    Take one encoded JSON-RPC message (plus, over HTTP, its headers and TLS state), run the
    validation ladder, dispatch core or extension methods to registered handlers, and return
    the reply.  Tools may be zigai :class:`~zigai.tool.Tool` values (their schema, argument
    validation and encoding are reused) or native handlers returning :class:`CallToolResult`.
    Serving loops live in ``server.stdio`` (one message per line) and ``server.http``
    (WSGI / ``http.server``, with the deployment policy); clients of the 2025 revisions are
    served through a session of ``server.sessions`` that stands in for the envelope.

The ladder (first failure wins)
    malformed JSON or over the MCP message limits -> -32700; not one JSON-RPC request ->
    -32600; ``params._meta`` without protocol version and client capabilities -> -32602;
    (HTTP) routing headers missing, duplicated or disagreeing with the body, or
    ``Mcp-Param-*`` headers disagreeing with the called tool's arguments -> -32020; protocol
    version not served -> -32022 with ``{"supported", "requested"}``; unknown method -> -32601;
    a client capability the method or tool requires is not declared -> -32021 with
    ``{"requiredCapabilities"}``; then the handler.

Invariants
    * Every result carries ``resultType`` and the server identity in
      ``_meta.io.modelcontextprotocol/serverInfo``; cacheable results carry ``cacheScope`` and
      ``ttlMs``.  Capabilities are declared per request and never remembered.
    * Tool failures are results (``isError: true``) so a model can react; unknown tools,
      resources and prompts, and bad params, are JSON-RPC errors.  Unexpected handler
      exceptions become -32603 without their text (logged server-side).
    * tools/call, prompts/get and resources/read handlers may ask for input (:meth:`ServerRequest.ask`);
      the ``requestState`` is sealed with ``state_key`` and checked before the retry runs.
    * A cancelled request gets no response (:data:`NO_REPLY`).  Registration is validated
      (unique names, valid schemas, valid ``x-mcp-header`` annotations) and raises
      :class:`InvalidServerDefinition`.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import queue
import re
import secrets
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from zigai.control import CancellationToken, RunControl
from zigai.json import Limits, defaults
from zigai.mcp.errors import (
    HeaderMismatch,
    InternalError,
    InvalidMcpMessage,
    InvalidMcpRequest,
    InvalidParams,
    InvalidRequest,
    InvalidServerDefinition,
    McpErrorResponse,
    MethodNotFound,
    MissingRequiredClientCapability,
    ParseError,
    UnsupportedProtocolVersion,
)
from zigai.mcp.server import sessions
from zigai.mcp.server.input import (
    DEFAULT_STATE_MAX_AGE_S,
    InputStillNeeded,
    RoundInput,
    open_round,
    seal_round,
)
from zigai.mcp.server.outbound import Send
from zigai.mcp.server.request import ServerRequest, _current
from zigai.mcp.server.values import (
    block_of,
    decode_cursor,
    encode_cursor,
    error_result,
    resource_contents,
    template_pattern,
    tool_value,
)
from zigai.mcp.wire.headers import (
    annotated_argument_problem,
    check_param_headers,
    decode_header_value,
    invalid_header_annotation,
)
from zigai.mcp.wire.input import MRTR_METHODS, InputRequired
from zigai.mcp.wire.jsonrpc import (
    HEADER_METHOD,
    HEADER_NAME,
    HEADER_PROTOCOL_VERSION,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
    NAME_BEARING_METHODS,
    SUPPORTED_VERSIONS,
    JsonRpcNotification,
    JsonRpcRequest,
    RequestId,
    classify,
    error_message,
    parse_json,
    result_message,
)
from zigai.mcp.wire.primitives import (
    ClientCapabilities,
    CompletionReference,
    Implementation,
    LogLevel,
    Notification,
    PromptReference,
    ResourceTemplateReference,
    ServerCapabilities,
    SubscriptionFilter,
)
from zigai.mcp.wire.results import (
    CallToolResult,
    Completion,
    GetPromptResult,
    PromptArgument,
    PromptMessage,
    TextBlock,
    ToolInfo,
)
from zigai.mcp.wire.tasks import TASK_STATE_TYPES, TASKS_EXTENSION, TaskState
from zigai.messages import TextContent, UserPromptPart
from zigai.tool import InvalidToolArguments, ModelRetry, Tool, ToolRunContext, ToolTimedOut

__all__ = ["Server", "NO_REPLY", "HTTP_STATUS"]

_log = logging.getLogger("zigai.mcp.server")

NO_REPLY: dict[str, Any] = {}  # identity sentinel: a cancelled request is not answered
HTTP_STATUS: Mapping[int, int] = {-32700: 400, -32600: 400, -32602: 400, -32020: 400, -32021: 400,
                                  -32022: 400, -32601: 404}
_CACHEABLE = frozenset({"server/discover", "tools/list", "resources/list", "resources/templates/list",
                        "prompts/list", "resources/read"})
_MAX_COMPLETIONS = 100
_TASK_STREAMS = ClientCapabilities(extensions={TASKS_EXTENSION: {}})
@dataclass(frozen=True, slots=True)
class _ToolEntry:
    info: ToolInfo
    tool: Tool | None
    handler: Callable[[dict[str, Any], ServerRequest], Any] | None
    requires: ClientCapabilities | None


@dataclass(frozen=True, slots=True)
class _ResourceEntry:
    uri: str
    name: str
    read: Callable[[str, ServerRequest], Any]
    description: str | None
    mime_type: str | None


@dataclass(frozen=True, slots=True)
class _TemplateEntry:
    uri_template: str
    pattern: re.Pattern[str]
    name: str
    read: Callable[[str, dict[str, str], ServerRequest], Any]
    description: str | None
    mime_type: str | None


@dataclass(frozen=True, slots=True)
class _PromptEntry:
    name: str
    render: Callable[[dict[str, str], ServerRequest], Any]
    description: str | None
    arguments: tuple[PromptArgument, ...]


@dataclass(frozen=True, slots=True)
class _MethodEntry:
    handler: Callable[[dict[str, Any], ServerRequest], Mapping[str, Any]]
    requires: ClientCapabilities | None


class Server:
    """An MCP server (see module docstring).  Register handlers, then serve with
    :func:`~zigai.mcp.serve_stdio`, :func:`~zigai.mcp.serve_http` or :meth:`wsgi_app`."""

    def __init__(
        self,
        name: str,
        version: str,
        *,
        title: str | None = None,
        instructions: str | None = None,
        page_size: int = 50,
        deps: Any = None,
        extensions: Mapping[str, Mapping[str, Any]] | None = None,
        limits: Limits = defaults.mcp_message,
        max_subscriptions: int = 64,
        request_timeout_ms: int | None = None,
        state_key: bytes | None = None,
        request_state_max_age_s: float = DEFAULT_STATE_MAX_AGE_S,
        max_sessions: int = sessions.DEFAULT_MAX_SESSIONS,
        session_idle_s: float = sessions.DEFAULT_SESSION_IDLE_S,
    ) -> None:
        self.info = Implementation(name, version, title)
        self.instructions = instructions
        if isinstance(page_size, bool) or not isinstance(page_size, int) or page_size < 1:
            raise InvalidServerDefinition("page_size must be an int >= 1")
        self.page_size = page_size
        self.deps = deps
        self.limits = limits
        self.max_subscriptions = max_subscriptions
        self.request_timeout_ms = request_timeout_ms
        if state_key is not None and (not isinstance(state_key, bytes) or len(state_key) < 16):
            raise InvalidServerDefinition("state_key must be at least 16 bytes (share it across replicas)")
        self._state_key = state_key if state_key is not None else secrets.token_bytes(32)
        self.request_state_max_age_s = request_state_max_age_s
        self.sessions = sessions.SessionTable(max_sessions, session_idle_s)  # 2025-revision clients
        try:
            self._extensions = ServerCapabilities(extensions=extensions).extensions
        except InvalidMcpRequest as exc:
            raise InvalidServerDefinition(str(exc)) from None
        self._lock = threading.Lock()
        self._tools: dict[str, _ToolEntry] = {}
        self._resources: dict[str, _ResourceEntry] = {}
        self._templates: list[_TemplateEntry] = []
        self._prompts: dict[str, _PromptEntry] = {}
        self._methods: dict[str, _MethodEntry] = {}
        self._completion: Callable[..., Any] | None = None
        self._listeners: dict[int, tuple[queue.Queue[Any], RequestId]] = {}
        self._closing = threading.Event()

    # -- registration -----------------------------------------------------------------------

    def add_tool(self, tool: Tool | ToolInfo, handler: Callable[[dict[str, Any], ServerRequest], Any] | None = None,
                 *, requires: ClientCapabilities | None = None) -> None:
        """Register a zigai Tool, or a :class:`ToolInfo` definition with a native ``handler``.

        A native handler returns a :class:`CallToolResult`, a string, or any JSON value
        (sent as text plus ``structuredContent``).  ``requires`` names client capabilities a
        call needs (missing -> -32021).
        """
        if isinstance(tool, Tool):
            if handler is not None:
                raise InvalidServerDefinition("a zigai Tool carries its own function; pass no handler")
            returns = tool.return_json_schema
            raw: dict[str, Any] = {"name": tool.name, "inputSchema": tool.parameters_json_schema}
            if tool.description:
                raw["description"] = tool.description
            if returns is not None and returns.get("type") == "object":
                raw["outputSchema"] = returns
            info = ToolInfo.from_json(raw)
        elif isinstance(tool, ToolInfo):
            if handler is None or not callable(handler):
                raise InvalidServerDefinition(f"tool {tool.name!r}: a ToolInfo needs a callable handler")
            info = ToolInfo.from_json(tool.to_json())
        else:
            raise InvalidServerDefinition("add_tool needs a zigai Tool or a ToolInfo")
        reason = invalid_header_annotation(info.input_schema)
        if reason is not None:
            raise InvalidServerDefinition(f"tool {info.name!r}: {reason}")
        with self._lock:
            if info.name in self._tools:
                raise InvalidServerDefinition(f"a tool named {info.name!r} is already registered")
            self._tools[info.name] = _ToolEntry(info, tool if isinstance(tool, Tool) else None, handler, requires)

    def add_resource(self, uri: str, read: Callable[[str, ServerRequest], Any], *, name: str | None = None,
                     description: str | None = None, mime_type: str | None = None) -> None:
        """A fixed resource; ``read(uri, request)`` returns text, bytes or ResourceContents."""
        if not isinstance(uri, str) or not uri or not callable(read):
            raise InvalidServerDefinition("add_resource needs a non-empty uri and a callable")
        with self._lock:
            if uri in self._resources:
                raise InvalidServerDefinition(f"resource {uri!r} is already registered")
            self._resources[uri] = _ResourceEntry(uri, name or uri, read, description, mime_type)

    def add_resource_template(self, uri_template: str, read: Callable[[str, dict[str, str], ServerRequest], Any],
                              *, name: str, description: str | None = None, mime_type: str | None = None) -> None:
        """A family of resources; ``{var}`` segments match one path segment each."""
        if not isinstance(uri_template, str) or "{" not in uri_template or not callable(read):
            raise InvalidServerDefinition("add_resource_template needs a '{var}' template and a callable")
        entry = _TemplateEntry(uri_template, template_pattern(uri_template), name, read, description, mime_type)
        with self._lock:
            self._templates.append(entry)

    def add_prompt(self, name: str, render: Callable[[dict[str, str], ServerRequest], Any], *,
                   description: str | None = None, arguments: Sequence[PromptArgument] = ()) -> None:
        """``render(arguments, request)`` returns text, PromptMessages or a GetPromptResult."""
        if not isinstance(name, str) or not name or not callable(render):
            raise InvalidServerDefinition("add_prompt needs a name and a callable")
        with self._lock:
            if name in self._prompts:
                raise InvalidServerDefinition(f"a prompt named {name!r} is already registered")
            self._prompts[name] = _PromptEntry(name, render, description, tuple(arguments))

    def set_completion(self, complete: Callable[[CompletionReference, str, str, dict[str, str], ServerRequest], Any]) -> None:
        """``complete(ref, argument_name, value, context_arguments, request)`` -> strings or Completion."""
        if not callable(complete):
            raise InvalidServerDefinition("set_completion needs a callable")
        self._completion = complete

    def add_method(self, method: str, handler: Callable[[dict[str, Any], ServerRequest], Mapping[str, Any]], *,
                   requires: ClientCapabilities | None = None) -> None:
        """An extension method: ``handler(params, request)`` returns the result object."""
        if not isinstance(method, str) or "/" not in method or not callable(handler):
            raise InvalidServerDefinition("add_method needs a 'group/name' method and a callable")
        if method in _CORE:
            raise InvalidServerDefinition(f"{method!r} is a core method")
        with self._lock:
            self._methods[method] = _MethodEntry(handler, requires)

    def declare_extension(self, name: str, settings: Mapping[str, Any] | None = None) -> None:
        """Advertise an extension in ``server/discover`` (its methods come from :meth:`add_method`)."""
        try:
            declared = ServerCapabilities(extensions={**(self._extensions or {}), name: dict(settings or {})})
        except InvalidMcpRequest as exc:
            raise InvalidServerDefinition(str(exc)) from None
        self._extensions = declared.extensions

    # -- change notifications ----------------------------------------------------------------

    def notify_tools_changed(self) -> None:
        self._publish("notifications/tools/list_changed", {})

    def notify_prompts_changed(self) -> None:
        self._publish("notifications/prompts/list_changed", {})

    def notify_resources_changed(self) -> None:
        self._publish("notifications/resources/list_changed", {})

    def notify_resource_updated(self, uri: str) -> None:
        self._publish("notifications/resources/updated", {"uri": uri})

    def notify_task(self, state: TaskState) -> None:
        """Send a task's whole state to the listen streams subscribed to its id (Tasks extension)."""
        self._publish("notifications/tasks", state.to_json())

    def _publish(self, method: str, params: dict[str, Any]) -> None:
        if method != "notifications/tasks":  # 2025 sessions know no tasks
            self.sessions.publish(method, params)
        with self._lock:
            listeners = list(self._listeners.values())
        for events, _subscription in listeners:
            try:
                events.put_nowait((method, params))
            except queue.Full:
                _log.warning("a listen stream is not being read; dropping %s for it", method)

    def close_listeners(self) -> None:
        """End every open listen stream gracefully (each sends its final result), and every 2025
        session's GET stream."""
        self._closing.set()
        self.sessions.streams_closing.set()

    # -- dispatch ---------------------------------------------------------------------------

    def handle(self, message: bytes | str, *, headers: Mapping[str, tuple[str, ...]] | None = None,
               tls: bool | None = None, emit: Callable[[Notification], None] | None = None,
               token: CancellationToken | None = None) -> dict[str, Any] | None:
        """Serve one encoded message; the reply message, None for notifications, or NO_REPLY.

        ``headers`` maps lowercased HTTP header names to all their values (None off HTTP);
        ``emit`` sends request-related notifications; ``token`` cancels the request.
        """
        try:
            value = parse_json(message, self.limits)
        except InvalidMcpMessage as exc:
            return error_message(None, ParseError(f"Parse error: {exc}").to_json())
        return self.handle_value(value, headers=headers, tls=tls, emit=emit, token=token)

    def handle_value(self, value: Any, *, headers: Mapping[str, tuple[str, ...]] | None = None,
                     tls: bool | None = None, emit: Callable[[Notification], None] | None = None,
                     token: CancellationToken | None = None,
                     session: sessions.LegacySession | None = None,
                     send: Send | None = None) -> dict[str, Any] | None:
        """:meth:`handle` for a message already parsed under the MCP limits."""
        request_id = value.get("id") if isinstance(value, dict) else None
        try:
            parsed = classify(value)
        except InvalidMcpMessage as exc:
            valid_id = request_id if isinstance(request_id, (int, str)) and not isinstance(request_id, bool) else None
            return error_message(valid_id, InvalidRequest(f"Invalid request: {exc}").to_json())
        if isinstance(parsed, JsonRpcNotification):
            return None
        if not isinstance(parsed, JsonRpcRequest):
            return error_message(None, InvalidRequest("clients do not send responses in MCP 2026-07-28").to_json())
        try:
            result = self.dispatch(parsed, headers=headers, tls=tls, emit=emit, token=token, session=session, send=send)
        except McpErrorResponse as exc:
            if token is not None and token.cancelled:
                return NO_REPLY
            return error_message(parsed.id, exc.to_json())
        if result is NO_REPLY:
            return NO_REPLY
        return result_message(parsed.id, result)

    def dispatch(self, request: JsonRpcRequest, *, headers: Mapping[str, tuple[str, ...]] | None = None,
                 tls: bool | None = None, emit: Callable[[Notification], None] | None = None,
                 token: CancellationToken | None = None, session: sessions.LegacySession | None = None,
                 send: Send | None = None) -> dict[str, Any]:
        """Run the ladder and the handler for one parsed request; raise McpErrorResponse on failure.
        A request of a 2025 ``session`` (no 2026 envelope) is served by ``server.sessions``; ``send``
        carries that session's requests to the client."""
        params = dict(request.params or {})
        meta = params.pop("_meta", None)
        if session is not None and not (isinstance(meta, dict) and META_PROTOCOL_VERSION in meta):
            return sessions.serve_session(self, session, request, params, meta, headers=headers, tls=tls, emit=emit,
                                          token=token, send=send)
        if not isinstance(meta, dict) or META_PROTOCOL_VERSION not in meta or META_CLIENT_CAPABILITIES not in meta:
            raise InvalidParams(f"params._meta must carry {META_PROTOCOL_VERSION!r} and {META_CLIENT_CAPABILITIES!r}")
        version = meta[META_PROTOCOL_VERSION]
        if headers is not None:
            self._check_headers(request, params, version, headers)
        if not isinstance(version, str):
            raise InvalidParams("the protocol version must be a string")
        if version not in SUPPORTED_VERSIONS:
            raise UnsupportedProtocolVersion("Unsupported protocol version",
                                             data={"supported": list(SUPPORTED_VERSIONS), "requested": version})
        handler = self._handler_for(request.method)
        try:
            capabilities = ClientCapabilities.from_json(meta[META_CLIENT_CAPABILITIES])
        except InvalidMcpMessage as exc:
            raise InvalidParams(f"invalid client capabilities: {exc}") from None
        level = meta.get(META_LOG_LEVEL)
        try:
            log_level = LogLevel(level) if level is not None else None
        except ValueError:
            raise InvalidParams(f"unknown log level {level!r}") from None
        progress = meta.get("progressToken")
        round_input = open_round(request.method, params, self._state_key, self.request_state_max_age_s)
        context = ServerRequest(
            id=request.id, method=request.method, params=params, protocol_version=version,
            client_capabilities=capabilities, client_info=Implementation.from_json(meta.get(META_CLIENT_INFO)),
            log_level=log_level,
            progress_token=progress if isinstance(progress, (int, str)) and not isinstance(progress, bool) else None,
            control=RunControl.start(self.request_timeout_ms, token=token), headers=headers, tls=tls, emit_fn=emit,
            input=round_input,
        )
        return self._serve(handler, context, round_input)

    def _serve(self, handler: Callable[[ServerRequest], Mapping[str, Any]], context: ServerRequest,
               round_input: RoundInput, legacy: bool = False) -> dict[str, Any]:
        """Run the handler in its context; map its outcome to a result or an McpErrorResponse."""
        request, params, capabilities = context, context.params, context.client_capabilities
        reset = _current.set(context)
        try:
            raw = handler(context)
        except McpErrorResponse:
            raise
        except InputStillNeeded as still:
            if legacy:
                raise sessions.needs_modern_input(request.method, request.protocol_version) from None
            if request.method not in MRTR_METHODS:
                _log.error("MCP handler for %s asked for input, which only %s may do", request.method,
                           sorted(MRTR_METHODS))
                raise InternalError(f"the server failed while handling {request.method}") from None
            raw = seal_round(request.method, params, still.needed, round_input, capabilities, self._state_key)
        except Exception:  # after the client cancelled, a failure is expected: no ERROR traceback then
            (_log.debug if context.control.cancelled else _log.exception)("MCP handler for %s failed", request.method)
            raise InternalError(f"the server failed while handling {request.method}") from None
        finally:
            _current.reset(reset)
        if raw is NO_REPLY or context.control.cancelled:
            return NO_REPLY
        if not isinstance(raw, Mapping):
            _log.error("MCP handler for %s returned %s, not a result object", request.method, type(raw).__name__)
            raise InternalError(f"the server failed while handling {request.method}")
        return sessions.legacy_shape(request.method, dict(raw)) if legacy else self._stamp(request.method, dict(raw))

    def _check_headers(self, request: JsonRpcRequest, params: dict[str, Any], version: object,
                       headers: Mapping[str, tuple[str, ...]]) -> None:
        for name in (HEADER_PROTOCOL_VERSION, HEADER_METHOD, HEADER_NAME):
            if len(headers.get(name.lower(), ())) > 1:
                raise HeaderMismatch(f"{name} header appears more than once")
        if headers.get(HEADER_PROTOCOL_VERSION.lower(), (None,))[0] != version:
            raise HeaderMismatch(f"{HEADER_PROTOCOL_VERSION} header does not match the request's protocol version")
        if headers.get(HEADER_METHOD.lower(), (None,))[0] != request.method:
            raise HeaderMismatch(f"{HEADER_METHOD} header does not match the request's method")
        name_key = NAME_BEARING_METHODS.get(request.method)
        if name_key is not None and params.get(name_key) is not None:
            received = headers.get(HEADER_NAME.lower(), ())
            if not received or decode_header_value(received[0]) != params[name_key]:
                raise HeaderMismatch(f"{HEADER_NAME} header does not match the request's {name_key!r}")
        if request.method == "tools/call":
            entry = self._tools.get(params.get("name"))  # type: ignore[arg-type]
            arguments = params.get("arguments")
            if entry is not None and isinstance(arguments, dict):
                check_param_headers(entry.info.input_schema, arguments, headers)

    def _handler_for(self, method: str) -> Callable[[ServerRequest], Mapping[str, Any]]:
        core = _CORE.get(method)
        if core is not None:
            return lambda request: core(self, request)
        entry = self._methods.get(method)
        if entry is None:
            raise MethodNotFound(f"Method not found: {method}", data={"method": method})

        def extension(request: ServerRequest) -> Mapping[str, Any]:
            self._require(entry.requires, request)
            return entry.handler(request.params, request)

        return extension

    @staticmethod
    def _require(required: ClientCapabilities | None, request: ServerRequest) -> None:
        if required is not None and not request.client_capabilities.covers(required):
            raise MissingRequiredClientCapability(
                f"{request.method} needs client capabilities the request did not declare",
                data={"requiredCapabilities": required.to_json()})

    def _stamp(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        result.setdefault("resultType", "complete")
        if method in _CACHEABLE:
            result.setdefault("cacheScope", "private")
            result.setdefault("ttlMs", 0)
        meta = result.get("_meta")
        meta = dict(meta) if isinstance(meta, dict) else {}
        meta.setdefault(META_SERVER_INFO, self.info.to_json())
        result["_meta"] = meta
        return result

    # -- core handlers ----------------------------------------------------------------------

    def capabilities(self) -> ServerCapabilities:
        return ServerCapabilities(
            tools={"listChanged": True} if self._tools else None,
            resources={"listChanged": True, "subscribe": True} if self._resources or self._templates else None,
            prompts={"listChanged": True} if self._prompts else None,
            completions={} if self._completion is not None else None,
            logging={},
            extensions=self._extensions,
        )

    def _discover(self, request: ServerRequest) -> dict[str, Any]:
        result: dict[str, Any] = {"supportedVersions": list(SUPPORTED_VERSIONS),
                                  "capabilities": self.capabilities().to_json()}
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return result

    def _page(self, request: ServerRequest, items: list[Any], key: str) -> dict[str, Any]:
        cursor = request.params.get("cursor")
        start = 0
        if cursor is not None:
            start = decode_cursor(cursor, len(items))
        end = start + self.page_size
        result: dict[str, Any] = {key: [item.to_json() for item in items[start:end]]}
        if end < len(items):
            result["nextCursor"] = encode_cursor(end)
        return result

    def _list_tools(self, request: ServerRequest) -> dict[str, Any]:
        with self._lock:
            tools = [entry.info for entry in self._tools.values()]
        return self._page(request, tools, "tools")

    def _call_tool(self, request: ServerRequest) -> dict[str, Any]:
        name = request.params.get("name")
        arguments = request.params.get("arguments", {})
        if not isinstance(name, str):
            raise InvalidParams("tools/call needs a string 'name'")
        if not isinstance(arguments, dict):
            raise InvalidParams("tools/call 'arguments' must be an object")
        entry = self._tools.get(name)
        if entry is None:
            raise InvalidParams(f"Unknown tool: {name}")
        self._require(entry.requires, request)
        if entry.tool is not None:
            return self._run_zigai_tool(entry.tool, arguments, request).to_json()
        try:
            value = entry.handler(arguments, request)  # type: ignore[misc]
        except (McpErrorResponse, InputStillNeeded):
            raise
        except ModelRetry as exc:
            return error_result(str(exc)).to_json()
        except Exception:  # after the client cancelled, a failure is expected: no ERROR traceback then
            (_log.debug if request.control.cancelled else _log.exception)("MCP tool %r failed", name)
            return error_result(f"tool {name!r} failed").to_json()
        if isinstance(value, InputRequired):  # multi round-trip: the client answers and retries
            raise InputStillNeeded(value)
        if isinstance(value, TASK_STATE_TYPES):  # the Tasks extension: a task handle instead of a result
            return {**value.to_json(), "resultType": "task"}
        return tool_value(value).to_json()

    def _run_zigai_tool(self, tool: Tool, arguments: dict[str, Any], request: ServerRequest) -> CallToolResult:
        ctx = ToolRunContext(deps=self.deps, control=request.control, tool_name=tool.name,
                             tool_call_id=str(request.id))
        try:
            problem = annotated_argument_problem(tool.parameters_json_schema, arguments)
            if problem is not None:
                raise InvalidToolArguments(f"tool {tool.name!r}: invalid arguments: {problem}", tool_name=tool.name)
            output = tool.execute(tool.validate_arguments(json.dumps(arguments)), ctx)
        except (InvalidToolArguments, ModelRetry, ToolTimedOut) as exc:
            return error_result(str(exc))
        except (McpErrorResponse, InputStillNeeded):
            raise
        except Exception:
            (_log.debug if request.control.cancelled else _log.exception)("MCP tool %r failed", tool.name)
            return error_result(f"tool {tool.name!r} failed")
        blocks = list(tool_value(output.content).content)
        structured = None if isinstance(output.content, str) else output.content
        for message in output.follow_up_messages:
            for part in message.parts:
                if not isinstance(part, UserPromptPart):
                    continue  # follow-ups hold only user prompts (checked by ToolOutput)
                content = part.content if isinstance(part.content, tuple) else (TextContent(part.content),)
                for item in content:
                    block = block_of(item)
                    if block is not None:
                        blocks.append(block)
        return CallToolResult(tuple(blocks), structured)

    def _list_resources(self, request: ServerRequest) -> dict[str, Any]:
        from zigai.mcp.wire.results import Resource

        with self._lock:
            items = [Resource(e.uri, e.name, e.description, e.mime_type) for e in self._resources.values()]
        return self._page(request, items, "resources")

    def _list_templates(self, request: ServerRequest) -> dict[str, Any]:
        from zigai.mcp.wire.results import ResourceTemplate

        with self._lock:
            items = [ResourceTemplate(t.uri_template, t.name, t.description, t.mime_type) for t in self._templates]
        return self._page(request, items, "resourceTemplates")

    def _read_resource(self, request: ServerRequest) -> dict[str, Any]:
        uri = request.params.get("uri")
        if not isinstance(uri, str):
            raise InvalidParams("resources/read needs a string 'uri'")
        entry = self._resources.get(uri)
        if entry is not None:
            value, mime = entry.read(uri, request), entry.mime_type
        else:
            for template in self._templates:
                match = template.pattern.match(uri)
                if match is not None:
                    value, mime = template.read(uri, match.groupdict(), request), template.mime_type
                    break
            else:
                raise InvalidParams(f"Resource not found: {uri}", data={"uri": uri})
        if isinstance(value, InputRequired):
            raise InputStillNeeded(value)
        return {"contents": [c.to_json() for c in resource_contents(uri, value, mime)]}

    def _list_prompts(self, request: ServerRequest) -> dict[str, Any]:
        from zigai.mcp.wire.results import Prompt

        with self._lock:
            items = [Prompt(p.name, p.description, p.arguments) for p in self._prompts.values()]
        return self._page(request, items, "prompts")

    def _get_prompt(self, request: ServerRequest) -> dict[str, Any]:
        name = request.params.get("name")
        arguments = request.params.get("arguments") or {}
        if not isinstance(name, str) or name not in self._prompts:
            raise InvalidParams(f"Unknown prompt: {name}")
        if not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
            raise InvalidParams("prompt arguments must map names to strings")
        entry = self._prompts[name]
        missing = [a.name for a in entry.arguments if a.required and a.name not in arguments]
        if missing:
            raise InvalidParams(f"prompt {name!r} needs arguments {missing}")
        value = entry.render(dict(arguments), request)
        if isinstance(value, InputRequired):
            raise InputStillNeeded(value)
        if isinstance(value, GetPromptResult):
            result: dict[str, Any] = {"messages": [m.to_json() for m in value.messages]}
            description = value.description
        else:
            messages = [PromptMessage("user", TextBlock(value))] if isinstance(value, str) else list(value)
            result = {"messages": [m.to_json() for m in messages]}
            description = entry.description
        if description is not None:
            result["description"] = description
        return result

    def _complete(self, request: ServerRequest) -> dict[str, Any]:
        if self._completion is None:
            raise MethodNotFound("Method not found: completion/complete", data={"method": "completion/complete"})
        ref, argument = request.params.get("ref"), request.params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict):
            raise InvalidParams("completion/complete needs 'ref' and 'argument' objects")
        reference: CompletionReference
        if ref.get("type") == "ref/prompt" and isinstance(ref.get("name"), str):
            reference = PromptReference(ref["name"])
        elif ref.get("type") == "ref/resource" and isinstance(ref.get("uri"), str):
            reference = ResourceTemplateReference(ref["uri"])
        else:
            raise InvalidParams("completion 'ref' must be a ref/prompt or ref/resource reference")
        name, value = argument.get("name"), argument.get("value", "")
        if not isinstance(name, str) or not isinstance(value, str):
            raise InvalidParams("completion 'argument' needs string 'name' and 'value'")
        context = request.params.get("context") or {}
        context_args = context.get("arguments") if isinstance(context, dict) else None
        answer = self._completion(reference, name, value, dict(context_args or {}), request)
        if not isinstance(answer, Completion):
            values = tuple(answer)
            answer = Completion(values[:_MAX_COMPLETIONS], len(values), len(values) > _MAX_COMPLETIONS)
        return answer.to_json()

    def _listen(self, request: ServerRequest) -> dict[str, Any]:
        try:
            wanted = SubscriptionFilter.from_json(request.params.get("notifications"))
        except InvalidMcpMessage as exc:
            raise InvalidParams(str(exc)) from None
        if wanted.task_ids:
            self._require(_TASK_STREAMS, request)
            if TASKS_EXTENSION not in (self._extensions or {}):  # nothing here reports tasks: not honored
                wanted = dataclasses.replace(wanted, task_ids=())
        events: queue.Queue[Any] = queue.Queue(maxsize=1024)
        key = id(events)
        with self._lock:
            if len(self._listeners) >= self.max_subscriptions:
                raise InternalError("Subscription limit reached")
            self._listeners[key] = (events, request.id)
        try:
            request.emit(Notification.acknowledged(wanted, request.id))
            while not request.control.cancelled and not self._closing.is_set():
                if request.control.expired():
                    break
                try:
                    method, payload = events.get(timeout=0.05)
                except queue.Empty:
                    continue
                notification = Notification(method, {**payload, "_meta": {META_SUBSCRIPTION_ID: request.id}})
                if wanted.admits(notification):
                    request.emit(notification)
        finally:
            with self._lock:
                self._listeners.pop(key, None)
        if request.control.cancelled:
            return NO_REPLY
        return {"_meta": {META_SUBSCRIPTION_ID: request.id}}


_CORE: dict[str, Callable[[Server, ServerRequest], Mapping[str, Any]]] = {
    "server/discover": Server._discover,
    "tools/list": Server._list_tools,
    "tools/call": Server._call_tool,
    "resources/list": Server._list_resources,
    "resources/templates/list": Server._list_templates,
    "resources/read": Server._read_resource,
    "prompts/list": Server._list_prompts,
    "prompts/get": Server._get_prompt,
    "completion/complete": Server._complete,
    "subscriptions/listen": Server._listen,
}
