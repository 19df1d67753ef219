"""Deferred tool execution: the paused state document, resume decisions and run outcomes.

``Agent.run_until_pause`` returns a :class:`RunOutcome` — ``complete`` (an owned
``Result``) or ``paused`` (a :class:`PausedRun`) — *before* any call of the pausing model
response executes.  The pause owns a versioned JSON document (``state_json``)::

    {"version": 1, "kind": "zigai.paused_run", "digest": "sha256:<hex>", "state": {
        "history": [<history v2 message>, ...],  "new_start": N,
        "instructions": [...],  "usage": {...},  "output_retries": N,
        "tool_retries": {"tool": N},  "pending_calls": [<DeferredCall>, ...],
        "pending_messages": [<history v2 request message>, ...]}}

* ``history`` is the canonical history up to and including the pausing response (the
  ``zigai.history`` version-2 message encoding); ``instructions`` are the resolved
  instructions, reused verbatim on resume so their meaning cannot change mid-run;
* ``pending_calls`` list each deferred call with its resolved arguments, its execution
  (``requires_approval`` / ``external``) and its approval source (``static`` from
  ``Tool.execution``, ``dynamic`` from ``Agent.tool_approval``) — persisted so a later
  tool-policy module keeps the decision across the pause;
* ``pending_messages`` are PendingMessageQueue batches accepted before the pause.

The digest is SHA-256 over the canonical ``state`` text.  It detects truncation and
accidental edits; it is *not* authentication — applications must integrity-protect
(sign or encrypt) state that crosses an untrusted boundary.

Parsing is all-or-nothing: the whole document is bounded by the paused-state JSON
profile, decoded and cross-checked (every pending call is a call of the last response)
into new values before anything is returned, so a failure leaves nothing half-applied.

Resume decisions have their own versioned wrapper (``{"version": 1, "decisions": [...]}``,
bounded by the resume-decisions profile): exactly one decision per pending call —
``approve`` (run an approval-gated tool), ``deny`` with a reason (an error result for the
model) or ``result`` with external content (appended without invoking application code).
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from zigai._owner import Owner
from zigai.agent.errors import ResultClosed
from zigai.errors import AgentError, JsonError
from zigai.messages import Message, RequestMessage, ResponseMessage, ToolCallPart
from zigai.usage import RunUsage, UsageDetails

__all__ = [
    "PAUSED_STATE_VERSION",
    "RESUME_DECISIONS_VERSION",
    "ResumeAction",
    "ApprovalSource",
    "DeferredCall",
    "ResumeDecision",
    "OwnedResumeDecisions",
    "PausedRun",
    "RunOutcome",
    "PausedState",
    "stringify_resume_decisions",
    "parse_resume_decisions",
    "encode_paused_state",
    "decode_paused_state",
    "match_decisions",
    "InvalidPausedState",
    "PausedStateTooLarge",
    "UnsupportedPausedStateVersion",
    "InvalidResumeDecisions",
    "ResumeDecisionsTooLarge",
    "UnsupportedResumeDecisionsVersion",
    "ResumeDecisionMismatch",
]

PAUSED_STATE_VERSION = 1
RESUME_DECISIONS_VERSION = 1
_STATE_KIND = "zigai.paused_run"


# -- errors ------------------------------------------------------------------------------------


class InvalidPausedState(AgentError):
    """A paused-state document is malformed, truncated, tampered or inconsistent."""


class PausedStateTooLarge(InvalidPausedState):
    """A paused-state document exceeds the paused-state JSON limits."""


class UnsupportedPausedStateVersion(InvalidPausedState):
    """A paused-state document has a version this release does not read."""

    def __init__(self, message: str, *, version: object = None) -> None:
        super().__init__(message)
        self.version = version


class InvalidResumeDecisions(AgentError):
    """Resume decisions are malformed (JSON, shape, unknown action)."""


class ResumeDecisionsTooLarge(InvalidResumeDecisions):
    """A resume-decisions document exceeds the resume-decisions JSON limits."""


class UnsupportedResumeDecisionsVersion(InvalidResumeDecisions):
    """A resume-decisions document has a version this release does not read."""


class ResumeDecisionMismatch(InvalidResumeDecisions):
    """The decisions do not cover each deferred call exactly once, or do not fit a call.

    ``missing`` and ``unexpected`` list tool call ids.
    """

    def __init__(
        self, message: str, *, missing: tuple[str, ...] = (), unexpected: tuple[str, ...] = ()
    ) -> None:
        super().__init__(message)
        self.missing = tuple(missing)
        self.unexpected = tuple(unexpected)


# -- values ------------------------------------------------------------------------------------


class ResumeAction(enum.Enum):
    approve = "approve"
    deny = "deny"
    result = "result"


class ApprovalSource(enum.Enum):
    """Why a call waits: the tool's own execution, or the agent's dynamic approval hook."""

    static = "static"
    dynamic = "dynamic"


@dataclass(frozen=True, slots=True)
class DeferredCall:
    """One call awaiting a decision: identity, resolved arguments and why it waits."""

    tool_call_id: str
    tool_name: str
    args: str
    execution: Literal["requires_approval", "external"]
    approval: ApprovalSource = ApprovalSource.static

    def args_as_dict(self) -> dict[str, Any]:
        value = json.loads(self.args) if self.args.strip() else {}
        return value if isinstance(value, dict) else {}


_DENIED_TEXT = "The tool call was denied."


@dataclass(frozen=True, slots=True)
class ResumeDecision:
    """The application's answer for one deferred call (use the class-method constructors)."""

    tool_call_id: str
    action: ResumeAction
    reason: str | None = None
    content: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.tool_call_id, str) or not self.tool_call_id:
            raise InvalidResumeDecisions("a resume decision needs a non-empty tool_call_id")
        try:
            object.__setattr__(self, "action", ResumeAction(self.action))
        except ValueError:
            raise InvalidResumeDecisions(f"unknown resume action {self.action!r}") from None
        if self.reason is not None and not isinstance(self.reason, str):
            raise InvalidResumeDecisions("a deny reason must be a string")
        if self.action is not ResumeAction.result and self.content is not None:
            raise InvalidResumeDecisions("only a 'result' decision carries content")
        if self.action is not ResumeAction.deny and self.reason is not None:
            raise InvalidResumeDecisions("only a 'deny' decision carries a reason")
        if self.content is not None:
            try:
                object.__setattr__(self, "content", json.loads(json.dumps(self.content, allow_nan=False)))
            except (TypeError, ValueError) as exc:
                raise InvalidResumeDecisions(f"result content is not plain JSON: {exc}") from None

    @classmethod
    def approve(cls, tool_call_id: str) -> ResumeDecision:
        return cls(tool_call_id, ResumeAction.approve)

    @classmethod
    def deny(cls, tool_call_id: str, reason: str | None = None) -> ResumeDecision:
        return cls(tool_call_id, ResumeAction.deny, reason=reason)

    @classmethod
    def result(cls, tool_call_id: str, content: Any) -> ResumeDecision:
        return cls(tool_call_id, ResumeAction.result, content=content)

    @property
    def deny_text(self) -> str:
        return self.reason or _DENIED_TEXT


