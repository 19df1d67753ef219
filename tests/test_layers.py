"""The layer rule of DESIGN.md: zigai modules import only from their own layer or below.

Provider adapters (layer 5) additionally never import the agent layer (4).
Every module must be classified here, so a new module cannot dodge the rule.
"""

from __future__ import annotations

import ast
from pathlib import Path

ZIGAI = Path(__file__).resolve().parent.parent / "zigai"

LAYERS: dict[str, int] = {
    "errors": 1, "control": 1, "json": 1, "_strict_yaml": 1, "http_gate": 1, "json_schema": 1, "security": 1, "usage": 1, "pricing": 1,
    "_owner": 1, "_workers": 1, "child_process": 1, "pipe_write": 1, "http_server": 1, "http_wsgi": 1,
    "messages": 2, "history": 2, "codecs": 2,
    "model": 3, "settings": 3, "context_budget": 3, "transport": 3, "provider": 3, "retry": 3, "models": 3,
    "agent": 4, "tool": 4, "toolset": 4, "reflect": 4, "output": 4, "capability": 4,
    "testing": 4, "hooks": 4, "diagnostics": 4,
    "providers": 5,
    "mcp": 6, "evals": 6, "graph": 6, "graph_agent": 6, "multi_agent": 6, "embeddings": 6, "realtime": 6,
    "ui": 6, "acp": 6, "agent_spec": 6, "harness": 6, "telemetry": 6, "cli": 6, "__main__": 6, "conformance": 6,
    "environments": 6, "capabilities_builtin": 6, "memory": 6, "planning": 6, "runtime": 6, "durable": 6,
}


def _module_key(dotted: str) -> str:
    parts = dotted.split(".")
    assert parts[0] == "zigai"
    return parts[1] if len(parts) > 1 else ""


def _zigai_modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted(ZIGAI.rglob("*.py")):
        rel = path.relative_to(ZIGAI.parent).with_suffix("")
        dotted = ".".join(rel.parts)
        if dotted.endswith(".__init__"):
            dotted = dotted[: -len(".__init__")]
        found.append((dotted, path))
    return found


def _imports(path: Path, dotted: str) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = dotted if path.name == "__init__.py" else dotted.rsplit(".", 1)[0]
    targets = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets += [a.name for a in node.names if a.name.split(".")[0] == "zigai"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.split(".")[0] == "zigai":
                if module == "zigai":
                    targets += [f"zigai.{a.name}" for a in node.names]
                else:
                    targets.append(module)
    return targets


def test_every_module_is_classified() -> None:
    unknown = {
        _module_key(d) for d, _ in _zigai_modules() if d != "zigai" and _module_key(d) not in LAYERS
    }
    assert not unknown, f"classify these modules in tests/test_layers.py: {sorted(unknown)}"


def test_imports_point_down() -> None:
    violations = []
    for dotted, path in _zigai_modules():
        if dotted == "zigai":
            continue  # the root only re-exports, lazily
        source_layer = LAYERS[_module_key(dotted)]
        for target in _imports(path, dotted):
            key = _module_key(target)
            if key in ("", "errors"):
                continue
            target_layer = LAYERS.get(key)
            if target_layer is None:
                continue  # a plain re-export of a name defined in zigai/__init__
            if target_layer > source_layer:
                violations.append(f"{dotted} (layer {source_layer}) imports {target}")
            if source_layer == 5 and target_layer == 4:
                violations.append(f"{dotted} is a provider adapter and imports the agent: {target}")
    assert not violations, "\n".join(violations)


def test_agent_spec_never_imports_a_concrete_provider() -> None:
    offenders = [
        f"{dotted} imports {target}"
        for dotted, path in _zigai_modules() if _module_key(dotted) == "agent_spec"
        for target in _imports(path, dotted) if _module_key(target) == "providers"
    ]
    assert not offenders, "\n".join(offenders)
