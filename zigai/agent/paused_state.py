"""The paused-state document: the versioned, digested JSON a paused run persists.

A pause (:class:`~zigai.agent.deferred.PausedRun`) owns one of these documents as
``state_json``; ``resume_run`` reads it back.  This module holds its values
(:class:`DeferredCall`, :class:`ApprovalSource`, :class:`PausedState`), its errors and
its two directions, :func:`encode_paused_state` and :func:`decode_paused_state`::

    {"version": 1, "kind": "zigai.paused_run", "digest": "sha256:<hex>", "state": {
        "history": [<history v2 message>, ...],  "new_start": N,
        "instructions": [...],  "usage": {...},  "output_retries": N,
        "tool_retries": {"tool": N},  "pending_calls": [<DeferredCall>, ...],
        "pending_messages": [<history v2 request message>, ...],
        "settled_calls": [<SettledCall>, ...]}}

* ``history`` is the canonical history up to and including the pausing response (the
  ``zigai.history`` version-2 message encoding); ``instructions`` are the resolved
  instructions, reused verbatim on resume so their meaning cannot change mid-run;
* ``pending_calls`` list each deferred call with its arguments, its execution
  (``requires_approval`` / ``external``) and its approval source (``static`` from
  ``Tool.execution``, ``dynamic`` from ``Agent.tool_approval`` or a policy's approval
  stage).  When the agent's tool policies have an arguments stage, a call of a function
  tool is resolved *before* it waits: ``args`` holds the validated, transformed arguments
  and ``"resolved": true`` marks them, so the approver sees exactly what a resume runs and
  the stage never runs again for that call.  Otherwise ``args`` is the model's own text;
* ``pending_messages`` are PendingMessageQueue batches accepted before the pause;
* ``settled_calls`` (optional, written only when not empty, so a document without it is
  still version 1 and reads as before) keep the policy verdict of every other call of the
  pausing response whose stages already ran at the pause: ``{"tool_call_id", "tool_name",
  "verdict": "args" | "retry" | "refused", "value"}`` — the resolved arguments (canonical
  JSON object text) of a call that needs no approval, or the retry message / refusal
  reason a stage raised.  A resume applies them instead of running the arguments and
  approval stages again, so every call's stages run once across the pause.

The digest is SHA-256 over the canonical ``state`` text.  It detects truncation and
accidental edits only: anyone can recompute it, so it is *not* authentication.  With an
application key (``Agent.state_key``, or ``key=`` here) the envelope also carries
``"mac": "hmac-sha256:<hex>"`` over the same text, and decoding with that key refuses a
document whose MAC is missing or wrong (:class:`PausedStateIntegrityError`).  Whatever
the document says, a resume derives each call's execution from the *current* tool
definitions and demands a decision for every approval-gated or external call; only a
dynamic-approval verdict (``settled_calls``) is taken from the document, which is why a
state that crosses a trust boundary needs the key.

Parsing is all-or-nothing: the whole document is bounded by the paused-state JSON
profile, decoded and cross-checked (every pending call is a call of the last response)
into new values before anything is returned, so a failure leaves nothing half-applied.
Encoding is deterministic: the same state always yields the same text.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from zigai.errors import AgentError, JsonError, MessageError
from zigai.messages import Message, RequestMessage, ResponseMessage, ToolCallPart
from zigai.usage import RunUsage, UsageDetails

__all__ = [
    "PAUSED_STATE_VERSION",
    "ApprovalSource",
    "DeferredCall",
    "PausedState",
    "SettledCall",
    "encode_paused_state",
    "decode_paused_state",
    "deferred_args",
    "InvalidPausedState",
    "PausedStateIntegrityError",
    "PausedStateTooLarge",
    "UnsupportedPausedStateVersion",
]

PAUSED_STATE_VERSION = 1
_STATE_KIND = "zigai.paused_run"


# -- errors ------------------------------------------------------------------------------------


class InvalidPausedState(AgentError):
    """A paused-state document is malformed, truncated, tampered or inconsistent."""


class PausedStateIntegrityError(InvalidPausedState):
    """A paused state's keyed MAC is missing or does not match the application key."""


class PausedStateTooLarge(InvalidPausedState):
    """A paused-state document exceeds the paused-state JSON limits."""


class UnsupportedPausedStateVersion(InvalidPausedState):
    """A paused-state document has a version this release does not read."""

    def __init__(self, message: str, *, version: object = None) -> None:
        super().__init__(message)
        self.version = version


