"""The Mermaid renderer against the official ``mermaid`` parser (Node, tests/node_mermaid).

The peer is installed by ``scripts/node_peers.sh`` (``.ci/run`` runs it).  Without Node.js
these tests skip; with Node but without the installed peer they skip locally and fail under CI.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from zigai.graph import END, GraphBuilder, Join

PEER_DIR = Path(__file__).resolve().parent / "node_mermaid"
SCRIPT = PEER_DIR / "parse_mermaid.mjs"


def _node() -> str:
    node = shutil.which("node")
    if node is None or shutil.which("npm") is None:
        pytest.skip("Node.js and npm are not installed; install them, then run scripts/node_peers.sh")
    if not (PEER_DIR / "node_modules" / "mermaid").is_dir() or not (PEER_DIR / "node_modules" / "jsdom").is_dir():
        message = "the Mermaid peer is not installed: run scripts/node_peers.sh"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return node


def parse_all(texts: list[str]) -> list[dict[str, Any]]:
    done = subprocess.run([_node(), str(SCRIPT)], input=json.dumps(texts), capture_output=True, text=True,
                          timeout=120, cwd=PEER_DIR)
    assert done.returncode == 0, done.stderr
    results: list[dict[str, Any]] = json.loads(done.stdout.strip().splitlines()[-1])
    return results


HOSTILE = [
    'x"]\nclick n0 call alert(1)',
    '%%{init: {"theme":"dark"}}%%',
    "end",
    'a --> b["pwned"]',
    "subgraph evil",
    "<img src=x onerror=alert(1)>",
    "#35; & `code` | pipes {braces} (parens) [brackets]",
]


def hostile_graph() -> Any:
    builder = GraphBuilder(identity="hostile")
    for position, name in enumerate(HOSTILE):
        nxt = HOSTILE[position + 1] if position + 1 < len(HOSTILE) else "route|x"
        builder.step(name, lambda c, v: v, next=nxt, label=None)
    builder.decision("route|x", lambda c, v: ("go", v), routes={'go"]; z': END, "<b>back</b>": HOSTILE[0]},
                     route_labels={"<b>back</b>": 'loop "again" -->'})
    builder.group('g"]; end', HOSTILE[:3], label="subgraph x; end")
    builder.group("second", [HOSTILE[2], HOSTILE[3]], label="[second] group")
    graph = builder.build(HOSTILE[0])
    return graph


def _plain(text: str) -> str:
    return re.sub(r"[\x00-\x1f\x7f]", " ", text)


def mixed_graph() -> Any:
    return (
        GraphBuilder(identity="mixed")
        .step("draft", lambda c, v: v, next="fan", label='Draft "it" <now>')
        .fork("fan", branches=[lambda c, v: v], join=Join(list, lambda a, v: [*a, v]), next="judge",
              items=lambda c, v, emit: emit(v))
        .decision("judge", lambda c, v: ("ok", v), routes={"ok": END, "redo": "draft"},
                  route_labels={"redo": "needs | work"})
        .group("writing", ["draft", "fan"], label="Writing & review")
        .build("draft")
    )


UNESCAPED = 'flowchart TD\n    n0["a"] --> b["pwned"]\n'


@pytest.fixture(scope="module")
def parsed() -> list[dict[str, Any]]:
    """One Node start for all documents (the parser takes seconds to load)."""
    return parse_all([mixed_graph().mermaid(), hostile_graph().mermaid(), UNESCAPED])


def test_the_official_parser_reads_exactly_the_view(parsed: list[dict[str, Any]]) -> None:
    parsed = parsed[0]
    assert parsed["ok"], parsed
    assert parsed["vertices"] == [["s", "start"], ["n0", 'Draft "it" <now>'], ["n1", "fan"], ["n2", "judge"],
                                  ["e", "end"]]
    assert parsed["edges"] == [["s", "n0", ""], ["n0", "n1", ""], ["n1", "n2", ""], ["n2", "e", "ok"],
                               ["n2", "n0", "needs | work"]]
    assert [(sub[0], sub[1], sorted(sub[2])) for sub in parsed["subgraphs"]] == [
        ("g0", "Writing & review", ["n0", "n1"])]


def test_injection_attempts_stay_text_for_the_official_parser(parsed: list[dict[str, Any]]) -> None:
    view = hostile_graph().view()
    parsed = parsed[1]
    assert parsed["ok"], parsed
    expected_ids = ["s", *[f"n{i}" for i in range(len(HOSTILE) + 1)], "e"]
    assert [vertex[0] for vertex in parsed["vertices"]] == expected_ids  # nothing added, nothing lost
    labels = dict(parsed["vertices"])
    for position, name in enumerate(HOSTILE):
        assert labels[f"n{position}"] == _plain(name)
    assert labels[f"n{len(HOSTILE)}"] == "route|x"
    edges = [(edge[0], edge[1], edge[2]) for edge in parsed["edges"]]
    assert len(edges) == len(view.edges)
    assert edges[-2:] == [(f"n{len(HOSTILE)}", "e", 'go"]; z'), (f"n{len(HOSTILE)}", "n0", 'loop "again" -->')]
    titles = {sub[0]: (sub[1], sorted(sub[2])) for sub in parsed["subgraphs"]}
    assert titles == {"g0": ("subgraph x; end", ["n0", "n1", "n2"]), "g1": ("[second] group", ["n3"])}


def test_the_peer_does_notice_an_unescaped_label(parsed: list[dict[str, Any]]) -> None:
    # The same name written without escaping changes the diagram: the checks above can fail.
    parsed = parsed[2]
    assert parsed["ok"] and [vertex[0] for vertex in parsed["vertices"]] == ["n0", "b"]
