"""One tool step of the agent loop: output calls, ordinary calls, end strategy, history.

:mod:`zigai.agent._pause_step` decides first which calls of a response wait (and
with which resolved arguments); nothing of the response has executed then.

On resume the run's ``decisions`` resolve those calls here: ``approve`` runs the call
like an immediate one, ``deny`` becomes a ``denied`` tool return carrying the reason,
``result`` appends the external content without invoking application code.

:func:`execute_tool_step` then handles every ``ToolCallPart`` of the response:

* output-tool calls are validated, unwrapped and accepted (output function,
  validators, typed decoding) in emission order — ``early`` and ``graceful``
  stop at the first success, ``exhaustive`` evaluates all and keeps the first;
* ordinary calls run through the run's bounded scheduler — all of them
  (``exhaustive``, or when no output succeeded), none (``early`` after a
  success) or only those emitted before the accepted output call
  (``graceful``); the others are closed as skipped without running;
* invalid arguments, ``ModelRetry``, timeouts and limit rejections become
  retry prompts counted per tool (``Tool.max_retries`` or
  ``Agent.max_tool_retries``), separately from the output retry budget;
* one request with every return / retry part in call order is appended, then
  the follow-up requests in call order.

Returns True when an output was accepted (the run finalizes).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from zigai.agent._accept import accept_candidate
from zigai.agent._policies import after_return, before_call, check_arguments
from zigai.agent.errors import InvalidAgentConfiguration, ToolCallLimitExceeded
from zigai.agent.events import (
    DeferredToolResultEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
)
from zigai.capability import LOAD_CAPABILITY_TOOL
from zigai.errors import JsonError
from zigai.hooks import (
    ToolDispatchEnd,
    ToolDispatchError,
    ToolDispatchStart,
    ToolExecuteEnd,
    ToolExecuteError,
    ToolExecuteStart,
    ToolRoute,
)
from zigai.messages import (
    CapabilityLoadCallPart,
    RequestMessage,
    ResponseMessage,
    RetryPromptPart,
    ToolCallPart,
    ToolOutcome,
    ToolReturnPart,
)
from zigai.messages.json_value import freeze_json
from zigai.output import EndStrategy, OutputRejected
from zigai.tool import (
    InvalidToolArguments,
    ModelRetry,
    ScheduledCall,
    ToolRetriesExceeded,
    ToolRunContext,
)
from zigai.tool.policy import ToolRefused

if TYPE_CHECKING:
    from zigai.agent._core import RunCore

__all__ = ["execute_tool_step", "FINAL_RESULT_TEXT", "SKIPPED_TEXT", "UNUSED_OUTPUT_TEXT"]

FINAL_RESULT_TEXT = "Final result processed."
SKIPPED_TEXT = "Tool not executed: a final result was already processed."
UNUSED_OUTPUT_TEXT = "Output tool not used: a final result was already processed."


def _count_tool_retry(run: RunCore, name: str, max_retries: int, message: str) -> None:
    count = run.tool_retries.get(name, 0) + 1
    run.tool_retries[name] = count
    if count > max_retries:
        raise ToolRetriesExceeded(
            f"tool {name!r} failed more than its max_retries={max_retries}: {message}",
            tool_name=name, max_retries=max_retries,
        )


def _evaluate_outputs(
    run: RunCore, output_calls: list[tuple[int, ToolCallPart]], parts: dict[int, Any]
) -> int | None:
    """Accept output calls per the end strategy; fill ``parts``; return the accepted index."""
    prepared = run.output
    exhaustive = run.agent.end_strategy is EndStrategy.exhaustive
    accepted: int | None = None
    last_rejection: OutputRejected | None = None
    for index, call in output_calls:
        if accepted is not None and not exhaustive:
            parts[index] = ToolReturnPart(
                call.tool_name, call.tool_call_id, UNUSED_OUTPUT_TEXT, ToolOutcome.skipped
            )
            continue
        choice = prepared.choice_for_tool(call.tool_name)
        assert choice is not None
        try:
            candidate = prepared.check_tool_args(choice, call.args)
            output, json_value = _accept(run, candidate, call)
        except OutputRejected as rejection:
            last_rejection = rejection
            parts[index] = RetryPromptPart(
                rejection.message, tool_name=call.tool_name, tool_call_id=call.tool_call_id
            )
            continue
        if accepted is None:
            accepted = index
            run.final_output = output
            run.final_json = json_value
            run.final_name = choice.choice.name
            parts[index] = ToolReturnPart(call.tool_name, call.tool_call_id, FINAL_RESULT_TEXT)
        else:
            parts[index] = ToolReturnPart(
                call.tool_name, call.tool_call_id, UNUSED_OUTPUT_TEXT, ToolOutcome.skipped
            )
    if accepted is None and last_rejection is not None:
        run.reject_output(last_rejection)
    return accepted


def _accept(run: RunCore, candidate: Any, call: ToolCallPart) -> tuple[Any, Any]:
    ctx = run.output_context(call.tool_name, call.tool_call_id)
    return accept_candidate(
        run.output, candidate, ctx, run.output_validators, run.control, run.decoder, run
    )


def execute_tool_step(run: RunCore, response: ResponseMessage) -> bool:
    """Handle every tool call of ``response``; return True when an output was accepted."""
    calls = [p for p in response.parts if isinstance(p, (ToolCallPart, CapabilityLoadCallPart))]
    if not run.hooks:
        return _tool_step(run, calls, None)
    dispatch = _Dispatch(run, calls)
    try:
        return _tool_step(run, calls, dispatch)
    except BaseException as exc:
        dispatch.failed(exc)
        raise


class _Dispatch:
    """The ``tool_dispatch_*`` events of one step (only built when hooks are registered)."""

    __slots__ = ("run", "calls", "routes", "ended")

    def __init__(self, run: RunCore, calls: list[Any]) -> None:
        self.run = run
        self.calls = calls
        self.routes: list[ToolRoute] = ["function"] * len(calls)
        self.ended = 0

    def start(self) -> None:
        run = self.run
        info = run.info
        for call, route in zip(self.calls, self.routes, strict=True):
            run.fire(ToolDispatchStart(info, call, route))

    def end(self, ordered: tuple[Any, ...], accepted: int | None) -> None:
        run = self.run
        info = run.info
        for index, (call, part) in enumerate(zip(self.calls, ordered, strict=True)):
            self.ended = index + 1
            run.fire(ToolDispatchEnd(info, call, _dispatch_outcome(part, index == accepted), part))

    def failed(self, exc: BaseException) -> None:
        run = self.run
        info = run.info
        for call in self.calls[self.ended:]:
            run.fire_failure(ToolDispatchError(info, call, exc), exc)
        self.ended = len(self.calls)


def _dispatch_outcome(part: Any, final: bool) -> str:
    if final:
        return "final"
    if isinstance(part, RetryPromptPart):
        return "retry"
    outcome = part.outcome
    if outcome is ToolOutcome.denied:
        return "denied"
    if outcome is ToolOutcome.skipped:
        return "skipped"
    return "return"


def _tool_step(run: RunCore, calls: list[Any], dispatch: _Dispatch | None) -> bool:
    output_names = run.output.tool_names
    output_calls: list[tuple[int, ToolCallPart]] = []
    function_calls: list[tuple[int, ToolCallPart]] = []
    parts: dict[int, Any] = {}
    agent = run.agent
    unknown_failures: list[tuple[str, str]] = []
    decisions = run.decisions
    for index, call in enumerate(calls):
        decision = decisions.get(call.tool_call_id) if decisions else None
        if decision is not None and decision.action.value != "approve":
            if decision.action.value == "deny":
                part: Any = ToolReturnPart(
                    call.tool_name, call.tool_call_id, decision.deny_text, ToolOutcome.denied
                )
            else:
                part = ToolReturnPart(call.tool_name, call.tool_call_id, decision.content)
            parts[index] = part
            if dispatch is not None:
                dispatch.routes[index] = "decision"
        elif run.caps is not None and call.tool_name == LOAD_CAPABILITY_TOOL:
            parts[index] = run.caps.load(run, call)  # sequential: on this thread, in call order
            if dispatch is not None:
                dispatch.routes[index] = "capability"
        elif call.tool_name in output_names:
            output_calls.append((index, call))
            if dispatch is not None:
                dispatch.routes[index] = "output"
        elif call.tool_name in run.step_tools:
            function_calls.append((index, call))
        else:
            if dispatch is not None:
                dispatch.routes[index] = "unknown"
            available = ", ".join(sorted(set(run.step_tools) | output_names)) or "none"
            message = f"Unknown tool name: {call.tool_name!r}. Available tools: {available}."
            parts[index] = RetryPromptPart(message, tool_name=call.tool_name, tool_call_id=call.tool_call_id)
            unknown_failures.append((call.tool_name, message))
    if dispatch is not None:
        dispatch.start()

    strategy = agent.end_strategy
    if strategy is EndStrategy.exhaustive or not output_calls:
        accepted = _evaluate_outputs(run, output_calls, parts) if output_calls else None
        to_run = function_calls
    else:
        accepted = _evaluate_outputs(run, output_calls, parts)
        if accepted is None:
            to_run = function_calls
        elif strategy is EndStrategy.early:
            to_run = []
        else:
            to_run = [(i, c) for i, c in function_calls if i < accepted]
    run_indexes = {i for i, _ in to_run}
    for index, call in function_calls:
        if index not in run_indexes:
            parts[index] = ToolReturnPart(
                call.tool_name, call.tool_call_id, SKIPPED_TEXT, ToolOutcome.skipped
            )

    failures: list[tuple[str, int, str]] = []
    for name, message in unknown_failures:
        failures.append((name, agent.max_tool_retries, message))
    follow_ups: dict[int, tuple[RequestMessage, ...]] = {}
    if to_run:
        _run_function_calls(run, to_run, parts, follow_ups, failures)
    for name, limit, message in failures:
        _count_tool_retry(run, name, limit, message)

    now = run.now()
    ordered = run.stamp_parts(tuple(parts[i] for i in range(len(calls))), now)
    if dispatch is not None:
        dispatch.end(ordered, accepted)
    if run._sink is not None:
        _emit_results(run, calls, ordered, output_names)
    run.messages.append(run.new_request(ordered, now=now))
    for index in sorted(follow_ups):
        run.messages.extend(follow_ups[index])
    if run.caps is not None:
        run.caps.commit(run)  # the whole batch ran: pending loads become active together
    run.control.check()
    return accepted is not None


def _emit_results(
    run: RunCore, calls: list[Any], ordered: tuple[Any, ...], output_names: frozenset[str]
) -> None:
    decisions = run.decisions
    for call, part in zip(calls, ordered, strict=True):
        if call.tool_name in output_names:
            continue
        decision = decisions.get(call.tool_call_id) if decisions else None
        if decision is not None:
            run.emit(DeferredToolResultEvent(part, decision.action.value))
        else:
            run.emit(FunctionToolResultEvent(part))


def _run_function_calls(
    run: RunCore,
    to_run: list[tuple[int, ToolCallPart]],
    parts: dict[int, Any],
    follow_ups: dict[int, tuple[RequestMessage, ...]],
    failures: list[tuple[str, int, str]],
) -> None:
    agent = run.agent
    scheduled: list[ScheduledCall] = []
    positions: list[int] = []
    messages = tuple(run.messages)
    stages = run.policies
    verdicts = run.policy_verdicts
    for index, call in to_run:
        tool = run.step_tools[call.tool_name]
        limit = tool.max_retries if tool.max_retries is not None else agent.max_tool_retries
        checked = verdicts.get(call.tool_call_id) if verdicts else None
        if checked is not None and checked[0] != "args":
            _settle(parts, failures, index, call, limit, checked)
            continue
        if checked is not None:
            args = checked[1]  # validated and through the arguments stage already
        else:
            try:
                args = tool.validate_arguments(call.args)
            except InvalidToolArguments as exc:
                message = str(exc)
                parts[index] = RetryPromptPart(message, tool_name=call.tool_name, tool_call_id=call.tool_call_id)
                failures.append((call.tool_name, limit, message))
                continue
        if stages.arguments or stages.call:
            try:
                if stages.arguments and checked is None:
                    args = check_arguments(run, stages.arguments, tool, call.tool_call_id, args)
                answer = before_call(run, stages.call, tool, call.tool_call_id, args) if stages.call else None
            except ModelRetry as exc:
                _settle(parts, failures, index, call, limit, ("retry", str(exc)))
                continue
            except ToolRefused as exc:
                _settle(parts, failures, index, call, limit, ("refused", exc.reason))
                continue
            if answer is not None:
                _settle(parts, failures, index, call, limit, _content_verdict(run, tool, answer.content))
                continue
        ctx = ToolRunContext(
            deps=run.deps, usage=run.usage, request_count=run.usage.requests, messages=messages,
            control=run.control, tool_name=call.tool_name, tool_call_id=call.tool_call_id,
            retry=run.tool_retries.get(call.tool_name, 0),
            capabilities=run.caps.snapshot if run.caps is not None else None, url_policy=run.url_policy,
        )
        scheduled.append(ScheduledCall(call, tool, args, ctx))
        positions.append(index)
    if not scheduled:
        return
    _check_tool_call_cap(run, len(scheduled))
    if run._sink is not None:
        for sc in scheduled:
            run.emit(FunctionToolCallEvent(sc.call))
    run.control.check()
    if run.hooks:
        results = _run_batch_hooked(run, scheduled)
    else:
        results = run.scheduler.run_batch(scheduled, run.control)
    executed = 0
    for index, sc, result in zip(positions, scheduled, results, strict=True):
        call = sc.call
        if result.status != "rejected":
            executed += 1
        if result.status == "success":
            if stages.returned:
                try:
                    content = after_return(run, stages.returned, call.tool_name, call.tool_call_id, result.content)
                    verdict = _content_verdict(run, sc.tool, content)
                except ModelRetry as exc:
                    verdict = ("retry", str(exc))
                except ToolRefused as exc:
                    verdict = ("refused", exc.reason)
                if verdict[0] != "return":
                    limit = sc.tool.max_retries if sc.tool.max_retries is not None else agent.max_tool_retries
                    _settle(parts, failures, index, call, limit, verdict)
                    continue
                parts[index] = ToolReturnPart(call.tool_name, call.tool_call_id, verdict[1])
            else:
                parts[index] = ToolReturnPart(call.tool_name, call.tool_call_id, result.content)
            if result.follow_up_messages:
                follow_ups[index] = result.follow_up_messages
            continue
        message = result.retry_message or f"tool {call.tool_name!r} failed; please try again"
        parts[index] = RetryPromptPart(message, tool_name=call.tool_name, tool_call_id=call.tool_call_id)
        limit = sc.tool.max_retries if sc.tool.max_retries is not None else agent.max_tool_retries
        failures.append((call.tool_name, limit, message))
    if executed:
        run.usage = run.usage.with_tool_calls(executed)


def _check_tool_call_cap(run: RunCore, count: int) -> None:
    """``RunLimits.max_tool_calls`` caps the run's executed calls: refuse the step past it.

    Checked before any call of the step runs, against the usage of the whole run (a resumed
    run included), so no call past the cap executes and no further model request is made.
    """
    cap = run.limits.max_tool_calls
    if cap is None:
        return
    total = run.usage.tool_calls + count
    if total > cap:
        raise ToolCallLimitExceeded(
            f"this step's {count} tool call(s) would take the run to {total}, past "
            f"max_tool_calls={cap} ({run.usage.tool_calls} already ran); none of them ran. "
            "Raise RunLimits.max_tool_calls or ask for fewer calls.",
            limit_name="max_tool_calls", limit=cap, value=total,
        )


def _settle(
    parts: dict[int, Any], failures: list[tuple[str, int, str]], index: int, call: ToolCallPart,
    limit: int, verdict: tuple[str, Any],
) -> None:
    """Close a call a policy settled: a retry (counted on the tool), a refusal or an answer."""
    kind, value = verdict
    if kind == "retry":
        parts[index] = RetryPromptPart(value, tool_name=call.tool_name, tool_call_id=call.tool_call_id)
        failures.append((call.tool_name, limit, value))
    elif kind == "refused":
        parts[index] = ToolReturnPart(call.tool_name, call.tool_call_id, value, ToolOutcome.denied)
    else:
        parts[index] = ToolReturnPart(call.tool_name, call.tool_call_id, value)


def _content_verdict(run: RunCore, tool: Any, content: Any) -> tuple[str, Any]:
    """A policy-supplied result: plain JSON within the tool's result limit, else a retry."""
    from zigai.json import encoded_size
    from zigai.tool.scheduler import too_large_message

    limit = run.agent.tool_limits.tightened_by(tool.limits).max_result_bytes
    try:
        size = encoded_size(content, limit)
    except (JsonError, UnicodeEncodeError) as exc:
        raise InvalidAgentConfiguration(f"a tool policy produced a result that is not JSON: {exc}") from None
    if size > limit:
        return ("retry", too_large_message(tool.name, limit))
    return ("return", content)