# -- values ------------------------------------------------------------------------------------


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
    #: True when ``args`` went through the tool's schema and the policies' arguments stage
    #: before the pause: a resume runs them as they are (schema-checked again), without
    #: that stage.  False: ``args`` is the model's own argument text.
    resolved: bool = False

    def args_as_dict(self) -> dict[str, Any]:
        """Decode ``args`` with the tool-payload JSON profile; empty text means ``{}``.

        The arguments are the model's, so they are untrusted: malformed JSON, NaN, a
        non-object or anything over the tool-payload limits raises
        :class:`~zigai.messages.InvalidMessagePart` (chained to the named JSON error).
        """
        if not self.args.strip():
            return {}
        from zigai import json as zjson
        from zigai.messages import InvalidMessagePart

        try:
            value = zjson.parse(self.args, zjson.defaults.tool_payload)
        except JsonError as exc:
            raise InvalidMessagePart(f"DeferredCall.args is not valid tool-payload JSON: {exc}") from exc
        if not isinstance(value, dict):
            raise InvalidMessagePart("DeferredCall.args must encode a JSON object")
        return value


@dataclass(frozen=True, slots=True)
class SettledCall:
    """A call of the pausing response that does not wait, with the verdict its stages gave.

    ``verdict`` ``"args"``: ``value`` is the resolved arguments (JSON object text) the call
    runs with, and no approval was required; ``"retry"`` / ``"refused"``: ``value`` is the
    retry message or refusal reason the arguments or approval stage raised.
    """

    tool_call_id: str
    tool_name: str
    verdict: Literal["args", "retry", "refused"]
    value: str


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
    settled: tuple[SettledCall, ...] = ()


# -- paused state JSON -------------------------------------------------------------------------


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _usage_json(usage: RunUsage) -> dict[str, Any]:
    fields = {
        name: getattr(usage, name)
        for name in (
            "requests", "tool_calls", "input_tokens", "output_tokens", "cache_write_tokens",
            "cache_read_tokens", "input_audio_tokens", "output_audio_tokens", "reasoning_tokens",
            *_USAGE_TIMING_KEYS,
        )
    }
    fields["details"] = dict(usage.details)
    return fields


_MAC_PREFIX = "hmac-sha256:"


def check_key(key: object, what: str) -> bytes | None:
    """``key`` as HMAC key bytes (None: unkeyed); a short or non-bytes key raises TypeError."""
    if key is None:
        return None
    if not isinstance(key, (bytes, bytearray)) or len(key) < 16:
        raise TypeError(f"{what} must be None or at least 16 bytes of key material")
    return bytes(key)


def keyed_mac(key: bytes, domain: str, text: str) -> str:
    """``hmac-sha256:<hex>`` of ``text`` under ``key``, separated by document ``domain``."""
    message = domain.encode("ascii") + b"\x00" + text.encode("utf-8")
    return _MAC_PREFIX + hmac.new(key, message, hashlib.sha256).hexdigest()


def mac_matches(key: bytes, domain: str, text: str, mac: object) -> bool:
    return isinstance(mac, str) and hmac.compare_digest(keyed_mac(key, domain, text), mac)


