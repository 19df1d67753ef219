"""``DurableAgent``: an ordinary :class:`~zigai.agent.Agent` run as a DBOS workflow.

There is no second agent loop.  Inside the workflow the agent runs through its public
``run_until_pause`` / ``resume_run_json`` API with three substitutions:

* its model is wrapped so each ``request`` is one DBOS step (named
  ``zigai.model_request#<ordinal>``) whose recorded output is the response as zigai history
  JSON;
* ``Agent.tool_wrapper`` is set, so every function tool the run resolves for a step — direct,
  toolset, MCP, capability (eager or loaded on demand), policy-prepared — is wrapped
  (``Tool.replace(invoke=...)``) and each call is one DBOS step (named
  ``zigai.tool_call#<ordinal>:<tool>``).  Steps for a response's tool calls are *reserved* on
  the workflow thread, in the model's call order, as soon as the response is known
  (``DBOS.reserve_step``), so their step numbers do not depend on which scheduler thread runs
  first;
* output functions are wrapped so each call is one step (``zigai.output_function#<ordinal>:<name>``),
  using the reserved step of its output-tool call or the next ordinal for native / prompted
  output.

With ``stream_events=True`` the steps also write the run's records to the DBOS stream
``zigai.events`` (:mod:`zigai.durable.events`), and the model step calls the model's
``stream``.

A pause maps onto DBOS messaging: the workflow publishes the pending calls under the event
``zigai.pause`` and waits durably in ``DBOS.recv(topic="zigai.decisions")`` for the versioned
resume-decisions JSON; :meth:`DurableAgent.send_decisions` sends it.  Because DBOS
checkpoints the event, the message and every step, a process killed anywhere resumes (on the
next ``DBOS.launch()`` or :meth:`DurableAgent.result`) without repeating a completed model
request or tool call.  An operation that was running when the process died did not complete
and runs again.

Requirements and honest limits:

* construct every :class:`DurableAgent` before ``DBOS.launch()`` (DBOS recovers only
  registered workflows), with the same ``name`` in every process;
* the agent must be deterministic given the recorded step outputs (dynamic instructions,
  preparers and validators run again on replay);
* dependencies (``deps``) stay process-local and are supplied again in every process;
* a recorded step output is replayed as recorded: a tool call that the scheduler abandoned
  after its timeout but that finished (and was recorded) later replays as a success;
* the wrapped model refuses an agent-level ``stream`` (:class:`DurableSetupError`): a durable
  run is followed through its result or its event stream.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from zigai import history
from zigai import json as zjson
from zigai._owner import Owner
from zigai.agent import (
    Agent,
    DeferredCall,
    ResultClosed,
    ResumeDecision,
    RunOptions,
    TypedResult,
    stringify_resume_decisions,
)
from zigai.durable.codec import (
    decode_output_return,
    decode_response,
    decode_tool_output,
    encode_output_return,
    encode_response,
    encode_tool_output,
)
from zigai.durable.errors import DurableApprovalTimedOut, DurableSetupError, DurableStepUnbound
from zigai.durable.events import EVENTS_STREAM, model_records, response_record
from zigai.durable.ids import StepCounter, StepId, StepScope
from zigai.messages import Message, ResponseMessage, ToolCallPart
from zigai.model import ModelRequest, StreamedResponse
from zigai.output import OutputRunContext, OutputSpec
from zigai.tool import Tool, ToolRunContext
from zigai.tool.tool import ValidatedArgs

__all__ = [
    "DurableAgent",
    "DurableHandle",
    "DurableRunResult",
    "PendingApproval",
    "current_step_id",
    "PAUSE_EVENT",
    "DECISIONS_TOPIC",
]

PAUSE_EVENT = "zigai.pause"
DECISIONS_TOPIC = "zigai.decisions"
_RESULT_VERSION = 1

_current_step: contextvars.ContextVar[StepId | None] = contextvars.ContextVar("zigai_durable_step", default=None)


def current_step_id() -> StepId | None:
    """The stable id of the durable step running on this thread (None outside one).

    Tools use it as an idempotency key for external side effects.
    """
    return _current_step.get()


def _dbos() -> Any:
    try:
        from dbos import DBOS
    except ImportError as exc:  # pragma: no cover - the dev extra installs dbos
        raise DurableSetupError("zigai.durable needs DBOS: pip install 'zigai[dbos]'") from exc
    return DBOS


class _Binding:
    """Per-workflow-execution state: the step counter and the reserved tool-call steps."""

    def __init__(self, counter: StepCounter, stream: bool = False) -> None:
        self.counter = counter
        self.stream = stream
        self._reserved: dict[str, tuple[StepId, Any, contextvars.Context]] = {}
        self._lock = threading.Lock()

    def reserve_calls(self, response: ResponseMessage) -> None:
        DBOS = _dbos()
        with self._lock:
            self._reserved.clear()
            for part in response.parts:
                if isinstance(part, ToolCallPart):
                    # The copied context carries the workflow's DBOS context to whichever
                    # scheduler thread runs the call; one copy per call (a context cannot be
                    # entered by two threads at once).
                    self._reserved[part.tool_call_id] = (
                        self.counter.next(), DBOS.reserve_step(), contextvars.copy_context()
                    )

    def write(self, record: dict[str, Any]) -> None:
        """Append ``record`` to the run's event stream when the agent streams events."""
        if self.stream:
            _dbos().write_stream(EVENTS_STREAM, record)

    def take(self, tool_call_id: str) -> tuple[StepId, Any, contextvars.Context]:
        with self._lock:
            try:
                return self._reserved.pop(tool_call_id)
            except KeyError:
                raise DurableStepUnbound(
                    f"tool call {tool_call_id!r} has no reserved durable step: durable tools run only "
                    "inside a DurableAgent workflow, once per model tool call"
                ) from None


