"""The per-run state every step executor works on: ``RunState`` and ``RunCore``.

:class:`RunCore` holds what one invocation owns — run control, resolved settings and output,
the canonical message list, usage, retry counters, this step's tools, the event sink and the
lazily created tool scheduler — plus the contexts callbacks receive.  It has no ``step()``:
the state machine (:class:`zigai.agent.run.AgentRun`) subclasses it, and the step executors
(``_pause_step``, ``_tool_step``, ``_model_step``, ``_partial``) receive it, so imports flow one way:
configuration → this module → executors → the state machine.

Invariants: the :class:`~zigai.agent.config.AgentConfig` is never mutated; the canonical
history only grows; one thread drives a run.
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from zigai.agent._capabilities import RunCapabilities, setup_capabilities
from zigai.agent.config import AgentConfig, RunContext, RunOptions, TypedMode
from zigai.agent.deferred import DeferredCall, PausedRun, ResumeDecision
from zigai.agent.errors import InvalidAgentConfiguration, OutputRetriesExceeded
from zigai.agent.result import Result
from zigai.control import Cancelled, RunControl
from zigai.hooks import (
    Hook,
    HookEvent,
    RunEnd,
    RunError,
    RunInfo,
    RunStart,
    StreamEventAfter,
    StreamEventBefore,
)
from zigai.messages import Message, RequestMessage, ResponseMessage
from zigai.model import Model, ModelRequest
from zigai.output import OutputRejected, OutputRunContext, PreparedOutput
from zigai.retry import RetryBudget
from zigai.security import stricter_policy
from zigai.settings import UnsupportedModelSetting, check_supported, merge_settings
from zigai.tool import Tool
from zigai.tool.policy import PolicyStages
from zigai.usage import RunUsage

__all__ = ["RunCore", "RunState"]


_RUN_ID_PREFIX = os.urandom(10).hex()
_run_counter = itertools.count(1)


def _next_run_id() -> str:
    """32 hex digits: a random per-process prefix and a counter (unique, cheap, not secret)."""
    return f"{_RUN_ID_PREFIX}{next(_run_counter) & 0xFFFFFFFFFFFF:012x}"


class RunState(enum.Enum):
    start = "start"
    prepare_request = "prepare_request"
    model_request = "model_request"
    handle_response = "handle_response"
    execute_tools = "execute_tools"
    finalize = "finalize"
    done = "done"


def with_profile_hint(model: Any, error: Exception) -> Exception:
    """``error`` (an unsupported setting or feature) re-made to name the model and the fix."""
    name = f"{getattr(model, 'provider_name', '?')}:{getattr(model, 'model_name', '?')}"
    return type(error)(
        f"{name}: {error} (per its profile; an unknown model name gets a conservative one — "
        "if the model does support it, give the client a profile: "
        "Client(name, provider, profile=ModelProfile(...)), or the provider a profile_lookup)"
    )


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
        # a model string was resolved when the agent was built
        self.model: Model = agent.model  # type: ignore[assignment]
        profile = self.model.profile
        self.profile = profile
        self.limits = options.limits if options.limits is not None else agent.limits
        # the run's URL policy: the agent's, tightened by the run's own (the stricter wins)
        self.url_policy = stricter_policy(agent.url_policy, options.url_policy)
        if options.model_settings is None:
            self.settings = agent.base_settings()
        else:
            self.settings = merge_settings(agent.base_settings(), options.model_settings)
        try:
            check_supported(self.settings, profile)
        except UnsupportedModelSetting as exc:
            raise with_profile_hint(self.model, exc) from None
        self.typed = output_type is not None
        self._output_type = output_type
        self._typed_mode = typed_mode
        self.decoder: Callable[..., Any] | None = None
        if self.typed:
            self.output: PreparedOutput = agent.typed_output(output_type, typed_mode, profile)
            from zigai.agent._familiar.output_type import union_members
            from zigai.reflect import decode

            # a union split into one output tool per member decodes by the tool the model called
            by_choice = agent._cached(("members", output_type), lambda: union_members(output_type))
            self.decoder = lambda value, choice=None: decode(by_choice.get(choice, output_type), value)
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
        if not resume and options.prompt is None and not options.prompt_parts and (
            not history or not isinstance(history[-1], RequestMessage)
        ):
            raise InvalidAgentConfiguration(
                "a run needs a prompt, prompt parts, or a message history that ends with a request"
            )
        self.messages: list[Message] = list(history)
        self.new_start = len(history)
        self.usage = RunUsage()
        # Provider attempts (and their time) not yet folded into usage: a response folds
        # them in with its tokens (one RunUsage per response); the run's end folds the rest.
        self.pending_attempts = 0
        self.pending_provider_ns = 0
        self._usage_settled = False
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
        self.info: RunInfo  # set by begin() when hooks are registered; every event carries it
        self.hooks: tuple[Hook, ...] = tuple(agent.hooks) + tuple(options.hooks)
        self.started_at = time.perf_counter()
        self.retry_budget = RetryBudget()
        self._begun = False
        self._ended = False
        self._hooked_sink = True
        self._deferred_end: RunEnd | None = None
        self.policies: PolicyStages = agent._cached(
            ("policies",), lambda: PolicyStages(tuple(agent.tool_policies))
        )
        # Per call id, what dynamic approval already settled this step: a policy retry or
        # refusal (the call does not run), or the arguments after the arguments stage (which
        # then does not run twice).
        self.policy_verdicts: dict[str, Any] = {}
        self.builtin_tools: tuple[Any, ...] = agent.builtin_tools  # type: ignore[assignment]
        self.output_validators: tuple[Any, ...] = agent.output_validators  # type: ignore[assignment]
        self.settings_layers = False  # capability settings are part of self.settings
        self.caps: RunCapabilities | None = None
        if agent.capabilities or options.capabilities or options.capability_layers:
            self.caps = setup_capabilities(self)


    def now(self) -> datetime:
        """The timestamp for a message this run creates (``Agent.clock``, else UTC now)."""
        clock = self.agent.clock
        if clock is None:
            return datetime.now(UTC)
        stamp = clock()
        if not isinstance(stamp, datetime) or stamp.utcoffset() is None:
            raise InvalidAgentConfiguration(
                f"Agent.clock must return a timezone-aware datetime, got {stamp!r}"
            )
        return stamp

    def new_request(self, parts: tuple[Any, ...], instructions: str | None = None,
                    now: datetime | None = None) -> RequestMessage:
        """A request message this run sends, stamped with ``now`` (default :meth:`now`), and
        so is each of its parts that has a ``timestamp`` field still unset."""
        if now is None:
            now = self.now()
        return RequestMessage(self.stamp_parts(parts, now), instructions=instructions, timestamp=now)

    @staticmethod
    def stamp_parts(parts: tuple[Any, ...], now: datetime) -> tuple[Any, ...]:
        """``parts`` with ``now`` as the timestamp of each part this run created without one
        (user and system prompts, tool returns, retry prompts).  A part that already has a
        timestamp is kept as it is, so nothing of an incoming history is ever rewritten."""
        if all(getattr(part, "timestamp", now) is not None for part in parts):
            return parts
        return tuple(dataclasses.replace(part, timestamp=now)
                     if getattr(part, "timestamp", now) is None else part for part in parts)

    def stamped(self, response: ResponseMessage) -> ResponseMessage:
        """``response`` with :meth:`now` as its timestamp when the model gave none."""
        if response.timestamp is not None:
            return response
        r = response  # positional: a third of dataclasses.replace's cost on every step
        return ResponseMessage(r.parts, r.usage, r.model_name, r.provider_name,
                               r.provider_response_id, r.finish_reason, r.raw_finish_reason,
                               self.now(), r.provider_details, r.metadata)
    def set_model(self, model: Any) -> None:
        """Use ``model`` from the next request on (a capability's model selector chose it)."""
        self.model = model
        profile = model.profile
        if profile != self.profile:
            self.profile = profile
            agent = self.agent
            if self.typed:
                self.output = agent.typed_output(self._output_type, self._typed_mode, profile)
            else:
                self.output = agent.prepared_output(profile)

    # -- lifecycle hooks ---------------------------------------------------------------------

    def _make_info(self) -> RunInfo:
        correlation = self.options.correlation
        run_id = correlation.run_id if correlation is not None and correlation.run_id else None
        model = self.model
        return RunInfo(
            run_id=run_id or _next_run_id(),
            agent_name=self.agent.name,
            model_name=str(getattr(model, "model_name", "") or ""),
            provider_name=str(getattr(model, "provider_name", "") or ""),
            streaming=self._sink is not None,
            resumed=bool(self.deferred_calls) or bool(self.decisions),
            correlation=correlation,
            control=self.control,
            price_table=self.agent.price_table,
        )

    def fire(self, event: HookEvent) -> None:
        """Deliver ``event`` to every hook in order, checking the run control before each."""
        control = self.control
        deadline = control.deadline
        cancelled = control.token._event.is_set
        for hook in self.hooks:
            if cancelled() or (deadline is not None and time.monotonic() >= deadline):
                control.check()
            hook(event)

    def fire_failure(self, event: HookEvent, error: BaseException) -> None:
        """Deliver an error event of a failing run: every hook sees it, none replaces ``error``."""
        for hook in self.hooks:
            try:
                hook(event)
            except BaseException as hook_error:  # noqa: BLE001 - the original error wins
                error.add_note(
                    f"a lifecycle hook raised {type(hook_error).__name__} while handling "
                    f"{event.kind}: {hook_error}"
                )

    def begin(self) -> None:
        """The first step: fix the run's identity (``self.info``) and deliver ``run_start``."""
        self._begun = True
        if self.hooks:
            self.info = self._make_info()
            self.fire(RunStart(self.info, len(self.messages)))

    def settle_usage(self) -> RunUsage:
        """Fold the unanswered attempts and this invocation's run time into usage (once).

        A resumed run's usage starts from the paused state's, so its times and attempts
        continue the earlier invocation's rather than restarting.
        """
        if not self._usage_settled:
            self._usage_settled = True
            elapsed_ns = int((time.perf_counter() - self.started_at) * 1e9)
            self.usage = self.usage.with_timing(
                attempts=self.pending_attempts, provider_time_ns=self.pending_provider_ns,
                run_time_ns=elapsed_ns,
            )
            self.pending_attempts = self.pending_provider_ns = 0
        return self.usage

    def finish(self, outcome: Any, output: Any) -> None:
        """The run ended without error: deliver ``run_end`` (never after ``run_error``).

        With a queueing sink the stream still holds undelivered events, so ``run_end`` waits
        for :meth:`flush_end`, which the stream calls once the last event was taken.
        """
        self._ended = True
        if self.hooks:
            event = RunEnd(
                self.info, outcome, self.usage, output, tuple(self.messages[self.new_start:]),
                time.perf_counter() - self.started_at,
            )
            if self._sink is not None and not self._hooked_sink:
                self._deferred_end = event
            else:
                self.fire(event)

    def flush_end(self) -> None:
        """Deliver a ``run_end`` that :meth:`finish` deferred (idempotent)."""
        event, self._deferred_end = self._deferred_end, None
        if event is not None:
            self.fire(event)

    def fail(self, error: BaseException) -> None:
        """A terminal failure of a started run: deliver ``run_error`` exactly once."""
        if self._ended or not self._begun:
            return
        self._ended = True
        self.settle_usage()
        if self.hooks:
            streaming = self._streaming
            if streaming is not None:
                streaming.abandoned(error)
            self.fire_failure(RunError(
                self.info, error, self.state.value, self.usage, time.perf_counter() - self.started_at,
            ), error)

    def abandon(self) -> None:
        """The consumer stopped a started run before its end (a closed stream).

        A run that already completed still reports ``run_end``; otherwise ``run_error``.
        """
        if self._deferred_end is not None:
            self.flush_end()
        elif not self._ended and self._begun:
            self.fail(Cancelled("the run's stream was closed before the run finished"))

    def set_sink(self, sink: Callable[[Any], None] | None, *, delivers: bool = True) -> None:
        """Select the streaming mode: every event of the run is handed to ``sink``.

        ``delivers`` says the sink hands the event to the application (so the stream-event
        hooks fire around it); a queueing sink whose consumer delivers later passes False
        and fires them itself.
        """
        self._sink = sink
        self._hooked_sink = delivers

    def emit(self, event: Any) -> None:
        sink = self._sink
        if sink is not None:
            if self.hooks and self._hooked_sink:
                info = self.info
                self.fire(StreamEventBefore(info, event))
                sink(event)
                self.fire(StreamEventAfter(info, event))
            else:
                sink(event)

    def stream_part(self, index: int) -> Any:
        """The current value of part ``index`` of the response being streamed (or None)."""
        streaming = self._streaming
        if streaming is None or streaming.stream is None:
            return None
        return streaming.stream.current_part(index)

    # -- contexts -----------------------------------------------------------------------------

    def run_context(self) -> RunContext:
        caps = self.caps
        return RunContext(
            self.deps, self.usage, self.usage.requests, tuple(self.messages), self.control,
            caps.snapshot if caps is not None else None,
        )

    def output_context(self, choice_name: str | None, tool_call_id: str | None = None) -> OutputRunContext:
        return OutputRunContext(
            self.deps, self.usage, self.usage.requests, tuple(self.messages), self.control,
            self.output_retries, choice_name, tool_call_id,
            capabilities=self.caps.snapshot if self.caps is not None else None,
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
