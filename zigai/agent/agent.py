"""``Agent``: the public run entry points over an immutable :class:`AgentConfig`.

An :class:`Agent` is configuration only — model, instructions, tools, output behaviour,
limits, settings, timeouts and retry policy (the fields and their validation live in
:mod:`zigai.agent.config`).  It never changes after construction and holds no per-run state,
so one agent may serve many threads at once.  Each invocation builds an
:class:`~zigai.agent.run.AgentRun` (the state machine) from the agent and
:class:`RunOptions`; ``run``/``run_typed`` step it to completion, the streaming entry points
wrap it in an :class:`~zigai.agent.stream.AgentStream` (a sink of the same machine), and the
pause/resume entry points drive it with a pause-aware outcome.

Import order inside the package is one-way: ``config`` → ``run`` (over the step executors)
→ ``stream`` → this module.

Invariants:

* settings merge in model → agent → run order and unsupported controls fail before the
  model is called;
* the output specification, tool definitions and settings are checked before the first
  model request (nothing paid is sent for an invalid configuration).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from zigai.agent.config import (
    AgentConfig,
    DynamicInstruction,
    RunContext,
    RunLimits,
    RunOptions,
    ToolApproval,
    TypedMode,
)
from zigai.agent.deferred import decode_paused_state, parse_resume_decisions
from zigai.agent.errors import InvalidAgentConfiguration
from zigai.agent.run import AgentRun
from zigai.agent.stream import AgentStream, run_with_sink

if TYPE_CHECKING:
    from zigai.agent.deferred import OwnedResumeDecisions, ResumeDecision, RunOutcome
    from zigai.agent.events import AgentStreamEvent
    from zigai.agent.result import Result, TypedResult

__all__ = ["Agent", "RunLimits", "RunOptions", "RunContext", "DynamicInstruction", "ToolApproval"]

T = TypeVar("T")
if TYPE_CHECKING:  # a default (PEP 696) so an unsubscripted use means "deps of any type"
    from typing_extensions import TypeVar as _DefaultedTypeVar

    DepsT = _DefaultedTypeVar("DepsT", default=Any)
else:
    DepsT = TypeVar("DepsT")


class Agent(AgentConfig, Generic[DepsT]):
    """An immutable agent: :class:`AgentConfig` fields plus the run entry points.

    ``Agent[MyDeps]`` is for type checkers: it names the dependency type the agent's tools
    see as ``ToolRunContext[MyDeps].deps`` (``deps_type=MyDeps`` checks it at run time).
    """

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        if name == "__orig_class__":
            return  # typing records Agent[Deps](...) here; an agent stays immutable instead
        AgentConfig.__setattr__(self, name, value)

    # -- entry points ----------------------------------------------------------------------------

    def _options(self, prompt: Any, options: RunOptions | None, kwargs: Mapping[str, Any]) -> RunOptions:
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

    def iter(self, prompt: Any = None, *, options: RunOptions | None = None, **kwargs: Any) -> AgentRun:
        """A fresh run state machine; call ``step()`` until ``done`` (or use ``run``)."""
        return AgentRun(self, self._options(prompt, options, kwargs))

    def run(self, prompt: Any = None, *, options: RunOptions | None = None, **kwargs: Any) -> Result:
        """Run to a final output.  Keyword arguments are :class:`RunOptions` fields."""
        return AgentRun(self, self._options(prompt, options, kwargs)).run()

    def run_typed(
        self,
        output_type: type[T],
        prompt: Any = None,
        *,
        mode: TypedMode | None = None,
        options: RunOptions | None = None,
        **kwargs: Any,
    ) -> TypedResult[T]:
        """Run with a schema derived from ``output_type`` and decode the output into it.

        ``mode`` picks native, tool or prompted output; by default the agent's own
        structured mode, else native when the profile supports it, else tool
        output, else prompted output.
        """
        run = AgentRun(self, self._options(prompt, options, kwargs), output_type=output_type, typed_mode=mode)
        return run.run()  # type: ignore[return-value]

    # -- streaming ------------------------------------------------------------------------------

    def _run(
        self, prompt: Any, options: RunOptions | None, kwargs: Mapping[str, Any], *,
        output_type: Any = None, mode: TypedMode | None = None, allow_pause: bool = False,
    ) -> AgentRun:
        return AgentRun(
            self, self._options(prompt, options, kwargs), output_type=output_type,
            typed_mode=mode, allow_pause=allow_pause,
        )

    def run_stream(
        self,
        prompt: Any = None,
        *,
        options: RunOptions | None = None,
        output_type: Any = None,
        mode: TypedMode | None = None,
        **kwargs: Any,
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
        **kwargs: Any,
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
        **kwargs: Any,
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
        **kwargs: Any,
    ) -> AgentStream:
        """:meth:`run_until_pause` as a stream; read ``outcome()`` after iterating."""
        run = self._run(prompt, options, kwargs, output_type=output_type, mode=mode, allow_pause=True)
        return AgentStream(run, pause_aware=True)

    def _resume(
        self, state_json: str | bytes, decisions: Any, options: RunOptions | None,
        kwargs: Mapping[str, Any], output_type: Any, mode: TypedMode | None,
    ) -> AgentRun:
        state = decode_paused_state(state_json, key=self.state_key)
        run_options = self._options(None, options, kwargs)
        return AgentRun(
            self, run_options, output_type=output_type, typed_mode=mode, allow_pause=True,
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
        **kwargs: Any,
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
        **kwargs: Any,
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
        **kwargs: Any,
    ) -> AgentStream:
        """:meth:`resume_run` as a stream; read ``outcome()`` after iterating."""
        run = self._resume(state_json, decisions, options, kwargs, output_type, mode)
        return AgentStream(run, pause_aware=True)
