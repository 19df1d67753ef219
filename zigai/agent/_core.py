"""The per-run state every step executor works on: ``RunState`` and ``RunCore``.

:class:`RunCore` holds what one invocation owns — run control, resolved settings and output,
the canonical message list, usage, retry counters, this step's tools, the event sink and the
lazily created tool scheduler — plus the contexts callbacks receive.  It has no ``step()``:
the state machine (:class:`zigai.agent.run.AgentRun`) subclasses it, and the step executors
(``_tool_step``, ``_model_step``, ``_partial``) receive it, so imports flow one way:
configuration → this module → executors → the state machine.

Invariants: the :class:`~zigai.agent.config.AgentConfig` is never mutated; the canonical
history only grows; one thread drives a run.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

from zigai.agent.config import AgentConfig, RunContext, RunOptions, TypedMode
from zigai.agent.deferred import DeferredCall, PausedRun, ResumeDecision
from zigai.agent.errors import InvalidAgentConfiguration, OutputRetriesExceeded
from zigai.agent.result import Result
from zigai.control import RunControl
from zigai.messages import Message, RequestMessage, ResponseMessage
from zigai.model import ModelRequest
from zigai.output import OutputRejected, OutputRunContext, PreparedOutput
from zigai.settings import check_supported, merge_settings
from zigai.tool import Tool
from zigai.usage import RunUsage

__all__ = ["RunCore", "RunState"]


class RunState(enum.Enum):
    start = "start"
    prepare_request = "prepare_request"
    model_request = "model_request"
    handle_response = "handle_response"
    execute_tools = "execute_tools"
    finalize = "finalize"
    done = "done"


class RunCore:
    """The state of one invocation (not thread-safe; one thread drives it)."""

    def __init__(
        self,
        agent: AgentConfig,
        options: RunOptions,
        *,
        output_type: Any = None,
        typed_mode: TypedMode | None = None,
        allow_pause: bool = False,
        resume: bool = False,
        decisions: dict[str, ResumeDecision] | None = None,
    ) -> None:
        self.agent = agent
        self.options = options
        self.control = RunControl.start(
            agent.run_timeout_ms, options.timeout_ms, token=options.cancellation
        )
        self.model = agent.model
        profile = self.model.profile
        self.profile = profile
        self.limits = options.limits if options.limits is not None else agent.limits
        if options.model_settings is None:
            self.settings = agent.base_settings()
        else:
            self.settings = merge_settings(agent.base_settings(), options.model_settings)
        check_supported(self.settings, profile)
        self.typed = output_type is not None
        self.decoder: Callable[[Any], Any] | None = None
        if self.typed:
            self.output: PreparedOutput = agent.typed_output(output_type, typed_mode, profile)
            from zigai.reflect import decode

            self.decoder = lambda value: decode(output_type, value)
        else:
            self.output = agent.prepared_output(profile)
        self.deps = options.deps
        if agent.deps_type is not None and not isinstance(self.deps, agent.deps_type):
            raise InvalidAgentConfiguration(
                f"this agent expects deps of type {agent.deps_type.__name__}, "
                f"got {type(self.deps).__name__}"
            )
        history = options.message_history
        for message in history:
            if not isinstance(message, (RequestMessage, ResponseMessage)):
                raise InvalidAgentConfiguration("message_history must contain Message values")
        if not resume and options.prompt is None and (
            not history or not isinstance(history[-1], RequestMessage)
        ):
            raise InvalidAgentConfiguration(
                "a run needs a prompt, or a message history that ends with a request"
            )
        self.messages: list[Message] = list(history)
        self.new_start = len(history)
        self.usage = RunUsage()
        self.instructions: tuple[str, ...] = ()
        self.output_retries = 0
        self.tool_retries: dict[str, int] = {}
        self.state = RunState.start
        self.allow_pause = allow_pause
        self.paused: PausedRun | None = None
        self.decisions: dict[str, ResumeDecision] = decisions or {}
        self.deferred_calls: dict[str, DeferredCall] = {}
        self._resume_messages: tuple[RequestMessage, ...] = ()
        self._sink: Callable[[Any], None] | None = None
        self._streaming: Any = None
        self._tool_names: tuple[tuple[str, ...], tuple[str, ...]] | None = None
        queue = options.pending_messages
        if queue is not None:
            queue.attach()
        self.queue = queue
        self.request: ModelRequest | None = None
        self.response: ResponseMessage | None = None
        self.step_tools: dict[str, Tool] = {}
        self.result: Result | None = None
        self.final_output: Any = None
        self.final_json: Any = None
        self.final_name: str | None = None
        self._scheduler: Any = None
        self._processors = tuple(agent.history_processors) + tuple(options.history_processors)

    def set_sink(self, sink: Callable[[Any], None] | None) -> None:
        """Select the streaming mode: every event of the run is handed to ``sink``."""
        self._sink = sink

    def emit(self, event: Any) -> None:
        sink = self._sink
        if sink is not None:
            sink(event)

    def stream_part(self, index: int) -> Any:
        """The current value of part ``index`` of the response being streamed (or None)."""
        streaming = self._streaming
        if streaming is None or streaming.stream is None:
            return None
        return streaming.stream.current_part(index)

    # -- contexts -----------------------------------------------------------------------------

    def run_context(self) -> RunContext:
        return RunContext(self.deps, self.usage, self.usage.requests, tuple(self.messages), self.control)

    def output_context(self, choice_name: str | None, tool_call_id: str | None = None) -> OutputRunContext:
        return OutputRunContext(
            self.deps, self.usage, self.usage.requests, tuple(self.messages), self.control,
            self.output_retries, choice_name, tool_call_id,
        )

    @property
    def scheduler(self) -> Any:
        if self._scheduler is None:
            from zigai.tool import ToolScheduler

            self._scheduler = ToolScheduler(self.agent.tool_limits, self.limits.max_tool_calls)
        return self._scheduler

    def reject_output(self, rejection: OutputRejected) -> None:
        """Count one output retry; raise OutputRetriesExceeded past the budget."""
        self.output_retries += 1
        limit = self.agent.max_output_retries
        if self.output_retries > limit:
            raise OutputRetriesExceeded(
                f"output was rejected more than max_output_retries={limit} times: {rejection.message}",
                max_retries=limit, last_error=rejection.message,
            ) from rejection.cause
