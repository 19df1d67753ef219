"""Running ``Agent.tool_policies`` (:mod:`zigai.tool.policy`) inside one run's steps.

The run holds its agent's :class:`~zigai.tool.policy.PolicyStages` (built once per agent and
cached), so a run without policies — or without policies for a stage — pays nothing for that
stage.  The functions here run one stage for one tool or call, in registration
order, each callback raced against the run control; the step executors
(``run._resolve_tools``, ``_pause_step``, ``_tool_step``) decide what a retry or refusal turns into.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from zigai.agent.errors import InvalidAgentConfiguration
from zigai.tool import InvalidToolArguments, ModelRetry, Tool, ValidatedArgs
from zigai.tool.policy import Policy, ToolAnswer, ToolPolicyContext
from zigai.tool.race import call_bounded

if TYPE_CHECKING:
    from zigai.agent._core import RunCore

__all__ = ["after_return", "before_call", "check_arguments", "needs_approval", "prepare_tools"]

def context(run: RunCore, tool_name: str, tool_call_id: str | None) -> ToolPolicyContext:
    usage = run.usage
    return ToolPolicyContext(
        run.deps, usage, usage.requests, tuple(run.messages), run.control, tool_name,
        tool_call_id, run.tool_retries.get(tool_name, 0),
        run.caps.snapshot if run.caps is not None else None,
    )


def prepare_tools(run: RunCore, policies: tuple[Policy, ...], tools: tuple[Tool, ...]) -> tuple[Tool, ...]:
    """The tools of this step after every ``prepare`` stage (hidden ones dropped)."""
    prepared: list[Tool] = []
    for tool in tools:
        current: Tool | None = tool
        for policy in policies:
            assert current is not None
            current = call_bounded(
                policy.prepare, context(run, current.name, None), current, control=run.control,
                what="a tool policy's prepare stage",
            )
            if current is None:
                break
            if not isinstance(current, Tool):
                raise InvalidAgentConfiguration(
                    f"tool policy {policy!r}.prepare returned {type(current).__name__}; it must "
                    "return a Tool (tool.replace(...) to change it) or None to hide it"
                )
        if current is not None:
            prepared.append(current)
    return tuple(prepared)


def check_arguments(
    run: RunCore, policies: tuple[Policy, ...], tool: Tool, call_id: str, args: ValidatedArgs
) -> ValidatedArgs:
    """The arguments after every ``arguments`` stage; a changed value is schema-checked again.

    ``ModelRetry`` / ``ToolRefused`` propagate to the step; so does a transformed value that
    fails the tool's schema, as ``ModelRetry`` with the validation message.
    """
    arguments: Mapping[str, Any] = args.arguments
    for policy in policies:
        changed = call_bounded(
            policy.arguments, context(run, tool.name, call_id), arguments, control=run.control,
            what="a tool policy's arguments stage",
        )
        if not isinstance(changed, Mapping):
            raise InvalidAgentConfiguration(
                f"tool policy {policy!r}.arguments returned {type(changed).__name__}, not a mapping"
            )
        arguments = changed
    if arguments is args.arguments:
        return args
    from zigai import json as zjson

    try:
        return tool.validate_arguments(zjson.dumps(dict(arguments)))
    except InvalidToolArguments as exc:
        raise ModelRetry(f"the arguments after the tool policies are invalid: {exc}") from None
    except Exception as exc:  # zigai.json errors: the policy returned something not JSON
        raise InvalidAgentConfiguration(
            f"a tool policy's arguments stage returned arguments that are not JSON: {exc}"
        ) from None


def needs_approval(
    run: RunCore, policies: tuple[Policy, ...], tool: Tool, call_id: str, args: ValidatedArgs
) -> bool:
    """True when any ``approval`` stage requires approval for this call (first True wins)."""
    for policy in policies:
        if call_bounded(
            policy.approval, context(run, tool.name, call_id), args.arguments, control=run.control,
            what="a tool policy's approval stage",
        ):
            return True
    return False


def before_call(
    run: RunCore, policies: tuple[Policy, ...], tool: Tool, call_id: str, args: ValidatedArgs
) -> ToolAnswer | None:
    """The first ``call`` stage answer (the tool then does not run), or None to run it."""
    for policy in policies:
        answer = call_bounded(
            policy.call, context(run, tool.name, call_id), args.arguments, control=run.control,
            what="a tool policy's call stage",
        )
        if answer is not None:
            if not isinstance(answer, ToolAnswer):
                raise InvalidAgentConfiguration(
                    f"tool policy {policy!r}.call returned {type(answer).__name__}; return None "
                    "to run the tool or ToolAnswer(content) to answer instead"
                )
            return answer
    return None


def after_return(
    run: RunCore, policies: tuple[Policy, ...], tool_name: str, call_id: str, content: Any
) -> Any:
    """The result content after every ``returned`` stage."""
    for policy in policies:
        content = call_bounded(
            policy.returned, context(run, tool_name, call_id), content, control=run.control,
            what="a tool policy's returned stage",
        )
    return content
