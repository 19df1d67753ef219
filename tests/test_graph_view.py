"""Graph visualization: the versioned view and the Mermaid renderer (golden, injection, bounds)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from zigai.graph import (
    END,
    GraphBuilder,
    GraphLimits,
    Join,
    VisualizationTooLarge,
)
from zigai.graph.mermaid import escape_mermaid_text, render_mermaid
from zigai.graph.view import VIEW_VERSION, graph_view


def review_graph(limits: GraphLimits | None = None, label: str = "Draft it") -> Any:
    return (
        GraphBuilder(identity="review/v1", limits=limits)
        .step("draft", lambda c, v: v, next="fan", label=label, description="first pass", source="flow.py:10")
        .fork("fan", branches=[lambda c, v: v, lambda c, v: v], join=Join(list, lambda a, v: [*a, v]),
              next="judge", items=lambda c, v, emit: emit(v))
        .decision("judge", lambda c, v: ("ok", v), routes={"ok": END, "redo": "draft"},
                  route_labels={"redo": "Needs work"})
        .group("writing", ["draft", "fan"], label="Writing")
        .group("checks", ["fan", "judge"])
        .build("draft")
    )


GOLDEN = """flowchart TD
    s(["start"])
    subgraph g0["Writing"]
        n0["Draft it"]
        n1[["fan"]]
    end
    subgraph g1["checks"]
        n2{"judge"}
    end
    e(["end"])
    s --> n0
    n0 --> n1
    n1 --> n2
    n2 -->|"ok"| e
    n2 -->|"Needs work"| n0
"""


def test_view_has_stable_arrays_synthetic_boundaries_and_the_digest() -> None:
    graph = review_graph()
    view = graph_view(graph)
    assert view.version == VIEW_VERSION == 1 and view.digest == graph.digest and view.identity == "review/v1"
    assert [(n.id, n.kind, n.name) for n in view.nodes] == [
        ("start", "start", None), ("n0", "step", "draft"), ("n1", "fork", "fan"),
        ("n2", "decision", "judge"), ("end", "end", None),
    ]
    assert view.nodes[1].description == "first pass" and view.nodes[1].source == "flow.py:10"
    assert view.nodes[2].fork_mode == "map" and view.nodes[1].fork_mode is None
    assert [(e.source, e.target, e.branch, e.label) for e in view.edges] == [
        ("start", "n0", None, None), ("n0", "n1", None, None), ("n1", "n2", None, None),
        ("n2", "end", "ok", "ok"), ("n2", "n0", "redo", "Needs work"),
    ]
    assert [(g.id, g.label, g.members) for g in view.groups] == [
        ("g0", "Writing", ("n0", "n1")), ("g1", "checks", ("n1", "n2"))]
    assert view == graph_view(review_graph())
    assert json.loads(json.dumps(view.to_dict())) == view.to_dict()
    assert view.to_dict()["edges"][4] == {"source": "n2", "target": "n0", "branch": "redo", "label": "Needs work"}


def test_mermaid_golden() -> None:
    assert render_mermaid(graph_view(review_graph())) == GOLDEN
    assert render_mermaid(graph_view(review_graph()), direction="LR").startswith("flowchart LR\n")


def test_mermaid_never_uses_names_as_identifiers_and_escapes_injection() -> None:
    hostile = 'x"]\nclick n0 call alert(1)\n%%{init: {"theme":"dark"}}%%'
    graph = (
        GraphBuilder(identity="evil")
        .step(hostile, lambda c, v: v, next="end")
        .decision("end", lambda c, v: ("a|b", v), routes={"a|b": END, "<script>": hostile},
                  route_labels={"<script>": "`#1` & more"})
        .group("subgraph", [hostile], label='"];end;graph LR;A-->B')
        .build(hostile)
    )
    text = render_mermaid(graph_view(graph))
    assert text == (
        "flowchart TD\n"
        '    s(["start"])\n'
        '    subgraph g0["#quot;#93;;end;graph LR;A--#gt;B"]\n'
        '        n0["x#quot;#93; click n0 call alert#40;1#41; %%#123;init: #123;#quot;theme#quot;:#quot;dark#quot;#125;#125;%%"]\n'
        "    end\n"
        '    n1{"end"}\n'
        '    e(["end"])\n'
        "    s --> n0\n"
        "    n0 --> n1\n"
        '    n1 -->|"a#124;b"| e\n'
        '    n1 -->|"#96;#35;1#96; #amp; more"| n0\n'
    )
    for line in text.splitlines():
        assert line.count('"') % 2 == 0  # no label is ever left open


def test_escape_covers_every_special_character_and_control_characters() -> None:
    assert escape_mermaid_text('#"&<>|`[]{}()') == "#35;#quot;#amp;#lt;#gt;#124;#96;#91;#93;#123;#125;#40;#41;"
    assert escape_mermaid_text("a\tb\rc\x7fd é") == "a b c d é"


def test_labels_do_not_change_the_digest_but_change_the_picture() -> None:
    a, b = review_graph(), review_graph(label="Write a draft")
    assert a.digest == b.digest
    assert render_mermaid(graph_view(a)) != render_mermaid(graph_view(b))


def test_the_byte_ceiling_accepts_the_exact_size_and_refuses_one_byte_less() -> None:
    size = len(GOLDEN.encode("utf-8"))
    assert render_mermaid(graph_view(review_graph(GraphLimits(max_visualization_bytes=size)))) == GOLDEN
    with pytest.raises(VisualizationTooLarge, match=f"exceed {size - 1} bytes"):
        render_mermaid(graph_view(review_graph(GraphLimits(max_visualization_bytes=size - 1))))
    assert render_mermaid(graph_view(review_graph()), max_bytes=size) == GOLDEN
    with pytest.raises(VisualizationTooLarge):
        render_mermaid(graph_view(review_graph()), max_bytes=size - 1)
    with pytest.raises(VisualizationTooLarge):  # max_bytes only tightens
        render_mermaid(graph_view(review_graph(GraphLimits(max_visualization_bytes=10))), max_bytes=size)


def test_multibyte_labels_count_utf8_bytes() -> None:
    graph = GraphBuilder(identity="u").step("é", lambda c, v: v, next=END).build("é")
    text = render_mermaid(graph_view(graph))
    assert len(text.encode("utf-8")) == len(text) + 1
    with pytest.raises(VisualizationTooLarge):
        render_mermaid(graph_view(graph), max_bytes=len(text))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"direction": "RL"}, "direction must be"),
    ({"max_bytes": 0}, "max_bytes must be None or an int >= 1"),
])
def test_renderer_arguments_are_checked(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        render_mermaid(graph_view(review_graph()), **kwargs)


def test_graph_shortcuts() -> None:
    graph = review_graph()
    assert graph.view() == graph_view(graph)
    assert graph.mermaid() == GOLDEN