class _DurableModel:
    """The agent's model with every request recorded as one DBOS step."""

    def __init__(self, inner: Any, binding: _Binding) -> None:
        self._inner = inner
        self._binding = binding
        settings = getattr(inner, "settings", None)
        if settings is not None:
            self.settings = settings

    @property
    def model_name(self) -> str:
        return str(self._inner.model_name)

    @property
    def provider_name(self) -> str:
        return str(self._inner.provider_name)

    @property
    def profile(self) -> Any:
        return self._inner.profile

    def request(self, request: ModelRequest) -> ResponseMessage:
        step = self._binding.counter.next()

        def body() -> str:
            token = _current_step.set(step)
            try:
                if not self._binding.stream:
                    return encode_response(self._inner.request(request))
                return encode_response(self._streamed(request, step.ordinal))
            finally:
                _current_step.reset(token)

        text = _dbos().run_step({"name": f"zigai.model_request#{step.ordinal}"}, body)
        response = decode_response(text)
        self._binding.reserve_calls(response)
        return response

    def _streamed(self, request: ModelRequest, ordinal: int) -> ResponseMessage:
        write = self._binding.write
        write({"kind": "model_request", "step": ordinal})
        with self._inner.stream(request) as streamed:
            for record in model_records(streamed, ordinal):
                write(record)
            response = streamed.response()
        write(response_record(response, ordinal))
        return response

    def stream(self, request: ModelRequest) -> StreamedResponse:
        raise DurableSetupError("durable runs are buffered; use DurableAgent.run, not a stream")


def _durable_tool(tool: Tool, binding: _Binding) -> Tool:
    def invoke(value: Any, ctx: ToolRunContext) -> Any:
        step, reservation, context = binding.take(ctx.tool_call_id)

        def body() -> str:
            token = _current_step.set(step)
            ids = {"step": step.ordinal, "tool": ctx.tool_name, "tool_call_id": ctx.tool_call_id}
            binding.write({"kind": "tool_call", **ids, "args": value})
            try:
                output = tool.execute(ValidatedArgs(arguments={}, value=value), ctx)
            except Exception as exc:
                binding.write({"kind": "tool_error", **ids, "error": f"{type(exc).__name__}: {exc}"})
                raise
            finally:
                _current_step.reset(token)
            binding.write({"kind": "tool_result", **ids, "content": output.content})
            return encode_tool_output(output)

        name = f"zigai.tool_call#{step.ordinal}:{tool.name}"
        return decode_tool_output(context.run(reservation.run, {"name": name}, body))

    return tool.replace(invoke=invoke)


