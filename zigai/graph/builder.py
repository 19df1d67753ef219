"""GraphBuilder: collect node definitions, validate them all, produce an immutable Graph.

Checks, in this order, each failing with :class:`InvalidGraphDefinition` (or
:class:`GraphLimitExceeded` for a bound) before any run can exist:

* names -- non-empty strings of at most ``max_name_bytes`` UTF-8 bytes, unique per node;
  branch names unique per decision; documentation text at most ``max_text_bytes``;
* sizes -- at most ``max_nodes`` nodes and ``max_edges`` routes;
* routes -- every node has an outgoing route (a decision at least one branch, a fork at
  least one branch callback), every target is a known node or ``END``;
* reachability -- every node is reachable from the entry;
* callbacks are callable; a fork's ``max_concurrency`` may only tighten the graph's.

Route order is the order the application registered it; node order is definition order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from zigai.graph.definition import END_INDEX, Group, NodeInfo, Route
from zigai.graph.errors import GraphLimitExceeded, InvalidGraphDefinition
from zigai.graph.graph import Graph
from zigai.graph.limits import GraphLimits
from zigai.graph.nodes import Decision, EndMarker, Fork, Join, NodeDoc, Step, Target
from zigai.graph.types import GraphTypes

__all__ = ["GraphBuilder"]

S = TypeVar("S")
D = TypeVar("D")
I = TypeVar("I")  # noqa: E741 - the spec's Input type parameter
V = TypeVar("V")
O = TypeVar("O")  # noqa: E741 - the spec's Output type parameter


class GraphBuilder(Generic[S, D, I, V, O]):
    """Collects definitions; :meth:`build` validates them and returns the :class:`Graph`.

    ``start(input) -> value`` converts the run input to the intermediate value and
    ``finish(value) -> output`` converts the value reaching ``END``; both default to the
    identity (the runtime type checks still apply).
    """

    def __init__(
        self,
        types: GraphTypes | None = None,
        *,
        identity: str,
        limits: GraphLimits | None = None,
        start: Callable[[I], V] | None = None,
        finish: Callable[[V], O] | None = None,
    ) -> None:
        self._types = types if types is not None else GraphTypes()
        if not isinstance(self._types, GraphTypes):
            raise InvalidGraphDefinition("GraphBuilder types must be a GraphTypes")
        self._limits = limits if limits is not None else GraphLimits()
        if not isinstance(self._limits, GraphLimits):
            raise InvalidGraphDefinition("GraphBuilder limits must be a GraphLimits")
        self._text("identity", identity, self._limits.max_name_bytes, name=True)
        self._identity = identity
        for what, fn in (("start", start), ("finish", finish)):
            if fn is not None and not callable(fn):
                raise InvalidGraphDefinition(f"GraphBuilder {what} must be callable")
        self._start = start
        self._finish = finish
        self._definitions: list[Step | Decision | Fork] = []
        self._groups: list[tuple[str, str | None, tuple[str, ...]]] = []

    # -- definitions -----------------------------------------------------------------------------

    def step(
        self, name: str, run: Callable[[Any, Any], Any], *, next: Target,
        label: str | None = None, description: str | None = None, source: str | None = None,
    ) -> GraphBuilder[S, D, I, V, O]:
        """Add a step: ``run(ctx, value) -> value``, then always ``next``."""
        return self.add(Step(name, run, next, NodeDoc(label, description, source)))

    def decision(
        self, name: str, decide: Callable[[Any, Any], tuple[str, Any]], *,
        routes: Mapping[str, Target], route_labels: Mapping[str, str] | None = None,
        label: str | None = None, description: str | None = None, source: str | None = None,
    ) -> GraphBuilder[S, D, I, V, O]:
        """Add a decision: ``decide(ctx, value) -> (branch, value)``; ``routes`` maps branches."""
        return self.add(Decision(
            name, decide, dict(routes), dict(route_labels or {}), NodeDoc(label, description, source)
        ))

    def fork(
        self, name: str, *, branches: Sequence[Callable[[Any, Any], Any]], join: Join,
        next: Target, items: Callable[[Any, Any, Callable[[Any], None]], None] | None = None,
        max_concurrency: int | None = None, cleanup: Callable[[Any], None] | None = None,
        label: str | None = None, description: str | None = None, source: str | None = None,
    ) -> GraphBuilder[S, D, I, V, O]:
        """Add a fork/join node (broadcast without ``items``, map with it)."""
        return self.add(Fork(
            name, tuple(branches), join, next, items, max_concurrency, cleanup,
            NodeDoc(label, description, source),
        ))

    def add(self, definition: Step | Decision | Fork) -> GraphBuilder[S, D, I, V, O]:
        """Add a prepared node definition."""
        if not isinstance(definition, (Step, Decision, Fork)):
            raise InvalidGraphDefinition(
                f"graph nodes are Step, Decision or Fork values, got {type(definition).__name__}"
            )
        self._definitions.append(definition)
        return self

    def group(self, name: str, members: Sequence[str], *, label: str | None = None) -> GraphBuilder[S, D, I, V, O]:
        """Documentation group of nodes (a node may be listed in several; views draw it once)."""
        self._groups.append((name, label, tuple(members)))
        return self

    # -- validation --------------------------------------------------------------------------------

    def _text(self, what: str, value: object, limit: int, *, name: bool = False) -> None:
        if value is None and not name:
            return
        if not isinstance(value, str) or (name and not value):
            kind = "a non-empty string" if name else "a string or None"
            raise InvalidGraphDefinition(f"{what} must be {kind}, got {value!r}")
        size = len(value.encode("utf-8"))
        if size > limit:
            raise GraphLimitExceeded(f"{what} is {size} UTF-8 bytes; the limit is {limit}")

    def _doc(self, owner: str, doc: NodeDoc) -> None:
        if not isinstance(doc, NodeDoc):
            raise InvalidGraphDefinition(f"node {owner!r}: doc must be a NodeDoc")
        for field in ("label", "description", "source"):
            self._text(f"node {owner!r} {field}", getattr(doc, field), self._limits.max_text_bytes)

    def build(self, entry: str) -> Graph[S, D, I, V, O]:
        """Validate every definition and return the immutable graph starting at ``entry``."""
        limits = self._limits
        definitions = tuple(self._definitions)
        if not definitions:
            raise InvalidGraphDefinition("a graph needs at least one node")
        if len(definitions) > limits.max_nodes:
            raise GraphLimitExceeded(f"graph has {len(definitions)} nodes; the limit is {limits.max_nodes}")
        index: dict[str, int] = {}
        for position, definition in enumerate(definitions):
            self._text("node name", definition.name, limits.max_name_bytes, name=True)
            if definition.name in index:
                raise InvalidGraphDefinition(f"node name {definition.name!r} is defined twice")
            index[definition.name] = position
            self._doc(definition.name, definition.doc)
        if not isinstance(entry, str) or entry not in index:
            raise InvalidGraphDefinition(f"entry {entry!r} is not a node; nodes: {list(index)}")

        nodes: list[NodeInfo] = []
        routes: list[Route] = []
        for position, definition in enumerate(definitions):
            spans = self._routes_of(definition, index)
            if len(routes) + len(spans) > limits.max_edges:
                raise GraphLimitExceeded(
                    f"graph has more than {limits.max_edges} routes; the limit is {limits.max_edges}"
                )
            nodes.append(NodeInfo(position, definition.name, definition.kind, len(routes), len(spans), definition.doc))
            routes.extend(spans)

        self._check_reachable(nodes, routes, index[entry])
        groups = self._build_groups(index)
        return Graph(
            types=self._types, limits=limits, identity=self._identity, entry=index[entry],
            nodes=tuple(nodes), routes=tuple(routes), definitions=definitions,
            groups=groups, start=self._start, finish=self._finish,
        )

    def _target(self, owner: str, target: object, index: Mapping[str, int]) -> int:
        if isinstance(target, EndMarker):
            return END_INDEX
        if not isinstance(target, str):
            raise InvalidGraphDefinition(f"node {owner!r} routes to {target!r}; use a node name or END")
        if target not in index:
            raise InvalidGraphDefinition(
                f"node {owner!r} routes to unknown node {target!r}; nodes: {list(index)}"
            )
        return index[target]

    def _routes_of(self, definition: Step | Decision | Fork, index: Mapping[str, int]) -> list[Route]:
        name = definition.name
        if isinstance(definition, Step):
            self._callable(name, "run", definition.run)
            return [Route(None, self._target(name, definition.next, index))]
        if isinstance(definition, Decision):
            self._callable(name, "decide", definition.decide)
            if not isinstance(definition.routes, Mapping) or not definition.routes:
                raise InvalidGraphDefinition(f"decision {name!r} has no routes; register at least one branch")
            unknown_labels = set(definition.route_labels) - set(definition.routes)
            if unknown_labels:
                raise InvalidGraphDefinition(
                    f"decision {name!r} labels unknown branches {sorted(unknown_labels)}"
                )
            spans = []
            for branch, target in definition.routes.items():
                self._text(f"decision {name!r} branch name", branch, self._limits.max_name_bytes, name=True)
                label = definition.route_labels.get(branch)
                self._text(f"decision {name!r} route label", label, self._limits.max_text_bytes)
                spans.append(Route(branch, self._target(name, target, index), label))
            return spans
        return [self._fork_route(definition, index)]

    def _fork_route(self, fork: Fork, index: Mapping[str, int]) -> Route:
        name = fork.name
        if not fork.branches:
            raise InvalidGraphDefinition(f"fork {name!r} has no branches; give at least one callback")
        for branch in fork.branches:
            self._callable(name, "branch", branch)
        if not isinstance(fork.join, Join):
            raise InvalidGraphDefinition(f"fork {name!r} needs a Join")
        for what in ("initial", "reduce", "finish"):
            self._callable(name, f"join.{what}", getattr(fork.join, what))
        if fork.items is not None:
            self._callable(name, "items", fork.items)
        if fork.cleanup is not None:
            self._callable(name, "cleanup", fork.cleanup)
        limit = fork.max_concurrency
        if limit is not None and (type(limit) is not int or limit < 1 or limit > self._limits.max_concurrency):
            raise InvalidGraphDefinition(
                f"fork {name!r} max_concurrency must be an int in 1..{self._limits.max_concurrency} "
                f"(GraphLimits.max_concurrency), got {limit!r}"
            )
        return Route(None, self._target(name, fork.next, index))

    @staticmethod
    def _callable(owner: str, what: str, value: object) -> None:
        if not callable(value):
            raise InvalidGraphDefinition(f"node {owner!r}: {what} must be callable, got {value!r}")

    @staticmethod
    def _check_reachable(nodes: Sequence[NodeInfo], routes: Sequence[Route], entry: int) -> None:
        seen = {entry}
        frontier = [entry]
        while frontier:
            node = nodes[frontier.pop()]
            for route in routes[node.route_start:node.route_start + node.route_count]:
                if route.target != END_INDEX and route.target not in seen:
                    seen.add(route.target)
                    frontier.append(route.target)
        unreachable = [n.name for n in nodes if n.index not in seen]
        if unreachable:
            raise InvalidGraphDefinition(
                f"nodes {unreachable} are not reachable from the entry {nodes[entry].name!r}; "
                "route to them or remove them"
            )

    def _build_groups(self, index: Mapping[str, int]) -> tuple[Group, ...]:
        groups = []
        names: set[str] = set()
        for name, label, members in self._groups:
            self._text("group name", name, self._limits.max_name_bytes, name=True)
            self._text(f"group {name!r} label", label, self._limits.max_text_bytes)
            if name in names:
                raise InvalidGraphDefinition(f"group {name!r} is defined twice")
            names.add(name)
            missing = [m for m in members if m not in index]
            if missing or not members:
                raise InvalidGraphDefinition(f"group {name!r} lists unknown nodes {missing} or none at all")
            groups.append(Group(name, label, tuple(index[m] for m in members)))
        return tuple(groups)