class OwnedResumeDecisions(Owner):
    """Parsed resume decisions; owns them until ``close()``."""

    __slots__ = ("_decisions",)

    _closed_error = ResultClosed

    def __init__(self, decisions: tuple[ResumeDecision, ...]) -> None:
        self._decisions = decisions
        super().__init__()

    @property
    def decisions(self) -> tuple[ResumeDecision, ...]:
        self._check()
        return self._decisions

    def __iter__(self) -> Any:
        return iter(self.decisions)

    def __len__(self) -> int:
        return len(self.decisions)

    def _release(self) -> None:
        self._decisions = ()

    def __enter__(self) -> OwnedResumeDecisions:
        # Unlike other owners, entering closed decisions has never raised (use does).
        return self


class PausedRun(Owner):
    """An owned pause: the calls awaiting decisions and the versioned ``state_json``."""

    __slots__ = ("_calls", "_state_json", "_usage", "_messages")

    _closed_error = ResultClosed

    def __init__(
        self, calls: tuple[DeferredCall, ...], state_json: str, usage: RunUsage,
        messages: tuple[Message, ...],
    ) -> None:
        self._calls = calls
        self._state_json = state_json
        self._usage = usage
        self._messages = messages
        super().__init__()

    @property
    def calls(self) -> tuple[DeferredCall, ...]:
        """The deferred calls, in the model's call order."""
        self._check()
        return self._calls

    @property
    def state_json(self) -> str:
        """The versioned paused-state document (persist it; pass it to resume_run)."""
        self._check()
        return self._state_json

    @property
    def usage(self) -> RunUsage:
        self._check()
        return self._usage

    @property
    def messages(self) -> tuple[Message, ...]:
        """The canonical history up to and including the pausing response."""
        self._check()
        return self._messages

    def _release(self) -> None:
        self._state_json = ""
        self._messages = ()

    def __repr__(self) -> str:
        if self._closed:
            return "PausedRun(closed)"
        return f"PausedRun(calls={[c.tool_name for c in self._calls]})"


