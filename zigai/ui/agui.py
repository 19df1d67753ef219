"""AG-UI wire shapes: neutral UI events to AG-UI 1.0 events, and ``RunAgentInput`` in.

This module owns only names and JSON shapes (camelCase keys, ``type`` discriminators);
identities come from the bridge unchanged:

==================  ==========================================================================
neutral             AG-UI
==================  ==========================================================================
RunStart            ``RUN_STARTED`` {threadId, runId}
StepStart / End     ``STEP_STARTED`` / ``STEP_FINISHED`` {stepName: "model_request_<n>"}
Text*               ``TEXT_MESSAGE_START`` (role assistant) / ``_CONTENT`` / ``_END``; the
                    messageId is the part id
Reasoning*          ``REASONING_START``, ``REASONING_MESSAGE_START`` / ``_CONTENT`` /
                    ``_END``, ``REASONING_END``
ToolCall*           ``TOOL_CALL_START`` (parentMessageId: the response's latest text
                    message, else the response id) / ``TOOL_CALL_ARGS`` / ``TOOL_CALL_END``
ToolResult          ``TOOL_CALL_RESULT`` {messageId, toolCallId, content (text), role tool};
                    not sent for a frontend tool's result (the browser supplied it)
Custom              ``CUSTOM`` {name, value}; ``zigai.state_snapshot`` / ``zigai.state_delta``
                    become ``STATE_SNAPSHOT`` {snapshot} / ``STATE_DELTA`` {delta}
RunEnd complete     ``RUN_FINISHED`` {threadId, runId, result?, usage?}; each usage entry
                    carries ``costUsd`` when the built-in price table prices its model
RunEnd interrupt    ``RUN_FINISHED`` with outcome {type: "interrupt", interrupts: [...]};
                    calls of frontend tools are left out (the browser runs them from the
                    ``TOOL_CALL_*`` events), and a pause for frontend tools only ends with
                    a plain ``RUN_FINISHED``
RunFailure          ``RUN_ERROR`` {message, code, usage?}; a cancelled run (``Cancelled``)
                    ends with ``RUN_FINISHED`` and the outcome {type: "cancelled"} instead
==================  ==========================================================================

Input: :func:`parse_run_input` reads a ``RunAgentInput`` into client messages (roles,
text, and a user message's ``image`` / ``document`` parts as checked files — ids
discarded), resume replies, frontend tools, ``state``, ``context`` and
``forwardedProps`` (:mod:`zigai.ui.state`), and the results of frontend tool calls (the
trailing ``tool`` messages: ``toolCallId`` and text ``content``).  An approval interrupt is
answered with ``{"status": "resolved", "payload": {"approved": true | false, "reason"?:
text}}``; an external-result interrupt with ``{"payload": {"result": <JSON>}}``;
``cancelled`` denies.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from zigai.control import Cancelled
from zigai.ui.events import (
    Custom,
    Interrupt,
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
    UsageEntry,
)
from zigai.ui.files import FileLimits, agui_file
from zigai.ui.pauses import ApprovalReply, InvalidApprovalReply
from zigai.ui.state import (
    STATE_DELTA,
    STATE_SNAPSHOT,
    ClientStateLimits,
    ContextEntry,
    FrontendTool,
    parse_context,
    parse_tools,
)
from zigai.ui.trust import (
    ClientMessage,
    ClientMessagesTooLarge,
    InvalidClientMessages,
    client_id,
    text_of,
)

__all__ = ["AguiEncoder", "AguiRunInput", "parse_run_input", "APPROVAL_SCHEMA", "RESULT_SCHEMA"]

APPROVAL_SCHEMA = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["approved"],
}
RESULT_SCHEMA = {"type": "object", "properties": {"result": {}}, "required": ["result"]}


def usage_json(entries: tuple[UsageEntry, ...]) -> list[dict[str, Any]]:
    out = []
    for entry in entries:
        item: dict[str, Any] = {}
        if entry.provider:
            item["provider"] = entry.provider
        if entry.model:
            item["model"] = entry.model
        item.update(inputTokens=entry.input_tokens, outputTokens=entry.output_tokens,
                    totalTokens=entry.input_tokens + entry.output_tokens)
        for key, value in (("reasoningTokens", entry.reasoning_tokens),
                           ("cachedInputTokens", entry.cache_read_tokens),
                           ("cacheWriteInputTokens", entry.cache_write_tokens)):
            if value:
                item[key] = value
        cost = entry_cost(entry)
        if cost is not None:
            item["costUsd"] = cost
        out.append(item)
    return out


def entry_cost(entry: UsageEntry) -> str | None:
    """The entry's cost in USD (decimal string) from the built-in price table, else None."""
    if not entry.provider or not entry.model:
        return None
    from zigai import pricing
    from zigai.usage import RequestUsage

    usage = RequestUsage(input_tokens=entry.input_tokens, output_tokens=entry.output_tokens,
                         cache_write_tokens=entry.cache_write_tokens,
                         cache_read_tokens=entry.cache_read_tokens,
                         reasoning_tokens=entry.reasoning_tokens)
    cost = pricing.builtin().estimate(entry.provider, entry.model, usage)
    return None if cost is None else str(cost.usd)


