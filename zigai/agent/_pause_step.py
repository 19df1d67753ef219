"""Which calls of a model response must wait for a decision, and with which arguments.

:func:`check_pause` runs before anything of a response executes: a call of a tool whose
execution is ``requires_approval`` or ``external`` — or an immediate call with valid
arguments that ``Agent.tool_approval`` or a policy's approval stage marks — must wait.
``Agent.run`` raises ``PauseRequired`` (it never discards a pause); ``run_until_pause``
receives the deferred calls and pauses, persisting :func:`settled_calls` beside them.
:func:`resume_calls` derives the waiting set again from the current tools when a paused
run resumes.

Invariants: the policies' arguments and approval stages run once per call across a pause,
arguments before approval.  A waiting function-tool call carries the arguments it will run
with (``DeferredCall.resolved``); every other call whose stages ran at the pause is
persisted with its verdict (:class:`~zigai.agent.paused_state.SettledCall`).  A resume runs
exactly those arguments — re-checked against the tool's current schema, never through the
stages again.  Verdicts (resolved arguments, retries, refusals) are kept in
``run.policy_verdicts`` for the tool step (:mod:`zigai.agent._tool_step`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zigai.agent._policies import check_arguments, needs_approval
from zigai.agent.deferred import (
    ApprovalSource,
    DeferredCall,
    InvalidPausedState,
    PausedState,
    deferred_args,
)
from zigai.agent.errors import PauseRequired
from zigai.agent.paused_state import SettledCall, resolved_args
from zigai.messages import ResponseMessage, ToolCallPart
from zigai.tool import InvalidToolArguments, ModelRetry, ToolExecution, ValidatedArgs
from zigai.tool.policy import ToolRefused
from zigai.tool.race import call_bounded

if TYPE_CHECKING:
    from zigai.agent._core import RunCore

__all__ = ["check_pause", "resume_calls", "settled_calls"]


def check_pause(run: RunCore, response: ResponseMessage) -> tuple[DeferredCall, ...]:
    """The calls that must wait; raise PauseRequired when the run cannot pause.

    A waiting call of a function tool carries the arguments it will run with: when the
    agent's policies have an arguments stage, that stage runs here, once, and the pending
    call holds its result (``resolved``), which a resume executes without running it again.
    """
    waiting: list[DeferredCall] = []
    dynamic = run.agent.tool_approval is not None or bool(run.policies.approval)
    if run.policy_verdicts:
        run.policy_verdicts = {}
    for part in response.parts:
        if not isinstance(part, ToolCallPart):
            continue
        tool = run.step_tools.get(part.tool_name)
        if tool is None:
            continue
        if tool.execution is ToolExecution.external:
            waiting.append(DeferredCall(part.tool_call_id, part.tool_name, deferred_args(part), "external"))
        elif tool.execution is not ToolExecution.immediate:
            resolved = _resolve(run, tool, part) if run.policies.arguments else None
            waiting.append(_waiting(part, resolved, ApprovalSource.static))
        elif dynamic and _needs_approval(run, tool, part):
            waiting.append(_waiting(part, _resolved_verdict(run, part), ApprovalSource.dynamic))
    if waiting and not run.allow_pause:
        names = tuple(c.tool_name for c in waiting)
        raise PauseRequired(
            f"the model called {', '.join(sorted(set(names)))}, which must pause for approval or "
            "external execution; Agent.run cannot discard that pause — use run_until_pause",
            tool_names=names,
            tool_call_ids=tuple(c.tool_call_id for c in waiting),
        )
    return tuple(waiting)


def _waiting(part: ToolCallPart, resolved: ValidatedArgs | None, source: ApprovalSource) -> DeferredCall:
    """An approval-gated call: its resolved arguments when the arguments stage ran, else the model's."""
    if resolved is None:
        return DeferredCall(part.tool_call_id, part.tool_name, deferred_args(part), "requires_approval", source)
    return DeferredCall(
        part.tool_call_id, part.tool_name, resolved_args(resolved.arguments), "requires_approval",
        source, resolved=True,
    )


