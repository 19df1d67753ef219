"""The run entry points' keyword arguments, typed, and the PydanticAI spellings zigai teaches.

:class:`RunKwargs` lists every :class:`~zigai.agent.config.RunOptions` field except
``prompt`` (the first positional argument), so ``agent.run(prompt, deps=..., limits=...)``
is completed by editors and checked by mypy/pyright through ``Unpack[RunKwargs[Deps]]``.
``tests/test_agent_porting.py`` keeps the two lists equal.

:func:`check_keywords` refuses a keyword that is not a run option with
:class:`~zigai.agent.errors.UnsupportedKeyword`; when the keyword is one a PydanticAI user
would write, the message names zigai's spelling (the tables below are the one place these
translations are written down).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Generic, TypedDict, TypeVar

from zigai.agent.errors import UnsupportedKeyword

if TYPE_CHECKING:
    from zigai.agent.config import RunLimits
    from zigai.agent.pending import PendingMessageQueue
    from zigai.capability import Capability, CapabilityLayer
    from zigai.context_budget import ContextBudget
    from zigai.control import CancellationToken
    from zigai.hooks import Correlation, Hook
    from zigai.messages import Message, UserContent
    from zigai.security import UrlPolicy
    from zigai.settings import ModelSettings

__all__ = ["RunKwargs", "check_keywords", "RUN_SPELLINGS", "AGENT_SPELLINGS"]

DepsT = TypeVar("DepsT")


class RunKwargs(TypedDict, Generic[DepsT], total=False):
    """Keyword arguments of ``Agent.run`` and friends (the :class:`RunOptions` fields)."""

    message_history: Sequence[Message]
    instructions: str | Sequence[str] | None
    model_settings: ModelSettings | None
    deps: DepsT
    timeout_ms: int | None
    cancellation: CancellationToken | None
    limits: RunLimits | None
    history_processors: Sequence[Callable[[tuple[Message, ...]], Sequence[Message]]]
    pending_messages: PendingMessageQueue | None
    hooks: Sequence[Hook]
    correlation: Correlation | None
    context_budget: ContextBudget | None
    request_id: str | None
    capabilities: Sequence[Capability]
    capability_layers: Sequence[CapabilityLayer]
    prompt_parts: Sequence[UserContent]
    url_policy: UrlPolicy | None


#: PydanticAI run keywords -> what zigai calls them.
RUN_SPELLINGS: dict[str, str] = {
    "usage_limits": "limits=RunLimits(max_requests=..., max_total_tokens=...)",
    "user_prompt": "the first positional argument (prompt)",
    "model": "`with agent.override(model=...)` for a test, or dataclasses.replace(agent, model=...)",
    "event_stream_handler": "agent.run_stream_events(prompt, sink=handler)",
    "infer_name": "Agent(name=...)",
    "toolsets": "agent.with_tools(...) or Agent(toolsets=[...])",
    "builtin_tools": "Agent(builtin_tools=[...])",
    "deferred_tool_results": "agent.resume_run(paused.state_json, decisions)",
    "output_type": "output_type= on run/run_stream/run_until_pause, or agent.run_typed(Type, prompt)",
}

#: PydanticAI ``Agent(...)`` keywords -> zigai's field names.
AGENT_SPELLINGS: dict[str, str] = {
    "retries": "max_tool_retries=",
    "output_retries": "max_output_retries=",
    "instrument": "hooks=[...] (zigai.telemetry builds OpenTelemetry hooks)",
    "prepare_tools": "Toolset(tools, prepare=...) in toolsets=[...]",
    "event_stream_handler": "agent.run_stream_events(prompt, sink=handler)",
    "tool_timeout": "tool_limits=ToolLimits(timeout_ms=...)",
    "defer_model_check": "nothing: a model string is resolved without I/O when the agent is built",
    "system_prompt_functions": "dynamic_instructions=[...]",
}


def check_keywords(given: Iterable[str], allowed: Iterable[str], where: str,
                   spellings: dict[str, str] = RUN_SPELLINGS) -> None:
    """Raise :class:`UnsupportedKeyword` for the first keyword of ``given`` not in ``allowed``."""
    known = set(allowed)
    for name in given:
        if name in known:
            continue
        hint = spellings.get(name)
        if hint is not None:
            raise UnsupportedKeyword(f"{where} has no keyword {name!r}; in zigai use {hint}")
        raise UnsupportedKeyword(
            f"{where} got an unexpected keyword {name!r}; its keywords are {', '.join(sorted(known))}"
        )

