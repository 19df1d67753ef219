"""Mermaid flowchart text from a :class:`~zigai.graph.view.GraphView`.

Invariants:

* Syntax identifiers are the view's positional ids (``s``, ``n0`` ..., ``e``, ``g0`` ...;
  Mermaid reserves ``end``, so the boundaries are ``s`` and ``e``).  Application text
  appears only inside double-quoted labels.
* Label text is escaped: ``#``, ``"``, ``&``, ``<``, ``>``, ``|``, backticks and the
  bracket characters become Mermaid entity codes, control characters become spaces, so a
  name cannot close a label, start a directive or add a node, click handler or comment.
* Grouped nodes are emitted once, inside the first group that lists them; the rest follow
  in definition order.  Edges follow the view's route order.
* Every append checks the view's ``max_text_bytes`` ceiling (UTF-8 bytes) first; exactly
  at the ceiling passes, one byte more raises :class:`VisualizationTooLarge`.
"""

from __future__ import annotations

from typing import Literal

from zigai.graph.errors import VisualizationTooLarge
from zigai.graph.view import GraphView, ViewNode

__all__ = ["render_mermaid", "escape_mermaid_text"]

_ENTITIES = {
    "#": "#35;", '"': "#quot;", "&": "#amp;", "<": "#lt;", ">": "#gt;", "|": "#124;",
    "`": "#96;", "[": "#91;", "]": "#93;", "{": "#123;", "}": "#125;", "(": "#40;", ")": "#41;",
}
_SHAPES = {
    "start": ("([", "])"),
    "end": ("([", "])"),
    "step": ("[", "]"),
    "decision": ("{", "}"),
    "fork": ("[[", "]]"),
}


def escape_mermaid_text(text: str) -> str:
    """Text safe inside a double-quoted Mermaid label (see module docstring)."""
    out = []
    for char in text:
        if char in _ENTITIES:
            out.append(_ENTITIES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(" ")
        else:
            out.append(char)
    return "".join(out)


class _Writer:
    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._size = 0
        self._parts: list[str] = []

    def line(self, text: str) -> None:
        piece = text + "\n"
        size = len(piece.encode("utf-8"))
        if self._size + size > self._limit:
            raise VisualizationTooLarge(
                f"Mermaid text would exceed {self._limit} bytes (GraphLimits.max_visualization_bytes); "
                "raise the limit or draw a smaller graph"
            )
        self._size += size
        self._parts.append(piece)

    def text(self) -> str:
        return "".join(self._parts)


def _mermaid_id(view_id: str) -> str:
    return {"start": "s", "end": "e"}.get(view_id, view_id)


def _node_line(node: ViewNode, indent: str) -> str:
    opening, closing = _SHAPES[node.kind]
    return f'{indent}{_mermaid_id(node.id)}{opening}"{escape_mermaid_text(node.label)}"{closing}'


def render_mermaid(view: GraphView, *, direction: Literal["TD", "LR"] = "TD",
                   max_bytes: int | None = None) -> str:
    """Mermaid ``flowchart`` text for ``view``; ``max_bytes`` may only tighten the view's ceiling."""
    if direction not in ("TD", "LR"):
        raise ValueError(f"direction must be 'TD' or 'LR', got {direction!r}")
    limit = view.max_text_bytes
    if max_bytes is not None:
        if type(max_bytes) is not int or max_bytes < 1:
            raise ValueError(f"max_bytes must be None or an int >= 1, got {max_bytes!r}")
        limit = min(limit, max_bytes)
    out = _Writer(limit)
    out.line(f"flowchart {direction}")
    by_id = {node.id: node for node in view.nodes}
    emitted: set[str] = set()
    out.line(_node_line(by_id["start"], "    "))
    for group in view.groups:
        out.line(f'    subgraph {group.id}["{escape_mermaid_text(group.label)}"]')
        for member in group.members:
            if member not in emitted:
                emitted.add(member)
                out.line(_node_line(by_id[member], "        "))
        out.line("    end")
    for node in view.nodes:
        if node.kind not in ("start", "end") and node.id not in emitted:
            out.line(_node_line(node, "    "))
    out.line(_node_line(by_id["end"], "    "))
    for edge in view.edges:
        arrow = "-->" if edge.label is None else f'-->|"{escape_mermaid_text(edge.label)}"|'
        out.line(f"    {_mermaid_id(edge.source)} {arrow} {_mermaid_id(edge.target)}")
    return out.text()
