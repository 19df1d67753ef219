"""The versioned visualization view of a graph: stable node and edge arrays for tooling.

:func:`graph_view` turns a built graph into a :class:`GraphView`: ``nodes`` (a synthetic
``start``, every node in definition order, a synthetic ``end``), ``edges`` (``start`` to the
entry, then every route in routing-table order), ``groups`` and the definition digest.
Renderers such as :mod:`zigai.graph.mermaid` consume only this view.

Invariants:

* Identifiers are positional -- ``start``, ``n0`` ... ``nK`` in definition order, ``end``,
  groups ``g0`` ... -- never application names, so a renderer cannot be steered by a name.
* Route identity (``branch``) stays separate from presentation (``label``): a label is the
  route label when one was given, else the branch name.
* The same definition always produces an equal view; ``VIEW_VERSION`` changes whenever the
  shape does.  ``to_dict()`` is the JSON form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from zigai.graph.definition import END_INDEX

if TYPE_CHECKING:
    from zigai.graph.definition import GraphDefinition

__all__ = ["VIEW_VERSION", "GraphView", "ViewNode", "ViewEdge", "ViewGroup", "graph_view"]

VIEW_VERSION = 1

ViewKind = Literal["start", "end", "step", "decision", "fork"]


@dataclass(frozen=True, slots=True)
class ViewNode:
    """One node of the view; ``index``/``name`` are None for the synthetic boundaries."""

    id: str
    kind: ViewKind
    index: int | None
    name: str | None
    label: str
    description: str | None = None
    source: str | None = None
    fork_mode: Literal["broadcast", "map"] | None = None


@dataclass(frozen=True, slots=True)
class ViewEdge:
    """One route: ``branch`` is its identity (None for unconditional routes), ``label`` text."""

    source: str
    target: str
    branch: str | None
    label: str | None


@dataclass(frozen=True, slots=True)
class ViewGroup:
    id: str
    name: str
    label: str
    members: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GraphView:
    """What a renderer may draw; ``max_text_bytes`` is the graph's visualization ceiling."""

    version: int
    identity: str
    digest: str
    entry: str
    nodes: tuple[ViewNode, ...]
    edges: tuple[ViewEdge, ...]
    groups: tuple[ViewGroup, ...]
    max_text_bytes: int

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON form (keys and array order fixed by ``version``)."""
        return {
            "version": self.version,
            "identity": self.identity,
            "digest": self.digest,
            "entry": self.entry,
            "nodes": [
                {"id": n.id, "kind": n.kind, "index": n.index, "name": n.name, "label": n.label,
                 "description": n.description, "source": n.source, "fork_mode": n.fork_mode}
                for n in self.nodes
            ],
            "edges": [
                {"source": e.source, "target": e.target, "branch": e.branch, "label": e.label}
                for e in self.edges
            ],
            "groups": [
                {"id": g.id, "name": g.name, "label": g.label, "members": list(g.members)}
                for g in self.groups
            ],
        }


def _node_id(index: int) -> str:
    return "end" if index == END_INDEX else f"n{index}"


def graph_view(graph: GraphDefinition[Any, Any, Any, Any, Any]) -> GraphView:
    """The view of ``graph`` (see module docstring)."""
    nodes = [ViewNode("start", "start", None, None, "start")]
    for node in graph.nodes:
        definition = graph.definition(node.index)
        nodes.append(ViewNode(
            _node_id(node.index), node.kind, node.index, node.name, node.doc.label or node.name,
            node.doc.description, node.doc.source, getattr(definition, "mode", None),
        ))
    nodes.append(ViewNode("end", "end", None, None, "end"))
    edges = [ViewEdge("start", _node_id(graph.entry.index), None, None)]
    for node in graph.nodes:
        for route in graph.routes_of(node):
            label = route.label if route.label is not None else route.branch
            edges.append(ViewEdge(_node_id(node.index), _node_id(route.target), route.branch, label))
    groups = tuple(
        ViewGroup(f"g{position}", group.name, group.label or group.name,
                  tuple(_node_id(member) for member in group.members))
        for position, group in enumerate(graph.groups)
    )
    return GraphView(
        VIEW_VERSION, graph.identity, graph.digest, _node_id(graph.entry.index), tuple(nodes),
        tuple(edges), groups, graph.limits.max_visualization_bytes,
    )
