"""Scope: where a run starts -- its depth, dependencies, context, control and trace parent.

Nothing is inherited through ambient state.  A scope passes exactly what it was given:

* ``deps`` -- the dependencies of runs started *at* this scope; a child scope gets only the
  deps its creator names (``None`` otherwise);
* ``context`` -- an explicit choice: :class:`Shared` (this canonical history is the child
  run's message history) or :class:`Isolated` (the child starts with no history);
* ``control`` -- one absolute deadline and one cancellation token (converted to remaining
  time right before each child starts);
* ``trace_parent`` -- the W3C traceparent the runs' telemetry spans nest under.

Kinds: :meth:`Scope.run` starts a run at this depth; :meth:`Scope.delegate` (kind
``delegation``) and :meth:`Scope.as_tool` (kind ``subagent``) start a run one level deeper
and return control to the caller; :meth:`Scope.handoff` transfers the next turn to another
agent at the *same* depth.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from zigai.agent import Agent, Result, RunOptions
from zigai.control import RunControl
from zigai.hooks import Correlation
from zigai.multi_agent.context import Context, Isolated, RunExecutor, RunKind, Shared
from zigai.multi_agent.errors import InvalidSession
from zigai.tool import Tool, ToolRunContext

__all__ = ["Scope"]


def _start(agent: Agent, options: RunOptions, output_type: Any) -> Result:
    if output_type is None:
        return agent.run(options=options)
    return agent.run_typed(output_type, options=options)


class Scope:
    """One level of a session's run tree (see module docstring)."""

    __slots__ = ("_session", "_depth", "_deps", "_context", "_control", "_trace_parent")

    def __init__(self, session: RunExecutor, *, depth: int, deps: Any, context: Context,
                 control: RunControl | None, trace_parent: str | None) -> None:
        if not isinstance(context, (Shared, Isolated)):
            raise InvalidSession(
                f"context must be Shared(history) or Isolated(), got {type(context).__name__}; "
                "the choice is explicit so no child inherits history by accident"
            )
        if control is not None and not isinstance(control, RunControl):
            raise InvalidSession("scope control must be a zigai.control.RunControl")
        if trace_parent is not None:
            try:
                Correlation(trace_parent=trace_parent)
            except ValueError as error:
                raise InvalidSession(f"trace_parent: {error}") from error
        self._session = session
        self._depth = depth
        self._deps = deps
        self._context = context
        self._control = control
        self._trace_parent = trace_parent

    @property
    def session(self) -> RunExecutor:
        return self._session

    @property
    def depth(self) -> int:
        return self._depth

    @property
    def deps(self) -> Any:
        return self._deps

    @property
    def context(self) -> Context:
        return self._context

    @property
    def control(self) -> RunControl | None:
        return self._control

    @property
    def trace_parent(self) -> str | None:
        return self._trace_parent

    def child(self, *, deps: Any = None, context: Context | None = None, control: RunControl | None = None,
              trace_parent: str | None = None) -> Scope:
        """A scope one level deeper; it keeps this scope's control and trace parent unless
        given tighter ones, and only the deps and context passed here."""
        return Scope(
            self._session, depth=self._depth + 1, deps=deps,
            context=context if context is not None else Isolated(),
            control=control if control is not None else self._control,
            trace_parent=trace_parent if trace_parent is not None else self._trace_parent,
        )

    # -- starting runs ------------------------------------------------------------------------------

    def _options(self, prompt: Any, deps: Any, context: Context, options: RunOptions | None) -> RunOptions:
        if options is not None and not isinstance(options, RunOptions):
            raise InvalidSession("options must be a RunOptions")
        if not isinstance(context, (Shared, Isolated)):
            raise InvalidSession("context must be Shared(history) or Isolated()")
        base = options if options is not None else RunOptions()
        if base.message_history:
            raise InvalidSession("pass history through context=Shared(history), not RunOptions.message_history")
        if base.cancellation is not None and self._control is not None:
            raise InvalidSession("the scope's control supplies the cancellation token; do not set one in options")
        history = context.history if isinstance(context, Shared) else ()
        return replace(base, prompt=prompt if prompt is not None else base.prompt, deps=deps,
                       message_history=history)

    def _launch(self, kind: RunKind, depth: int, agent: Agent, prompt: Any, deps: Any, context: Context,
                options: RunOptions | None, output_type: Any, control: RunControl | None = None) -> Result:
        return self._session._execute(
            agent=agent, kind=kind, depth=depth, options=self._options(prompt, deps, context, options),
            control=control if control is not None else self._control, trace_parent=self._trace_parent,
            output_type=output_type, start=_start,
        )

    def run(self, agent: Agent, prompt: Any = None, *, options: RunOptions | None = None,
            output_type: Any = None) -> Result:
        """Start ``agent`` at this scope's depth with this scope's deps and context."""
        return self._launch("run", self._depth, agent, prompt, self._deps, self._context, options, output_type)

    def delegate(self, agent: Agent, prompt: Any = None, *, deps: Any = None, context: Context | None = None,
                 options: RunOptions | None = None, output_type: Any = None) -> Result:
        """Run ``agent`` one level deeper and return its owned result to the caller.

        ``deps`` and ``context`` are the child's own (default: none and ``Isolated()``)."""
        return self._launch("delegation", self._depth + 1, agent, prompt, deps,
                            context if context is not None else Isolated(), options, output_type)

    def handoff(self, agent: Agent, prompt: Any = None, *, deps: Any = None, context: Context | None = None,
                options: RunOptions | None = None, output_type: Any = None) -> Result:
        """Give the next turn to ``agent`` at the same depth (no recursion, no return of control
        beyond handing back its result)."""
        return self._launch("handoff", self._depth, agent, prompt, deps,
                            context if context is not None else Isolated(), options, output_type)

    def as_tool(self, agent: Agent, *, name: str, description: str, deps: Any = None,
                context: Context | None = None, output_type: Any = None) -> Tool:
        """A tool that delegates ``{"prompt": ...}`` to ``agent`` one level deeper (kind
        ``subagent``) and returns its output.

        The tool is sequential (calls run one at a time, in the model's call order) so run
        indices stay deterministic; the child's deadline and token are the tool call's own, and
        the calling agent's ``url_policy`` tightens the child's (``RunOptions.url_policy``)."""
        child_context = context if context is not None else Isolated()
        if not isinstance(child_context, (Shared, Isolated)):
            raise InvalidSession("context must be Shared(history) or Isolated()")

        def delegate(args: dict[str, Any], ctx: ToolRunContext) -> Any:
            deadline = ctx.call_deadline
            for candidate in (ctx.control.deadline, self._control.deadline if self._control else None):
                if candidate is not None:
                    deadline = candidate if deadline is None else min(deadline, candidate)
            control = RunControl(deadline=deadline, token=ctx.call_token)
            # the delegating agent's URL policy governs the delegate too (the stricter wins)
            options = RunOptions(url_policy=ctx.url_policy) if ctx.url_policy is not None else None
            with self._launch("subagent", self._depth + 1, agent, args["prompt"], deps, child_context,
                              options, output_type, control=control) as result:
                output = result.output
            return output if isinstance(output, (str, int, float, bool, dict, list)) or output is None else str(output)

        schema = {
            "type": "object",
            "properties": {"prompt": {"type": "string", "description": "what the delegate should do"}},
            "required": ["prompt"],
            "additionalProperties": False,
        }
        return Tool.manual(name, description, schema, delegate, takes_context=True, sequential=True)

    def __repr__(self) -> str:
        return f"Scope(session={self._session.id!r}, depth={self._depth}, context={type(self._context).__name__})"
