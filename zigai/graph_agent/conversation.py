"""Conversation: the long-lived copy of an agent conversation for graph state.

An agent :class:`~zigai.agent.Result` is released before the graph transition commits, so
state that must outlive the step keeps a :class:`Conversation` instead: an immutable value
holding its own deep copy of the canonical messages and the cumulative usage of every run
folded into it.  ``extend(result)`` returns a new conversation with the run's *new*
messages appended (so passing ``conversation.messages`` as ``message_history`` never
duplicates anything) and its usage added.

For graph snapshots, :meth:`Conversation.to_json_value` / :meth:`Conversation.from_json_value`
use the versioned history envelope (``zigai.history``) for the messages.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field, fields
from typing import Any

from zigai import history
from zigai.agent import Result
from zigai.graph_agent.step import InvalidAgentStep
from zigai.messages import Message
from zigai.usage import InvalidUsage, RunUsage, UsageDetails

__all__ = ["Conversation"]

_COUNTERS = tuple(f.name for f in fields(RunUsage) if f.name != "details")


@dataclass(frozen=True, slots=True)
class Conversation:
    """Canonical messages and cumulative usage, owned by this value (see module docstring)."""

    messages: tuple[Message, ...] = ()
    usage: RunUsage = field(default_factory=RunUsage)
    runs: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", tuple(self.messages))
        if not isinstance(self.usage, RunUsage):
            raise InvalidAgentStep("Conversation.usage must be a RunUsage")

    def extend(self, result: Result) -> Conversation:
        """A new conversation with ``result``'s new messages copied in and its usage added."""
        if not isinstance(result, Result):
            raise InvalidAgentStep(f"Conversation.extend needs an agent Result, got {type(result).__name__}")
        added = copy.deepcopy(result.new_messages())
        return Conversation(self.messages + added, self.usage + result.usage, self.runs + 1)

    def to_json_value(self) -> dict[str, Any]:
        """A plain JSON value (history envelope + usage counters) for a snapshot codec."""
        usage: dict[str, Any] = {name: getattr(self.usage, name) for name in _COUNTERS}
        usage["details"] = dict(self.usage.details.items())
        return {"history": json.loads(history.stringify(self.messages)), "usage": usage, "runs": self.runs}

    @classmethod
    def from_json_value(cls, value: Any) -> Conversation:
        """Rebuild a conversation from :meth:`to_json_value` output (history bounds apply)."""
        if not isinstance(value, dict) or set(value) != {"history", "usage", "runs"}:
            raise InvalidAgentStep("a conversation value is an object with 'history', 'usage' and 'runs'")
        raw_usage = value["usage"]
        if not isinstance(raw_usage, dict) or set(raw_usage) != {*_COUNTERS, "details"}:
            raise InvalidAgentStep(f"conversation usage must have exactly {sorted({*_COUNTERS, 'details'})}")
        runs = value["runs"]
        if type(runs) is not int or runs < 0:
            raise InvalidAgentStep("conversation runs must be an int >= 0")
        try:
            usage = RunUsage(**{name: raw_usage[name] for name in _COUNTERS},
                             details=UsageDetails(raw_usage["details"]))
        except (TypeError, ValueError, InvalidUsage) as error:
            raise InvalidAgentStep(f"conversation usage is invalid: {error}") from error
        with history.parse(json.dumps(value["history"])) as owned:
            messages = owned.messages
        return cls(messages, usage, runs)
