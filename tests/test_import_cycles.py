"""No import cycles inside zigai, and no module past the review size.

Every ``import`` counts — module level, inside functions and under ``TYPE_CHECKING`` —
because a lazy import hides a cycle without removing it: the two modules still depend on
each other.  ``from pkg import name`` is an edge to ``pkg.name`` when that is a module and to
``pkg`` (its ``__init__``) otherwise; importing ``pkg.sub`` is not counted as importing
``pkg`` itself, so a package ``__init__`` may re-export its submodules.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

ZIGAI = Path(__file__).resolve().parent.parent / "zigai"
MAX_MODULE_LINES = 800


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(ZIGAI.rglob("*.py")):
        dotted = ".".join(path.relative_to(ZIGAI.parent).with_suffix("").parts)
        if dotted.endswith(".__init__"):
            dotted = dotted[: -len(".__init__")]
        found[dotted] = path
    return found


def _edges(dotted: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = dotted if path.name == "__init__.py" else dotted.rsplit(".", 1)[0]
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                targets.add(submodule if submodule in known else module)
    return {t for t in targets if t in known and t != dotted}


def import_graph() -> dict[str, set[str]]:
    known = _modules()
    return {dotted: _edges(dotted, path, known) for dotted, path in known.items()}


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, pending = work[-1]
            if pending:
                child = pending.pop()
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, sorted(graph.get(child, ()))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def test_the_detector_finds_a_cycle_through_a_lazy_import_and_ignores_a_chain() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_the_graph_counts_function_level_and_type_checking_imports() -> None:
    graph = import_graph()
    # zigai.agent.agent imports the run state machine at module level; the state machine's
    # per-run core is imported by executors only under TYPE_CHECKING — both are edges.
    assert "zigai.agent.run" in graph["zigai.agent.agent"]
    assert "zigai.agent._core" in graph["zigai.agent._tool_step"]


def test_zigai_has_no_import_cycles() -> None:
    found = cycles(import_graph())
    assert not found, "import cycles (make the imports flow one way):\n" + "\n".join(
        " <-> ".join(component) for component in found
    )


def test_every_module_stays_under_the_review_size() -> None:
    too_long = {
        dotted: lines
        for dotted, path in _modules().items()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not too_long, f"split these modules (more than {MAX_MODULE_LINES} lines): {too_long}"
