"""The named errors of the tool subsystem (tools, reflection, toolsets, the scheduler).

Two families live here:

* recoverable failures the agent reports to the model as retry prompts
  (:class:`ModelRetry`, :class:`InvalidToolArguments`, :class:`ToolTimedOut`,
  :class:`ToolQueueOverflow`, :class:`ToolResultTooLarge`,
  :class:`ToolFollowUpOverflow`); their messages are written to be safe and
  useful for the model;
* contract violations by the application, which are fatal
  (:class:`ToolDefinitionError`, :class:`InvalidFollowUpMessage`,
  :class:`DuplicateToolName`, :class:`DependencyTypeMismatch`,
  :class:`ToolRetriesExceeded`), and :class:`ToolThreadLimitReached`, which says
  the process holds too many abandoned tool threads to start another.

Invariant: every constructor passes only the message positionally to
``Exception``; extra data are keyword-only attributes with defaults, so every
error pickles with its attributes.
"""

from __future__ import annotations

from zigai.errors import ToolError, ZigAIError

__all__ = [
    "ModelRetry",
    "InvalidToolArguments",
    "ToolTimedOut",
    "ToolDefinitionError",
    "ToolRetriesExceeded",
    "ToolResultTooLarge",
    "ToolQueueOverflow",
    "ToolThreadLimitReached",
    "ToolFollowUpOverflow",
    "InvalidFollowUpMessage",
    "DuplicateToolName",
    "DependencyTypeMismatch",
]


class ModelRetry(ZigAIError):
    """Raised by a tool to ask the model to try again; the message becomes the retry prompt.

    This is control flow, not a failure of zigai: the scheduler turns it into a
    ``retry`` result and the agent counts it against the tool's retry budget.
    """


class InvalidToolArguments(ToolError):
    """The model's arguments were not one bounded JSON object matching the tool's schema.

    ``errors`` holds ``(json_path, reason)`` pairs; the message lists them and
    is safe to send back to the model.
    """

    def __init__(
        self,
        message: str,
        *,
        tool_name: str | None = None,
        errors: tuple[tuple[str, str], ...] = (),
    ) -> None:
        super().__init__(message)
        self.tool_name = tool_name
        self.errors = tuple(errors)


class ToolTimedOut(ToolError):
    """One tool call exceeded its own ``timeout_ms`` (the run itself may continue)."""


class ToolDefinitionError(ToolError):
    """A tool, reflected signature, schema or toolset could not be defined as given."""


class ToolRetriesExceeded(ToolError):
    """A tool asked for more retries than its ``max_retries`` budget allows."""

    def __init__(
        self, message: str, *, tool_name: str | None = None, max_retries: int | None = None
    ) -> None:
        super().__init__(message)
        self.tool_name = tool_name
        self.max_retries = max_retries


class ToolResultTooLarge(ToolError):
    """A tool result's encoded JSON exceeded ``ToolLimits.max_result_bytes``."""

    def __init__(self, message: str, *, limit: int | None = None, size: int | None = None) -> None:
        super().__init__(message)
        self.limit = limit
        self.size = size


class ToolQueueOverflow(ToolError):
    """More calls were requested than may run or wait, or the run's tool-call cap was reached."""


class ToolThreadLimitReached(ToolError):
    """Too many abandoned tool threads are still running in this process to start another.

    A tool call that timed out or was cancelled without returning keeps its worker thread
    (Python cannot kill a thread).  Their number is bounded process-wide
    (:func:`zigai.tool.scheduler.max_abandoned_tool_threads`); at the bound a call that would
    need a worker thread fails fast with this error instead of growing the thread count.
    """

    def __init__(self, message: str, *, limit: int | None = None, abandoned: int | None = None) -> None:
        super().__init__(message)
        self.limit = limit
        self.abandoned = abandoned


class ToolFollowUpOverflow(ToolError):
    """A tool returned more follow-up messages or follow-up data than its limits allow."""

    def __init__(self, message: str, *, limit: int | None = None, size: int | None = None) -> None:
        super().__init__(message)
        self.limit = limit
        self.size = size


class InvalidFollowUpMessage(ToolError):
    """A follow-up message was not a request made only of user-prompt parts."""


class DuplicateToolName(ToolError):
    """Two tools prepared for the same model step have the same provider-visible name."""

    def __init__(self, message: str, *, name: str | None = None) -> None:
        super().__init__(message)
        self.name = name


class DependencyTypeMismatch(ToolError):
    """``ToolRunContext.dependency(T)`` found run dependencies of another type."""
