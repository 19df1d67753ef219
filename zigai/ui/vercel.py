"""Vercel AI SDK UI message stream shapes: neutral UI events to stream chunks, chat requests in.

This module owns only names and JSON shapes of the ``ai`` package's UI message stream
(protocol ``v1``: SSE ``data:`` frames ending with ``[DONE]``, header
``x-vercel-ai-ui-message-stream: v1``):

==================  ==========================================================================
neutral             UI message chunk
==================  ==========================================================================
RunStart            ``start`` {messageId: "<run>-msg"} (no id on a resume: the browser
                    continues the paused assistant message)
StepStart / End     ``start-step`` / ``finish-step``
Text*               ``text-start`` / ``text-delta`` / ``text-end`` {id: part id}
Reasoning*          ``reasoning-start`` / ``reasoning-delta`` / ``reasoning-end``
ToolCall*           ``tool-input-start`` / ``tool-input-delta`` / ``tool-input-available``
                    (``tool-input-error`` when the argument text is not JSON)
ToolResult          ``tool-output-available`` / ``tool-output-error`` / ``tool-output-denied``
Custom              ``data-<name>`` {data, transient?}
RunEnd complete     ``data-zigai.result`` (structured output only), ``finish`` (stop)
RunEnd interrupt    ``tool-approval-request`` {approvalId, toolCallId} per approval (after a
                    ``tool-input-available`` with the resolved input when a policy changed
                    the model's), ``finish`` (tool-calls); external calls stay at
                    input-available
RunFailure          ``error`` {errorText}, ``finish`` (error); a cancelled run
                    (``Cancelled``) ends with ``abort`` {reason} instead, as the ``ai``
                    package's own ``streamText`` does when its abort signal fires (no
                    ``finish`` after it): the browser keeps the partial message, not an error
==================  ==========================================================================

Input: :func:`parse_chat_request` reads the ``useChat`` body (``id``, ``messages`` of
UI messages).  Text parts of user and assistant messages become client messages, a user
message's ``file`` parts (data or https URLs) checked files (:mod:`zigai.ui.files`); a
trailing assistant message whose tool parts are ``approval-responded`` (or
``output-available`` for an external call) becomes interrupt replies.  Every other id the
browser sent is discarded.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from zigai.control import Cancelled
from zigai.ui.events import (
    Custom,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    RunEnd,
    RunFailure,
    RunStart,
    StepEnd,
    StepStart,
    TextDelta,
    TextEnd,
    TextStart,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
    UiEvent,
)
from zigai.ui.files import FileLimits, vercel_file
from zigai.ui.pauses import InvalidApprovalReply
from zigai.ui.trust import ClientMessage, ClientMessagesTooLarge, InvalidClientMessages, client_id

__all__ = ["VercelEncoder", "VercelChatRequest", "ToolAnswer", "parse_chat_request",
           "STREAM_HEADER", "DONE"]

STREAM_HEADER = ("x-vercel-ai-ui-message-stream", "v1")
DONE = "[DONE]"


def _digest(value: Any) -> bytes:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).digest()


class VercelEncoder:
    """Encodes the neutral events of one run as UI message stream chunks.

    A paused call is approved on the arguments it will run with (a policy's arguments stage
    may have changed the model's): when they differ from the ``tool-input-available`` input
    the browser already shows, the approval request is preceded by a ``tool-input-available``
    carrying them, so the approver never sees one input while another runs.
    """

    def __init__(self) -> None:
        self._shown: dict[str, bytes] = {}  # call id -> digest of the input the browser shows

    def encode(self, event: UiEvent) -> list[dict[str, Any]]:
        if isinstance(event, RunStart):
            if event.resumed:  # the browser continues its paused assistant message
                return [{"type": "start"}]
            return [{"type": "start", "messageId": f"{event.run_id}-msg"}]
        if isinstance(event, StepStart):
            return [{"type": "start-step"}]
        if isinstance(event, StepEnd):
            return [{"type": "finish-step"}]
        if isinstance(event, TextStart):
            return [{"type": "text-start", "id": event.part_id}]
        if isinstance(event, TextDelta):
            return [{"type": "text-delta", "id": event.part_id, "delta": event.delta}]
        if isinstance(event, TextEnd):
            return [{"type": "text-end", "id": event.part_id}]
        if isinstance(event, ReasoningStart):
            return [{"type": "reasoning-start", "id": event.part_id}]
        if isinstance(event, ReasoningDelta):
            return [{"type": "reasoning-delta", "id": event.part_id, "delta": event.delta}]
        if isinstance(event, ReasoningEnd):
            return [{"type": "reasoning-end", "id": event.part_id}]
        if isinstance(event, ToolCallStart):
            return [{"type": "tool-input-start", "toolCallId": event.call_id, "toolName": event.tool_name}]
        if isinstance(event, ToolCallDelta):
            return [{"type": "tool-input-delta", "toolCallId": event.call_id, "inputTextDelta": event.delta}]
        if isinstance(event, ToolCallEnd):
            try:
                arguments = json.loads(event.args) if event.args.strip() else {}
            except ValueError:
                return [{"type": "tool-input-error", "toolCallId": event.call_id,
                         "toolName": event.tool_name, "input": event.args,
                         "errorText": "the model's tool arguments are not valid JSON"}]
            self._shown[event.call_id] = _digest(arguments)
            return [{"type": "tool-input-available", "toolCallId": event.call_id,
                     "toolName": event.tool_name, "input": arguments}]
        if isinstance(event, ToolResult):
            if event.status == "ok":
                return [{"type": "tool-output-available", "toolCallId": event.call_id, "output": event.output}]
            if event.status == "denied":
                return [{"type": "tool-output-denied", "toolCallId": event.call_id}]
            return [{"type": "tool-output-error", "toolCallId": event.call_id, "errorText": event.error or ""}]
        if isinstance(event, Custom):
            chunk: dict[str, Any] = {"type": f"data-{event.name}", "data": event.value}
            if event.transient:
                chunk["transient"] = True
            return [chunk]
        if isinstance(event, RunEnd):
            if event.outcome == "interrupt":
                chunks = []
                for i in event.interrupts:
                    if i.reason != "tool_approval":
                        continue
                    shown = self._shown.get(i.call_id)
                    if shown is not None and isinstance(i.args, dict) and shown != _digest(i.args):
                        chunks.append({"type": "tool-input-available", "toolCallId": i.call_id,
                                       "toolName": i.tool_name, "input": i.args})
                    chunks.append({"type": "tool-approval-request", "approvalId": i.interrupt_id,
                                   "toolCallId": i.call_id})
                return [*chunks, {"type": "finish", "finishReason": "tool-calls"}]
            chunks = []
            if event.result is not None and not isinstance(event.result, str):
                chunks.append({"type": "data-zigai.result", "data": event.result})
            return [*chunks, {"type": "finish", "finishReason": "stop"}]
        assert isinstance(event, RunFailure)
        if event.code == Cancelled.__name__:
            return [{"type": "abort", "reason": event.message}]
        return [{"type": "error", "errorText": f"{event.code}: {event.message}"},
                {"type": "finish", "finishReason": "error"}]


@dataclass(frozen=True, slots=True)
class ToolAnswer:
    """A browser answer to a paused call: by approval id, or by call id for external results."""

    approval_id: str | None
    call_id: str | None
    decision: str
    reason: str | None = None
    result: Any = None


@dataclass(frozen=True, slots=True)
class VercelChatRequest:
    chat_id: str
    messages: tuple[ClientMessage, ...]
    answers: tuple[ToolAnswer, ...] = ()


def _content(parts: list[Any], where: str, files: FileLimits) -> tuple[str, tuple[Any, ...]]:
    pieces = []
    attached: list[Any] = []
    user = where.endswith("(user)")
    for index, part in enumerate(parts):
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            raise InvalidClientMessages(f"{where}.parts[{index}] needs a type")
        kind = part["type"]
        if kind == "text":
            if not isinstance(part.get("text"), str):
                raise InvalidClientMessages(f"{where}.parts[{index}].text must be a string")
            pieces.append(part["text"])
        elif kind == "file" and user:
            if len(attached) == files.max_files:
                raise ClientMessagesTooLarge(f"{where} has more than {files.max_files} files")
            attached.append(vercel_file(part, f"{where}.parts[{index}]", files))
        elif kind in ("source-url", "source-document") and user:
            raise InvalidClientMessages(f"{where}.parts[{index}] is a {kind} part; send text and file parts")
    return "".join(pieces), tuple(attached)


def _answer(part: dict[str, Any], where: str) -> ToolAnswer | None:
    state = part.get("state")
    if state == "approval-responded":
        approval = part.get("approval")
        if not isinstance(approval, dict) or not isinstance(approval.get("id"), str) \
                or not isinstance(approval.get("approved"), bool):
            raise InvalidApprovalReply(f"{where}.approval needs an id and an approved flag")
        reason = approval.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise InvalidApprovalReply(f"{where}.approval.reason must be a string")
        return ToolAnswer(approval["id"], None, "approve" if approval["approved"] else "deny", reason)
    if state == "output-available" and isinstance(part.get("toolCallId"), str):
        return ToolAnswer(None, part["toolCallId"], "result", result=part.get("output"))
    return None


def parse_chat_request(document: dict[str, Any], files: FileLimits | None = None) -> VercelChatRequest:
    """A ``useChat`` request body (already bounded JSON) as a :class:`VercelChatRequest`."""
    files = files if files is not None else FileLimits()
    raw = document.get("messages")
    if not isinstance(raw, list):
        raise InvalidClientMessages("the chat request needs a messages array")
    messages = []
    answers: list[ToolAnswer] = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("role"), str):
            raise InvalidClientMessages(f"messages[{index}] needs a role")
        role = item["role"]
        parts = item.get("parts", [])
        if not isinstance(parts, list):
            raise InvalidClientMessages(f"messages[{index}].parts must be an array")
        text, attached = (_content(parts, f"messages[{index}] ({role})", files)
                          if role in ("user", "assistant") else ("", ()))
        messages.append(ClientMessage(role, text, attached))
        if role == "assistant" and index == len(raw) - 1:
            for position, part in enumerate(parts):
                kind = part.get("type", "")
                if kind.startswith("tool-") or kind == "dynamic-tool":
                    found = _answer(part, f"messages[{index}].parts[{position}]")
                    if found is not None:
                        answers.append(found)
    return VercelChatRequest(client_id(document.get("id")), tuple(messages), tuple(answers))
