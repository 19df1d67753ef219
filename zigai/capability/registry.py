"""``CapabilityRegistry``: bounded structural validation and dependency-first load planning.

A registry composes capabilities in the fixed scope order (inherited, agent, run, nested,
subagent), declaration order within a scope — the order in which layers are *given* never
changes it.  Construction validates the whole composition before any model request:

* its size and each bundle's dependency/conflict lists against :class:`CapabilityLimits`
  (exactly at a limit passes, one more raises :class:`CapabilityLimitExceeded`);
* unique ids (:class:`DuplicateCapabilityId`), known dependencies
  (:class:`UnknownCapabilityDependency`) and an acyclic dependency graph
  (:class:`CapabilityDependencyCycle`, naming the cycle);
* the eager plan — every eager bundle with its dependencies, dependency-first — must be
  free of declared conflicts (:class:`CapabilityConflict`).

:meth:`CapabilityRegistry.resolve` plans a load the way the agent's ``load_capability``
tool does — dependencies first in declaration order, each checked against every active and
earlier planned bundle's conflicts (declared on either side) — and returns an owned
:class:`LoadResolution` holding the plan or the diagnostic.  Nothing here runs a callback.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from zigai._owner import Owner
from zigai.capability.capability import (
    Capability,
    CapabilityLayer,
    CapabilityScope,
    CapabilitySnapshot,
)
from zigai.capability.errors import (
    CapabilityConflict,
    CapabilityDependencyCycle,
    CapabilityError,
    CapabilityLimitExceeded,
    DuplicateCapabilityId,
    InvalidCapability,
    LoadResolutionClosed,
    UnknownCapability,
    UnknownCapabilityDependency,
)

__all__ = ["CapabilityLimits", "CapabilityRegistry", "LoadResolution"]


@dataclass(frozen=True, slots=True)
class CapabilityLimits:
    """Bounds of one composition: bundles in total, ids per dependency or conflict list."""

    max_capabilities: int = 256
    max_dependencies: int = 64
    max_conflicts: int = 64

    def __post_init__(self) -> None:
        for name in ("max_capabilities", "max_dependencies", "max_conflicts"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidCapability(f"CapabilityLimits.{name} must be an int >= 0, got {value!r}")


class LoadResolution(Owner):
    """The owned outcome of planning a load: a dependency-first plan or a diagnostic.

    ``ok`` says which; ``plan`` lists the bundles to activate (dependencies first, the
    already active ones left out), ``ids`` their ids; ``error`` is the named
    :class:`~zigai.capability.CapabilityError` of a refused plan and ``diagnostic`` its
    message.  :meth:`require` returns the plan or raises the error.  Use it as a context
    manager or call ``close()``; later use raises :class:`LoadResolutionClosed`.
    """

    __slots__ = ("_plan", "_error", "requested")

    _closed_error = LoadResolutionClosed

    def __init__(
        self, requested: tuple[str, ...], plan: tuple[Capability, ...], error: CapabilityError | None
    ) -> None:
        super().__init__()
        self.requested = requested
        self._plan = plan
        self._error = error

    def _release(self) -> None:
        self._plan = ()
        self._error = None

    @property
    def ok(self) -> bool:
        self._check()
        return self._error is None

    @property
    def plan(self) -> tuple[Capability, ...]:
        self._check()
        return self._plan

    @property
    def ids(self) -> tuple[str, ...]:
        self._check()
        return tuple(c.id for c in self._plan if c.id is not None)

    @property
    def error(self) -> CapabilityError | None:
        self._check()
        return self._error

    @property
    def diagnostic(self) -> str | None:
        self._check()
        return None if self._error is None else str(self._error)

    def require(self) -> tuple[Capability, ...]:
        """The plan; raise the diagnostic's error when the load was refused."""
        self._check()
        if self._error is not None:
            raise self._error
        return self._plan

    def __repr__(self) -> str:
        if self._closed:
            return "LoadResolution(<closed>)"
        if self._error is not None:
            return f"LoadResolution(requested={self.requested!r}, error={self._error!r})"
        return f"LoadResolution(requested={self.requested!r}, ids={self.ids!r})"