def _run_batch_hooked(run: RunCore, scheduled: list[ScheduledCall]) -> list[Any]:
    """``run_batch`` with ``tool_execute_*`` events, all in call order on this thread."""
    info = run.info
    for sc in scheduled:
        run.fire(ToolExecuteStart(info, sc.call, _frozen_arguments(sc.args.arguments)))
    scheduler = run.scheduler
    try:
        results = scheduler.run_batch(scheduled, run.control)
    except BaseException as exc:
        origin = scheduler.failed_call_id
        for sc in scheduled:
            run.fire_failure(
                ToolExecuteError(info, sc.call, exc, sc.call.tool_call_id == origin), exc
            )
        raise
    for sc, result in zip(scheduled, results, strict=True):
        run.fire(ToolExecuteEnd(
            info, sc.call, result.status, result.content, result.retry_message, result.duration_s,
            result.started_ns,
        ))
    return results


_SCALARS = (str, int, float, bool, type(None))


def _frozen_arguments(arguments: Any) -> Any:
    """An immutable snapshot of the validated arguments (a decoded JSON object) for hooks.

    A flat object (the common case) becomes a read-only view of a shallow copy; nested
    values are frozen deeply.
    """
    for value in arguments.values():
        if not isinstance(value, _SCALARS):
            return freeze_json(arguments, ValueError)
    return MappingProxyType(dict(arguments))