def encode_paused_state(state: PausedState, *, key: bytes | None = None) -> str:
    """The versioned paused-state document of ``state`` (deterministic text).

    With ``key`` the envelope carries an HMAC-SHA256 of the state (see the module docs).
    """
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
                **({"resolved": True} if call.resolved else {}),
            }
            for call in state.calls
        ],
        "pending_messages": [encode_message(message) for message in state.pending_messages],
    }
    if state.settled:
        body["settled_calls"] = [
            {"tool_call_id": s.tool_call_id, "tool_name": s.tool_name, "verdict": s.verdict, "value": s.value}
            for s in state.settled
        ]
    text = _canonical(body)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    key = check_key(key, "the paused-state key")
    mac = "" if key is None else f'"mac":"{keyed_mac(key, _STATE_KIND, text)}",'
    document = (
        f'{{"version":{PAUSED_STATE_VERSION},"kind":"{_STATE_KIND}",'
        f'"digest":"sha256:{digest}",{mac}"state":{text}}}'
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


def _obj(
    value: Any, path: str, keys: frozenset[str], optional: frozenset[str] = frozenset()
) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(f"{path} must be an object")
    missing = keys - value.keys()
    extra = value.keys() - keys - optional
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
_STATE_OPTIONAL = frozenset({"settled_calls"})
_SETTLED_KEYS = frozenset({"tool_call_id", "tool_name", "verdict", "value"})
_VERDICTS = ("args", "retry", "refused")
_ENVELOPE_KEYS = frozenset({"version", "kind", "digest", "state"})
_CALL_KEYS = frozenset({"tool_call_id", "tool_name", "args", "execution", "approval"})
_CALL_OPTIONAL = frozenset({"resolved"})
#: Usage timing written since attempts/provider time/run time exist; a document written
#: before them omits the keys and reads as zero.
_USAGE_TIMING_KEYS = ("attempts", "provider_time_ns", "run_time_ns")
_USAGE_KEYS = frozenset({
    "requests", "tool_calls", "input_tokens", "output_tokens", "cache_write_tokens",
    "cache_read_tokens", "input_audio_tokens", "output_audio_tokens", "reasoning_tokens", "details",
})


def decode_paused_state(data: str | bytes, *, key: bytes | None = None) -> PausedState:
    """Parse and cross-check a paused-state document; raise a named error, return nothing partial.

    With ``key`` the document must carry the matching MAC (:class:`PausedStateIntegrityError`
    otherwise).  Without one a MAC present is not checked: only the digest is.
    """
    key = check_key(key, "the paused-state key")
    from zigai import json as zjson
    from zigai.errors import HistoryError
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
    envelope_keys = _ENVELOPE_KEYS | ({"mac"} if "mac" in document else set())
    envelope = _obj(document, "document", envelope_keys)
    if envelope["kind"] != _STATE_KIND:
        raise _fail(f"kind must be {_STATE_KIND!r}")
    body = _obj(envelope["state"], "state", _STATE_KEYS, _STATE_OPTIONAL)
    text = _canonical(body)
    if key is not None and not mac_matches(key, _STATE_KIND, text, envelope.get("mac")):
        raise PausedStateIntegrityError(
            "the paused state's MAC is missing or does not match the application key: it was "
            "not produced by this application (or with another key); refusing to resume it"
        )
    digest = "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
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
        raw_usage = _obj(body["usage"], "state.usage", _USAGE_KEYS, frozenset(_USAGE_TIMING_KEYS))
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
        entry = _obj(raw, f"state.pending_calls[{i}]", _CALL_KEYS, _CALL_OPTIONAL)
        execution = entry["execution"]
        if execution not in ("requires_approval", "external"):
            raise _fail(f"state.pending_calls[{i}].execution {execution!r} is not deferred")
        try:
            approval = ApprovalSource(entry["approval"])
        except ValueError:
            raise _fail(f"state.pending_calls[{i}].approval is unknown") from None
        resolved = entry.get("resolved", False)
        if "resolved" in entry and resolved is not True:
            raise _fail(f"state.pending_calls[{i}].resolved must be true when present")
        calls.append(DeferredCall(
            _str(entry["tool_call_id"], "tool_call_id"), _str(entry["tool_name"], "tool_name"),
            _str(entry["args"], "args"), execution, approval, resolved,
        ))
    state = PausedState(
        messages, _int(body["new_start"], "state.new_start"), instructions, usage,
        _int(body["output_retries"], "state.output_retries"), tool_retries, tuple(calls),
        tuple(pending_requests), _settled(body),
    )
    _cross_check(state)
    return state


def _settled(body: dict[str, Any]) -> tuple[SettledCall, ...]:
    if "settled_calls" not in body:
        return ()
    settled = []
    for i, raw in enumerate(_list(body["settled_calls"], "state.settled_calls")):
        path = f"state.settled_calls[{i}]"
        entry = _obj(raw, path, _SETTLED_KEYS)
        verdict = entry["verdict"]
        if verdict not in _VERDICTS:
            raise _fail(f"{path}.verdict {verdict!r} is not one of {', '.join(_VERDICTS)}")
        settled.append(SettledCall(
            _str(entry["tool_call_id"], f"{path}.tool_call_id"), _str(entry["tool_name"], f"{path}.tool_name"),
            verdict, _str(entry["value"], f"{path}.value"),
        ))
    if not settled:
        raise _fail("state.settled_calls is present but empty (omit it instead)")
    return tuple(settled)


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
        if call.resolved:
            try:
                call.args_as_dict()
            except MessageError as exc:
                raise _fail(f"pending call {call.tool_call_id!r}: {exc}") from None
        elif _args_text(part) != call.args:
            raise _fail(f"pending call {call.tool_call_id!r} has arguments that differ from its call")
    # A waiting call is also settled only by a retry or refusal its arguments stage raised
    # (it then keeps the model's text); resolved arguments of a waiting call live in its entry.
    waiting = {call.tool_call_id: call for call in state.calls}
    seen = set()
    for settled in state.settled:
        part = calls.get(settled.tool_call_id)
        if part is None or part.tool_name != settled.tool_name:
            raise _fail(f"settled call {settled.tool_call_id!r} is not a call of the last response")
        pending = waiting.get(settled.tool_call_id)
        if settled.tool_call_id in seen or (
            pending is not None and (pending.resolved or settled.verdict == "args")
        ):
            raise _fail(f"settled call {settled.tool_call_id!r} appears twice or contradicts its pending call")
        seen.add(settled.tool_call_id)
        if settled.verdict == "args":
            try:
                DeferredCall(settled.tool_call_id, settled.tool_name, settled.value, "requires_approval").args_as_dict()
            except MessageError as exc:
                raise _fail(f"settled call {settled.tool_call_id!r}: {exc}") from None


def new_start_invalid(state: PausedState) -> bool:
    return state.new_start > len(state.messages)


def _args_text(part: ToolCallPart) -> str:
    args = part.args
    if isinstance(args, str):
        return args
    return _canonical(args)


def deferred_args(part: ToolCallPart) -> str:
    """The model's argument text persisted for a deferred call that was not resolved."""
    return _args_text(part)


def resolved_args(arguments: Mapping[str, Any]) -> str:
    """The canonical text persisted for arguments resolved before the pause."""
    return _canonical(dict(arguments))
