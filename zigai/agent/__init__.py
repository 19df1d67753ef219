"""The agent loop: immutable ``Agent`` configuration, the ``AgentRun`` state machine, results.

``Agent.run`` and ``Agent.run_typed`` create one :class:`AgentRun` per
invocation and step it through ``start → prepare_request → model_request →
handle_response → (execute_tools →) … → finalize``.  Results own their
conversation (:class:`Result`, :class:`TypedResult`) and must be closed.
Named errors live in ``zigai.agent.errors``; run-control errors
(``RunTimedOut``, ``Cancelled``) and ``ToolRetriesExceeded`` are re-exported.
"""

from __future__ import annotations

from zigai.agent.agent import Agent, DynamicInstruction, RunContext, RunLimits, RunOptions
from zigai.agent.errors import (
    ContentFiltered,
    EmptyModelResponse,
    IncompleteToolCall,
    InvalidAgentConfiguration,
    OutputRetriesExceeded,
    PauseRequired,
    RequestLimitExceeded,
    ResponseTruncated,
    ResultClosed,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
)
from zigai.agent.result import Result, TypedResult
from zigai.agent.run import AgentRun, RunState
from zigai.control import CancellationToken, Cancelled, RunTimedOut
from zigai.output import EndStrategy, OutputChoice, OutputResult, OutputRunContext, OutputSpec
from zigai.tool import ToolRetriesExceeded

__all__ = [
    "Agent",
    "AgentRun",
    "RunState",
    "RunOptions",
    "RunLimits",
    "RunContext",
    "DynamicInstruction",
    "Result",
    "TypedResult",
    "OutputSpec",
    "OutputChoice",
    "OutputResult",
    "OutputRunContext",
    "EndStrategy",
    "CancellationToken",
    "UsageLimitExceeded",
    "RequestLimitExceeded",
    "UnexpectedModelBehavior",
    "ResponseTruncated",
    "ContentFiltered",
    "IncompleteToolCall",
    "EmptyModelResponse",
    "OutputRetriesExceeded",
    "ToolRetriesExceeded",
    "PauseRequired",
    "ResultClosed",
    "InvalidAgentConfiguration",
    "RunTimedOut",
    "Cancelled",
]
