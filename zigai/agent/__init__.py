"""The agent loop: immutable ``Agent`` configuration, the ``AgentRun`` state machine, results.

``Agent.run`` and ``Agent.run_typed`` create one :class:`AgentRun` per
invocation and step it through ``start → prepare_request → model_request →
handle_response → (execute_tools →) … → finalize``.  Results own their
conversation (:class:`Result`, :class:`TypedResult`) and must be closed.
Named errors live in ``zigai.agent.errors``; run-control errors
(``RunTimedOut``, ``Cancelled``) and ``ToolRetriesExceeded`` are re-exported.

Streaming (``run_stream``, ``run_stream_events``; events in ``zigai.agent.events``),
deferred tools (``run_until_pause``, ``resume_run``, ``resume_run_json`` and their
stream variants; state and decisions in ``zigai.agent.deferred``) and the
``PendingMessageQueue`` (``zigai.agent.pending``) drive the same state machine.

Imports inside the package flow one way (``tests/test_import_cycles.py`` keeps it so):
``config`` (the immutable fields) → ``_core`` (per-run state) → the step executors
(``_pause_step``, ``_tool_step``, ``_model_step``, ``_partial``, ``_accept``) → ``run`` (the state machine)
→ ``stream`` (sinks of that machine) → ``agent`` (the public entry points).
The sub-package ``_familiar`` translates PydanticAI-shaped spellings (``output_type=``, plain
functions in ``tools=``, ``override``, the decorators, typed run keywords) into that
configuration once, when an agent is built; the loop never sees it.
"""

from __future__ import annotations

from zigai.agent.agent import (
    Agent,
    DynamicInstruction,
    RunContext,
    RunLimits,
    RunOptions,
    ToolApproval,
)
from zigai.agent.config import ProviderErrorPolicy
from zigai.agent.deferred import (
    ApprovalSource,
    DeferredCall,
    InvalidPausedState,
    InvalidResumeDecisions,
    OwnedResumeDecisions,
    PausedRun,
    PausedStateIntegrityError,
    PausedStateTooLarge,
    ResumeAction,
    ResumeDecision,
    ResumeDecisionMismatch,
    ResumeDecisionsForAnotherPause,
    ResumeDecisionsIntegrityError,
    ResumeDecisionsTooLarge,
    RunOutcome,
    UnsupportedPausedStateVersion,
    UnsupportedResumeDecisionsVersion,
    parse_resume_decisions,
    stringify_resume_decisions,
)
from zigai.agent.errors import (
    AgentFrozen,
    AwaitNotSupported,
    ContentFiltered,
    EmptyModelResponse,
    ForeignUploadedFile,
    IncompleteToolCall,
    InvalidAgentConfiguration,
    OutputRetriesExceeded,
    PauseRequired,
    RequestLimitExceeded,
    ResponseTruncated,
    ResultClosed,
    TokenLimitExceeded,
    ToolCallLimitExceeded,
    UnexpectedModelBehavior,
    UnsupportedKeyword,
    UsageLimitExceeded,
)
from zigai.agent.events import (
    AgentStreamEvent,
    DeferredToolRequestEvent,
    DeferredToolResultEvent,
    EnqueuedMessagesEvent,
    FinalResultEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelResponseEvent,
    PartialOutputEvent,
    ToolAvailabilityEvent,
)
from zigai.agent.pending import (
    InvalidPendingMessages,
    PendingMessageQueue,
    PendingMessageQueueClosed,
)
from zigai.agent.result import Result, TypedResult
from zigai.agent.run import AgentRun, RunState
from zigai.agent.stream import AgentStream
from zigai.control import CancellationToken, Cancelled, RunTimedOut
from zigai.output import EndStrategy, OutputChoice, OutputResult, OutputRunContext, OutputSpec
from zigai.tool import ToolRetriesExceeded

__all__ = [
    "Agent",
    "AgentRun",
    "RunState",
    "RunOptions",
    "RunLimits",
    "ProviderErrorPolicy",
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
    "ToolRetriesExceeded",
    "PauseRequired",
    "ResultClosed",
    "InvalidAgentConfiguration",
    "UnsupportedKeyword",
    "AgentFrozen",
    "AwaitNotSupported",
    "RunTimedOut",
    "Cancelled",
    "ToolApproval",
    # streaming
    "AgentStream",
    "AgentStreamEvent",
    "PartialOutputEvent",
    "ModelResponseEvent",
    "ToolAvailabilityEvent",
    "FunctionToolCallEvent",
    "FunctionToolResultEvent",
    "DeferredToolRequestEvent",
    "DeferredToolResultEvent",
    "EnqueuedMessagesEvent",
    "FinalResultEvent",
    # deferred tools
    "RunOutcome",
    "PausedRun",
    "DeferredCall",
    "ApprovalSource",
    "ResumeAction",
    "ResumeDecision",
    "OwnedResumeDecisions",
    "stringify_resume_decisions",
    "parse_resume_decisions",
    "InvalidPausedState",
    "PausedStateTooLarge",
    "PausedStateIntegrityError",
    "UnsupportedPausedStateVersion",
    "InvalidResumeDecisions",
    "ResumeDecisionsTooLarge",
    "ResumeDecisionsForAnotherPause",
    "ResumeDecisionsIntegrityError",
    "UnsupportedResumeDecisionsVersion",
    "ResumeDecisionMismatch",
    # pending messages
    "PendingMessageQueue",
    "PendingMessageQueueClosed",
    "InvalidPendingMessages",
]