def _ordered(items: Sequence[Capability | CapabilityLayer]) -> tuple[Capability, ...]:
    """Bare capabilities belong to the agent scope; layers sort stably by scope."""
    layers: list[tuple[int, int, tuple[Capability, ...]]] = []
    bare: list[Capability] = []
    for index, item in enumerate(items):
        if isinstance(item, CapabilityLayer):
            layers.append((int(item.scope), index, tuple(item.capabilities)))
        elif isinstance(item, Capability):
            bare.append(item)
        else:
            raise InvalidCapability(
                f"a capability composition takes Capability or CapabilityLayer values, got "
                f"{type(item).__name__}"
            )
    if bare:
        layers.append((int(CapabilityScope.agent), -1, tuple(bare)))
    layers.sort(key=lambda entry: (entry[0], entry[1]))
    return tuple(cap for _, _, caps in layers for cap in caps)


class CapabilityRegistry:
    """A validated, immutable composition of capabilities (see the module docstring).

    ``items`` are :class:`Capability` values (the agent scope) and/or
    :class:`CapabilityLayer` values.  Raises a named :class:`CapabilityError` on a
    structural problem.
    """

    __slots__ = ("capabilities", "limits", "eager_plan", "on_demand", "_by_id")

    def __init__(
        self,
        items: Iterable[Capability | CapabilityLayer] = (),
        *,
        limits: CapabilityLimits | None = None,
    ) -> None:
        if limits is None:
            limits = CapabilityLimits()
        elif not isinstance(limits, CapabilityLimits):
            raise InvalidCapability("CapabilityRegistry limits must be a CapabilityLimits")
        if isinstance(items, (Capability, CapabilityLayer)):
            items = (items,)
        capabilities = _ordered(tuple(items))
        self.limits = limits
        _check_limits(capabilities, limits)
        by_id: dict[str, Capability] = {}
        for cap in capabilities:
            if cap.id is None:
                continue
            if cap.id in by_id and by_id[cap.id] is not cap:
                raise DuplicateCapabilityId(
                    f"two capabilities share the id {cap.id!r}; ids must be unique across every scope",
                    capability_id=cap.id,
                )
            by_id[cap.id] = cap
        # one bundle given twice (same object) composes once, at its first position
        seen: set[int] = set()
        unique: list[Capability] = []
        for cap in capabilities:
            if id(cap) not in seen:
                seen.add(id(cap))
                unique.append(cap)
        self.capabilities: tuple[Capability, ...] = tuple(unique)
        self._by_id = by_id
        for cap in self.capabilities:
            for dependency in cap.dependencies:
                if dependency not in by_id:
                    raise UnknownCapabilityDependency(
                        f"capability {cap.id!r} depends on {dependency!r}, which is not registered; "
                        "add that capability to the agent, the run or a layer",
                        capability_id=cap.id or "", dependency=dependency,
                    )
        _check_acyclic(self.capabilities, by_id)
        plan: list[Capability] = []
        planned: set[int] = set()
        for cap in self.capabilities:
            if not cap.on_demand:
                _plan_into(cap, by_id, plan, planned, ())
        self.eager_plan: tuple[Capability, ...] = tuple(plan)
        self.on_demand: tuple[Capability, ...] = tuple(
            cap for cap in self.capabilities if cap.on_demand and id(cap) not in planned
        )

    @property
    def ids(self) -> tuple[str, ...]:
        """Every registered id, in composition order."""
        return tuple(c.id for c in self.capabilities if c.id is not None)

    def get(self, capability_id: str) -> Capability | None:
        return self._by_id.get(capability_id)

    def __contains__(self, capability_id: object) -> bool:
        return capability_id in self._by_id

    def __len__(self) -> int:
        return len(self.capabilities)

    def resolve(
        self, ids: str | Sequence[str], *, active: Iterable[str] = (), planned: Iterable[str] = ()
    ) -> LoadResolution:
        """Plan loading ``ids`` (in order) on top of the ``active`` ids; never raises for a refusal.

        The plan puts each bundle's dependencies first (declaration order, recursively),
        leaves out bundles already active or planned, and checks every addition against the
        conflicts of all active and earlier planned bundles, declared on either side.
        ``planned`` names bundles an earlier plan (not yet active) already holds: they are
        not planned again and count as earlier planned for conflicts.
        """
        requested = (ids,) if isinstance(ids, str) else tuple(ids)
        active_caps = [self._by_id[a] for a in active if a in self._by_id]
        earlier = [self._by_id[p] for p in planned if p in self._by_id]
        planned_ids = {id(c) for c in active_caps} | {id(c) for c in earlier}
        plan: list[Capability] = list(earlier)
        try:
            for cid in requested:
                cap = self._by_id.get(cid) if isinstance(cid, str) else None
                if cap is None:
                    known = ", ".join(c.id for c in self.on_demand if c.id) or "none"
                    raise UnknownCapability(
                        f"no capability has the id {cid!r}; loadable capabilities: {known}",
                        capability_id=str(cid),
                    )
                _plan_into(cap, self._by_id, plan, planned_ids, tuple(active_caps))
        except CapabilityError as error:
            return LoadResolution(requested, (), error)
        return LoadResolution(requested, tuple(plan[len(earlier):]), None)

    def snapshot(self, active: Sequence[Capability], loaded: Iterable[str] = ()) -> CapabilitySnapshot:
        """The snapshot of ``active`` bundles (in composition order), ``loaded`` loaded on demand."""
        order = {id(c): i for i, c in enumerate(self.capabilities)}
        ordered = tuple(sorted(active, key=lambda c: order.get(id(c), len(order))))
        loaded_set = set(loaded)
        ids = tuple(c.id for c in ordered if c.id is not None)
        return CapabilitySnapshot(ids, tuple(i for i in ids if i in loaded_set), ordered)

    def __repr__(self) -> str:
        return f"CapabilityRegistry({len(self.capabilities)} capabilities, ids={self.ids!r})"