class RunOutcome:
    """The tagged outcome of ``run_until_pause`` / ``resume_run``: complete or paused."""

    __slots__ = ("kind", "_result", "_paused")

    def __init__(self, result: Any = None, paused: PausedRun | None = None) -> None:
        if (result is None) == (paused is None):
            raise ValueError("a RunOutcome is either complete or paused")
        self.kind: Literal["complete", "paused"] = "complete" if paused is None else "paused"
        self._result = result
        self._paused = paused

    @property
    def is_paused(self) -> bool:
        return self.kind == "paused"

    @property
    def result(self) -> Any:
        """The owned Result (TypedResult for typed runs) of a complete outcome."""
        if self._result is None:
            raise AgentError("the run paused; read RunOutcome.paused")
        return self._result

    @property
    def paused(self) -> PausedRun:
        if self._paused is None:
            raise AgentError("the run completed; read RunOutcome.result")
        return self._paused

    def close(self) -> None:
        if self._result is not None:
            self._result.close()
        if self._paused is not None:
            self._paused.close()

    deinit = close

    def __enter__(self) -> RunOutcome:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RunOutcome({self.kind})"


@dataclass(frozen=True, slots=True)
class PausedState:
    """The decoded provider-neutral state a resume rebuilds its run from."""

    messages: tuple[Message, ...]
    new_start: int
    instructions: tuple[str, ...]
    usage: RunUsage
    output_retries: int
    tool_retries: Mapping[str, int]
    calls: tuple[DeferredCall, ...]
    pending_messages: tuple[RequestMessage, ...] = ()


# -- paused state JSON -------------------------------------------------------------------------


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _usage_json(usage: RunUsage) -> dict[str, Any]:
    fields = {
        name: getattr(usage, name)
        for name in (
            "requests", "tool_calls", "input_tokens", "output_tokens", "cache_write_tokens",
            "cache_read_tokens", "input_audio_tokens", "output_audio_tokens", "reasoning_tokens",
        )
    }
    fields["details"] = dict(usage.details)
    return fields


def encode_paused_state(state: PausedState) -> str:
    """The versioned paused-state document of ``state`` (deterministic text)."""
    from zigai import json as zjson
    from zigai.history.encode import encode_message

    body = {
        "history": [encode_message(message) for message in state.messages],
        "new_start": state.new_start,
        "instructions": list(state.instructions),
        "usage": _usage_json(state.usage),
        "output_retries": state.output_retries,
        "tool_retries": dict(state.tool_retries),
        "pending_calls": [
            {
                "tool_call_id": call.tool_call_id, "tool_name": call.tool_name, "args": call.args,
                "execution": call.execution, "approval": call.approval.value,
            }
            for call in state.calls
        ],
        "pending_messages": [encode_message(message) for message in state.pending_messages],
    }
    text = _canonical(body)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    document = (
        f'{{"version":{PAUSED_STATE_VERSION},"kind":"{_STATE_KIND}",'
        f'"digest":"sha256:{digest}","state":{text}}}'
    )
    try:
        zjson.validate(document, zjson.defaults.paused_state)
    except JsonError as exc:
        raise PausedStateTooLarge(f"the paused state exceeds the paused-state JSON limits: {exc}") from exc
    return document


