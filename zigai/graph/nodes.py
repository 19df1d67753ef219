"""Node definitions: what an application hands the builder, before validation.

Three kinds, all frozen values:

* :class:`Step` -- one callback ``run(ctx, value) -> value`` and one unconditional route;
* :class:`Decision` -- ``decide(ctx, value) -> (branch, value)`` and a registered, ordered
  mapping of branch names to targets;
* :class:`Fork` -- a fan-out/fan-in boundary: ``branches`` (callbacks run concurrently on
  each item), an optional ``items`` emitter (a *map* fork; without it the fork
  *broadcasts* the current value to every branch), a typed :class:`Join`, and one route.

A route target is a node name or :data:`END`.  Documentation metadata (:class:`NodeDoc`)
rides beside a node and never changes what a run does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

__all__ = ["END", "EndMarker", "Target", "NodeDoc", "Step", "Decision", "Fork", "Join", "NodeKind"]

NodeKind = Literal["step", "decision", "fork"]


class EndMarker:
    """The type of :data:`END`, the synthetic terminal every finishing route points at."""

    __slots__ = ()
    _instance: EndMarker | None = None

    def __new__(cls) -> EndMarker:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "END"

    def __reduce__(self) -> str:
        return "END"


END: Final = EndMarker()
"""Route target that finishes the run (the current value becomes the output)."""

Target = str | EndMarker


@dataclass(frozen=True, slots=True)
class NodeDoc:
    """Presentation text for one node; outside the definition digest."""

    label: str | None = None
    description: str | None = None
    source: str | None = None


@dataclass(frozen=True, slots=True)
class Join:
    """The typed reduction of a fork's results.

    ``initial()`` creates the accumulator, ``reduce(acc, value)`` folds one branch result in
    (item-major, then branch-major order -- never completion order), ``finish(acc)`` turns
    the accumulator into the graph's intermediate value.  An empty map fork returns
    ``finish(initial())``.
    """

    initial: Callable[[], Any]
    reduce: Callable[[Any, Any], Any]
    finish: Callable[[Any], Any] = field(default=lambda acc: acc)


@dataclass(frozen=True, slots=True)
class Step:
    name: str
    run: Callable[[Any, Any], Any]
    next: Target
    doc: NodeDoc = field(default_factory=NodeDoc)
    kind: NodeKind = field(default="step", init=False)


@dataclass(frozen=True, slots=True)
class Decision:
    name: str
    decide: Callable[[Any, Any], tuple[str, Any]]
    routes: Mapping[str, Target]
    route_labels: Mapping[str, str] = field(default_factory=dict)
    doc: NodeDoc = field(default_factory=NodeDoc)
    kind: NodeKind = field(default="decision", init=False)


@dataclass(frozen=True, slots=True)
class Fork:
    name: str
    branches: tuple[Callable[[Any, Any], Any], ...]
    join: Join
    next: Target
    items: Callable[[Any, Any, Callable[[Any], None]], None] | None = None
    max_concurrency: int | None = None
    cleanup: Callable[[Any], None] | None = None
    doc: NodeDoc = field(default_factory=NodeDoc)
    kind: NodeKind = field(default="fork", init=False)

    @property
    def mode(self) -> Literal["broadcast", "map"]:
        return "broadcast" if self.items is None else "map"
