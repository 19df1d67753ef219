"""``AgentRun``: the per-invocation state and the explicit state machine of the agent loop.

States (``RunState``), each one ``step()``:

``start``           resolve instructions (static, dynamic, run-specific, prompted-output;
                    empties ignored), copy the history, add the user prompt → ``prepare_request``
``prepare_request`` check control and the request limit, prepare this step's tools
                    (toolsets), apply history processors to a view, build the
                    ``ModelRequest`` and reject unsupported features → ``model_request``
``model_request``   call the model (through the retry policy when configured); check the
                    control after it returns; add usage; check token limits → ``handle_response``
``handle_response`` finish-reason errors, then: tool calls → ``execute_tools`` (after the
                    pause check), text → accept output → ``finalize`` or a correction request
                    → ``prepare_request``
``execute_tools``   output calls and ordinary calls per the end strategy; returns in call order;
                    follow-ups after them → ``finalize`` or ``prepare_request``
``finalize``        take pending-queue batches (→ ``prepare_request``) or close the queue,
                    build the owned :class:`Result` → ``done``

Per-run state lives in :class:`~zigai.agent._core.RunCore` (this class's base); the
:class:`~zigai.agent.Agent` is never mutated.  The work of the tool and model states is
done by the step executors (:mod:`zigai.agent._tool_step`, :mod:`zigai.agent._model_step`),
which see only the ``RunCore``, so imports flow one way: configuration → core → executors
→ this state machine → streaming sinks (:mod:`zigai.agent.stream`) → ``Agent``.

Streaming (:mod:`zigai.agent.stream`) is a mode of the same machine: with an event sink
the ``model_request`` state consumes ``model.stream()`` one event per ``step()`` and
stays in ``model_request`` until the stream ends; every other state is unchanged and
only emits events.  Pause/resume (:mod:`zigai.agent.deferred`) drives the same states:
the pause check runs in ``handle_response`` before any call of that response executes
(``run_until_pause`` ends the run there with a paused outcome instead of raising
``PauseRequired``), and a resumed run starts directly in ``execute_tools`` on the
saved response with the application's decisions — the model request is never replayed.
A ``PendingMessageQueue`` is drained before each model request and at finalization.

Invariants: the run deadline and the cancellation token are checked between every
phase, before each callback and after the model returns (a late response is
discarded, never written to history); the canonical history only grows; tool
results enter it in the model's call order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zigai.agent._accept import accept_candidate
from zigai.agent._budget import apply_budget
from zigai.agent._core import RunCore, RunState, with_profile_hint
from zigai.agent._inputs import check_request_inputs
from zigai.agent._model_step import StreamingRequest, request_buffered, run_deadline_reached
from zigai.agent._pause_step import check_pause, resume_calls, settled_calls
from zigai.agent._policies import prepare_tools
from zigai.agent._tool_step import execute_tool_step
from zigai.agent.config import AgentConfig, RunOptions, TypedMode
from zigai.agent.deferred import (
    DeferredCall,
    PausedRun,
    PausedState,
    ResumeDecision,
    RunOutcome,
    encode_paused_state,
    match_decisions,
)
from zigai.agent.errors import (
    ContentFiltered,
    EmptyModelResponse,
    IncompleteToolCall,
    InvalidAgentConfiguration,
    PauseRequired,
    RequestLimitExceeded,
    ResponseTruncated,
    TokenLimitExceeded,
)
from zigai.agent.events import (
    DeferredToolRequestEvent,
    EnqueuedMessagesEvent,
    FinalResultEvent,
    ModelResponseEvent,
    ToolAvailabilityEvent,
)
from zigai.agent.result import Result, TypedResult
from zigai.control import RunTimedOut
from zigai.messages import (
    CapabilityLoadCallPart,
    FinishReason,
    RequestMessage,
    ResponseMessage,
    RetryPromptPart,
    SystemPromptPart,
    ToolCallPart,
    UserPromptPart,
)
from zigai.model import ModelRequest, UnsupportedModelFeature, check_request_supported
from zigai.output import OutputRejected
from zigai.security import UrlPolicy
from zigai.settings import UnsupportedModelSetting
from zigai.tool import Tool
from zigai.tool.race import call_bounded
from zigai.transport import TransportTimedOut

__all__ = ["AgentRun", "RunState"]

#: Rich-content URLs of an agent without its own ``url_policy``: public HTTPS only.
_MEDIA_POLICY = UrlPolicy()


class AgentRun(RunCore):
    """One invocation of an agent (not thread-safe; one thread drives it)."""

    def __init__(
        self,
        agent: AgentConfig,
        options: RunOptions,
        *,
        output_type: Any = None,
        typed_mode: TypedMode | None = None,
        allow_pause: bool = False,
        resume: PausedState | None = None,
        decisions: Sequence[ResumeDecision] = (),
    ) -> None:
        super().__init__(
            agent, options, output_type=output_type, typed_mode=typed_mode,
            allow_pause=allow_pause, resume=resume is not None,
        )
        if resume is not None:
            self._restore(resume, decisions)

    def _restore(self, state: PausedState, decisions: Sequence[ResumeDecision]) -> None:
        """Rebuild a paused run: saved history, instructions, usage and counters; no replay.

        Which calls wait for a decision is derived from the current tools
        (:func:`~zigai.agent._tool_step.resume_calls`), never taken from the document.
        """
        options = self.options
        if options.message_history or options.prompt is not None or options.prompt_parts:
            raise InvalidAgentConfiguration(
                "a resumed run takes its history from the paused state; pass no prompt, prompt "
                "parts or history"
            )
        self.messages = list(state.messages)
        self.new_start = state.new_start
        self.instructions = state.instructions
        self.usage = state.usage
        self.output_retries = state.output_retries
        self.tool_retries = dict(state.tool_retries)
        self._resume_messages = state.pending_messages
        last = state.messages[-1]
        assert isinstance(last, ResponseMessage)
        self.response = last
        if self.caps is not None:
            self.caps.reconstruct(self, state.messages, run_end_from=state.new_start)
            self.caps.assemble(self)
        self._resolve_tools()
        calls = resume_calls(self, state)
        self.decisions = match_decisions(calls, decisions)
        self.deferred_calls = {call.tool_call_id: call for call in calls}
        self.state = RunState.execute_tools

    # -- driving ----------------------------------------------------------------------------

    def step(self) -> RunState:
        """Perform the current state's work and return the next state."""
        state = self.state
        if state is RunState.done:
            return state
        if not self._begun:
            self.begin()
        self.control.check()
        if state is RunState.prepare_request:
            self._prepare_request()
        elif state is RunState.model_request:
            self._model_request()
        elif state is RunState.handle_response:
            self._handle_response()
        elif state is RunState.execute_tools:
            self._execute_tools()
        elif state is RunState.start:
            self._start()
        else:
            self._finalize()
        return self.state

    def run(self) -> Result:
        """Step until done and return the owned result."""
        self.drive()
        return self.completed_result()

    def drive(self) -> None:
        """Step until done; on any failure the pending queue is closed and resources released."""
        try:
            while self.state is not RunState.done:
                self.step()
        except BaseException as exc:
            self.fail(exc)
            self.abort()
            raise
        finally:
            self.close()

    def completed_result(self) -> Result:
        """The owned result of a completed run (PauseRequired-safe: a paused run raises)."""
        if self.result is None:
            if self.paused is not None:
                calls = self.paused.calls
                raise PauseRequired(
                    "the run paused for deferred tool calls; read outcome() instead",
                    tool_names=tuple(c.tool_name for c in calls),
                    tool_call_ids=tuple(c.tool_call_id for c in calls),
                )
            raise InvalidAgentConfiguration("the run has not finished")
        return self.result

    def outcome(self) -> RunOutcome:
        """The tagged outcome of a finished pause-aware run."""
        if self.paused is not None:
            return RunOutcome(paused=self.paused)
        return RunOutcome(result=self.completed_result())

    def abort(self) -> None:
        """Terminal failure or abandonment: discard queued batches, stop the model stream."""
        if self.queue is not None:
            self.queue.close()
        self._close_stream()

    def _close_stream(self) -> None:
        streaming, self._streaming = self._streaming, None
        if streaming is not None:
            streaming.close()

    def close(self) -> None:
        """Release per-run resources (the tool worker pool, an open stream); idempotent."""
        self._close_stream()
        if self.queue is not None and self.state is not RunState.done:
            self.queue.close()
        scheduler, self._scheduler = self._scheduler, None
        if scheduler is not None:
            scheduler.close()

    def __enter__(self) -> AgentRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- states ---------------------------------------------------------------------------------

    def _start(self) -> None:
        agent = self.agent
        resolved = list(agent.instructions)
        if agent.dynamic_instructions:
            ctx = self.run_context()
            for dynamic in agent.dynamic_instructions:
                value = call_bounded(dynamic, ctx, control=self.control, what="a dynamic instruction")
                if value is not None and not isinstance(value, str):
                    raise InvalidAgentConfiguration(
                        f"dynamic instruction {dynamic!r} returned {type(value).__name__}, not str"
                    )
                if value:
                    resolved.append(value)
        if self.caps is not None:
            resolved.extend(self.caps.eager_instructions(self))
        resolved.extend(self.options.instructions or ())
        if self.output.instruction:
            resolved.append(self.output.instruction)
        self.instructions = tuple(i for i in resolved if i)
        prompt = self.options.prompt
        # System prompts belong to the conversation, so only a fresh one receives them;
        # instructions (above) belong to the run and are resolved on every invocation.
        system_parts: tuple[SystemPromptPart, ...] = ()
        if not self.messages and agent.system_prompt:
            system_parts = tuple(SystemPromptPart(text) for text in agent.system_prompt if text)
        rich = self.options.prompt_parts
        if prompt is not None or rich or system_parts:
            parts: tuple[Any, ...] = system_parts
            parts += tuple(UserPromptPart((item,)) for item in rich)  # each its own part, first
            if prompt is not None:
                parts += (UserPromptPart(prompt if isinstance(prompt, str) else tuple(prompt)),)
            rendered = "\n\n".join(self.instructions) if self.instructions else None
            self.messages.append(self.new_request(parts, rendered))
        self.state = RunState.prepare_request

    def _resolve_tools(self) -> tuple[Any, ...]:
        """This step's tools: direct tools, then toolsets, then the policies' prepare stage."""
        agent = self.agent
        prepare = self.policies.prepare
        caps = self.caps
        if caps is None:
            if not agent.toolsets and not prepare:
                cached = agent._cached(("tools",), lambda: _tool_table(_wrapped(agent, agent.function_tools)))
                self.step_tools = cached[0]
                return cached[1]
            tools: tuple[Tool, ...] = agent.function_tools
            toolsets = agent.toolsets
        else:
            tools, toolsets = caps.tools, caps.toolsets
        if toolsets:
            from zigai.toolset import ToolPrepareContext, resolve_tools

            ctx = ToolPrepareContext(
                deps=self.deps, usage=self.usage, request_count=self.usage.requests,
                messages=tuple(self.messages), control=self.control,
                capabilities=caps.snapshot if caps is not None else None, url_policy=self.url_policy,
            )
            tools = resolve_tools(tools, toolsets, ctx)
        if prepare:
            tools = prepare_tools(self, prepare, tools)
        table, definitions = _tool_table(_wrapped(agent, tools))
        self.step_tools = table
        return definitions

    def _prepare_request(self) -> None:
        limit = self.limits.max_requests
        if limit is not None and self.usage.requests >= limit:
            raise RequestLimitExceeded(
                f"the next model request would exceed max_requests={limit}",
                limit_name="max_requests", limit=limit, value=self.usage.requests + 1,
            )
        self._check_token_limits(before_request=True)
        if self.queue is not None:
            self._insert_pending(self.queue.take())
        definitions = self._resolve_tools()
        output_tools = self.output.tool_definitions
        if output_tools:
            clash = sorted(set(self.step_tools) & self.output.tool_names)
            if clash:
                raise InvalidAgentConfiguration(
                    f"output tool names clash with function tools: {', '.join(clash)}"
                )
            definitions = definitions + output_tools
        instructions = self.instructions
        if self.caps is not None:
            definitions, instructions = self.caps.request_extras(
                definitions, instructions, self.step_tools, self.output.tool_names
            )
        view = tuple(self.messages)
        if self._processors:
            from zigai.history import apply_processors

            view = call_bounded(
                apply_processors, view, self._processors, control=self.control,
                what="a history processor",
            )
        request = ModelRequest(
            messages=view,
            instructions=instructions,
            tools=definitions,
            managed_tools=self.builtin_tools,
            output_format=self.output.output_format,
            settings=self.settings,
            control=self.control,
            deadline=self.control.attempt_deadline(self.agent.request_timeout_ms),
            request_id=self.options.request_id,
            url_policy=self.url_policy,
            **self._error_policy(),
        )
        budget = self.options.context_budget or self.agent.context_budget
        if budget is not None:
            request = apply_budget(self, budget, request)
        try:
            check_request_supported(request, self.profile)
        except (UnsupportedModelFeature, UnsupportedModelSetting) as exc:
            raise with_profile_hint(self.model, exc) from None
        check_request_inputs(request.messages, self.url_policy or _MEDIA_POLICY, self.model.provider_name)
        self.request = request
        if self._sink is not None:
            names = (tuple(self.step_tools), tuple(d.name for d in output_tools))
            if names != self._tool_names:
                self._tool_names = names
                self.emit(ToolAvailabilityEvent(names[0], names[1]))
        self.state = RunState.model_request

    def _error_policy(self) -> dict[str, Any]:
        policy = self.agent.provider_error_policy
        if policy is None:
            return {}
        return {
            "error_observer": policy.observer, "capture_error_body": policy.capture_body,
            "max_error_body_bytes": policy.max_body_bytes,
        }

    def _cost(self) -> Any:
        table = self.agent.price_table
        if table is None:
            return None
        model = self.model
        return table.estimate(
            str(getattr(model, "provider_name", "")), str(getattr(model, "model_name", "")), self.usage
        )

    def _insert_pending(self, messages: tuple[RequestMessage, ...]) -> bool:
        if not messages:
            return False
        self.messages.extend(messages)
        if self._sink is not None:
            self.emit(EnqueuedMessagesEvent(messages))
        return True

    def _model_request_streamed(self) -> None:
        streaming = self._streaming
        if streaming is None:
            streaming = self._streaming = StreamingRequest(self)
            event = streaming.first
        else:
            event = streaming.next()
        if event is not None:
            streaming.guard.mark_delivered()
            self.emit(event)
            partial = streaming.deriver.derive(event)
            if partial is not None:
                self.emit(partial)
            return
        self._streaming = None
        response = self.stamped(streaming.finish(self.control.check))
        self._accept_response(response)
        self.emit(ModelResponseEvent(response, response.usage))

    def _model_request(self) -> None:
        try:
            self._model_request_step()
        except TransportTimedOut as exc:
            # One run-deadline error wherever it fires: a transport timeout at the run's own
            # deadline (not a shorter per-request ceiling) is the run timing out.
            if run_deadline_reached(self.control):
                raise RunTimedOut("run deadline exceeded during a model request") from exc
            raise

    def _model_request_step(self) -> None:
        if self._sink is not None:
            self._model_request_streamed()
            return
        self._accept_response(request_buffered(self))

    def _accept_response(self, response: Any) -> None:
        if not isinstance(response, ResponseMessage):
            raise InvalidAgentConfiguration(
                f"model.request returned {type(response).__name__}, not a ResponseMessage"
            )
        response = self.stamped(response)
        self.usage = self.usage.incr(
            response.usage, attempts=self.pending_attempts, provider_time_ns=self.pending_provider_ns,
        )
        self.pending_attempts = self.pending_provider_ns = 0
        self._check_token_limits()
        if self.caps is not None:
            response = self.caps.typify(response)
        self.messages.append(response)
        self.response = response
        self.state = RunState.handle_response

    def _check_token_limits(self, *, before_request: bool = False) -> None:
        """After a response: raise past a limit.  Before a request: raise once one is reached,
        since any further request would pass it (also for a resumed run's carried usage)."""
        limits = self.limits
        usage = self.usage
        for name, value in (
            ("max_input_tokens", usage.input_tokens),
            ("max_output_tokens", usage.output_tokens),
            ("max_total_tokens", usage.total_tokens),
        ):
            limit = getattr(limits, name)
            if limit is None:
                continue
            if value > limit:
                raise TokenLimitExceeded(
                    f"run usage exceeded {name}={limit} ({value})",
                    limit_name=name, limit=limit, value=value,
                )
            if before_request and value == limit:
                raise TokenLimitExceeded(
                    f"the next model request would exceed {name}={limit} ({value} already used)",
                    limit_name=name, limit=limit, value=value,
                )

    def _handle_response(self) -> None:
        response = self.response
        assert response is not None
        parts = response.parts
        has_calls = False
        for part in parts:
            if isinstance(part, (ToolCallPart, CapabilityLoadCallPart)):
                has_calls = True
                break
        finish = response.finish_reason
        if finish is FinishReason.length:
            if has_calls:
                raise IncompleteToolCall(
                    "the model hit its output limit while writing a tool call "
                    f"(raw finish reason {response.raw_finish_reason!r})"
                )
            raise ResponseTruncated(
                f"the model hit its output limit (raw finish reason {response.raw_finish_reason!r})"
            )
        if finish is FinishReason.content_filter:
            raise ContentFiltered(
                f"the provider filtered the response (raw finish reason {response.raw_finish_reason!r})"
            )
        if has_calls:
            waiting = check_pause(self, response)
            if waiting:
                self._pause(waiting)
                return
            self.state = RunState.execute_tools
            return
        text = response.text
        if not text:
            raise EmptyModelResponse("the model returned neither text nor tool calls")
        try:
            candidate = self.output.parse_text(text)
            output, json_value = accept_candidate(
                self.output, candidate,
                self.output_context(candidate.choice.name if candidate.choice else None),
                self.output_validators, self.control, self.decoder, self,
            )
        except OutputRejected as rejection:
            self.reject_output(rejection)
            self.messages.append(self.new_request((RetryPromptPart(rejection.message),)))
            self.state = RunState.prepare_request
            return
        self.final_output = output
        self.final_json = json_value
        self.final_name = candidate.choice.name if candidate.choice is not None else None
        self.state = RunState.finalize

    def _pause(self, waiting: tuple[DeferredCall, ...]) -> None:
        """End the invocation with a paused outcome; nothing of this response has run."""
        pending = self.queue.take_and_close() if self.queue is not None else ()
        messages = tuple(self.messages)
        state = PausedState(
            messages, self.new_start, self.instructions, self.settle_usage(), self.output_retries,
            dict(self.tool_retries), waiting, pending, settled_calls(self, waiting),
        )
        state_json = encode_paused_state(state, key=self.agent.state_key)
        self.paused = PausedRun(waiting, state_json, self.usage, messages)
        self.emit(DeferredToolRequestEvent(waiting))
        self.finish("paused", None)
        self.state = RunState.done

    def _execute_tools(self) -> None:
        response = self.response
        assert response is not None
        accepted = execute_tool_step(self, response)
        if self.decisions:
            self.decisions = {}
            self.deferred_calls = {}
            pending, self._resume_messages = self._resume_messages, ()
            if self._insert_pending(pending):
                accepted = False  # the model must see the messages that arrived meanwhile
        self.state = RunState.finalize if accepted else RunState.prepare_request

    def _finalize(self) -> None:
        if self.queue is not None and self._insert_pending(self.queue.take_or_close()):
            # A provisional final response: the queued messages get another model step.
            self.final_output = self.final_json = self.final_name = None
            self.state = RunState.prepare_request
            return
        if self._sink is not None:
            self.emit(FinalResultEvent(self.final_output, self.final_json, self.final_name))
        messages = tuple(self.messages)
        self.settle_usage()
        if self.typed:
            self.result = TypedResult(
                self.final_output, self.final_json, messages, self.new_start, self.usage,
                self.final_name, cost=self._cost(),
            )
        else:
            self.result = Result(
                self.final_output, messages, self.new_start, self.usage, self.final_name,
                cost=self._cost(),
            )
        self.finish("complete", self.final_output)
        self.state = RunState.done


def _wrapped(agent: Any, tools: tuple[Tool, ...]) -> tuple[Tool, ...]:
    """``tools`` through ``Agent.tool_wrapper`` (last, whatever route brought each tool in)."""
    wrap = agent.tool_wrapper
    if wrap is None:
        return tools
    wrapped = tuple(wrap(tool) for tool in tools)
    for before, after in zip(tools, wrapped, strict=True):
        if not isinstance(after, Tool) or after.name != before.name:
            raise InvalidAgentConfiguration(
                f"Agent.tool_wrapper returned {after!r} for tool {before.name!r}; it must return a "
                "Tool with the same name (tool.replace(invoke=...))"
            )
    return wrapped


def _tool_table(tools: tuple[Tool, ...]) -> tuple[dict[str, Tool], tuple[Any, ...]]:
    table: dict[str, Tool] = {}
    for tool in tools:
        if tool.name in table:
            from zigai.tool import DuplicateToolName

            raise DuplicateToolName(f"two tools are named {tool.name!r}", name=tool.name)
        table[tool.name] = tool
    return table, tuple(t.definition() for t in tools)
