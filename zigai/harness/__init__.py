"""``zigai.harness``: compose a borrowed Agent with presets, tighter limits and artifact producers.

Job
    A composition boundary, not a subclass or another loop: :class:`Harness` copies a borrowed
    :class:`~zigai.agent.Agent` (``dataclasses.replace``), appends preset instructions and then
    custom instructions in that order, and tightens its limits; :meth:`Harness.run` runs the
    copy through the ordinary ``Agent.run`` and then lets artifact producers copy what they
    derive from the completed result into a bounded, run-scoped collector.

Invariants
    * the borrowed agent is never changed; provider, model, tools and toolsets stay the same
      objects; instructions only grow, limits only tighten (a looser value is ignored, never
      applied) — :func:`tighten` is the rule;
    * one :class:`~zigai.control.RunControl` spans the model/tool run and every producer: the
      run gets the remaining time, each producer runs on a worker thread and is abandoned
      (its token set, its late output discarded) at the deadline or on cancellation;
    * producers see only the completed, borrowed result, and the collector copies every
      artifact; its limits (:class:`ArtifactLimits`) hold at the exact bound and fail one past;
    * :class:`HarnessResult` owns the agent result and the artifacts until ``close()``;
    * a resolved agent spec integrates by borrowing ``Resolved.agent``; the resolver keeps its
      cleanups and secret boundary.

Submodules
    :mod:`.artifacts` (the collector and its limits), :mod:`.harness` (the harness, the run and
    its owned result), :mod:`.errors`.
"""

from __future__ import annotations

from zigai.harness.artifacts import Artifact, ArtifactCollector, ArtifactLimits
from zigai.harness.errors import ArtifactLimitExceeded, HarnessResultClosed, InvalidHarness
from zigai.harness.harness import Harness, HarnessResult, ProducerContext, tighten

__all__ = [
    "Artifact", "ArtifactCollector", "ArtifactLimits", "Harness", "HarnessResult", "ProducerContext",
    "tighten", "ArtifactLimitExceeded", "HarnessResultClosed", "InvalidHarness",
]