def _durable_output(spec: OutputSpec, binding: _Binding) -> OutputSpec:
    """``spec`` with every output function run as one step (``zigai.output_function#n:<name>``).

    An output *tool* call already has the step its response reserved; a native or prompted
    output takes the next ordinal when its function runs (on the run's path, after the model
    step that produced it).
    """
    if not any(choice.function is not None for choice in spec.choices):
        return spec

    def durable(function: Callable[[OutputRunContext, Any], Any], name: str) -> Callable[[OutputRunContext, Any], Any]:
        def run(ctx: OutputRunContext, value: Any) -> Any:
            def body(step: StepId) -> str:
                token = _current_step.set(step)
                try:
                    return encode_output_return(function(ctx, value))
                finally:
                    _current_step.reset(token)

            if ctx.tool_call_id is not None:
                step, reservation, context = binding.take(ctx.tool_call_id)
                text = context.run(reservation.run, {"name": f"zigai.output_function#{step.ordinal}:{name}"},
                                   body, step)
            else:
                step = binding.counter.next()
                text = _dbos().run_step({"name": f"zigai.output_function#{step.ordinal}:{name}"}, body, step)
            return decode_output_return(text)

        return run

    choices = tuple(replace(c, function=durable(c.function, c.name)) if c.function is not None else c
                    for c in spec.choices)
    return replace(spec, choices=choices)


@dataclass(frozen=True, slots=True)
class PendingApproval:
    """A durable run waiting for decisions: its round, deferred calls and paused state."""

    workflow_id: str
    round: int
    calls: tuple[DeferredCall, ...]
    state_json: str


class DurableRunResult(Owner):
    """The owned outcome of a finished durable run: output, canonical messages, workflow id."""

    __slots__ = ("_workflow_id", "_output", "_messages")

    _closed_error = ResultClosed

    def __init__(self, workflow_id: str, output: Any, messages: tuple[Message, ...]) -> None:
        super().__init__()
        self._workflow_id = workflow_id
        self._output = output
        self._messages = messages

    def _release(self) -> None:
        self._output = None
        self._messages = ()

    @property
    def workflow_id(self) -> str:
        self._check()
        return self._workflow_id

    @property
    def output(self) -> Any:
        self._check()
        return self._output

    @property
    def messages(self) -> tuple[Message, ...]:
        self._check()
        return self._messages


_Decoder = Callable[[Any, Any], Any]


def _typed_decoder(agent: Agent) -> _Decoder | None:
    """For ``Agent(output_type=T)``: recorded JSON (and output tool name) -> the T value, the
    way the run decoded it (a union member by the output tool the model called); else None."""
    typed = agent._typed_output
    if typed is None:
        return None
    from zigai.agent._familiar.output_type import union_members
    from zigai.reflect import decode

    members = union_members(typed)
    return lambda value, name: decode(members.get(name, typed), value)


def _decode_result(workflow_id: str, text: str, decoder: _Decoder | None = None) -> DurableRunResult:
    value = zjson.parse(text, zjson.defaults.history)
    if not isinstance(value, dict) or value.get("v") != _RESULT_VERSION:
        raise DurableSetupError("a durable run returned an unknown result format")
    with history.parse(value["messages"]) as owned:
        messages = owned.messages
    output = value["output"]
    if decoder is not None:
        output = decoder(output, value.get("output_name"))
    return DurableRunResult(workflow_id, output, messages)


class DurableHandle:
    """A started durable run: its id, and a blocking :meth:`result`."""

    __slots__ = ("_workflow_id", "_handle", "_decoder")

    def __init__(self, workflow_id: str, handle: Any, decoder: _Decoder | None = None) -> None:
        self._workflow_id = workflow_id
        self._handle = handle
        self._decoder = decoder

    @property
    def workflow_id(self) -> str:
        return self._workflow_id

    def result(self) -> DurableRunResult:
        """Wait for the run to finish (a failed run re-raises its error)."""
        return _decode_result(self._workflow_id, self._handle.get_result(), self._decoder)


