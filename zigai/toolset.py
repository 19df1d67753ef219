"""Toolsets: groups of tools with an optional namespace and per-step preparation.

A :class:`Toolset` holds static tools.  Before each model step the agent calls
:func:`resolve_tools`, which runs every toolset's ``prepare`` callback (if any)
with a :class:`ToolPrepareContext` (messages, usage, request count, typed
dependencies, run control) and collects the tools visible for that step.

* ``prepare(ctx)`` returns the tools to expose for this step — the static
  tools, a subset, changed copies (``tool.replace(...)``) or
  :class:`PreparedTool` entries that add step-specific metadata — or ``None``
  for "the static tools unchanged".  Names are given *without* the namespace.
* With ``namespace="db"`` a tool ``search`` is exposed as ``db__search``; the
  result must still match the provider-safe name pattern.
* Metadata merges tool -> toolset -> prepared entry (later keys win).  It is
  application-only: adapters never send it.

``@toolset.tool`` (bare, or ``@toolset.tool(name=..., ...)`` with the options of
:func:`zigai.reflect.tool`) builds a tool from a function and adds it to the
toolset's static tools; it returns the built :class:`Tool`.  A first parameter annotated
``ToolRunContext[Deps]`` or ``RunContext[Deps]`` receives the call's context;
``@toolset.tool_plain`` is the same for a function that takes none.

Invariants: a Toolset is immutable except that ``@toolset.tool`` appends to its
static tools (one atomic tuple swap, checked first); static names are unique within it; the
resolved list never contains two tools with one name (:class:`DuplicateToolName`
is raised before any provider request); inputs are never mutated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from zigai.control import RunControl
from zigai.messages import Message
from zigai.model import TOOL_NAME_PATTERN
from zigai.security import UrlPolicy
from zigai.tool import DuplicateToolName, Tool, ToolDefinitionError
from zigai.usage import RunUsage

__all__ = [
    "Toolset",
    "ToolPrepareContext",
    "PreparedTool",
    "PrepareFn",
    "resolve_tools",
    "DuplicateToolName",
    "NAMESPACE_SEPARATOR",
]

NAMESPACE_SEPARATOR = "__"


@dataclass(frozen=True, slots=True)
class ToolPrepareContext:
    """What a preparer may inspect before one model step."""

    deps: Any = None
    usage: RunUsage = RunUsage()
    request_count: int = 0
    messages: tuple[Message, ...] = ()
    control: RunControl | None = None
    capabilities: Any = None  # the run's CapabilitySnapshot when capabilities are configured
    url_policy: UrlPolicy | None = None  # the agent's url_policy, for toolsets that open URLs


@dataclass(frozen=True, slots=True)
class PreparedTool:
    """A tool chosen by a preparer, with metadata for this step only."""

    tool: Tool
    metadata: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.tool, Tool):
            raise ToolDefinitionError(f"PreparedTool.tool must be a Tool, got {type(self.tool).__name__}")


PrepareFn = Callable[[ToolPrepareContext], "Sequence[Tool | PreparedTool] | None"]


def _merged(*layers: Mapping[str, Any] | None) -> dict[str, Any] | None:
    merged: dict[str, Any] = {}
    present = False
    for layer in layers:
        if layer is not None:
            present = True
            merged.update(layer)
    return merged if present else None


class Toolset:
    """Static tools plus an optional namespace, preparer and metadata (see module docstring)."""

    __slots__ = ("_tools", "_namespace", "_prepare", "_metadata")

    _tools: tuple[Tool, ...]
    _namespace: str | None
    _prepare: PrepareFn | None
    _metadata: Mapping[str, Any] | None

    def __init__(
        self,
        tools: Sequence[Tool] = (),
        namespace: str | None = None,
        prepare: PrepareFn | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        tools = tuple(tools)
        for tool in tools:
            if not isinstance(tool, Tool):
                raise ToolDefinitionError(f"Toolset tools must be Tool values, got {type(tool).__name__}")
        if namespace is not None and (
            not isinstance(namespace, str) or not TOOL_NAME_PATTERN.match(namespace)
        ):
            raise ToolDefinitionError(f"toolset namespace {namespace!r} must match {TOOL_NAME_PATTERN.pattern}")
        if prepare is not None and not callable(prepare):
            raise ToolDefinitionError("toolset prepare must be callable")
        if metadata is not None and not isinstance(metadata, Mapping):
            raise ToolDefinitionError("toolset metadata must be a mapping")
        object.__setattr__(self, "_tools", tools)
        object.__setattr__(self, "_namespace", namespace)
        object.__setattr__(self, "_prepare", prepare)
        object.__setattr__(self, "_metadata", MappingProxyType(dict(metadata)) if metadata else None)
        _check_unique(self._finish(tool, None) for tool in tools)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Toolset is immutable")

    def __repr__(self) -> str:
        return f"Toolset(namespace={self._namespace!r}, tools={[t.name for t in self._tools]!r})"

    @property
    def tools(self) -> tuple[Tool, ...]:
        return self._tools

    @property
    def namespace(self) -> str | None:
        return self._namespace

    @property
    def prepare(self) -> PrepareFn | None:
        return self._prepare

    @property
    def metadata(self) -> Mapping[str, Any] | None:
        return self._metadata

    def tool(self, function: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        """Decorator: build a tool from ``function`` (see :func:`zigai.reflect.tool`) and add it.

        ``@toolset.tool`` names the tool after the function and describes it with the
        docstring; ``@toolset.tool(name=..., description=..., takes_context=..., ...)``
        accepts every keyword of :func:`zigai.reflect.tool`.  Returns the :class:`Tool`.
        Raises :class:`DuplicateToolName` when the toolset already has a tool of that name.
        """
        from zigai.reflect import tool as build

        def add(target: Callable[..., Any]) -> Tool:
            rest = dict(options)
            name = rest.pop("name", None) or target.__name__
            description = rest.pop("description", None)
            built: Tool = build(name, description, target, **rest)
            tools = (*self._tools, built)
            _check_unique(self._finish(tool, None) for tool in tools)
            object.__setattr__(self, "_tools", tools)
            return built

        if function is not None:
            if options or not callable(function):
                raise ToolDefinitionError(
                    "use @toolset.tool bare or @toolset.tool(name=..., ...) with keywords only"
                )
            return add(function)
        return add

    def tool_plain(self, function: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        """:meth:`tool` for a function without a context parameter (``takes_context=False``)."""
        if function is not None:
            if options or not callable(function):
                raise ToolDefinitionError(
                    "use @toolset.tool_plain bare or @toolset.tool_plain(name=..., ...) with keywords only"
                )
            return self.tool(takes_context=False)(function)
        return self.tool(takes_context=False, **options)

    def exposed_name(self, name: str) -> str:
        """The provider-visible name of a member tool called ``name``."""
        return name if self._namespace is None else f"{self._namespace}{NAMESPACE_SEPARATOR}{name}"

    def _finish(self, tool: Tool, entry_metadata: Mapping[str, Any] | None) -> Tool:
        name = self.exposed_name(tool.name)
        if not TOOL_NAME_PATTERN.match(name):
            raise ToolDefinitionError(
                f"namespaced tool name {name!r} must match {TOOL_NAME_PATTERN.pattern}"
            )
        metadata = _merged(tool.metadata, self._metadata, entry_metadata)
        if name == tool.name and metadata == (dict(tool.metadata) if tool.metadata is not None else None):
            return tool
        return tool.replace(name=name, metadata=metadata)

    def prepared_tools(self, ctx: ToolPrepareContext) -> tuple[Tool, ...]:
        """The tools this toolset exposes for one step (namespaced, metadata merged)."""
        entries: Sequence[Tool | PreparedTool] | None = None
        if self._prepare is not None:
            if ctx.control is not None:
                ctx.control.check()
            entries = self._prepare(ctx)
        if entries is None:
            entries = self._tools
        elif isinstance(entries, (str, bytes)) or not isinstance(entries, Sequence):
            raise ToolDefinitionError("toolset prepare must return a sequence of tools or None")
        prepared = []
        for entry in entries:
            if isinstance(entry, PreparedTool):
                prepared.append(self._finish(entry.tool, entry.metadata))
            elif isinstance(entry, Tool):
                prepared.append(self._finish(entry, None))
            else:
                raise ToolDefinitionError(
                    f"toolset prepare returned {type(entry).__name__}; expected Tool or PreparedTool"
                )
        return tuple(prepared)


def _check_unique(tools: Any) -> None:
    seen: set[str] = set()
    for tool in tools:
        if tool.name in seen:
            raise DuplicateToolName(f"two tools are named {tool.name!r} for the same model step",
                                    name=tool.name)
        seen.add(tool.name)


def resolve_tools(
    tools: Sequence[Tool], toolsets: Sequence[Toolset], ctx: ToolPrepareContext
) -> tuple[Tool, ...]:
    """Direct tools first, then each toolset's prepared tools, in order; names must be unique."""
    resolved: list[Tool] = []
    for tool in tools:
        if not isinstance(tool, Tool):
            raise ToolDefinitionError(f"agent tools must be Tool values, got {type(tool).__name__}")
        resolved.append(tool)
    for toolset in toolsets:
        if not isinstance(toolset, Toolset):
            raise ToolDefinitionError(f"toolsets must be Toolset values, got {type(toolset).__name__}")
        resolved.extend(toolset.prepared_tools(ctx))
    _check_unique(resolved)
    return tuple(resolved)
