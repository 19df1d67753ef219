"""The routing table of a built graph: nodes, route spans, routes, groups and the digest.

:class:`GraphDefinition` is the base of :class:`~zigai.graph.Graph` (which adds the run entry
points); it is produced only by :class:`~zigai.graph.builder.GraphBuilder.build`, after
every definition check passed.  It holds three arrays -- nodes, per-node route spans and
routes -- as tuples, plus a name index; nothing in it changes after construction, so one
graph may serve many runs (and threads) at once.  Callbacks, states and dependencies stay
application-owned and must be thread-safe when runs are concurrent.

Route targets are node indexes; :data:`END_INDEX` (-1) is the synthetic terminal.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Generic, TypeVar

from zigai import json as zjson
from zigai.graph.limits import GraphLimits
from zigai.graph.nodes import Decision, Fork, NodeDoc, NodeKind, Step
from zigai.graph.types import GraphTypes

__all__ = ["GraphDefinition", "NodeInfo", "Route", "Group", "END_INDEX"]

S = TypeVar("S")
D = TypeVar("D")
I = TypeVar("I")  # noqa: E741 - the spec's Input type parameter
V = TypeVar("V")
O = TypeVar("O")  # noqa: E741 - the spec's Output type parameter

END_INDEX = -1


@dataclass(frozen=True, slots=True)
class Route:
    """One outgoing route: ``branch`` is the registered name (None for a step or fork)."""

    branch: str | None
    target: int
    label: str | None = None


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """A node of the routing table: its index, stable name, kind and route span."""

    index: int
    name: str
    kind: NodeKind
    route_start: int
    route_count: int
    doc: NodeDoc


@dataclass(frozen=True, slots=True)
class Group:
    """A documentation group: a name, an optional label and member node indexes in order."""

    name: str
    label: str | None
    members: tuple[int, ...]


class GraphDefinition(Generic[S, D, I, V, O]):
    """An immutable, validated workflow definition (see module docstring)."""

    __slots__ = (
        "_types", "_limits", "_identity", "_entry", "_nodes", "_routes", "_definitions",
        "_names", "_groups", "_start", "_finish", "_digest",
    )

    def __init__(
        self,
        *,
        types: GraphTypes,
        limits: GraphLimits,
        identity: str,
        entry: int,
        nodes: tuple[NodeInfo, ...],
        routes: tuple[Route, ...],
        definitions: tuple[Step | Decision | Fork, ...],
        groups: tuple[Group, ...],
        start: Callable[[I], V] | None,
        finish: Callable[[V], O] | None,
    ) -> None:
        self._types = types
        self._limits = limits
        self._identity = identity
        self._entry = entry
        self._nodes = nodes
        self._routes = routes
        self._definitions = definitions
        self._names: Mapping[str, int] = MappingProxyType({n.name: n.index for n in nodes})
        self._groups = groups
        self._start = start
        self._finish = finish
        self._digest = _definition_digest(self)

    # -- the routing table ---------------------------------------------------------------------

    @property
    def types(self) -> GraphTypes:
        return self._types

    @property
    def limits(self) -> GraphLimits:
        return self._limits

    @property
    def identity(self) -> str:
        """The application-supplied definition identity snapshots are bound to."""
        return self._identity

    @property
    def entry(self) -> NodeInfo:
        return self._nodes[self._entry]

    @property
    def nodes(self) -> tuple[NodeInfo, ...]:
        return self._nodes

    @property
    def routes(self) -> tuple[Route, ...]:
        return self._routes

    @property
    def groups(self) -> tuple[Group, ...]:
        return self._groups

    @property
    def digest(self) -> str:
        """SHA-256 (hex) of types, topology, branch layout, entry and execution ceilings."""
        return self._digest

    def node(self, name: str) -> NodeInfo:
        """The node named ``name`` (KeyError with the known names otherwise)."""
        index = self._names.get(name)
        if index is None:
            raise KeyError(f"graph has no node {name!r}; nodes: {sorted(self._names)}")
        return self._nodes[index]

    def routes_of(self, node: NodeInfo) -> tuple[Route, ...]:
        return self._routes[node.route_start:node.route_start + node.route_count]

    def definition(self, index: int) -> Step | Decision | Fork:
        return self._definitions[index]

    def _begin(self, input: Any) -> Any:
        return input if self._start is None else self._start(input)

    def _end(self, value: Any) -> Any:
        return value if self._finish is None else self._finish(value)

    def __repr__(self) -> str:
        return f"Graph(identity={self._identity!r}, nodes={len(self._nodes)}, entry={self.entry.name!r})"


def _definition_digest(graph: GraphDefinition[Any, Any, Any, Any, Any]) -> str:
    """Hash what execution depends on; documentation metadata stays out on purpose."""
    nodes = []
    for node in graph.nodes:
        definition = graph.definition(node.index)
        layout: dict[str, Any] = {
            "name": node.name,
            "kind": node.kind,
            "routes": [[r.branch, r.target] for r in graph.routes_of(node)],
        }
        if isinstance(definition, Fork):
            layout["fork"] = {
                "mode": definition.mode,
                "branches": len(definition.branches),
                "max_concurrency": definition.max_concurrency,
            }
        nodes.append(layout)
    document = {
        "digest_version": 1,
        "types": graph.types.labels(),
        "entry": graph.entry.index,
        "nodes": nodes,
        "ceilings": graph.limits.execution_ceilings(),
    }
    return hashlib.sha256(zjson.dumps(document).encode("utf-8")).hexdigest()
