"""The durable event stream: what a streaming durable run writes to DBOS, and how it is read.

Job
    Turn a durable run's progress into small JSON records on the DBOS stream ``zigai.events``
    of its workflow, so any process can follow the run (``DurableAgent.events``,
    ``DurableRuns.events``) while the run stays a workflow.

Records (every one carries ``step``, the stable step ordinal it belongs to, except ``final``)
    ``model_request`` (a model step started), ``text_delta`` / ``thinking_delta`` (``index``,
    ``text``), ``model_response`` (``text``, ``tool_calls``: name, id, args), ``tool_call``
    (``tool``, ``tool_call_id``, ``args``), ``tool_result`` (``tool``, ``tool_call_id``,
    ``content``), ``tool_error`` (``tool``, ``tool_call_id``, ``error``), ``paused`` (``round``,
    ``tool_call_ids``) and ``final`` (``output``) — then the stream closes.

Invariants (what a consumer sees after a crash)
    * Records of a *completed* step are written once: they are written inside the step, and
      DBOS never runs a completed step again, so recovery does not repeat them.
    * A step interrupted by the crash runs again from its start: its records so far stay in
      the stream and it writes a new ``model_request`` / ``tool_call`` record for the same
      ``step``.  A consumer that sees a start record for a step it has seen before drops what
      it collected for that step.
    * ``paused`` and ``final`` are written from workflow code, where DBOS records the write
      as a step of its own, so they appear exactly once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from zigai.messages import ResponseMessage, TextPart, ThinkingPart, ToolCallPart
from zigai.model import StreamedResponse
from zigai.model.stream import PartDeltaEvent, PartStartEvent, TextPartDelta, ThinkingPartDelta

__all__ = ["EVENTS_STREAM", "model_records", "response_record"]

EVENTS_STREAM = "zigai.events"


def model_records(streamed: StreamedResponse, step: int) -> Iterator[dict[str, Any]]:
    """The text and thinking deltas of one streamed model response, as records."""
    for event in streamed:
        if isinstance(event, PartStartEvent):
            part = event.part
            if isinstance(part, TextPart) and part.content:
                yield {"kind": "text_delta", "step": step, "index": event.index, "text": part.content}
            elif isinstance(part, ThinkingPart) and part.content:
                yield {"kind": "thinking_delta", "step": step, "index": event.index, "text": part.content}
        elif isinstance(event, PartDeltaEvent):
            delta = event.delta
            if isinstance(delta, TextPartDelta) and delta.content_delta:
                yield {"kind": "text_delta", "step": step, "index": event.index, "text": delta.content_delta}
            elif isinstance(delta, ThinkingPartDelta) and delta.content_delta:
                yield {"kind": "thinking_delta", "step": step, "index": event.index, "text": delta.content_delta}


def response_record(response: ResponseMessage, step: int) -> dict[str, Any]:
    """The summary record of one finished model response."""
    text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
    calls = [{"tool": p.tool_name, "tool_call_id": p.tool_call_id, "args": p.args}
             for p in response.parts if isinstance(p, ToolCallPart)]
    return {"kind": "model_response", "step": step, "text": text, "tool_calls": calls}
