"""``agent.override(model=..., deps=..., tools=...)``: swap an agent's parts for one context.

An override is an entry in a :class:`contextvars.ContextVar`, never a change to the agent:
runs of that agent *started* inside the ``with`` block, in the same thread (or the same
asyncio task / ``contextvars.copy_context()`` copy — tool calls run in such a copy, so an agent
a tool calls is covered too), use a replacement agent built once when
the block is entered (``dataclasses.replace`` of the agent, so every field is validated
again) and, with ``deps=``, those dependencies instead of the run's.  Other threads start
with an empty context and see the agent unchanged; leaving the block restores the previous
state even when overrides are nested.

Invariants: the agent object is never mutated; a run that already started keeps the agent
it started with; overrides are keyed by the agent's identity, so equal agents are distinct.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

__all__ = ["UNSET", "Override", "active_override", "override"]


class _Unset:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


@dataclass(frozen=True, slots=True)
class Override:
    """One active override: the agent it applies to, its replacement and the deps to use."""

    agent: Any
    replacement: Any
    deps: Any = UNSET


_ACTIVE: ContextVar[tuple[Override, ...]] = ContextVar("zigai_agent_overrides", default=())


def active_override(agent: Any) -> Override | None:
    """The innermost override of ``agent`` in the current context, or None."""
    entries = _ACTIVE.get()
    if not entries:
        return None
    for entry in reversed(entries):
        if entry.agent is agent:
            return entry
    return None


@contextmanager
def override(agent: Any, *, model: Any = UNSET, deps: Any = UNSET, tools: Any = UNSET) -> Iterator[None]:
    """Use ``model``/``tools``/``deps`` for runs of ``agent`` started inside the block."""
    outer = active_override(agent)
    base = outer.replacement if outer is not None else agent
    changes = {name: value for name, value in (("model", model), ("tools", tools)) if value is not UNSET}
    replacement = replace(base, **changes) if changes else base
    if deps is UNSET and outer is not None:
        deps = outer.deps
    token = _ACTIVE.set((*_ACTIVE.get(), Override(agent, replacement, deps)))
    try:
        yield
    finally:
        _ACTIVE.reset(token)
