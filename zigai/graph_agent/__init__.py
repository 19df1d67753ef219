"""zigai.graph_agent: agent runs as graph steps, and conversation state that outlives them (layer 6).

Job
    Bridge the provider-neutral graph and the agent loop, which never import each other.
    :class:`AgentStep` is a step callback for one concrete graph: it prepares
    :class:`~zigai.agent.RunOptions` for the visit, runs the agent (buffered, typed or
    streamed), adapts the owned result into the graph's value type and releases the result
    before the transition commits.  :class:`Conversation` is the long-lived copy of a
    conversation (canonical messages and cumulative usage) for graph state.

Invariants
    * The graph transition commits only after the whole agent run, the adaptation and the
      end observation succeeded: a step that raises leaves the run where it was, so a
      snapshot never holds half-delivered agent work.
    * Stream events reach the stream sink in agent order, each before the node observer
      sees it; a sink failure aborts the run and the adaptation.
    * Node controls only tighten: the agent's timeout is the smallest of the prepared
      options', the node's and the graph run's remaining time; cancellation is the graph
      run's token.  Graph deps become agent deps only when preparation left ``deps`` unset.
    * Every agent run carries a :class:`~zigai.hooks.Correlation` with the graph run id and
      the node's index and name (plus the trace parent), and :func:`durable_scope` gives the
      stable node index / completed-step ordinal pair durable step ids are built from.
    * Agent failures pass through unwrapped, after the node observer saw them with the usage
      the run had accumulated.

Submodules: ``step`` (AgentStep, AgentNodeEvent, durable_scope), ``conversation``
(Conversation).
"""

from __future__ import annotations

from zigai.graph_agent.conversation import Conversation
from zigai.graph_agent.step import AgentNodeEvent, AgentStep, InvalidAgentStep, durable_scope

__all__ = ["AgentStep", "AgentNodeEvent", "Conversation", "InvalidAgentStep", "durable_scope"]
