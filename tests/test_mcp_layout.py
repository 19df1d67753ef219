"""The layout of zigai.mcp: sub-packages that import only downward, none too big to read.

The rule (written in the ``zigai.mcp`` docstring's Submodules map): ``errors`` at the bottom,
then ``wire``, then ``auth``, then ``client`` and ``server`` side by side.  A module imports
only its own sub-package and the ones below it; ``client`` and ``server`` never import each
other; nothing inside imports the ``zigai.mcp`` ``__init__`` (which only re-exports).  The
import graph is the one tests/test_import_cycles.py builds: function-level and
``TYPE_CHECKING`` imports count.
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Mapping

from test_import_cycles import MAX_MODULE_LINES, ZIGAI, import_graph

import zigai.mcp

LEVELS: dict[str, int] = {"errors": 0, "wire": 1, "auth": 2, "client": 3, "server": 3}
MAX_MODULES_PER_SUBPACKAGE = 24


def _part(dotted: str) -> str | None:
    """The sub-package (or root module) of zigai.mcp a module belongs to; None for the root."""
    parts = dotted.split(".")
    return parts[2] if len(parts) > 2 else None


def violations(graph: Mapping[str, set[str]]) -> list[str]:
    found = []
    for source, targets in sorted(graph.items()):
        if not source.startswith("zigai.mcp."):
            continue
        here = _part(source)
        if here not in LEVELS:
            found.append(f"{source}: not in a known part of zigai.mcp {sorted(LEVELS)}")
            continue
        for target in sorted(targets):
            if target == "zigai.mcp":
                found.append(f"{source} -> {target} (the package __init__ only re-exports)")
                continue
            if not target.startswith("zigai.mcp."):
                continue
            there = _part(target)
            if there != here and (there not in LEVELS or LEVELS[there] >= LEVELS[here]):
                found.append(f"{source} -> {target}")
    return found


def test_the_rule_refuses_upward_and_sideways_imports_and_allows_downward_ones() -> None:
    graph = {
        "zigai.mcp.client.client": {"zigai.mcp.wire.jsonrpc", "zigai.mcp.auth.flow", "zigai.mcp.errors",
                                    "zigai.mcp.client.options", "zigai.control"},
        "zigai.mcp.server.server": {"zigai.mcp.client.options"},
        "zigai.mcp.wire.primitives": {"zigai.mcp.server.tasks"},
        "zigai.mcp.auth.flow": {"zigai.mcp.auth.discovery", "zigai.mcp"},
        "zigai.mcp.loose": set(),
        "zigai.mcp.errors": {"zigai.errors"},
    }
    assert violations(graph) == [
        "zigai.mcp.auth.flow -> zigai.mcp (the package __init__ only re-exports)",
        "zigai.mcp.loose: not in a known part of zigai.mcp ['auth', 'client', 'errors', 'server', 'wire']",
        "zigai.mcp.server.server -> zigai.mcp.client.options",
        "zigai.mcp.wire.primitives -> zigai.mcp.server.tasks",
    ]


def test_mcp_imports_point_down_its_sub_packages() -> None:
    found = violations(import_graph())
    assert not found, "zigai.mcp imports that break the layout rule:\n" + "\n".join(found)


def test_every_sub_package_stays_small_enough_to_read() -> None:
    folder = ZIGAI / "mcp"
    sizes = Counter(path.parent.name for path in folder.glob("*/*.py") if path.name != "__init__.py")
    assert set(sizes) == set(LEVELS) - {"errors"}
    assert max(sizes.values()) <= MAX_MODULES_PER_SUBPACKAGE, sizes
    too_long = [p for p in folder.rglob("*.py") if len(p.read_text("utf-8").splitlines()) > MAX_MODULE_LINES]
    assert not too_long
    loose = sorted(p.name for p in folder.glob("*.py"))
    assert loose == ["__init__.py", "errors.py"]


def test_the_package_docstring_maps_every_sub_package() -> None:
    doc = zigai.mcp.__doc__ or ""
    submodules = doc[doc.index("Submodules"):]
    for part in LEVELS:
        assert f"``{part}``" in submodules, part
    for sub in ("wire", "auth", "client", "server"):
        package = importlib.import_module(f"zigai.mcp.{sub}")
        text = package.__doc__ or ""
        assert "Submodules" in text, sub
        modules = {p.stem for p in (ZIGAI / "mcp" / sub).glob("*.py") if p.name != "__init__.py"}
        missing = sorted(m for m in modules if f"``{m}``" not in text[text.index("Submodules"):])
        assert not missing, f"zigai.mcp.{sub} docstring's Submodules map lacks {missing}"
