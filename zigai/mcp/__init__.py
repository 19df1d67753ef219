"""zigai.mcp: Model Context Protocol client, toolsets, transports and server (layer 6).

Job
    Let agents use MCP servers as ordinary toolsets, and let applications serve zigai tools,
    resources and prompts to any MCP client.  The main protocol is the stateless 2026-07-28
    revision: no ``initialize`` handshake and no sessions; every request carries its own
    ``_meta`` envelope (protocol version, client identity, capabilities).  The client also
    speaks the session-based 2025-11-25 and 2025-06-18 revisions, agreed on first use
    (``revisions``, ``legacy_client``).

Invariants
    * Importing this package imports no third-party module and starts no process or thread.
    * Every message read from a peer is bounded by the ``mcp_message`` JSON profile (4 MiB
      document, 1 MiB value, depth 64, 16,384 items); stdio lines and SSE events are bounded
      before JSON parsing; exactly-at-limit passes and one byte more raises a named error.
    * Streamable HTTP enforces its :class:`~zigai.security.UrlPolicy` itself, independently of
      the HTTP transport underneath; redirects are never followed.
    * Every failure raised here is an :class:`McpError` (see :mod:`zigai.mcp.errors`), except
      URL policy refusals (:class:`~zigai.security.UrlPolicyViolation`) and, inside a toolset
      call, the run's own deadline and cancellation errors.
    * A stdio child is always stopped and reaped; no thread outlives its transport's ``close``
      for longer than the shutdown bounds.

Submodules
    ``jsonrpc`` (constants, ids, bounded framing), ``primitives`` (capabilities, filters,
    notifications, prompt/completion requests), ``results`` (typed results and content blocks),
    ``headers`` (header value encoding, ``x-mcp-header``), ``sse`` (event-stream parser),
    ``transport`` (the transport contract), ``http`` (:class:`StreamableHttpTransport`),
    ``stdio`` (:class:`StdioTransport`), ``memory`` (:class:`InProcessTransport`), ``client``
    (:class:`Client`), ``revisions`` (the revisions, era detection, per-era methods),
    ``legacy_client`` (``initialize`` and answering a 2025 server's requests), ``connect`` (the
    default connector of agent specs' ``mcp_servers``), ``server_sessions`` (2025 clients of a
    :class:`Server`: ``initialize``, the bounded session table), ``input`` (multi round-trip :class:`InputHandler` and
    :class:`InputResponse` builders), ``tasks`` (the Tasks extension's tagged task states and
    request params), ``task_client`` (get / update / cancel, ``wait_task``, ``resume_tasks``), ``task_watch``
    (``watch_task`` over a task status stream),
    ``task_store`` (:class:`FileStore`, two-phase input records), ``server_tasks``
    (:class:`TaskServer`), ``listen`` (:func:`listen_with_recovery`), ``toolset``
    (:class:`McpToolset`), ``server`` (:class:`Server`), ``server_input`` (server-side multi round-trip
    input: ``ServerRequest.ask``, sealed ``requestState``), ``server_values`` (handler values as
    results, cursors), ``server_stdio`` (:func:`serve_stdio`), ``server_http`` (deployment
    policy, WSGI and ``http.server`` entries), ``auth`` (authorization discovery: Bearer
    challenges, RFC 9728 / RFC 8414 metadata, scopes, PKCE, RFC 9207), ``auth_tokens``
    (OAuth clients, token sets, the issuer-keyed credential store, token and registration
    requests), ``auth_flow`` (:class:`~zigai.mcp.auth.flow.OAuthProvider`, the HTTP
    transport's ``auth=``), ``auth_server`` (the server's Bearer policy and RFC 9728
    metadata), ``auth_testing`` (a loopback authorization server), ``errors``.
"""

from __future__ import annotations

