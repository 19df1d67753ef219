"""Named errors of the agent loop, all under :class:`zigai.errors.AgentError`.

Model-behaviour failures share :class:`UnexpectedModelBehavior`; the finish
reason is checked before the empty-response check, so truncation
(:class:`ResponseTruncated`), content filtering (:class:`ContentFiltered`) and
a tool call cut off mid-arguments (:class:`IncompleteToolCall`) are never
reported as :class:`EmptyModelResponse`.

Run-control errors (``RunTimedOut``, ``Cancelled``) live in :mod:`zigai.control`
and tool errors (``ToolRetriesExceeded`` ...) in :mod:`zigai.tool`; they are
re-exported from :mod:`zigai.agent` for convenience.

Invariant: constructors pass only the message positionally; extra data are
keyword attributes, so every error pickles with its attributes.
"""

from __future__ import annotations

from zigai.errors import AgentError

__all__ = [
    "ForeignUploadedFile",
    "UsageLimitExceeded",
    "RequestLimitExceeded",
    "ToolCallLimitExceeded",
    "TokenLimitExceeded",
    "UnexpectedModelBehavior",
    "ResponseTruncated",
    "ContentFiltered",
    "IncompleteToolCall",
    "EmptyModelResponse",
    "OutputRetriesExceeded",
    "PauseRequired",
    "ResultClosed",
    "InvalidAgentConfiguration",
    "UnsupportedKeyword",
    "AgentFrozen",
    "AwaitNotSupported",
]


class UsageLimitExceeded(AgentError):
    """A run limit (requests, tool calls or tokens) was exceeded.

    ``limit_name`` names the ``RunLimits`` field, ``limit`` its value and
    ``value`` the count that broke it.
    """

    def __init__(
        self,
        message: str,
        *,
        limit_name: str | None = None,
        limit: int | None = None,
        value: int | None = None,
    ) -> None:
        super().__init__(message)
        self.limit_name = limit_name
        self.limit = limit
        self.value = value


class RequestLimitExceeded(UsageLimitExceeded):
    """The next model request would exceed ``RunLimits.max_requests``."""


class ToolCallLimitExceeded(UsageLimitExceeded):
    """A step's tool calls would take the run past ``RunLimits.max_tool_calls``.

    Raised before any call of that step runs (and so before any further model request);
    ``value`` is the total the step would have reached.
    """


class TokenLimitExceeded(UsageLimitExceeded):
    """The run's cumulative tokens passed ``max_input_tokens``, ``max_output_tokens`` or
    ``max_total_tokens``, or have reached one so that the next model request would pass it.

    Token counts are only known from a response, so the response that crosses a limit has
    been paid for; no further model request is made once a limit is reached (checked before
    every request, also on resume).  ``value`` is the count used so far.
    """


class UnexpectedModelBehavior(AgentError):
    """The model answered in a way the agent cannot use."""


class ResponseTruncated(UnexpectedModelBehavior):
    """The model stopped because it reached its output-token limit (finish reason ``length``)."""


class ContentFiltered(UnexpectedModelBehavior):
    """The provider withheld or cut the response for content policy reasons."""


class IncompleteToolCall(UnexpectedModelBehavior):
    """A tool call was cut off (truncated) before its arguments were complete."""


class EmptyModelResponse(UnexpectedModelBehavior):
    """The model finished normally but returned neither usable text nor tool calls."""


class OutputRetriesExceeded(AgentError):
    """The output was rejected more often than ``max_output_retries`` allows.

    ``last_error`` is the model-safe reason of the final rejection.
    """

    def __init__(
        self, message: str, *, max_retries: int | None = None, last_error: str | None = None
    ) -> None:
        super().__init__(message)
        self.max_retries = max_retries
        self.last_error = last_error


class PauseRequired(AgentError):
    """The model called a tool that needs approval or external execution.

    ``Agent.run`` cannot discard that pause; use ``run_until_pause`` instead.
    ``tool_names`` and ``tool_call_ids`` list the calls that must wait.
    """

    def __init__(
        self,
        message: str,
        *,
        tool_names: tuple[str, ...] = (),
        tool_call_ids: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        self.tool_names = tuple(tool_names)
        self.tool_call_ids = tuple(tool_call_ids)


class ResultClosed(AgentError):
    """A run result was used after ``close()`` / ``deinit()``."""


class InvalidAgentConfiguration(AgentError):
    """An Agent or run option is malformed (bad limits, duplicate tool names, no prompt ...)."""


class ForeignUploadedFile(AgentError):
    """An uploaded-file handle is empty or belongs to another provider than the model's."""


class UnsupportedKeyword(InvalidAgentConfiguration, TypeError):
    """A keyword argument zigai does not take; the message names zigai's spelling when the
    keyword is a PydanticAI one (``usage_limits`` → ``limits``, ``retries`` → ``max_tool_retries``).

    It is also a ``TypeError``, like any unexpected keyword argument in Python."""


class AgentFrozen(AgentError):
    """``@agent.tool`` and the other registering decorators were used after the agent's first
    run; build a new agent with ``agent.with_tools(...)`` / ``with_instructions(...)`` instead."""


class AwaitNotSupported(AgentError, TypeError):
    """``await agent.run(...)`` or ``async with agent.run_stream(...)``: zigai's entry points are
    synchronous; call them directly (``asyncio.to_thread(agent.run, ...)`` from async code)."""
