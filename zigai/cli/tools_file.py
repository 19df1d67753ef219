"""``--tools FILE.py``: turn the functions of an operator's Python file into reflected tools.

The file is executed as a fresh module (it is the operator's own code, trusted like any
script they run).  Selection:

* if the module defines ``TOOLS`` (a list of functions and/or :class:`zigai.tool.Tool`
  values), exactly those, in that order;
* otherwise every public function *defined in that file* (not imported into it), in
  definition order.

Functions become tools through :func:`zigai.reflect.tool` (argument schema and decoding from
the annotations, description from the docstring).  A tool that must wait for an operator's
approval is declared as a ``Tool`` in ``TOOLS``, e.g.
``zigai.reflect.tool("delete_file", None, delete_file, execution="requires_approval")``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import sys
from typing import Any

from zigai.cli.errors import CliUsageError

__all__ = ["load_module", "load_tools"]


def _module_name(path: str) -> str:
    digest = hashlib.sha256(os.path.abspath(path).encode()).hexdigest()[:16]
    return f"_zigai_cli_tools_{digest}"


def load_module(path: str, what: str) -> Any:
    """Execute the operator's Python file at ``path`` as a fresh module (``what`` names it in errors)."""
    if not os.path.isfile(path):
        raise CliUsageError(f"{what} {path!r} does not exist")
    name = _module_name(path)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CliUsageError(f"{what} {path!r} cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and postponed annotations look the module up
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise CliUsageError(f"{what} {path!r} failed to load: {type(exc).__name__}: {exc}") from None
    return module


def load_tools(path: str) -> tuple[Any, ...]:
    """The tools the file at ``path`` offers (see the module docstring)."""
    from zigai.errors import ZigAIError
    from zigai.reflect import tool as reflect_tool
    from zigai.tool import Tool

    module = load_module(path, "tools file")
    name = module.__name__
    declared = getattr(module, "TOOLS", None)
    if declared is not None:
        if not isinstance(declared, (list, tuple)):
            raise CliUsageError(f"tools file {path!r}: TOOLS must be a list")
        candidates = [(getattr(item, "__name__", None), item) for item in declared]
    else:
        candidates = [
            (attr, value) for attr, value in vars(module).items()
            if inspect.isfunction(value) and not attr.startswith("_") and value.__module__ == name
        ]
    tools: list[Any] = []
    seen: set[str] = set()
    for attr, value in candidates:
        try:
            if isinstance(value, Tool):
                built = value
            elif inspect.isfunction(value) and attr:
                built = reflect_tool(attr, None, value)
            else:
                raise CliUsageError(f"TOOLS entries must be functions or Tool values, got {value!r}")
        except ZigAIError as exc:
            if isinstance(exc, CliUsageError):
                raise CliUsageError(f"tools file {path!r}: {exc}") from None
            raise CliUsageError(f"tools file {path!r}: {attr}: {exc}") from None
        if built.name in seen:
            raise CliUsageError(f"tools file {path!r}: two tools are named {built.name!r}")
        seen.add(built.name)
        tools.append(built)
    return tuple(tools)
