"""The familiar surface: PydanticAI-shaped spellings translated once into zigai's own.

Job
    Everything the agent offers so code written the PydanticAI way runs on an immutable
    zigai agent, kept apart from the loop so a reader of the loop can skip it.

Invariants
    * Nothing here changes how a run executes: each module turns a familiar spelling into
      the configuration the rest of :mod:`zigai.agent` already understands, when the agent
      is built or a decorator is applied.
    * Modules import only :mod:`zigai.agent`'s lower modules (config, errors, the tool and
      output layers), never ``zigai.agent.agent`` itself.

Submodules
    * ``adapters`` — ``(ctx, output)`` validators and ``(ctx)`` instruction functions.
    * ``kwargs`` — the typed keyword arguments of the run entry points and the spellings zigai teaches.
    * ``output_type`` — ``Agent(output_type=...)`` and plain functions in ``tools=[...]``.
    * ``override`` — ``agent.override(...)``, a context-local swap.
    * ``instruction_fields`` — ``agent.instructions`` / ``agent.system_prompt`` as decorators.
"""
