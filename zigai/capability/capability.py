"""Capability descriptors: :class:`Capability`, its loading and unload modes, scopes and layers.

A :class:`Capability` is a borrowed bundle of contributions (local and provider-managed
tools, toolsets, static and dynamic instructions, lifecycle hooks, tool policies, history
processors, output validators, model settings and a model selector).  It holds no run
state; one capability may serve many agents and threads.  :class:`CapabilityLayer` places
capabilities in one :class:`CapabilityScope`; :class:`CapabilitySnapshot` is what callbacks
see of the capabilities active in a run.

Invariants:

* an anonymous capability (``id`` None) is eager and declares no dependencies or conflicts;
  every other id matches ``[A-Za-z0-9_.-]{1,64}``;
* a capability never depends on or conflicts with itself, and never names an id twice in
  one list;
* contributions are validated and frozen into tuples at construction.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from zigai.capability.errors import InvalidCapability
from zigai.control import RunControl
from zigai.messages import Message
from zigai.model import ManagedTool, UnsupportedModelFeature
from zigai.settings import ModelSettings
from zigai.tool import Tool
from zigai.tool.policy import Policy
from zigai.toolset import Toolset
from zigai.usage import RunUsage

__all__ = [
    "Capability",
    "CapabilityLoading",
    "CapabilityUnloadPolicy",
    "CapabilityScope",
    "CapabilityLayer",
    "CapabilitySnapshot",
    "ModelSelectionContext",
    "ModelSelector",
    "CAPABILITY_ID_PATTERN",
]

CAPABILITY_ID_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,64}")


class CapabilityLoading(enum.Enum):
    """``eager`` bundles activate during run setup; ``on_demand`` ones when the model loads them."""

    eager = "eager"
    on_demand = "on_demand"


class CapabilityUnloadPolicy(enum.Enum):
    """What a later invocation keeps of an on-demand load.

    ``history``: a successful load in the canonical history is active again on a later run
    given that history.  ``run_end``: forgotten when the run ends, but kept through a
    serialized pause and its resume.
    """

    history = "history"
    run_end = "run_end"


class CapabilityScope(enum.IntEnum):
    """Composition tiers, in their fixed order (a lower value composes first)."""

    inherited = 0
    agent = 1
    run = 2
    nested = 3
    subagent = 4


@dataclass(frozen=True, slots=True)
class CapabilitySnapshot:
    """The capabilities active in a run at one moment (borrowed; copy what you keep).

    ``active_ids`` lists every active id in composition order (anonymous bundles are not
    listed); ``on_demand_ids`` the subset the model loaded.  ``capabilities`` holds the
    active bundles themselves, anonymous ones included, so a nested agent can inherit them.
    """

    active_ids: tuple[str, ...] = ()
    on_demand_ids: tuple[str, ...] = ()
    capabilities: tuple[Capability, ...] = ()

    def is_active(self, capability_id: str) -> bool:
        return capability_id in self.active_ids

    def inherited_layer(self) -> CapabilityLayer:
        """A :data:`CapabilityScope.inherited` layer with every active bundle, all eager.

        A nested agent given this layer starts with the parent's active capabilities
        already active (a bundle the parent loaded on demand is not offered again).
        """
        eager = tuple(
            cap if cap.loading is CapabilityLoading.eager else replace(cap, loading=CapabilityLoading.eager)
            for cap in self.capabilities
        )
        return CapabilityLayer(CapabilityScope.inherited, eager)


@dataclass(frozen=True, slots=True)
class ModelSelectionContext:
    """What a capability's model selector sees before a model step."""

    deps: Any
    usage: RunUsage
    request_count: int
    messages: tuple[Message, ...]
    control: RunControl
    capabilities: CapabilitySnapshot


ModelSelector = Callable[[ModelSelectionContext, Any], Any]
"""``(ctx, model_chosen_so_far) -> model``: return the given model to keep it."""


