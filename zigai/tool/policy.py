"""Tool policies: agent-wide behaviour around every function tool, in five ordered stages.

A :class:`Policy` is behaviour that belongs to the agent rather than to one tool — auditing,
argument normalisation, budget checks, result redaction, caching, approval rules.  Subclass
it and override the stages you need; every default passes its value through unchanged.
``Agent.tool_policies`` run in registration order (capability policies will follow them).

==============  ================================================  ===========================
stage           when                                              may
==============  ================================================  ===========================
``prepare``     each model step, after toolsets                   replace the tool (what the
                                                                  provider sees *and* what
                                                                  runs this step) or hide it
``arguments``   after the arguments passed the tool's schema      transform them (re-checked
                                                                  against the schema), retry,
                                                                  refuse
``approval``    after valid arguments, before the step runs       require approval (the run
                                                                  pauses; the decision is
                                                                  persisted in the pause)
``call``        right before the tool runs (after any approval)   answer instead of the tool
                                                                  (:class:`ToolAnswer`),
                                                                  retry, refuse
``returned``    after the tool returned successfully              transform the result,
                                                                  retry, refuse
==============  ================================================  ===========================

To *retry*, raise :class:`~zigai.tool.ModelRetry` with a message for the model: it becomes
the call's retry prompt and counts against that tool's own retry budget
(``Tool.max_retries`` or ``Agent.max_tool_retries``), exactly like a retry the tool raised.
To *refuse*, raise :class:`ToolRefused` with a reason: the call gets a ``denied`` tool result
carrying the reason and no retry is counted.  Any other exception is fatal and propagates
out of the run.  Stages run on the run's thread, in the model's call order, raced against
the run deadline like every application callback.

Invariants: a hidden tool is neither offered nor executable in that step; transformed
arguments must still satisfy the tool's schema (a policy cannot smuggle arguments the tool
would refuse); a policy never sees arguments that failed the schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from zigai.control import RunControl
from zigai.errors import ZigAIError
from zigai.messages import Message
from zigai.usage import RunUsage

if TYPE_CHECKING:
    from zigai.tool.tool import Tool

__all__ = ["Policy", "PolicyStages", "ToolAnswer", "ToolPolicyContext", "ToolRefused"]


class ToolRefused(ZigAIError):
    """Raised by a policy stage to refuse a call: the model gets a ``denied`` result.

    A control-flow signal like :class:`~zigai.tool.ModelRetry`, not a failure of the run.
    """

    def __init__(self, reason: str = "The tool call was refused by a policy.") -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class ToolAnswer:
    """Returned by :meth:`Policy.call`: use ``content`` as the call's result; the tool does not run."""

    content: Any


@dataclass(frozen=True, slots=True)
class ToolPolicyContext:
    """What a policy stage sees: the run's dependencies, usage, history and control.

    ``tool_call_id`` is None in the ``prepare`` stage (no call exists yet); ``retry`` is
    how many retries the tool has used in this run.
    """

    deps: Any
    usage: RunUsage
    request_count: int
    messages: tuple[Message, ...]
    control: RunControl
    tool_name: str
    tool_call_id: str | None = None
    retry: int = 0
    capabilities: Any = None  # the run's CapabilitySnapshot when capabilities are configured


class Policy:
    """One tool policy; override any of the five stages (see the module docs)."""

    def prepare(self, ctx: ToolPolicyContext, tool: Tool) -> Tool | None:
        """The tool for this model step (``tool.replace(...)`` to change it), or None to hide it."""
        return tool

    def arguments(self, ctx: ToolPolicyContext, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        """The arguments the tool receives (a changed mapping is re-checked against the schema)."""
        return arguments

    def approval(self, ctx: ToolPolicyContext, arguments: Mapping[str, Any]) -> bool:
        """True when this call of an immediate tool must wait for an approval decision."""
        return False

    def call(self, ctx: ToolPolicyContext, arguments: Mapping[str, Any]) -> ToolAnswer | None:
        """None to run the tool, or a :class:`ToolAnswer` whose content is the result."""
        return None

    def returned(self, ctx: ToolPolicyContext, content: Any) -> Any:
        """The result content the model sees (a successful call's)."""
        return content

    # -- which stages a subclass overrides (the agent skips the others at no cost) -------

    @classmethod
    def overrides(cls, stage: str) -> bool:
        return getattr(cls, stage) is not getattr(Policy, stage)


_STAGES = ("prepare", "arguments", "approval", "call", "returned")


class PolicyStages:
    """The agent's policies per stage, in registration order (empty tuples when unused)."""

    __slots__ = ("any", *_STAGES)

    def __init__(self, policies: tuple[Policy, ...]) -> None:
        for stage in _STAGES:
            object.__setattr__(self, stage, tuple(p for p in policies if type(p).overrides(stage)))
        self.any = any(getattr(self, stage) for stage in _STAGES)

    prepare: tuple[Policy, ...]
    arguments: tuple[Policy, ...]
    approval: tuple[Policy, ...]
    call: tuple[Policy, ...]
    returned: tuple[Policy, ...]
