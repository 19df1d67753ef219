"""``zigai.agent_spec``: an agent declared in a strict JSON or YAML file, in three phases.

Job
    Turn a reviewed, data-only document into an :class:`~zigai.agent.Agent` without a second
    provider abstraction: *parse* (:func:`parse` / :func:`load` → :class:`Owned`), *dry run*
    (:func:`validate_resolution` against the application's :class:`Catalogs` →
    :class:`ResolutionPlan`), *full resolution* (:func:`resolve` with the application's model
    factory → :class:`Resolved`, which owns the agent and its cleanups).

Invariants
    * parsing is data only: no environment read, no secret, no client; every refusal names the
      exact path (``$.limits.max_requests``); the text is bounded by the ``cli_manifest`` JSON
      profile in both syntaxes;
    * credentials appear only as environment-variable NAMES; ``${VAR}`` substitution only for
      names the document allowlists in ``env``, never for a secret-looking name;
    * the dry run builds no model, starts no process and touches no network; it resolves
      capability dependencies transitively before anything else validates them and names every
      missing environment variable at once;
    * nothing here imports a concrete provider; :func:`model_string_catalog` and
      :func:`model_string_factory` reach them only through :func:`zigai.models.infer_model`.

Submodules
    :mod:`.document` (the frozen values, schema version 1), :mod:`.parse` (phase 1),
    :mod:`.resolve` (phases 2 and 3), :mod:`.model_strings` (zigai's own model strings as a
    catalog and factory), :mod:`.errors`.
"""

from __future__ import annotations

from zigai.agent_spec.document import (
    SPEC_VERSION,
    AgentSpec,
    CapabilityRef,
    LimitsDoc,
    McpServerDoc,
    ModelRef,
    OutputDoc,
    RetryDoc,
    SettingsDoc,
)
from zigai.agent_spec.errors import (
    AgentSpecClosed,
    AgentSpecError,
    CapabilityDependencyCycle,
    InvalidAgentSpec,
    MissingEnvironment,
    ProviderValidationFailed,
    UnresolvedReference,
)
from zigai.agent_spec.model_strings import model_string_catalog, model_string_factory
from zigai.agent_spec.parse import LIMITS, Owned, load, parse
from zigai.agent_spec.resolve import (
    BuiltModel,
    Catalogs,
    ProviderEntry,
    ResolutionPlan,
    Resolved,
    ResolvedCapability,
    resolve,
    validate_resolution,
)

__all__ = [
    "SPEC_VERSION", "LIMITS", "AgentSpec", "ModelRef", "OutputDoc", "McpServerDoc", "CapabilityRef",
    "LimitsDoc", "RetryDoc", "SettingsDoc", "Owned", "parse", "load",
    "ProviderEntry", "Catalogs", "BuiltModel", "ResolvedCapability", "ResolutionPlan", "Resolved",
    "validate_resolution", "resolve", "model_string_catalog", "model_string_factory",
    "AgentSpecError", "InvalidAgentSpec", "UnresolvedReference", "CapabilityDependencyCycle",
    "MissingEnvironment", "ProviderValidationFailed", "AgentSpecClosed",
]