def _tuple(value: Any, what: str, kind: type | tuple[type, ...] | None) -> tuple[Any, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        if kind is str and isinstance(value, str):
            return (value,)
        raise InvalidCapability(f"{what} must be a sequence")
    items = tuple(value)
    for item in items:
        if kind is None:
            if not callable(item):
                raise InvalidCapability(f"{what} must contain callables, got {item!r}")
        elif not isinstance(item, kind):
            raise InvalidCapability(f"{what} must contain {_kind_name(kind)} values, got {type(item).__name__}")
    return items


def _kind_name(kind: type | tuple[type, ...]) -> str:
    if isinstance(kind, tuple):
        return " or ".join(k.__name__ for k in kind)
    return kind.__name__


def _ids(value: Any, what: str, own: str | None) -> tuple[str, ...]:
    items = _tuple(value, what, str)
    seen: set[str] = set()
    for item in items:
        if not CAPABILITY_ID_PATTERN.fullmatch(item):
            raise InvalidCapability(f"{what}: {item!r} is not a capability id ([A-Za-z0-9_.-]{{1,64}})")
        if item == own:
            raise InvalidCapability(f"{what} names the capability itself ({item!r})")
        if item in seen:
            raise InvalidCapability(f"{what} names {item!r} twice")
        seen.add(item)
    return items


def _managed(value: Any, what: str) -> tuple[ManagedTool, ...]:
    if isinstance(value, (str, ManagedTool)):
        value = (value,)
    out: list[ManagedTool] = []
    for item in _tuple(value, what, (str, ManagedTool)):
        if isinstance(item, str):
            try:
                item = ManagedTool(item)
            except UnsupportedModelFeature as exc:
                raise InvalidCapability(f"{what}: {exc}") from None
        out.append(item)
    return tuple(out)


@dataclass(frozen=True, slots=True, eq=False)
class Capability:
    """One feature bundle (see the module docstring).

    ``description`` is the catalog text the model reads for an on-demand bundle (say when
    to load it; without one the catalog lists the bare id).  ``dynamic_instructions`` take the run's ``RunContext`` and return a
    string (or None); for an on-demand bundle they are resolved when it is loaded and
    travel, with the static ``instructions``, in the load result.  ``model_selector``
    receives the model chosen so far and returns the model for the next step.
    """

    id: str | None = None
    description: str = ""
    loading: CapabilityLoading = CapabilityLoading.eager
    unload: CapabilityUnloadPolicy = CapabilityUnloadPolicy.history
    dependencies: Sequence[str] = ()
    conflicts: Sequence[str] = ()
    tools: Sequence[Tool] = ()
    builtin_tools: Sequence[ManagedTool | str] = ()
    toolsets: Sequence[Toolset] = ()
    instructions: str | Sequence[str] = ()
    dynamic_instructions: Sequence[Callable[[Any], str | None]] = ()
    hooks: Sequence[Callable[[Any], None]] = ()
    tool_policies: Sequence[Policy] = ()
    history_processors: Sequence[Callable[[tuple[Message, ...]], Sequence[Message]]] = ()
    output_validators: Sequence[Callable[..., Any]] = ()
    model_settings: ModelSettings | None = None
    model_selector: ModelSelector | None = None
    metadata: Any = field(default=None, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        cid = self.id
        if cid is not None and (not isinstance(cid, str) or not CAPABILITY_ID_PATTERN.fullmatch(cid)):
            raise InvalidCapability(f"Capability.id {cid!r} must match [A-Za-z0-9_.-]{{1,64}}")
        label = f"Capability {cid!r}" if cid is not None else "an anonymous Capability"
        if not isinstance(self.description, str):
            raise InvalidCapability(f"{label}: description must be a string")
        try:
            set_(self, "loading", CapabilityLoading(self.loading))
            set_(self, "unload", CapabilityUnloadPolicy(self.unload))
        except ValueError as exc:
            raise InvalidCapability(f"{label}: {exc}") from None
        set_(self, "dependencies", _ids(self.dependencies, f"{label}.dependencies", cid))
        set_(self, "conflicts", _ids(self.conflicts, f"{label}.conflicts", cid))
        if cid is None and (
            self.loading is CapabilityLoading.on_demand or self.dependencies or self.conflicts
        ):
            raise InvalidCapability(
                "an anonymous Capability can only be eager without dependencies or conflicts; "
                "give it a stable id"
            )
        clash = set(self.dependencies) & set(self.conflicts)
        if clash:
            raise InvalidCapability(f"{label} both depends on and conflicts with {sorted(clash)}")
        set_(self, "tools", _tuple(self.tools, f"{label}.tools", Tool))
        set_(self, "builtin_tools", _managed(self.builtin_tools, f"{label}.builtin_tools"))
        set_(self, "toolsets", _tuple(self.toolsets, f"{label}.toolsets", Toolset))
        set_(self, "instructions", tuple(i for i in _tuple(self.instructions, f"{label}.instructions", str) if i))
        for name in ("dynamic_instructions", "hooks", "history_processors", "output_validators"):
            set_(self, name, _tuple(getattr(self, name), f"{label}.{name}", None))
        set_(self, "tool_policies", _tuple(self.tool_policies, f"{label}.tool_policies", Policy))
        if self.model_settings is not None and not isinstance(self.model_settings, ModelSettings):
            raise InvalidCapability(f"{label}.model_settings must be a ModelSettings")
        if self.model_selector is not None and not callable(self.model_selector):
            raise InvalidCapability(f"{label}.model_selector must be callable")

    @property
    def on_demand(self) -> bool:
        return self.loading is CapabilityLoading.on_demand

    def __repr__(self) -> str:
        extra = "".join(
            f", {name}={getattr(self, name)!r}" for name in ("dependencies", "conflicts")
            if getattr(self, name)
        )
        return f"Capability(id={self.id!r}, loading={self.loading.value}{extra})"


@dataclass(frozen=True, slots=True)
class CapabilityLayer:
    """Capabilities placed in one scope, in declaration order."""

    scope: CapabilityScope
    capabilities: Sequence[Capability] = ()

    def __post_init__(self) -> None:
        scope = self.scope
        try:
            if isinstance(scope, str):
                scope = CapabilityScope[scope]
            elif isinstance(scope, bool) or not isinstance(scope, int):
                raise KeyError(scope)
            object.__setattr__(self, "scope", CapabilityScope(scope))
        except (KeyError, ValueError):
            raise InvalidCapability(
                f"CapabilityLayer.scope must be a CapabilityScope, got {self.scope!r}"
            ) from None
        object.__setattr__(
            self, "capabilities", _tuple(self.capabilities, "CapabilityLayer.capabilities", Capability)
        )
