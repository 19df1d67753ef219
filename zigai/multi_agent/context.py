"""The explicit choices a scope hands a child: :class:`Shared` or :class:`Isolated` context,
the run kinds, and the one operation a scope needs from its session (:class:`RunExecutor`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from zigai.messages import Message

if TYPE_CHECKING:
    from zigai.agent import Agent, Result, RunOptions
    from zigai.control import RunControl

__all__ = ["Shared", "Isolated", "Context", "RunKind", "RunExecutor"]

RunKind = Literal["run", "delegation", "subagent", "handoff"]


@dataclass(frozen=True, slots=True)
class Shared:
    """The child run continues this canonical history (copied into the run's options)."""

    history: tuple[Message, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        object.__setattr__(self, "history", tuple(self.history))


@dataclass(frozen=True, slots=True)
class Isolated:
    """The child run starts with no message history."""


Context = Shared | Isolated




class RunExecutor(Protocol):
    """What a scope asks of its session: the identity and the one execution path."""

    @property
    def id(self) -> str: ...

    def _execute(
        self, *, agent: Agent, kind: RunKind, depth: int, options: RunOptions, control: RunControl | None,
        trace_parent: str | None, output_type: Any, start: Callable[[Agent, RunOptions, Any], Result],
    ) -> Result: ...
