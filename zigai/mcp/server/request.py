"""What a handler of an MCP :class:`~zigai.mcp.Server` sees of the request it serves.

Job
    :class:`ServerRequest` carries one request's id, method, params, the client's declared
    identity and capabilities, its control (cancellation and deadline) and, over HTTP, its
    headers and TLS state; it lets the handler ask for input, report progress and log.
    :func:`current_request` finds it from code the handler calls (a zigai Tool, say).

Invariants
    * A request is "current" exactly while the server runs its handler (the server sets and
      resets the context variable around the call); outside that, :func:`current_request`
      is None.
    * ``emit`` sends nothing once the request is cancelled or when the transport has no
      channel; progress and log messages go out only when the client asked for them.
    * This module knows no :class:`~zigai.mcp.Server`: the server and its 2025 sessions both
      build requests here, so neither has to import the other for it.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from zigai.control import RunControl
from zigai.mcp.server.input import InputStillNeeded, RoundInput, take_answers
from zigai.mcp.wire.input import InputRequest
from zigai.mcp.wire.jsonrpc import RequestId
from zigai.mcp.wire.primitives import ClientCapabilities, Implementation, LogLevel, Notification

__all__ = ["ServerRequest", "current_request"]

_current: contextvars.ContextVar[ServerRequest | None] = contextvars.ContextVar("zigai_mcp_request", default=None)


def current_request() -> ServerRequest | None:
    """The request a handler (or a zigai Tool called by the server) is serving, if any."""
    return _current.get()


@dataclass(slots=True)
class ServerRequest:
    """What a handler may know and do while serving one request.

    ``control`` carries the request's cancellation (client cancel, closed stream) and the
    server's per-request deadline; ``headers``/``tls`` are the HTTP facts (None on stdio);
    ``ask_client`` (2025 sessions only) sends input requests to the client and waits.
    """

    id: RequestId
    method: str
    params: dict[str, Any]
    protocol_version: str
    client_capabilities: ClientCapabilities
    client_info: Implementation | None = None
    log_level: LogLevel | None = None
    progress_token: RequestId | None = None
    control: RunControl = field(default_factory=RunControl)
    headers: Mapping[str, tuple[str, ...]] | None = None
    tls: bool | None = None
    emit_fn: Callable[[Notification], None] | None = None
    input: RoundInput = field(default_factory=lambda: RoundInput({}, None, {}))
    ask_client: Callable[[Sequence[InputRequest], RoundInput], None] | None = None

    @property
    def request_state(self) -> str | None:
        """The handler's own state string from the previous round (verified by the server), if any."""
        return self.input.state

    def ask(self, *requests: InputRequest, state: str | None = None) -> dict[str, dict[str, Any]]:
        """The client's answers to ``requests`` by key (multi round-trip input, SEP-2322).

        When an answer is missing this raises :class:`InputStillNeeded`; the server answers
        ``input_required`` for the missing keys with a sealed ``requestState`` carrying ``state``
        and every answer so far, so on the retry this call returns (see ``server.input``).
        In a 2025 session (``ask_client`` set) the missing requests go to the client as requests
        of their own and this call waits for the answers instead.
        """
        try:
            return take_answers(self.input, self.client_capabilities, requests, state)
        except InputStillNeeded as still:
            if self.ask_client is None:
                raise
            self.ask_client(still.needed.requests, self.input)
        return take_answers(self.input, self.client_capabilities, requests, state)

    def emit(self, notification: Notification) -> None:
        """Send a notification related to this request (dropped when the transport has no channel)."""
        if self.emit_fn is not None and not self.control.cancelled:
            self.emit_fn(notification)

    def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Report progress, when the client asked for it with a progress token."""
        if self.progress_token is not None:
            self.emit(Notification.progress(self.progress_token, progress, total, message))

    def log(self, level: LogLevel, data: Any, logger: str | None = None) -> None:
        """Send a log message, when the client opted in at this level or a lower one."""
        level = LogLevel(level)
        if self.log_level is not None and level.severity >= self.log_level.severity:
            self.emit(Notification.log(level, data, logger))
