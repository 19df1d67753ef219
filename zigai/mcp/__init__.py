"""zigai.mcp: Model Context Protocol client, toolsets, transports and server (layer 6).

Job
    Let agents use MCP servers as ordinary toolsets, and let applications serve zigai tools,
    resources and prompts to any MCP client.  The main protocol is the stateless 2026-07-28
    revision: no ``initialize`` handshake and no sessions; every request carries its own
    ``_meta`` envelope (protocol version, client identity, capabilities).  The client also
    speaks the session-based 2025-11-25 and 2025-06-18 revisions, agreed on first use
    (``wire.revisions``, ``client.legacy``).

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
    Four sub-packages over one error module, bottom first.  Each imports only what is listed
    before it (and its own modules); ``client`` and ``server`` never import each other, and
    nothing inside imports this ``__init__`` (tests/test_mcp_layout.py):

    ``errors``   every named MCP error (:class:`McpError` and its tree), shared by all.
    ``wire``     what both ends share: JSON-RPC framing, headers, SSE, revisions, the transport
                 contract, and the values that travel (capabilities, notifications, results,
                 input requests, task states).
    ``auth``     OAuth 2.1 for HTTP: discovery, tokens, the client's ``auth=`` provider, the
                 server's Bearer policy, a loopback authorization server.
    ``client``   :class:`Client`, its stdio and Streamable HTTP transports, the 2025 session
                 handshake, the Tasks extension's client calls and store, listen streams,
                 :class:`McpToolset` and the agent-spec connector.
    ``server``   :class:`Server`, the request a handler sees, multi round-trip input, 2025
                 sessions, :class:`TaskServer`, and serving over stdio, HTTP and in process.

    Each sub-package's docstring maps its own modules.
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
from zigai.mcp.server.request import ServerRequest, current_request
from zigai.mcp.server.server import Server
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