from zigai.mcp.client.client import Client, EventSink, ListenResult, RequestOptions
from zigai.mcp.client.http import StreamableHttpTransport
from zigai.mcp.client.listen import listen_with_recovery
from zigai.mcp.client.stdio import StderrMode, StdioOptions, StdioTransport
from zigai.mcp.client.task_store import FileStore, MemoryStore, TaskRecord, TaskStore
from zigai.mcp.client.tasks import TaskPolling
from zigai.mcp.client.toolset import McpToolset, render_tool_result
from zigai.mcp.errors import (
    FeatureNotInRevision,
    HeaderMismatch,
    InternalError,
    InvalidInputResponse,
    InvalidMcpMessage,
    InvalidMcpRequest,
    InvalidParams,
    InvalidRequest,
    InvalidRequestState,
    InvalidServerDefinition,
    McpClientClosed,
    McpConnectionFailed,
    McpError,
    McpErrorResponse,
    McpHttpStatusError,
    McpInputRequired,
    McpInputRoundsExhausted,
    McpMessageTooLarge,
    McpRequestCancelled,
    McpRequestQueueFull,
    McpRequestTimedOut,
    McpServerExited,
    McpSessionExpired,
    McpStreamEnded,
    McpTransportError,
    MethodNotFound,
    MissingRequiredClientCapability,
    NoCommonProtocolVersion,
    NotificationBacklogFull,
    ParseError,
    SseEventTooLarge,
    StdioLineTooLarge,
    TaskExtensionRequired,
    TaskStoreError,
    TaskWaitExhausted,
    UnsupportedProtocolVersion,
)
from zigai.mcp.server.http import DeploymentPolicy, HttpServerHandle, serve_http, wsgi_app
from zigai.mcp.server.input import InputStillNeeded
from zigai.mcp.server.memory import InProcessTransport
from zigai.mcp.server.server import Server, ServerRequest, current_request
from zigai.mcp.server.stdio import serve_stdio
from zigai.mcp.server.tasks import TaskContext, TaskServer
from zigai.mcp.wire import primitives
from zigai.mcp.wire.input import InputHandler, InputKind, InputRequest, InputRequired, InputResponse
from zigai.mcp.wire.jsonrpc import PROTOCOL_VERSION, SUPPORTED_VERSIONS, RequestId
from zigai.mcp.wire.primitives import (
    ClientCapabilities,
    CompletionRequest,
    Implementation,
    LogLevel,
    Notification,
    PromptReference,
    PromptRequest,
    RequestMetadata,
    ResourceTemplateReference,
    ServerCapabilities,
    SubscriptionFilter,
)
from zigai.mcp.wire.results import (
    AudioBlock,
    BlobResourceContents,
    CallToolResult,
    Completion,
    ContentBlock,
    DiscoverResult,
    EmbeddedResourceBlock,
    GetPromptResult,
    ImageBlock,
    Page,
    Prompt,
    PromptArgument,
    PromptMessage,
    ReadResourceResult,
    Resource,
    ResourceLinkBlock,
    ResourceTemplate,
    TextBlock,
    TextResourceContents,
    ToolInfo,
    UnknownBlock,
)
from zigai.mcp.wire.revisions import CLIENT_VERSIONS, LEGACY_VERSIONS
from zigai.mcp.wire.tasks import (
    TASKS_EXTENSION,
    TaskCancelled,
    TaskCompleted,
    TaskFailed,
    TaskNeedsInput,
    TaskState,
    TaskWorking,
)
from zigai.mcp.wire.transport import McpTransport, OutgoingRequest

Error = McpError  # the spec's ``mcp.Error``

__all__ = [
    "PROTOCOL_VERSION", "SUPPORTED_VERSIONS", "LEGACY_VERSIONS", "CLIENT_VERSIONS", "RequestId", "Error", "primitives",
    # client side
    "Client", "RequestOptions", "ListenResult", "EventSink", "listen_with_recovery",
    "McpToolset", "render_tool_result", "McpTransport", "OutgoingRequest",
    "StreamableHttpTransport", "StdioTransport", "StdioOptions", "StderrMode", "InProcessTransport",
    # values
    "ClientCapabilities", "ServerCapabilities", "Implementation", "LogLevel", "Notification",
    "RequestMetadata", "SubscriptionFilter", "PromptRequest", "CompletionRequest",
    "PromptReference", "ResourceTemplateReference",
    "InputHandler", "InputKind", "InputRequest", "InputRequired", "InputResponse",
    # the Tasks extension
    "TASKS_EXTENSION", "TaskState", "TaskWorking", "TaskNeedsInput", "TaskCompleted", "TaskFailed",
    "TaskCancelled", "TaskPolling", "TaskStore", "TaskRecord", "FileStore", "MemoryStore",
    "TaskServer", "TaskContext",
    "ToolInfo", "Page", "CallToolResult", "ContentBlock", "TextBlock", "ImageBlock", "AudioBlock",
    "ResourceLinkBlock", "EmbeddedResourceBlock", "UnknownBlock", "TextResourceContents",
    "BlobResourceContents", "Resource", "ResourceTemplate", "ReadResourceResult", "Prompt",
    "PromptArgument", "PromptMessage", "GetPromptResult", "Completion", "DiscoverResult",
    # server side
    "Server", "ServerRequest", "InputStillNeeded", "current_request", "serve_stdio", "serve_http", "wsgi_app",
    "DeploymentPolicy", "HttpServerHandle",
    # errors
    "McpError", "McpErrorResponse", "ParseError", "InvalidRequest", "MethodNotFound", "InvalidParams",
    "InvalidRequestState",
    "InternalError", "HeaderMismatch", "MissingRequiredClientCapability", "UnsupportedProtocolVersion",
    "McpTransportError", "McpConnectionFailed", "McpHttpStatusError", "McpStreamEnded",
    "McpServerExited", "InvalidMcpMessage", "McpMessageTooLarge", "SseEventTooLarge",
    "StdioLineTooLarge", "NotificationBacklogFull", "InvalidMcpRequest", "McpRequestQueueFull",
    "McpRequestTimedOut", "McpRequestCancelled", "McpInputRequired", "McpClientClosed",
    "InvalidServerDefinition", "InvalidInputResponse", "McpInputRoundsExhausted",
    "TaskExtensionRequired", "TaskWaitExhausted", "TaskStoreError",
    "McpSessionExpired", "NoCommonProtocolVersion", "FeatureNotInRevision",
]
