"""zigai.graph: typed application workflows over a validated, immutable routing table (layer 6).

Job
    Let an application compose steps, decisions and fork/join boundaries into a workflow
    with declared state, dependency, input, intermediate-value and output types.  A
    :class:`GraphBuilder` validates every definition and builds an immutable :class:`Graph`;
    :meth:`Graph.start` returns a pull-based :class:`Run` whose ``next()`` performs one
    callback and one transition; :meth:`Graph.run` loops over it.

Invariants
    * The graph never imports the agent loop; agents enter through ``zigai.graph_agent``.
    * Nothing runs on a definition the builder did not accept: every node has an outgoing
      route, every target exists, every node is reachable from the entry, names and sizes
      are within :class:`GraphLimits` (exactly-at-limit accepted, one more refused).
    * Every value crossing a boundary (state, deps, input, each intermediate value, output)
      is checked against the declared type; a mismatch fails the step naming the node.
    * A run never exceeds its step ceiling (the graph's, tightened per run): a cycle stops
      with :class:`StepLimitExceeded`.  Terminal failures latch; ``next()`` re-raises them.
    * A transition commits only after its callback, type check and route resolution all
      succeeded; between ``next()`` calls no work is in flight (settled boundary).
    * Forks admit at most ``max_concurrency`` callbacks, cancel siblings on the first
      failure and join in item-major, branch-major order regardless of scheduling.
    * Snapshots capture only settled runs and restore only into the same definition
      (identity, SHA-256 digest, node index and name); newer versions fail closed.
    * Visualization never uses application names as identifiers and honours
      ``GraphLimits.max_visualization_bytes``; documentation metadata stays out of the digest.

Submodules: ``errors``, ``limits`` (GraphLimits), ``types`` (GraphTypes, runtime checks),
``nodes`` (Step, Decision, Fork, Join, END), ``builder`` (GraphBuilder), ``definition``
(the routing table and digest), ``graph`` (Graph: the table plus ``start``/``run``),
``context`` (StepContext, BranchContext), ``persist`` (snapshots and restore), ``view`` (the versioned visualization
view), ``mermaid`` (Mermaid text from a view), ``run`` (Run state machine, events), ``fork``
(fork/join scheduler).
"""

from __future__ import annotations

from zigai.graph.builder import GraphBuilder
from zigai.graph.context import BranchContext, StepContext
from zigai.graph.definition import END_INDEX, GraphDefinition, Group, NodeInfo, Route
from zigai.graph.errors import (
    ForkItemLimitExceeded,
    GraphError,
    GraphLimitExceeded,
    GraphRunFinished,
    GraphTypeMismatch,
    InvalidGraphDefinition,
    InvalidGraphInput,
    InvalidGraphSnapshot,
    SnapshotMismatch,
    StepLimitExceeded,
    UnmatchedRoute,
    UnsupportedSnapshotVersion,
    VisualizationTooLarge,
)
from zigai.graph.graph import Graph
from zigai.graph.limits import GraphLimits
from zigai.graph.mermaid import escape_mermaid_text, render_mermaid
from zigai.graph.nodes import END, Decision, EndMarker, Fork, Join, NodeDoc, Step
from zigai.graph.persist import SNAPSHOT_LIMITS, SNAPSHOT_VERSION, SnapshotCodec
from zigai.graph.run import GraphEvent, GraphResult, Run
from zigai.graph.types import GraphTypes, conforms
from zigai.graph.view import VIEW_VERSION, GraphView, ViewEdge, ViewGroup, ViewNode

__all__ = [
    "GraphBuilder",
    "Graph",
    "GraphDefinition",
    "GraphTypes",
    "GraphLimits",
    "Run",
    "StepContext",
    "BranchContext",
    "GraphEvent",
    "GraphResult",
    "NodeInfo",
    "Route",
    "Group",
    "Step",
    "Decision",
    "Fork",
    "Join",
    "NodeDoc",
    "END",
    "EndMarker",
    "END_INDEX",
    "conforms",
    "SnapshotCodec",
    "GraphView",
    "ViewNode",
    "ViewEdge",
    "ViewGroup",
    "VIEW_VERSION",
    "render_mermaid",
    "escape_mermaid_text",
    "SNAPSHOT_VERSION",
    "SNAPSHOT_LIMITS",
    "GraphError",
    "InvalidGraphDefinition",
    "GraphLimitExceeded",
    "InvalidGraphInput",
    "GraphTypeMismatch",
    "UnmatchedRoute",
    "StepLimitExceeded",
    "GraphRunFinished",
    "ForkItemLimitExceeded",
    "InvalidGraphSnapshot",
    "UnsupportedSnapshotVersion",
    "SnapshotMismatch",
    "VisualizationTooLarge",
]