def _check_limits(capabilities: tuple[Capability, ...], limits: CapabilityLimits) -> None:
    if len(capabilities) > limits.max_capabilities:
        raise CapabilityLimitExceeded(
            f"{len(capabilities)} capabilities exceed max_capabilities={limits.max_capabilities}",
            limit_name="max_capabilities", limit=limits.max_capabilities, value=len(capabilities),
        )
    for cap in capabilities:
        for name, values, limit in (
            ("max_dependencies", cap.dependencies, limits.max_dependencies),
            ("max_conflicts", cap.conflicts, limits.max_conflicts),
        ):
            if len(values) > limit:
                raise CapabilityLimitExceeded(
                    f"capability {cap.id!r} lists {len(values)} ids, over {name}={limit}",
                    limit_name=name, limit=limit, value=len(values),
                )


def _check_acyclic(capabilities: tuple[Capability, ...], by_id: dict[str, Capability]) -> None:
    """Iterative depth-first search; the first cycle found (in composition order) is raised."""
    done: set[str] = set()
    for root in capabilities:
        if root.id is None or root.id in done:
            continue
        path: list[str] = [root.id]
        on_path = {root.id}
        stack = [iter(root.dependencies)]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                finished = path.pop()
                on_path.discard(finished)
                done.add(finished)
                continue
            if nxt in on_path:
                cycle = tuple(path[path.index(nxt):]) + (nxt,)
                raise CapabilityDependencyCycle(
                    "capability dependencies form a cycle: " + " -> ".join(cycle), cycle=cycle
                )
            if nxt in done:
                continue
            path.append(nxt)
            on_path.add(nxt)
            stack.append(iter(by_id[nxt].dependencies))


def _conflict(cap: Capability, others: Iterable[Capability]) -> Capability | None:
    for other in others:
        if (other.id is not None and other.id in cap.conflicts) or (
            cap.id is not None and cap.id in other.conflicts
        ):
            return other
    return None


def _plan_into(
    cap: Capability,
    by_id: dict[str, Capability],
    plan: list[Capability],
    planned: set[int],
    active: tuple[Capability, ...],
) -> None:
    """Append ``cap`` after its dependencies (acyclic graph: the depth is bounded)."""
    if id(cap) in planned:
        return
    for dependency in cap.dependencies:
        _plan_into(by_id[dependency], by_id, plan, planned, active)
    other = _conflict(cap, (*active, *plan))
    if other is not None:
        raise CapabilityConflict(
            f"capability {cap.id!r} conflicts with {other.id!r}, which is "
            f"{'active' if any(other is a for a in active) else 'also being loaded'}; they cannot be active together",
            capability_id=cap.id or "", conflicting=other.id or "",
        )
    planned.add(id(cap))
    plan.append(cap)
