"""zigai.acp: an Agent Client Protocol client — zigai as the editor side of ACP (layer 6).

Job
    Drive an ACP agent (a coding agent speaking JSON-RPC 2.0) from Python: explicit
    ``initialize`` and session state, prompts with streamed ``session/update``
    notifications, and the editor-owned operations the agent requests (text files beneath
    a rooted directory, permission choices, replaceable terminals).

Invariants
    * Responses are matched by id while interleaved updates and agent requests are
      dispatched; an answer to an unknown id is a protocol error.
    * File paths are reduced to the session root and resolved through
      :class:`zigai.environments.RootedDirectory`; anything outside is refused.
    * A permission answer is one of the options the agent advertised, or cancelled.
    * Reconnect negotiates a new connection and resumes the active session; it never
      resends a prompt (a lost prompt is reported with ``prompt_in_flight=True``).
    * The stdio transport owns only the subprocess and its framing; no ACP SDK is imported.

Submodules: ``transport`` (protocol, stdio subprocess), ``editor`` (file, permission and
terminal handlers), ``client`` (AcpClient).
"""

from __future__ import annotations

from zigai.acp.client import (
    PROTOCOL_VERSION,
    AcpClient,
    AcpPromptUpdatesTooLarge,
    AcpProtocolError,
    AcpRemoteError,
    AcpRequestTimedOut,
    AcpStateError,
    PromptResult,
)
from zigai.acp.editor import (
    AcpInvalidParams,
    AcpPathOutsideRoot,
    AcpPermissionRejected,
    EditorHandlers,
    PermissionRequest,
    TerminalProvider,
)
from zigai.acp.transport import (
    AcpConnectionClosed,
    AcpMessageTooLarge,
    AcpTransport,
    StdioTransport,
)

__all__ = [
    "AcpClient",
    "PromptResult",
    "PROTOCOL_VERSION",
    "EditorHandlers",
    "PermissionRequest",
    "TerminalProvider",
    "AcpTransport",
    "StdioTransport",
    "AcpProtocolError",
    "AcpRemoteError",
    "AcpStateError",
    "AcpPromptUpdatesTooLarge",
    "AcpRequestTimedOut",
    "AcpConnectionClosed",
    "AcpMessageTooLarge",
    "AcpInvalidParams",
    "AcpPathOutsideRoot",
    "AcpPermissionRejected",
]
