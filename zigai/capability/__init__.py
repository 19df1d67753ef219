"""zigai.capability: ordered feature bundles, their composition and dependency planning (layer 4).

Job
    Describe capabilities — bundles of tools, provider-managed tools, toolsets,
    instructions, lifecycle hooks, tool policies, history processors, output validators,
    model settings and a model selector — place them in scopes, validate a composition and
    plan loads.  The agent (:mod:`zigai.agent._capabilities`) activates eager bundles at run
    setup and on-demand bundles through its framework-owned ``load_capability`` tool.

Invariants
    * Composition order is fixed: inherited, agent, run, nested, subagent scopes, then
      declaration order within a scope; the order layers are given in never changes it.
    * Structural errors (duplicate id, unknown dependency, dependency cycle, a conflict in
      the eager set, a size limit) are raised by :class:`CapabilityRegistry` construction,
      so a run finds them before its first model request.
    * A load plan is dependency-first and checked against every active and earlier
      planned conflict; a refused plan activates nothing.
    * Capabilities are borrowed and immutable; nothing here holds run state or calls an
      application callback.

Submodules: ``capability`` (descriptors, scopes, layers, snapshots), ``registry``
(validation, planning, :class:`LoadResolution`), ``errors`` (the named errors).
"""

from __future__ import annotations

from zigai.capability.capability import (
    CAPABILITY_ID_PATTERN,
    Capability,
    CapabilityLayer,
    CapabilityLoading,
    CapabilityScope,
    CapabilitySnapshot,
    CapabilityUnloadPolicy,
    ModelSelectionContext,
    ModelSelector,
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
from zigai.capability.registry import CapabilityLimits, CapabilityRegistry, LoadResolution

__all__ = [
    "CAPABILITY_ID_PATTERN",
    "LOAD_CAPABILITY_TOOL",
    "Capability",
    "CapabilityLayer",
    "CapabilityLoading",
    "CapabilityScope",
    "CapabilitySnapshot",
    "CapabilityUnloadPolicy",
    "ModelSelectionContext",
    "ModelSelector",
    "CapabilityLimits",
    "CapabilityRegistry",
    "LoadResolution",
    "CapabilityError",
    "InvalidCapability",
    "DuplicateCapabilityId",
    "UnknownCapability",
    "UnknownCapabilityDependency",
    "CapabilityDependencyCycle",
    "CapabilityConflict",
    "CapabilityLimitExceeded",
    "LoadResolutionClosed",
]

LOAD_CAPABILITY_TOOL = "load_capability"
"""The name of the framework-owned function that loads an on-demand capability."""