def _resolved_verdict(run: RunCore, part: ToolCallPart) -> ValidatedArgs | None:
    verdict = run.policy_verdicts.get(part.tool_call_id)
    return verdict[1] if verdict is not None and verdict[0] == "args" else None


def settled_calls(run: RunCore, waiting: tuple[DeferredCall, ...]) -> tuple[SettledCall, ...]:
    """The verdicts of the pausing response's calls that a pause must persist.

    Every verdict :func:`check_pause` reached, except the resolved arguments a waiting call
    already carries: the arguments of a call that needs no approval, and a retry or refusal
    (also of a waiting call, whose stage then does not run again after its decision).
    """
    carried = {call.tool_call_id for call in waiting if call.resolved}
    verdicts = run.policy_verdicts
    response = run.response
    assert response is not None
    settled = []
    for part in response.parts:
        if not isinstance(part, ToolCallPart) or part.tool_call_id in carried:
            continue
        verdict = verdicts.get(part.tool_call_id)
        if verdict is not None:
            kind, value = verdict
            text = resolved_args(value.arguments) if kind == "args" else value
            settled.append(SettledCall(part.tool_call_id, part.tool_name, kind, text))
    return tuple(settled)


def _restore_settled(run: RunCore, state: PausedState) -> frozenset[str]:
    """Put the persisted verdicts back for the tool step; the ids of the calls they settle.

    Resolved arguments are re-checked against the tool's current schema; the stages that
    produced them do not run again.
    """
    output_names = run.output.tool_names
    for settled in state.settled:
        tool = run.step_tools.get(settled.tool_name)
        if tool is None or settled.tool_name in output_names:
            raise InvalidPausedState(
                f"invalid paused state: settled call {settled.tool_call_id!r} names "
                f"{settled.tool_name!r}, which is not a function tool of this agent"
            )
        if settled.verdict != "args":
            run.policy_verdicts[settled.tool_call_id] = (settled.verdict, settled.value)
            continue
        _revalidate(run, tool, settled.tool_call_id, settled.value, "settled call")
    return frozenset(settled.tool_call_id for settled in state.settled)


def resume_calls(run: RunCore, state: PausedState) -> tuple[DeferredCall, ...]:
    """The calls of the pausing response a resume must decide, derived from the current tools.

    A paused-state document is application data that may have been edited, so its
    ``pending_calls`` only *add* waiting calls, they never waive one: every call of a tool
    whose current execution is ``requires_approval`` or ``external`` waits (with that
    execution, whatever the document labels it), a call the document lists waits as
    approval-gated (a dynamic approval persisted from the pause), and an immediate call
    that ``Agent.tool_approval`` marks now also waits.  ``match_decisions`` then demands
    exactly one fitting decision for each, so a forged call cannot run undecided.

    An immediate call the document lists as settled does not run the arguments or approval
    stages (nor ``Agent.tool_approval``) again: it takes its persisted verdict.  Only the
    document's integrity vouches for that verdict, so an application whose paused states
    cross a trust boundary sets ``Agent.state_key`` (a MAC then covers it).
    """
    settled = _restore_settled(run, state)
    listed = {call.tool_call_id: call for call in state.calls}
    response = state.messages[-1]
    assert isinstance(response, ResponseMessage)
    dynamic = run.agent.tool_approval is not None or bool(run.policies.approval)
    output_names = run.output.tool_names
    waiting: list[DeferredCall] = []
    for part in response.parts:
        if not isinstance(part, ToolCallPart):
            continue
        call_id, name = part.tool_call_id, part.tool_name
        tool = run.step_tools.get(name)
        saved = listed.get(call_id)
        if tool is None or name in output_names:
            if saved is not None:
                raise InvalidPausedState(
                    f"invalid paused state: pending call {call_id!r} names {name!r}, which is not "
                    "a function tool of this agent"
                )
            continue
        if tool.execution is ToolExecution.external:
            waiting.append(DeferredCall(call_id, name, deferred_args(part), "external"))
        elif saved is not None and saved.resolved:
            waiting.append(_restore_resolved(run, tool, saved, tool.execution is ToolExecution.immediate))
        elif tool.execution is not ToolExecution.immediate:
            waiting.append(DeferredCall(call_id, name, deferred_args(part), "requires_approval"))
        elif saved is not None:
            waiting.append(DeferredCall(call_id, name, deferred_args(part), "requires_approval", ApprovalSource.dynamic))
        elif call_id in settled:
            continue
        elif dynamic and _needs_approval(run, tool, part):
            waiting.append(_waiting(part, _resolved_verdict(run, part), ApprovalSource.dynamic))
    return tuple(waiting)


