"""Stable step identities for durable runs (no engine imports).

A durable run numbers its operations in the order the agent performs them on the workflow
thread: model request ``k`` gets the next ordinal, then each tool call of that response gets
the following ordinals in the model's call order -- whichever thread later executes it.  The
identity of an operation is therefore a pure function of the run id and the replayed history,
so a resumed run finds every completed operation under the same id.

``StepId.text`` spells ``[namespace/]run_id[/n<node>.s<completed>]/<ordinal>``: an outer
binding namespace stays a prefix, and a graph binding adds the node index and the node's
completed-step ordinal so separate nodes and repeated visits of a cyclic node never collide.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

__all__ = ["StepId", "StepScope", "StepCounter"]

_SEGMENT = re.compile(r"[A-Za-z0-9_.:-]+")


def _segment(value: str, what: str) -> str:
    if not isinstance(value, str) or not _SEGMENT.fullmatch(value):
        raise ValueError(f"{what} must be non-empty [A-Za-z0-9_.:-]+, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class StepScope:
    """Where a run sits inside a graph: the stable node index and its completed-step ordinal."""

    node_index: int
    completed_steps: int

    def __post_init__(self) -> None:
        for name in ("node_index", "completed_steps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"StepScope.{name} must be an int >= 0")


@dataclass(frozen=True, slots=True)
class StepId:
    """One operation's stable identity (see module docstring)."""

    run_id: str
    ordinal: int
    namespace: str | None = None
    scope: StepScope | None = None

    def __post_init__(self) -> None:
        _segment(self.run_id, "StepId.run_id")
        if self.namespace is not None:
            _segment(self.namespace, "StepId.namespace")
        if isinstance(self.ordinal, bool) or not isinstance(self.ordinal, int) or self.ordinal < 0:
            raise ValueError("StepId.ordinal must be an int >= 0")

    @property
    def text(self) -> str:
        parts = [] if self.namespace is None else [self.namespace]
        parts.append(self.run_id)
        if self.scope is not None:
            parts.append(f"n{self.scope.node_index}.s{self.scope.completed_steps}")
        parts.append(str(self.ordinal))
        return "/".join(parts)

    def __str__(self) -> str:
        return self.text


class StepCounter:
    """Hands out consecutive :class:`StepId` values for one run (thread-safe)."""

    __slots__ = ("_run_id", "_namespace", "_scope", "_next", "_lock")

    def __init__(self, run_id: str, *, namespace: str | None = None, scope: StepScope | None = None) -> None:
        StepId(run_id, 0, namespace, scope)  # validates the parts once
        self._run_id = run_id
        self._namespace = namespace
        self._scope = scope
        self._next = 0
        self._lock = threading.Lock()

    def next(self) -> StepId:
        with self._lock:
            ordinal = self._next
            self._next += 1
        return StepId(self._run_id, ordinal, self._namespace, self._scope)
