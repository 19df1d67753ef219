"""``Agent``: the public run entry points over an immutable :class:`AgentConfig`.

An :class:`Agent` is configuration only — model, instructions, tools, output behaviour,
limits, settings, timeouts and retry policy (the fields and their validation live in
:mod:`zigai.agent.config`).  It holds no per-run state and never changes once it has run (the
only changes ever made are the registering decorators' below, before the first run), so one
agent may serve many threads at once.  Each invocation builds an
:class:`~zigai.agent.run.AgentRun` (the state machine) from the agent and
:class:`RunOptions`; ``run``/``run_typed`` step it to completion, the streaming entry points
wrap it in an :class:`~zigai.agent.stream.AgentStream` (a sink of the same machine), and the
pause/resume entry points drive it with a pause-aware outcome.

Import order inside the package is one-way: ``config`` → ``run`` (over the step executors)
→ ``stream`` → this module.

PydanticAI-shaped spellings sit on top without giving up immutability: ``Agent("openai:…")``,
plain functions in ``tools=``, ``output_type=`` (``run`` then returns the typed value),
typed keyword arguments (``deps=``, ``message_history=`` …, see :mod:`zigai.agent._familiar.kwargs`),
``run_sync``, ``with_tools``/``with_instructions``/``with_output_validator`` (new agents),
``override`` (a context-local swap, :mod:`zigai.agent._familiar.override`) and registering decorators
(``@agent.tool`` …) that work only until the agent's first run, after which it is frozen
and they raise :class:`~zigai.agent.errors.AgentFrozen`.  ``@agent.instructions`` and
``@agent.system_prompt`` are among them although both names are fields: reading one gives
the configured strings as a tuple that is also callable
(:mod:`zigai.agent._familiar.instruction_fields`).

Invariants:

* settings merge in model → agent → run order and unsupported controls fail before the
  model is called;
* the output specification, tool definitions and settings are checked before the first
  model request (nothing paid is sent for an invalid configuration);
* after an agent's first run (or ``iter``) none of its fields ever changes again; before it,
  only the registering decorators change it, one atomic tuple swap under the agent's lock.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar, Union, overload

from zigai.agent._familiar.adapters import adapt_instruction, adapt_validator
from zigai.agent._familiar.instruction_fields import (
    InstructionField,
    InstructionsView,
    SystemPromptView,
)
from zigai.agent._familiar.kwargs import AGENT_SPELLINGS, RunKwargs, check_keywords
from zigai.agent._familiar.override import UNSET, active_override
from zigai.agent._familiar.override import override as _override
from zigai.agent.config import (
    AgentConfig,
    DynamicInstruction,
    OutputT,
    RunContext,
    RunLimits,
    RunOptions,
    ToolApproval,
    TypedMode,
)
from zigai.agent.deferred import decode_paused_state, parse_resume_decisions
from zigai.agent.errors import AgentFrozen, InvalidAgentConfiguration
from zigai.agent.run import AgentRun
from zigai.agent.stream import AgentStream, run_with_sink

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from zigai.agent.deferred import OwnedResumeDecisions, ResumeDecision, RunOutcome
    from zigai.agent.events import AgentStreamEvent
    from zigai.agent.result import Result, TypedResult
    from zigai.model import Model
    from zigai.tool import Tool

__all__ = ["Agent", "RunLimits", "RunOptions", "RunContext", "DynamicInstruction", "ToolApproval"]

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
if TYPE_CHECKING:  # a default (PEP 696) so an unsubscripted use means "deps of any type"
    from typing_extensions import TypeVar as _DefaultedTypeVar

    DepsT = _DefaultedTypeVar("DepsT", default=Any)
else:
    DepsT = TypeVar("DepsT")

_RUN_FIELDS = frozenset(f.name for f in fields(RunOptions)) - {"prompt"}
_AGENT_FIELDS = frozenset(f.name for f in fields(AgentConfig) if f.init)


class Agent(AgentConfig[OutputT], Generic[DepsT, OutputT]):
    """An immutable agent: :class:`AgentConfig` fields plus the run entry points.

    ``Agent[MyDeps]`` (or ``Agent[MyDeps, MyOutput]``) is for type checkers: it names the
    dependency type the tools see as ``ctx.deps`` (``deps_type=MyDeps`` checks it at run
    time) and the type of ``result.output`` (inferred from ``output_type=``).
    """

    __slots__ = ()

    # Reading gives the configured strings; calling them registers a dynamic instruction
    # (``@agent.instructions``, ``@agent.system_prompt``), see zigai.agent._familiar.instruction_fields.
    instructions = InstructionField(AgentConfig.__dict__["instructions"], InstructionsView)
    system_prompt = InstructionField(AgentConfig.__dict__["system_prompt"], SystemPromptView)

    if not TYPE_CHECKING:

        @functools.wraps(AgentConfig.__init__)  # inspect.signature(Agent) shows the fields
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            check_keywords(kwargs, _AGENT_FIELDS, "Agent()", AGENT_SPELLINGS)
            AgentConfig.__init__(self, *args, **kwargs)

        def __class_getitem__(cls, params: Any) -> Any:
            # Agent[Deps] means Agent[Deps, Any]: the output type parameter has a default
            if not isinstance(params, tuple):
                params = (params,)
            if len(params) == 1:
                params = (*params, Any)
            return super().__class_getitem__(params)

    def __setattr__(self, name: str, value: object) -> None:
        if name == "__orig_class__":
            return  # typing records Agent[Deps](...) here; an agent stays immutable instead
        AgentConfig.__setattr__(self, name, value)

    # -- what a run uses ---------------------------------------------------------------------

    def _freeze(self) -> None:
        if not self._frozen:
            with self._cache_lock:
                object.__setattr__(self, "_frozen", True)

    def _options(self, prompt: Any, options: RunOptions | None, kwargs: Mapping[str, Any]) -> RunOptions:
        check_keywords(kwargs, _RUN_FIELDS, "Agent.run")
        if options is None:
            options = RunOptions(prompt=prompt, **kwargs)
        else:
            if not isinstance(options, RunOptions):
                raise InvalidAgentConfiguration("options must be a RunOptions")
            changes = dict(kwargs)
            if prompt is not None:
                changes["prompt"] = prompt
            if changes:
                options = replace(options, **changes)
        return options

    def _run(
        self, prompt: Any, options: RunOptions | None, kwargs: Mapping[str, Any], *,
        output_type: Any = None, mode: TypedMode | None = None, allow_pause: bool = False,
        resume: Any = None, decisions: Any = (),
    ) -> AgentRun:
        self._freeze()
        agent: Agent[Any, Any] = self
        run_options = self._options(prompt, options, kwargs)
        active = active_override(self)
        if active is not None:
            agent = active.replacement
            if active.deps is not UNSET:
                run_options = replace(run_options, deps=active.deps)
        if output_type is None:
            output_type = agent._typed_output
        elif isinstance(output_type, (list, tuple)) and output_type:  # [A, B] means A | B
            output_type = output_type[0] if len(output_type) == 1 else Union[tuple(output_type)]  # noqa: UP007
        if mode is None:
            mode = agent.output_mode
        return AgentRun(
            agent, run_options, output_type=output_type, typed_mode=mode,
            allow_pause=allow_pause, resume=resume, decisions=decisions,
        )

    # -- entry points ----------------------------------------------------------------------------

    def iter(
        self, prompt: Any = None, *, options: RunOptions | None = None, output_type: Any = None,
        mode: TypedMode | None = None, **kwargs: Unpack[RunKwargs[DepsT]],
    ) -> AgentRun:
        """A fresh run state machine; call ``step()`` until ``done`` (or use ``run``)."""
        return self._run(prompt, options, kwargs, output_type=output_type, mode=mode)

    @overload
    def run(
        self, prompt: Any = None, *, options: RunOptions | None = None, output_type: None = None,
        mode: TypedMode | None = None, **kwargs: Unpack[RunKwargs[DepsT]],
    ) -> Result[OutputT]: ...

    @overload
    def run(
        self, prompt: Any = None, *, options: RunOptions | None = None, output_type: type[T],
        mode: TypedMode | None = None, **kwargs: Unpack[RunKwargs[DepsT]],
    ) -> TypedResult[T]: ...

    def run(
        self, prompt: Any = None, *, options: RunOptions | None = None, output_type: Any = None,
        mode: TypedMode | None = None, **kwargs: Unpack[RunKwargs[DepsT]],
    ) -> Result[Any]:
        """Run to a final output.  Keyword arguments are :class:`RunOptions` fields.

        With ``output_type`` (here or on the agent) the result is a :class:`TypedResult`
        whose ``output`` is the decoded value; ``mode`` picks native, tool or prompted output.
        """
        return self._run(prompt, options, kwargs, output_type=output_type, mode=mode).run()

    run_sync = run
    """The same as :meth:`run` (zigai is synchronous); kept for code ported from PydanticAI."""

    def run_typed(
        self,
        output_type: type[T],
        prompt: Any = None,
        *,
        mode: TypedMode | None = None,
        options: RunOptions | None = None,
        **kwargs: Unpack[RunKwargs[DepsT]],
    ) -> TypedResult[T]:
        """Run with a schema derived from ``output_type`` and decode the output into it.

        ``mode`` picks native, tool or prompted output; by default the agent's
        ``output_mode`` or structured mode, else native when the profile supports it,
        else tool output, else prompted output.
        """
        run = self._run(prompt, options, kwargs, output_type=output_type, mode=mode)
        return run.run()  # type: ignore[return-value]

    # -- streaming ------------------------------------------------------------------------------

    def run_stream(
        self,
        prompt: Any = None,
        *,
        options: RunOptions | None = None,
        output_type: Any = None,
        mode: TypedMode | None = None,
        **kwargs: Unpack[RunKwargs[DepsT]],
    ) -> AgentStream:
        """A synchronous stream of ``AgentStreamEvent`` values over the ordinary loop.

        Use it as a context manager, iterate it, then call ``result()`` for the owned
        :class:`Result` (a :class:`TypedResult` when ``output_type`` is given).  A deferred
        tool call raises ``PauseRequired``; use :meth:`run_until_pause_stream` for those.
        """
        return AgentStream(self._run(prompt, options, kwargs, output_type=output_type, mode=mode))

    def run_stream_events(
        self,
        prompt: Any = None,
        *,
        sink: Callable[[AgentStreamEvent], None],
        options: RunOptions | None = None,
        output_type: Any = None,
        mode: TypedMode | None = None,
        **kwargs: Unpack[RunKwargs[DepsT]],
    ) -> Result:
        """Run to completion, handing every stream event to ``sink`` as it happens.

        ``sink`` runs on the calling thread; whatever it raises stops the run.
        """
        if not callable(sink):
            raise InvalidAgentConfiguration("run_stream_events needs a callable sink")
        run = self._run(prompt, options, kwargs, output_type=output_type, mode=mode)
        run_with_sink(run, sink)
        return run.completed_result()

    # -- deferred tools ---------------------------------------------------------------------------

    def run_until_pause(
        self,
        prompt: Any = None,
        *,
        options: RunOptions | None = None,
        output_type: Any = None,
        mode: TypedMode | None = None,
        **kwargs: Unpack[RunKwargs[DepsT]],
    ) -> RunOutcome:
        """Run until a final output (``complete``) or a deferred tool call (``paused``).

        The pause happens before any call of that model response executes; the
        :class:`~zigai.agent.deferred.PausedRun` owns the versioned ``state_json``.
        """
        run = self._run(prompt, options, kwargs, output_type=output_type, mode=mode, allow_pause=True)
        run.drive()
        return run.outcome()

    def run_until_pause_stream(
        self,
        prompt: Any = None,
        *,
        options: RunOptions | None = None,
        output_type: Any = None,
        mode: TypedMode | None = None,
        **kwargs: Unpack[RunKwargs[DepsT]],
    ) -> AgentStream:
        """:meth:`run_until_pause` as a stream; read ``outcome()`` after iterating."""
        run = self._run(prompt, options, kwargs, output_type=output_type, mode=mode, allow_pause=True)
        return AgentStream(run, pause_aware=True)

    def _resume(
        self, state_json: str | bytes, decisions: Any, options: RunOptions | None,
        kwargs: Mapping[str, Any], output_type: Any, mode: TypedMode | None,
    ) -> AgentRun:
        state = decode_paused_state(state_json, key=self.state_key)
        return self._run(
            None, options, kwargs, output_type=output_type, mode=mode, allow_pause=True,
            resume=state, decisions=tuple(decisions),
        )

    def resume_run(
        self,
        state_json: str | bytes,
        decisions: Sequence[ResumeDecision] | OwnedResumeDecisions,
        *,
        options: RunOptions | None = None,
        output_type: Any = None,
        mode: TypedMode | None = None,
        **kwargs: Unpack[RunKwargs[DepsT]],
    ) -> RunOutcome:
        """Continue a paused run with exactly one decision per deferred call.

        Immediate calls of the pausing response run now, the original model request is
        never replayed, and this invocation gets a fresh deadline.  Dependencies come from
        ``options``/``kwargs`` (``deps=...``); instructions come from the saved state.
        The outcome may pause again.
        """
        run = self._resume(state_json, decisions, options, kwargs, output_type, mode)
        run.drive()
        return run.outcome()

    def resume_run_json(
        self,
        state_json: str | bytes,
        decisions_json: str | bytes,
        *,
        options: RunOptions | None = None,
        output_type: Any = None,
        mode: TypedMode | None = None,
        **kwargs: Unpack[RunKwargs[DepsT]],
    ) -> RunOutcome:
        """:meth:`resume_run` with decisions in the versioned resume-decisions JSON."""
        with parse_resume_decisions(decisions_json, key=self.state_key, pause=state_json) as owned:
            decisions = owned.decisions
        return self.resume_run(
            state_json, decisions, options=options, output_type=output_type, mode=mode, **kwargs
        )

    def resume_run_stream(
        self,
        state_json: str | bytes,
        decisions: Sequence[ResumeDecision] | OwnedResumeDecisions,
        *,
        options: RunOptions | None = None,
        output_type: Any = None,
        mode: TypedMode | None = None,
        **kwargs: Unpack[RunKwargs[DepsT]],
    ) -> AgentStream:
        """:meth:`resume_run` as a stream; read ``outcome()`` after iterating."""
        run = self._resume(state_json, decisions, options, kwargs, output_type, mode)
        return AgentStream(run, pause_aware=True)

    # -- new agents from this one (never a change to this one) ------------------------------------

    def with_tools(self, *tools: Tool | Callable[..., Any]) -> Agent[DepsT, OutputT]:
        """A new agent with ``tools`` (Tool values or plain functions) added to this one's."""
        return replace(self, tools=(*self.tools, *tools))

    def with_instructions(self, *instructions: str | Callable[..., Any]) -> Agent[DepsT, OutputT]:
        """A new agent with more instructions: strings are static, callables ``(ctx)``/``()``
        are dynamic instructions evaluated at the start of every run."""
        static = tuple(i for i in instructions if isinstance(i, str))
        dynamic = tuple(adapt_instruction(i) for i in instructions if not isinstance(i, str))
        return replace(
            self, instructions=(*self.instructions, *static),
            dynamic_instructions=(*self.dynamic_instructions, *dynamic),
        )

    def with_output_validator(self, *validators: Callable[..., Any]) -> Agent[DepsT, OutputT]:
        """A new agent with output validators appended: ``(ctx, output)`` / ``(output)``
        returning the output (raise ``ModelRetry`` to ask again) or zigai's ``(name, ctx, value)``."""
        adapted = tuple(adapt_validator(v) for v in validators)
        return replace(self, output_validators=(*self.output_validators, *adapted))

    @contextmanager
    def override(
        self, *, model: Model | str | Any = UNSET, deps: DepsT | Any = UNSET,
        tools: Sequence[Tool | Callable[..., Any]] | Any = UNSET,
    ) -> Iterator[None]:
        """Within the block, runs of this agent started in this thread/context use ``model``,
        ``tools`` and ``deps`` instead; the agent object and other threads are untouched."""
        with _override(self, model=model, deps=deps, tools=tools):
            yield

    # -- registering decorators (only before the first run) ---------------------------------------

    _REBUILD = {"tool": "with_tools", "dynamic_instruction": "with_instructions",
                "instructions": "with_instructions", "system_prompt": "with_instructions",
                "output_validator": "with_output_validator"}

    def _register(self, what: str, name: str, value: Any) -> None:
        with self._cache_lock:
            if self._frozen:
                raise AgentFrozen(
                    f"@agent.{what} after the agent's first run: an agent is frozen once it runs "
                    f"(other threads may be running it); build a new one with "
                    f"agent.{self._REBUILD[what]}(...) instead"
                )
            object.__setattr__(self, name, (*getattr(self, name), value))
            self._cache.clear()

    @overload
    def tool(self, function: F, /) -> F: ...

    @overload
    def tool(self, function: None = None, /, **options: Any) -> Callable[[F], F]: ...

    def tool(self, function: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        """``@agent.tool``: reflect the function (a first ``RunContext[Deps]`` parameter gets the
        call's context) and add it; returns the function unchanged.  Options are those of
        :func:`zigai.reflect.tool`.  Allowed only before the agent's first run."""
        from zigai.reflect import tool as reflect_tool

        def add(target: F) -> F:
            name = options.get("name")
            rest = {k: v for k, v in options.items() if k not in ("name", "description")}
            built = reflect_tool(name or target.__name__, options.get("description"), target, **rest)
            self._register("tool", "tools", built)
            return target

        return add if function is None else add(function)

    @overload
    def tool_plain(self, function: F, /) -> F: ...

    @overload
    def tool_plain(self, function: None = None, /, **options: Any) -> Callable[[F], F]: ...

    def tool_plain(self, function: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        """``@agent.tool_plain``: like :meth:`tool` for a function that takes no context."""
        decorate: Callable[[Any], Any] = self.tool(takes_context=False, **options)
        return decorate if function is None else decorate(function)

    def dynamic_instruction(self, function: F, /) -> F:
        """``@agent.dynamic_instruction``: register ``(ctx) -> str | None`` or ``() -> str``,
        evaluated at the start of every run.  ``@agent.instructions`` and
        ``@agent.system_prompt`` do the same.  Allowed only before the agent's first run."""
        self._register_instruction("dynamic_instruction", function)
        return function

    def _register_instruction(self, what: str, function: Callable[..., Any]) -> None:
        if isinstance(function, str):
            raise InvalidAgentConfiguration(
                f"agent.{what}(...) registers a function returning the text; for fixed text pass "
                f"Agent({what}=...) or build a new agent with agent.with_instructions({function!r})"
            )
        self._register(what, "dynamic_instructions", adapt_instruction(function))

    def output_validator(self, function: F, /) -> F:
        """``@agent.output_validator``: ``(ctx, output)`` / ``(output)`` returning the output
        (``ModelRetry`` asks the model again).  Allowed only before the agent's first run."""
        self._register("output_validator", "output_validators", adapt_validator(function))
        return function