class DurableAgent:
    """Run ``agent`` durably under DBOS (see module docstring)."""

    def __init__(
        self,
        agent: Agent,
        *,
        name: str,
        deps: Any = None,
        namespace: str | None = None,
        scope: StepScope | None = None,
        approval_timeout_s: float = 24 * 3600.0,
        stream_events: bool = False,
    ) -> None:
        if not isinstance(agent, Agent):
            raise DurableSetupError("DurableAgent needs a zigai Agent")
        if not isinstance(name, str) or not name:
            raise DurableSetupError("DurableAgent needs a non-empty, stable name")
        if approval_timeout_s <= 0:
            raise DurableSetupError("approval_timeout_s must be > 0")
        if namespace is not None:
            StepId("x", 0, namespace)  # validate early
        self._agent = agent
        self._decoder = _typed_decoder(agent)
        self._name = name
        self._deps = deps
        self._namespace = namespace
        self._scope = scope
        self._approval_timeout_s = approval_timeout_s
        self._stream_events = bool(stream_events)
        DBOS = _dbos()

        def agent_workflow(prompt: str | None, history_json: str) -> str:
            return self._execute(prompt, history_json)

        self._workflow: Callable[[str | None, str], str] = DBOS.workflow(name=f"zigai.agent:{name}")(agent_workflow)

    @property
    def name(self) -> str:
        return self._name

    def _bound_agent(self, binding: _Binding) -> Agent:
        # Agent.tool_wrapper runs last on every function tool of every step, whatever route
        # brought it in (direct, toolset, MCP, capability, policy-prepared), so no route escapes.
        inner = self._agent.tool_wrapper

        def wrap(tool: Tool) -> Tool:
            return _durable_tool(tool if inner is None else inner(tool), binding)

        agent = self._agent
        if agent.output_type is not None and agent._typed_output is None:
            # Agent(output_type=fn): the output function lives in the derived spec, not in
            # Agent.output, so hand the spec over explicitly and make each call a step too.
            return replace(agent, model=_DurableModel(agent.model, binding), output_type=None, output_mode=None,
                           output=_durable_output(agent._output_spec, binding), tool_wrapper=wrap)
        return replace(
            agent,
            model=_DurableModel(agent.model, binding),
            output=_durable_output(agent.output, binding),
            tool_wrapper=wrap,
        )

    def _execute(self, prompt: str | None, history_json: str) -> str:
        DBOS = _dbos()
        workflow_id = DBOS.workflow_id
        binding = _Binding(StepCounter(workflow_id, namespace=self._namespace, scope=self._scope),
                           self._stream_events)
        agent = self._bound_agent(binding)
        with history.parse(history_json) as owned:
            message_history = owned.messages
        outcome = agent.run_until_pause(options=RunOptions(prompt=prompt, message_history=message_history,
                                                           deps=self._deps))
        round_ = 0
        while outcome.is_paused:
            paused = outcome.paused
            state_json, calls = paused.state_json, paused.calls
            DBOS.set_event(PAUSE_EVENT, zjson.dumps({
                "status": "paused", "round": round_, "state_json": state_json,
                "calls": [{"tool_call_id": c.tool_call_id, "tool_name": c.tool_name, "args": c.args,
                           "execution": c.execution, "approval": c.approval.value,
                           "resolved": c.resolved} for c in calls],
            }))
            outcome.close()
            if self._stream_events:
                DBOS.write_stream(EVENTS_STREAM, {"kind": "paused", "round": round_,
                                                  "tool_call_ids": [c.tool_call_id for c in calls]})
            decisions_json = DBOS.recv(DECISIONS_TOPIC, timeout_seconds=self._approval_timeout_s)
            if decisions_json is None:
                raise DurableApprovalTimedOut(
                    f"durable run {workflow_id!r} received no decisions within {self._approval_timeout_s} s",
                    workflow_id=workflow_id, round=round_,
                )
            DBOS.set_event(PAUSE_EVENT, zjson.dumps({"status": "running", "round": round_ + 1}))
            outcome = agent.resume_run_json(state_json, decisions_json, deps=self._deps)
            round_ += 1
        with outcome.result as result:
            # Agent(output_type=T): record the validated JSON the value was decoded from (a T
            # need not be JSON); the run's handle decodes it again (see _typed_decoder).
            output = result.json if isinstance(result, TypedResult) else result.output
            record: dict[str, Any] = {"v": _RESULT_VERSION, "output": output,
                                      "messages": history.stringify(result.all_messages())}
            if isinstance(result, TypedResult) and result.output_name is not None:
                record["output_name"] = result.output_name
            text = zjson.dumps(record)
            if self._stream_events:
                DBOS.write_stream(EVENTS_STREAM, {"kind": "final", "output": output})
                DBOS.close_stream(EVENTS_STREAM)
            return text

    # -- application API ------------------------------------------------------------------

    def start(self, prompt: str | None = None, *, workflow_id: str,
              message_history: Sequence[Message] = ()) -> DurableHandle:
        """Start the run with this id, or attach to it when it already exists."""
        from dbos import SetWorkflowID

        StepId(workflow_id, 0)  # the id becomes part of every step id
        DBOS = _dbos()
        with SetWorkflowID(workflow_id):
            handle = DBOS.start_workflow(self._workflow, prompt, history.stringify(message_history))
        return DurableHandle(workflow_id, handle, self._decoder)

    def enqueue(self, prompt: str | None = None, *, workflow_id: str, queue: Any,
                message_history: Sequence[Message] = ()) -> DurableHandle:
        """Put the run on a DBOS ``Queue`` (declared in every worker before launch); a worker runs it.

        From a process that does not run agents, use :meth:`DurableRuns.enqueue` instead.
        """
        from dbos import SetWorkflowID

        StepId(workflow_id, 0)
        with SetWorkflowID(workflow_id):
            handle = queue.enqueue(self._workflow, prompt, history.stringify(message_history))
        return DurableHandle(workflow_id, handle, self._decoder)

    def run(self, prompt: str | None = None, *, workflow_id: str,
            message_history: Sequence[Message] = ()) -> DurableRunResult:
        """:meth:`start` then wait for the result."""
        return self.start(prompt, workflow_id=workflow_id, message_history=message_history).result()

    def result(self, workflow_id: str) -> DurableRunResult:
        """Wait for an existing run (for example one DBOS is recovering) to finish."""
        return DurableHandle(workflow_id, _dbos().retrieve_workflow(workflow_id), self._decoder).result()

    def pending_approval(self, workflow_id: str, *, timeout_s: float = 10.0) -> PendingApproval | None:
        """The calls a run is waiting on, or None when it is not paused (waits up to ``timeout_s``)."""
        from zigai.agent import ApprovalSource

        text = _dbos().get_event(workflow_id, PAUSE_EVENT, timeout_seconds=timeout_s)
        if text is None:
            return None
        value = zjson.parse(text, zjson.defaults.paused_state)
        if value.get("status") != "paused":
            return None
        calls = tuple(DeferredCall(tool_call_id=c["tool_call_id"], tool_name=c["tool_name"], args=c["args"],
                                   execution=c["execution"], approval=ApprovalSource(c["approval"]),
                                   resolved=c.get("resolved", False) is True)
                      for c in value["calls"])
        return PendingApproval(workflow_id, value["round"], calls, value["state_json"])

    def events(self, workflow_id: str, *, timeout_s: float | None = None) -> Iterator[dict[str, Any]]:
        """The run's event records as they are written, until the run ends (``stream_events=True``).

        ``timeout_s`` bounds the wait for each next record (DBOS raises ``DBOSStreamTimeoutError``);
        see :mod:`zigai.durable.events` for the records and what a consumer sees after a crash.
        """
        yield from _dbos().read_stream(workflow_id, EVENTS_STREAM, polling_interval_sec=0.05,
                                       timeout_seconds=timeout_s)

    def send_decisions(self, workflow_id: str, decisions: Sequence[ResumeDecision]) -> None:
        """Deliver one decision per pending call to a paused run (durably, via DBOS.send)."""
        _dbos().send(workflow_id, stringify_resume_decisions(decisions), topic=DECISIONS_TOPIC)