def _interrupt(interrupt: Interrupt) -> dict[str, Any]:
    approval = interrupt.reason == "tool_approval"
    return {
        "id": interrupt.interrupt_id,
        "reason": interrupt.reason,
        "message": (f"Approve the call of {interrupt.tool_name}?" if approval
                    else f"Supply the result of {interrupt.tool_name}."),
        "toolCallId": interrupt.call_id,
        "responseSchema": APPROVAL_SCHEMA if approval else RESULT_SCHEMA,
        "metadata": {"toolName": interrupt.tool_name, "args": interrupt.args},
    }


def result_text(event: ToolResult) -> str:
    if event.status != "ok":
        return event.error or ""
    output = event.output
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)


class AguiEncoder:
    """Encodes the neutral events of one run as AG-UI event objects."""

    def __init__(self, frontend_tools: frozenset[str] = frozenset()) -> None:
        self._latest_text: dict[str, str] = {}  # response message id -> latest text part id
        self.frontend_tools = frontend_tools

    def encode(self, event: UiEvent) -> list[dict[str, Any]]:
        if isinstance(event, RunStart):
            return [{"type": "RUN_STARTED", "threadId": event.thread_id, "runId": event.run_id}]
        if isinstance(event, StepStart):
            return [{"type": "STEP_STARTED", "stepName": f"model_request_{event.step}"}]
        if isinstance(event, StepEnd):
            return [{"type": "STEP_FINISHED", "stepName": f"model_request_{event.step}"}]
        if isinstance(event, TextStart):
            self._latest_text[event.message_id] = event.part_id
            return [{"type": "TEXT_MESSAGE_START", "messageId": event.part_id, "role": "assistant"}]
        if isinstance(event, TextDelta):
            return [{"type": "TEXT_MESSAGE_CONTENT", "messageId": event.part_id, "delta": event.delta}]
        if isinstance(event, TextEnd):
            return [{"type": "TEXT_MESSAGE_END", "messageId": event.part_id}]
        if isinstance(event, ReasoningStart):
            return [{"type": "REASONING_START", "messageId": event.part_id},
                    {"type": "REASONING_MESSAGE_START", "messageId": event.part_id, "role": "reasoning"}]
        if isinstance(event, ReasoningDelta):
            return [{"type": "REASONING_MESSAGE_CONTENT", "messageId": event.part_id, "delta": event.delta}]
        if isinstance(event, ReasoningEnd):
            return [{"type": "REASONING_MESSAGE_END", "messageId": event.part_id},
                    {"type": "REASONING_END", "messageId": event.part_id}]
        if isinstance(event, ToolCallStart):
            parent = self._latest_text.get(event.message_id, event.message_id)
            return [{"type": "TOOL_CALL_START", "toolCallId": event.call_id,
                     "toolCallName": event.tool_name, "parentMessageId": parent}]
        if isinstance(event, ToolCallDelta):
            return [{"type": "TOOL_CALL_ARGS", "toolCallId": event.call_id, "delta": event.delta}]
        if isinstance(event, ToolCallEnd):
            return [{"type": "TOOL_CALL_END", "toolCallId": event.call_id}]
        if isinstance(event, ToolResult):
            if event.tool_name in self.frontend_tools and event.status == "ok":
                return []  # the browser produced this result and already holds it as a tool message
            return [{"type": "TOOL_CALL_RESULT", "messageId": event.result_id,
                     "toolCallId": event.call_id, "content": result_text(event), "role": "tool"}]
        if isinstance(event, Custom):
            if event.name == STATE_SNAPSHOT:
                return [{"type": "STATE_SNAPSHOT", "snapshot": event.value}]
            if event.name == STATE_DELTA:
                return [{"type": "STATE_DELTA", "delta": event.value}]
            return [{"type": "CUSTOM", "name": event.name, "value": event.value}]
        if isinstance(event, RunEnd):
            finished: dict[str, Any] = {"type": "RUN_FINISHED", "threadId": event.thread_id,
                                        "runId": event.run_id}
            waiting = [i for i in event.interrupts
                       if not (i.reason == "external_result" and i.tool_name in self.frontend_tools)]
            if event.outcome == "interrupt" and waiting:
                finished["outcome"] = {"type": "interrupt", "interrupts": [_interrupt(i) for i in waiting]}
            elif event.result is not None:
                finished["result"] = event.result
            if event.usage:
                finished["usage"] = usage_json(event.usage)
            return [finished]
        assert isinstance(event, RunFailure)
        if event.code == Cancelled.__name__:
            cancelled: dict[str, Any] = {"type": "RUN_FINISHED", "threadId": event.thread_id,
                                         "runId": event.run_id, "outcome": {"type": "cancelled"}}
            if event.usage:
                cancelled["usage"] = usage_json(event.usage)
            return [cancelled]
        error: dict[str, Any] = {"type": "RUN_ERROR", "message": event.message, "code": event.code}
        if event.usage:
            error["usage"] = usage_json(event.usage)
        return [error]