def _restore_resolved(run: RunCore, tool: Any, saved: DeferredCall, dynamic: bool) -> DeferredCall:
    """A call whose arguments were resolved before the pause: it runs them, checked once more.

    The persisted arguments are exactly what the approver was shown; they are re-checked
    against the tool's current schema (a document edit or a changed tool cannot smuggle in
    arguments the tool refuses) and the arguments stage does not run again.
    """
    _revalidate(run, tool, saved.tool_call_id, saved.args, "pending call")
    source = ApprovalSource.dynamic if dynamic else ApprovalSource.static
    return DeferredCall(saved.tool_call_id, saved.tool_name, saved.args, "requires_approval", source, resolved=True)


def _resolve(run: RunCore, tool: Any, part: ToolCallPart) -> ValidatedArgs | None:
    """Validate a call and run the policies' arguments stage once; None when it is settled.

    The outcome is kept in ``run.policy_verdicts`` for the tool step: the resolved
    arguments, or the retry / refusal the stage raised.  Invalid arguments leave no
    verdict (the step turns them into a retry prompt).
    """
    try:
        args = tool.validate_arguments(part.args)
    except InvalidToolArguments:
        return None
    if not run.policies.arguments:
        return args
    verdicts = run.policy_verdicts
    try:
        args = check_arguments(run, run.policies.arguments, tool, part.tool_call_id, args)
    except ModelRetry as exc:
        verdicts[part.tool_call_id] = ("retry", str(exc))
        return None
    except ToolRefused as exc:
        verdicts[part.tool_call_id] = ("refused", exc.reason)
        return None
    verdicts[part.tool_call_id] = ("args", args)
    return args


def _needs_approval(run: RunCore, tool: Any, part: ToolCallPart) -> bool:
    """Dynamic approval of a call with valid arguments: ``Agent.tool_approval``, then policies.

    The spec's stage order holds: the policies' arguments stage runs first (:func:`_resolve`),
    so approval sees the validated, transformed arguments.  An arguments or approval stage
    that retries or refuses settles the call instead: the verdict is kept for the tool step,
    the call does not wait, and approval never sees a call whose arguments were sent back.
    """
    args = _resolve(run, tool, part)
    if args is None:
        return False  # invalid arguments or a settled verdict; approval never sees them
    approval = run.agent.tool_approval
    if approval is not None and call_bounded(
        approval, run.run_context(), part.tool_name, args.value, control=run.control,
        what="Agent.tool_approval",
    ):
        return True
    stages = run.policies.approval
    if not stages:
        return False
    verdicts = run.policy_verdicts
    try:
        return needs_approval(run, stages, tool, part.tool_call_id, args)
    except ModelRetry as exc:
        verdicts[part.tool_call_id] = ("retry", str(exc))
    except ToolRefused as exc:
        verdicts[part.tool_call_id] = ("refused", exc.reason)
    return False


def _revalidate(run: RunCore, tool: Any, call_id: str, resolved: Any, kind: str) -> None:
    """Record persisted resolved arguments as the call's verdict, checked against the tool's current schema."""
    try:
        args = tool.validate_arguments(resolved)
    except InvalidToolArguments as exc:
        raise InvalidPausedState(
            f"invalid paused state: the resolved arguments of {kind} {call_id!r} "
            f"no longer fit tool {tool.name!r}: {exc}"
        ) from None
    run.policy_verdicts[call_id] = ("args", args)