def _fail(message: str) -> InvalidPausedState:
    return InvalidPausedState(f"invalid paused state: {message}")


def _int(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _fail(f"{path} must be an int >= 0")
    return value


def _str(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise _fail(f"{path} must be a string")
    return value


def _obj(value: Any, path: str, keys: frozenset[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(f"{path} must be an object")
    missing = keys - value.keys()
    extra = value.keys() - keys
    if missing or extra:
        raise _fail(f"{path}: missing {sorted(missing)}, unknown {sorted(extra)}")
    return value


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise _fail(f"{path} must be an array")
    return value


_STATE_KEYS = frozenset({
    "history", "new_start", "instructions", "usage", "output_retries", "tool_retries",
    "pending_calls", "pending_messages",
})
_CALL_KEYS = frozenset({"tool_call_id", "tool_name", "args", "execution", "approval"})
_USAGE_KEYS = frozenset({
    "requests", "tool_calls", "input_tokens", "output_tokens", "cache_write_tokens",
    "cache_read_tokens", "input_audio_tokens", "output_audio_tokens", "reasoning_tokens", "details",
})


def decode_paused_state(data: str | bytes) -> PausedState:
    """Parse and cross-check a paused-state document; raise a named error, return nothing partial."""
    from zigai import json as zjson
    from zigai.errors import HistoryError, MessageError
    from zigai.history.decode import decode_message
    from zigai.json import JsonLimitExceeded

    if not isinstance(data, (str, bytes)):
        raise _fail(f"expected str or bytes, got {type(data).__name__}")
    try:
        document = zjson.parse(data, zjson.defaults.paused_state)
    except JsonLimitExceeded as exc:
        raise PausedStateTooLarge(f"the paused state exceeds the paused-state JSON limits: {exc}") from exc
    except JsonError as exc:
        raise _fail(f"not one JSON document ({exc})") from exc
    if not isinstance(document, dict):
        raise _fail("the document must be a JSON object")
    version = document.get("version")
    if version != PAUSED_STATE_VERSION or isinstance(version, bool):
        raise UnsupportedPausedStateVersion(
            f"paused state version {version!r} is not supported (expected {PAUSED_STATE_VERSION})",
            version=version,
        )
    envelope = _obj(document, "document", frozenset({"version", "kind", "digest", "state"}))
    if envelope["kind"] != _STATE_KIND:
        raise _fail(f"kind must be {_STATE_KIND!r}")
    body = _obj(envelope["state"], "state", _STATE_KEYS)
    digest = "sha256:" + hashlib.sha256(_canonical(body).encode("utf-8")).hexdigest()
    if envelope["digest"] != digest:
        raise _fail("the digest does not match the state (truncated or edited)")
    try:
        messages = tuple(
            decode_message(item, f"state.history[{i}]")
            for i, item in enumerate(_list(body["history"], "state.history"))
        )
        pending_messages = tuple(
            decode_message(item, f"state.pending_messages[{i}]")
            for i, item in enumerate(_list(body["pending_messages"], "state.pending_messages"))
        )
        raw_usage = _obj(body["usage"], "state.usage", _USAGE_KEYS)
        details = raw_usage["details"]
        if not isinstance(details, dict):
            raise _fail("state.usage.details must be an object")
        usage = RunUsage(
            **{k: _int(v, f"state.usage.{k}") for k, v in raw_usage.items() if k != "details"},
            details=UsageDetails({k: _int(v, f"state.usage.details.{k}") for k, v in details.items()}),
        )
    except (HistoryError, MessageError) as exc:
        raise _fail(str(exc)) from exc
    pending_requests: list[RequestMessage] = []
    for message in pending_messages:
        if not isinstance(message, RequestMessage):
            raise _fail("state.pending_messages must hold request messages")
        pending_requests.append(message)
    instructions = tuple(
        _str(item, "state.instructions[]") for item in _list(body["instructions"], "state.instructions")
    )
    retries = body["tool_retries"]
    if not isinstance(retries, dict):
        raise _fail("state.tool_retries must be an object")
    tool_retries = {_str(k, "state.tool_retries key"): _int(v, f"state.tool_retries.{k}") for k, v in retries.items()}
    calls = []
    for i, raw in enumerate(_list(body["pending_calls"], "state.pending_calls")):
        entry = _obj(raw, f"state.pending_calls[{i}]", _CALL_KEYS)
        execution = entry["execution"]
        if execution not in ("requires_approval", "external"):
            raise _fail(f"state.pending_calls[{i}].execution {execution!r} is not deferred")
        try:
            approval = ApprovalSource(entry["approval"])
        except ValueError:
            raise _fail(f"state.pending_calls[{i}].approval is unknown") from None
        calls.append(DeferredCall(
            _str(entry["tool_call_id"], "tool_call_id"), _str(entry["tool_name"], "tool_name"),
            _str(entry["args"], "args"), execution, approval,
        ))
    new_start = _int(body["new_start"], "state.new_start")
    state = PausedState(
        messages, min(new_start, len(messages)), instructions, usage,
        _int(body["output_retries"], "state.output_retries"), tool_retries, tuple(calls),
        tuple(pending_requests),
    )
    _cross_check(state)
    return state


def _cross_check(state: PausedState) -> None:
    if new_start_invalid(state):
        raise _fail("state.new_start is past the history")
    if not state.messages or not isinstance(state.messages[-1], ResponseMessage):
        raise _fail("the history must end with the pausing model response")
    if not state.calls:
        raise _fail("a paused state needs at least one pending call")
    calls = {p.tool_call_id: p for p in state.messages[-1].parts if isinstance(p, ToolCallPart)}
    seen: set[str] = set()
    for call in state.calls:
        part = calls.get(call.tool_call_id)
        if part is None or part.tool_name != call.tool_name:
            raise _fail(f"pending call {call.tool_call_id!r} is not a call of the last response")
        if call.tool_call_id in seen:
            raise _fail(f"pending call {call.tool_call_id!r} appears twice")
        seen.add(call.tool_call_id)
        if _args_text(part) != call.args:
            raise _fail(f"pending call {call.tool_call_id!r} has arguments that differ from its call")


def new_start_invalid(state: PausedState) -> bool:
    return state.new_start > len(state.messages)


def _args_text(part: ToolCallPart) -> str:
    args = part.args
    if isinstance(args, str):
        return args
    return _canonical(args)


def deferred_args(part: ToolCallPart) -> str:
    """The resolved-argument text persisted for a deferred call."""
    return _args_text(part)


# -- resume decisions --------------------------------------------------------------------------


def _decision_json(decision: ResumeDecision) -> dict[str, Any]:
    item: dict[str, Any] = {"tool_call_id": decision.tool_call_id, "action": decision.action.value}
    if decision.action is ResumeAction.deny and decision.reason is not None:
        item["reason"] = decision.reason
    if decision.action is ResumeAction.result:
        item["content"] = decision.content
    return item


def stringify_resume_decisions(decisions: Iterable[ResumeDecision]) -> str:
    """The versioned resume-decisions document (``{"version":1,"decisions":[...]}``)."""
    from zigai import json as zjson

    items = []
    for decision in decisions:
        if not isinstance(decision, ResumeDecision):
            raise InvalidResumeDecisions(f"expected ResumeDecision values, got {type(decision).__name__}")
        items.append(_decision_json(decision))
    document = _canonical({"version": RESUME_DECISIONS_VERSION, "decisions": items})
    try:
        zjson.validate(document, zjson.defaults.resume_decisions)
    except JsonError as exc:
        raise ResumeDecisionsTooLarge(f"the decisions exceed the resume-decisions limits: {exc}") from exc
    return document


def parse_resume_decisions(data: str | bytes) -> OwnedResumeDecisions:
    """Parse a resume-decisions document bounded by the resume-decisions JSON profile."""
    from zigai import json as zjson
    from zigai.json import JsonLimitExceeded

    if not isinstance(data, (str, bytes)):
        raise InvalidResumeDecisions(f"expected str or bytes, got {type(data).__name__}")
    try:
        document = zjson.parse(data, zjson.defaults.resume_decisions)
    except JsonLimitExceeded as exc:
        raise ResumeDecisionsTooLarge(f"the decisions exceed the resume-decisions limits: {exc}") from exc
    except JsonError as exc:
        raise InvalidResumeDecisions(f"resume decisions are not one JSON document ({exc})") from exc
    if not isinstance(document, dict):
        raise InvalidResumeDecisions("resume decisions must be a JSON object")
    version = document.get("version")
    if version != RESUME_DECISIONS_VERSION or isinstance(version, bool):
        raise UnsupportedResumeDecisionsVersion(f"resume decisions version {version!r} is not supported")
    if set(document) != {"version", "decisions"} or not isinstance(document["decisions"], list):
        raise InvalidResumeDecisions('resume decisions need exactly "version" and a "decisions" array')
    decisions = []
    for i, item in enumerate(document["decisions"]):
        if not isinstance(item, dict):
            raise InvalidResumeDecisions(f"decisions[{i}] must be an object")
        action = item.get("action")
        allowed = {"tool_call_id", "action"} | (
            {"reason"} if action == "deny" else {"content"} if action == "result" else set()
        )
        if not set(item) <= allowed or "tool_call_id" not in item or "action" not in item:
            raise InvalidResumeDecisions(f"decisions[{i}] has keys {sorted(item)}")
        if action == "result" and "content" not in item:
            raise InvalidResumeDecisions(f"decisions[{i}]: a result decision needs content")
        if not isinstance(item["tool_call_id"], str):
            raise InvalidResumeDecisions(f"decisions[{i}].tool_call_id must be a string")
        chosen: Any = action  # ResumeDecision validates the action name
        decisions.append(ResumeDecision(item["tool_call_id"], chosen, item.get("reason"), item.get("content")))
    return OwnedResumeDecisions(tuple(decisions))


def match_decisions(
    calls: Sequence[DeferredCall], decisions: Iterable[ResumeDecision]
) -> dict[str, ResumeDecision]:
    """Check exactly one fitting decision per deferred call; return them by call id."""
    by_id: dict[str, ResumeDecision] = {}
    duplicates: list[str] = []
    for decision in decisions:
        if not isinstance(decision, ResumeDecision):
            raise InvalidResumeDecisions(f"expected ResumeDecision values, got {type(decision).__name__}")
        if decision.tool_call_id in by_id:
            duplicates.append(decision.tool_call_id)
        by_id[decision.tool_call_id] = decision
    expected = {call.tool_call_id: call for call in calls}
    missing = tuple(i for i in expected if i not in by_id)
    unexpected = tuple(i for i in by_id if i not in expected) + tuple(duplicates)
    if missing or unexpected:
        raise ResumeDecisionMismatch(
            f"resume needs exactly one decision per deferred call; missing {list(missing)}, "
            f"unexpected or repeated {list(unexpected)}",
            missing=missing, unexpected=unexpected,
        )
    for call_id, call in expected.items():
        action = by_id[call_id].action
        if action is ResumeAction.approve and call.execution == "external":
            raise ResumeDecisionMismatch(
                f"call {call_id!r} of external tool {call.tool_name!r} cannot be approved: external "
                "tools never run inside zigai; pass a 'result' (or 'deny') decision",
                unexpected=(call_id,),
            )
        if action is ResumeAction.result and call.execution != "external":
            raise ResumeDecisionMismatch(
                f"call {call_id!r} of {call.tool_name!r} needs approval; pass 'approve' or 'deny', "
                "not an external 'result'",
                unexpected=(call_id,),
            )
    return by_id