@dataclass(frozen=True, slots=True)
class AguiRunInput:
    """A validated ``RunAgentInput``: correlation ids, client messages, interrupt replies."""

    thread_id: str
    run_id: str
    messages: tuple[ClientMessage, ...]
    replies: tuple[ApprovalReply, ...] = ()
    tools: tuple[FrontendTool, ...] = ()
    state: Any = None
    context: tuple[ContextEntry, ...] = ()
    forwarded_props: Any = None
    tool_results: tuple[tuple[str, str], ...] = ()  # (toolCallId, content) of trailing tool messages


def _reply(index: int, entry: Any) -> ApprovalReply:
    where = f"resume[{index}]"
    if not isinstance(entry, dict) or not isinstance(entry.get("interruptId"), str):
        raise InvalidApprovalReply(f"{where} needs an interruptId string")
    interrupt_id = entry["interruptId"]
    status = entry.get("status")
    if status == "cancelled":
        return ApprovalReply(interrupt_id, "deny", "The user cancelled the request.")
    if status != "resolved":
        raise InvalidApprovalReply(f"{where}.status must be 'resolved' or 'cancelled'")
    payload = entry.get("payload")
    if isinstance(payload, dict) and isinstance(payload.get("approved"), bool):
        reason = payload.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise InvalidApprovalReply(f"{where}.payload.reason must be a string")
        return ApprovalReply(interrupt_id, "approve" if payload["approved"] else "deny", reason)
    if isinstance(payload, dict) and "result" in payload:
        return ApprovalReply(interrupt_id, "result", result=payload["result"])
    raise InvalidApprovalReply(
        f'{where}.payload must be {{"approved": true|false}} or {{"result": <value>}}'
    )


def _user_content(content: Any, where: str, files: FileLimits) -> tuple[str, tuple[Any, ...]]:
    """Text and files of a user message whose content may hold ``image`` / ``document`` parts."""
    if not isinstance(content, list):
        return text_of(content, where), ()
    texts: list[Any] = []
    attached: list[Any] = []
    for index, item in enumerate(content):
        if isinstance(item, dict) and item.get("type") in ("image", "document"):
            if len(attached) == files.max_files:
                raise ClientMessagesTooLarge(f"{where} has more than {files.max_files} files")
            attached.append(agui_file(item, f"{where} part {index}", files))
        else:
            texts.append(item)
    return text_of(texts, where), tuple(attached)


def _tool_results(raw_messages: list[Any]) -> tuple[tuple[str, str], ...]:
    results: list[tuple[str, str]] = []
    for index in range(len(raw_messages) - 1, -1, -1):
        item = raw_messages[index]
        if item.get("role") != "tool":
            break
        call_id = item.get("toolCallId")
        if not isinstance(call_id, str) or not call_id:
            raise InvalidClientMessages(f"messages[{index}] (tool) needs a toolCallId")
        results.insert(0, (call_id, text_of(item.get("content"), f"messages[{index}]")))
    return tuple(results)


def parse_run_input(document: dict[str, Any], limits: ClientStateLimits | None = None,
                    files: FileLimits | None = None) -> AguiRunInput:
    """A ``RunAgentInput`` object (already bounded JSON) as an :class:`AguiRunInput`."""
    limits = limits if limits is not None else ClientStateLimits()
    files = files if files is not None else FileLimits()
    raw_messages = document.get("messages", [])
    if not isinstance(raw_messages, list):
        raise InvalidClientMessages("RunAgentInput.messages must be an array")
    messages = []
    for index, item in enumerate(raw_messages):
        if not isinstance(item, dict) or not isinstance(item.get("role"), str):
            raise InvalidClientMessages(f"messages[{index}] needs a role")
        role = item["role"]
        where = f"messages[{index}]"
        attached: tuple[Any, ...] = ()
        if role == "user":
            text, attached = _user_content(item.get("content"), where, files)
        else:
            text = text_of(item.get("content"), where) if role == "assistant" else ""
        messages.append(ClientMessage(role, text, attached))
    resume = document.get("resume")
    if resume is None:
        resume = []
    if not isinstance(resume, list):
        raise InvalidApprovalReply("RunAgentInput.resume must be an array")
    replies = tuple(_reply(i, entry) for i, entry in enumerate(resume))
    return AguiRunInput(client_id(document.get("threadId")), client_id(document.get("runId")),
                        tuple(messages), replies, parse_tools(document.get("tools"), limits),
                        document.get("state"), parse_context(document.get("context"), limits),
                        document.get("forwardedProps"), _tool_results(raw_messages))
