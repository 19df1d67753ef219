"""Capability wiring of one run: eager activation, on-demand loads, reassembly, reconstruction.

A run with capabilities (``Agent.capabilities``, ``RunOptions.capabilities`` or
``RunOptions.capability_layers``) gets one :class:`RunCapabilities`; a run without them
gets None, and every hook-in of the step loop is a single ``is not None`` test.

Setup (before the first model request) builds the
:class:`~zigai.capability.CapabilityRegistry` — inherited, agent, run, nested, subagent
scopes — so structural errors surface there, activates the eager plan, and rebuilds loads
found in the given history (:meth:`RunCapabilities.reconstruct`).

The run's contributions are reassembled as one unit (:meth:`RunCapabilities.assemble`)
at setup and after each tool batch that loaded something:

* tools, toolsets: the agent's first, then each active bundle's in composition order;
* provider-managed tools: one per kind — a later capability's replaces an earlier one's,
  the agent's own always wins;
* tool policies, output validators: the agent's first, then the capabilities';
* lifecycle hooks: the agent's, the run's, then the capabilities';
* history processors: the agent's, the capabilities', then the run's;
* settings: model → capabilities (later ones override earlier) → agent → run;
* model: each active bundle's selector receives the model chosen so far.

On-demand bundles contribute a catalog instruction and the sequential ``load_capability``
function until loaded.  A ``load_capability`` call returned by the model is typed into a
:class:`~zigai.messages.CapabilityLoadCallPart` before it enters the history.  A load is
planned dependency-first against every active and pending bundle, its instructions (static,
then dynamic) are resolved, and only then does it become pending; pending loads commit
after the whole tool batch ran.  A refused plan or a ``ModelRetry`` from a dynamic
instruction is a failed load result that activates nothing; any other callback exception
fails the run with nothing committed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from zigai import json as zjson
from zigai.agent.errors import InvalidAgentConfiguration
from zigai.capability import (
    LOAD_CAPABILITY_TOOL,
    Capability,
    CapabilityLayer,
    CapabilityRegistry,
    CapabilityScope,
    CapabilitySnapshot,
    CapabilityUnloadPolicy,
    ModelSelectionContext,
)
from zigai.errors import JsonError
from zigai.messages import (
    CapabilityLoadCallPart,
    CapabilityLoadReturnPart,
    Message,
    ResponseMessage,
    RetryPromptPart,
    ToolCallPart,
    ToolOutcome,
)
from zigai.model import ToolDefinition
from zigai.settings import ModelSettings, merge_settings
from zigai.tool import ModelRetry
from zigai.tool.policy import PolicyStages
from zigai.tool.race import call_bounded

# The run is the agent's RunCore, which imports this module: it is typed structurally here.
RunCore = Any

__all__ = ["RunCapabilities", "setup_capabilities"]


def setup_capabilities(run: RunCore) -> RunCapabilities:
    """The capability state of a run that has capabilities configured (RunCore checks)."""
    agent, options = run.agent, run.options
    if options.capabilities or options.capability_layers:
        registry = CapabilityRegistry([
            CapabilityLayer(CapabilityScope.agent, agent.capabilities),
            CapabilityLayer(CapabilityScope.run, options.capabilities),
            *options.capability_layers,
        ])
    else:
        registry = agent._cached(("capabilities",), lambda: CapabilityRegistry(agent.capabilities))
    caps = RunCapabilities(registry)
    caps.reconstruct(run, options.message_history, run_end_from=None)
    caps.assemble(run)
    return caps


class RunCapabilities:
    """The capability state of one run (one thread drives it)."""

    __slots__ = ("registry", "active", "loaded", "pending", "pending_ids", "tools", "toolsets",
                 "snapshot")

    def __init__(self, registry: CapabilityRegistry) -> None:
        self.registry = registry
        self.active: list[Capability] = list(registry.eager_plan)
        self.loaded: list[str] = []
        self.pending: list[Capability] = []
        self.pending_ids: list[str] = []
        self.tools: tuple[Any, ...] = ()
        self.toolsets: tuple[Any, ...] = ()
        self.snapshot = CapabilitySnapshot()

    # -- activation -------------------------------------------------------------------------

    def active_ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.active if c.id is not None)

    def reconstruct(self, run: RunCore, messages: Sequence[Message], run_end_from: int | None) -> None:
        """Activate the successful loads recorded in ``messages`` (paired call and result).

        ``history`` bundles come back from any message; ``run_end`` bundles only from
        ``messages[run_end_from:]`` — the resumed run's own part (None: never).  Ids the
        registry no longer knows are skipped; a restored set that now conflicts raises.
        """
        if not self.registry.on_demand or not messages:
            return
        call_ids: set[str] = set()
        wanted: list[str] = []
        for index, message in enumerate(messages):
            if isinstance(message, ResponseMessage):
                for call in message.parts:
                    if isinstance(call, CapabilityLoadCallPart):
                        call_ids.add(call.tool_call_id)
                continue
            for result in message.parts:
                if (
                    not isinstance(result, CapabilityLoadReturnPart)
                    or result.outcome is not ToolOutcome.success
                    or result.tool_call_id not in call_ids
                ):
                    continue
                for cid in result.loaded:
                    cap = self.registry.get(cid)
                    if cap is None or not cap.on_demand:
                        continue
                    if cap.unload is CapabilityUnloadPolicy.run_end and (
                        run_end_from is None or index < run_end_from
                    ):
                        continue
                    wanted.append(cid)
        wanted = list(dict.fromkeys(wanted))
        if not wanted:
            return
        with self.registry.resolve(wanted, active=self.active_ids()) as resolution:
            plan = resolution.require()
        self.active.extend(plan)
        self.loaded.extend(c.id for c in plan if c.id is not None)

    def assemble(self, run: RunCore) -> None:
        """Recompute every contribution of the active bundles onto ``run`` (one unit)."""
        agent, options = run.agent, run.options
        active = self.registry.snapshot(self.active, self.loaded).capabilities
        self.active = list(active)
        self.tools = agent.function_tools + tuple(t for c in active for t in c.tools)
        self.toolsets = tuple(agent.toolsets) + tuple(t for c in active for t in c.toolsets)
        managed: dict[str, Any] = {}
        for cap in active:
            for tool in cap.builtin_tools:
                kind = tool.kind  # type: ignore[union-attr]  # normalized to ManagedTool
                managed.pop(kind, None)
                managed[kind] = tool
        for tool in agent.builtin_tools:
            managed.pop(tool.kind, None)
        run.builtin_tools = tuple(agent.builtin_tools) + tuple(managed.values())
        run.policies = PolicyStages(
            tuple(agent.tool_policies) + tuple(p for c in active for p in c.tool_policies)
        )
        run.output_validators = tuple(agent.output_validators) + tuple(
            v for c in active for v in c.output_validators
        )
        run._processors = (
            tuple(agent.history_processors)
            + tuple(p for c in active for p in c.history_processors)
            + tuple(options.history_processors)
        )
        hooks = tuple(agent.hooks) + tuple(options.hooks) + tuple(h for c in active for h in c.hooks)
        if hooks and not run.hooks and run._begun:
            run.info = run._make_info()  # the first hooks of a run that had none
        run.hooks = hooks
        self.snapshot = self.registry.snapshot(active, self.loaded)
        model = agent.model
        selectors = [c.model_selector for c in active if c.model_selector is not None]
        if selectors:
            ctx = ModelSelectionContext(
                run.deps, run.usage, run.usage.requests, tuple(run.messages), run.control, self.snapshot
            )
            for select in selectors:
                chosen = call_bounded(select, ctx, model, control=run.control, what="a model selector")
                for attr in ("profile", "request"):
                    if not hasattr(chosen, attr):
                        raise InvalidAgentConfiguration(
                            f"a capability model selector returned {type(chosen).__name__}, "
                            f"which does not implement zigai.model.Model (no {attr})"
                        )
                model = chosen
        if model is not run.model:
            run.set_model(model)
        layers = [c.model_settings for c in active if c.model_settings is not None]
        if layers or run.settings_layers:
            model_layer = getattr(run.model, "settings", None)
            run.settings = merge_settings(
                model_layer if isinstance(model_layer, ModelSettings) else None, *layers,
                agent.model_settings, options.model_settings,
            )
            run.settings_layers = bool(layers)
            # the request check (_prepare_request) refuses what the profile cannot honour

    def eager_instructions(self, run: RunCore) -> list[str]:
        """The active bundles' instructions for the run's start (static, then dynamic)."""
        resolved: list[str] = []
        for cap in self.active:
            resolved.extend(_instructions(run, cap))
        return resolved

    # -- the model-facing surface ---------------------------------------------------------------

    def catalog(self) -> tuple[Capability, ...]:
        active = {id(c) for c in self.active} | {id(c) for c in self.pending}
        return tuple(c for c in self.registry.on_demand if id(c) not in active)

    def request_extras(
        self, definitions: tuple[Any, ...], instructions: tuple[str, ...],
        step_tools: dict[str, Any], output_names: frozenset[str],
    ) -> tuple[tuple[Any, ...], tuple[str, ...]]:
        """This step's definitions and instructions with the catalog and ``load_capability``."""
        available = self.catalog()
        if not available:
            return definitions, instructions
        if LOAD_CAPABILITY_TOOL in step_tools or LOAD_CAPABILITY_TOOL in output_names:
            raise InvalidAgentConfiguration(
                f"a tool is named {LOAD_CAPABILITY_TOOL!r}, which the framework owns "
                "while on-demand capabilities are configured; rename the tool"
            )
        lines = [
            f"You can load these capabilities with the {LOAD_CAPABILITY_TOOL} tool when a task "
            "needs them (pass the id as capability_id):"
        ]
        for cap in available:
            lines.append(f"- {cap.id}: {cap.description}" if cap.description else f"- {cap.id}")
        definition = ToolDefinition(
            LOAD_CAPABILITY_TOOL,
            "Load one of the capabilities listed in the instructions, with its tools and "
            "instructions, for the rest of the run.",
            {
                "type": "object",
                "properties": {"capability_id": {
                    "type": "string", "enum": [c.id for c in available],
                    "description": "The id of the capability to load.",
                }},
                "required": ["capability_id"],
                "additionalProperties": False,
            },
            sequential=True,
        )
        return definitions + (definition,), instructions + ("\n".join(lines),)

    def typify(self, response: ResponseMessage) -> ResponseMessage:
        """``response`` with each well-formed ``load_capability`` call typed."""
        parts = response.parts
        changed = False
        typed: list[Any] = []
        part: Any
        for part in parts:
            if isinstance(part, ToolCallPart) and part.tool_name == LOAD_CAPABILITY_TOOL:
                cid = _requested_id(part.args)
                if cid is not None:
                    part = CapabilityLoadCallPart(
                        cid, part.tool_call_id, id=part.id, provider=part.provider
                    )
                    changed = True
            typed.append(part)
        return replace(response, parts=tuple(typed)) if changed else response

    # -- loading ---------------------------------------------------------------------------------

    def load(self, run: RunCore, call: Any) -> Any:
        """The result part of one ``load_capability`` call; a success becomes pending."""
        if not isinstance(call, CapabilityLoadCallPart):
            return RetryPromptPart(
                f"{LOAD_CAPABILITY_TOOL} takes one argument, an object like "
                '{"capability_id": "<id>"} naming a capability from the catalog.',
                tool_name=call.tool_name, tool_call_id=call.tool_call_id,
            )
        cid = call.capability_id
        on_demand = {c.id for c in self.registry.on_demand}
        if cid not in on_demand and cid in self.registry:
            return _failed(call, f"capability {cid!r} cannot be loaded on demand: it is always active")
        with self.registry.resolve(cid, active=self.active_ids(), planned=self.pending_ids) as resolution:
            if not resolution.ok:
                return _failed(call, f"capability {cid!r} was not loaded: {resolution.diagnostic}")
            plan = resolution.plan
        if not plan:
            return CapabilityLoadReturnPart(
                call.tool_call_id, cid, content=f"capability {cid!r} is already active"
            )
        instructions: list[str] = []
        try:
            for cap in plan:
                instructions.extend(_instructions(run, cap))
        except ModelRetry as exc:
            return _failed(call, f"capability {cid!r} was not loaded: {exc}")
        self.pending.extend(plan)
        ids = tuple(c.id for c in plan if c.id is not None)
        self.pending_ids.extend(ids)
        return CapabilityLoadReturnPart(call.tool_call_id, cid, loaded=ids, instructions=tuple(instructions))

    def commit(self, run: RunCore) -> None:
        """Activate the batch's pending loads and reassemble (after the whole batch ran)."""
        if not self.pending:
            return
        self.active.extend(self.pending)
        self.loaded.extend(self.pending_ids)
        self.pending = []
        self.pending_ids = []
        self.assemble(run)


def _failed(call: CapabilityLoadCallPart, message: str) -> CapabilityLoadReturnPart:
    return CapabilityLoadReturnPart(
        call.tool_call_id, call.capability_id, outcome=ToolOutcome.error, content=message
    )


def _requested_id(text: str) -> str | None:
    """The ``capability_id`` of well-formed load arguments (a JSON object text), else None."""
    try:
        args = zjson.parse(text, zjson.defaults.tool_payload)
    except JsonError:
        return None
    if not isinstance(args, dict) or set(args) != {"capability_id"}:
        return None
    cid = args["capability_id"]
    return cid if isinstance(cid, str) and cid else None


def _instructions(run: RunCore, cap: Capability) -> list[str]:
    resolved = list(cap.instructions)
    if cap.dynamic_instructions:
        ctx = run.run_context()
        for dynamic in cap.dynamic_instructions:
            value = call_bounded(dynamic, ctx, control=run.control, what="a capability dynamic instruction")
            if value is not None and not isinstance(value, str):
                raise InvalidAgentConfiguration(
                    f"dynamic instruction {dynamic!r} of capability {cap.id!r} returned "
                    f"{type(value).__name__}, not str"
                )
            if value:
                resolved.append(value)
    return resolved

