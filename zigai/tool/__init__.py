"""Tools: definitions, validated execution, limits and the bounded scheduler (layer 4).

A :class:`Tool` is one function the model may call.  Build it with
:meth:`Tool.manual` or :func:`zigai.reflect.tool`; the agent asks it for its
provider-facing :meth:`~Tool.definition`, validates the model's argument text
with :meth:`~Tool.validate_arguments` and runs accepted calls through one
:class:`ToolScheduler` per run.  Modules: ``errors``, ``limits``
(ToolLimits, ToolExecution, ReturnSchemaVisibility), ``context``
(ToolRunContext, ToolReturn, ToolOutput), ``tool`` (Tool, ValidatedArgs),
``policy`` (Policy and its stages), ``scheduler``, ``race`` (application callbacks raced against the run deadline like calls).

Invariants: tools and limits are immutable and thread-safe to share; the
application function never runs with arguments that failed the payload bounds
or the schema; results keep the model's call order; a call that loses a race
is flagged through its context and its late result is never returned.
"""

from __future__ import annotations

from zigai.tool.context import ToolOutput, ToolReturn, ToolRunContext, follow_up_bytes
from zigai.tool.errors import (
    DependencyTypeMismatch,
    DuplicateToolName,
    InvalidFollowUpMessage,
    InvalidToolArguments,
    ModelRetry,
    ToolDefinitionError,
    ToolFollowUpOverflow,
    ToolQueueOverflow,
    ToolResultTooLarge,
    ToolRetriesExceeded,
    ToolThreadLimitReached,
    ToolTimedOut,
)
from zigai.tool.limits import ReturnSchemaVisibility, ToolExecution, ToolLimits
from zigai.tool.policy import Policy, ToolAnswer, ToolPolicyContext, ToolRefused
from zigai.tool.scheduler import (
    ScheduledCall,
    ToolCallResult,
    ToolCallStatus,
    ToolScheduler,
    abandoned_tool_threads,
    execute_call,
    max_abandoned_tool_threads,
    set_max_abandoned_tool_threads,
)
from zigai.tool.tool import Tool, ValidatedArgs

__all__ = [
    "Tool",
    "ValidatedArgs",
    "ToolExecution",
    "ReturnSchemaVisibility",
    "ToolLimits",
    "ToolRunContext",
    "ToolReturn",
    "ToolOutput",
    "follow_up_bytes",
    "Policy",
    "ToolPolicyContext",
    "ToolAnswer",
    "ToolRefused",
    "ScheduledCall",
    "ToolCallResult",
    "ToolCallStatus",
    "ToolScheduler",
    "execute_call",
    "abandoned_tool_threads",
    "max_abandoned_tool_threads",
    "set_max_abandoned_tool_threads",
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
