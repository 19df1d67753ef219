"""Deferred tool execution: resume decisions and run outcomes.

``Agent.run_until_pause`` returns a :class:`RunOutcome` — ``complete`` (an owned
``Result``) or ``paused`` (a :class:`PausedRun`) — *before* any call of the pausing model
response executes.  The pause owns a versioned JSON document (``state_json``), described,
encoded and decoded in :mod:`zigai.agent.paused_state`; this module re-exports those
names, so ``zigai.agent.deferred`` stays the one import for pause/resume.

Resume decisions have their own versioned wrapper (``{"version": 1, "decisions": [...]}``,
bounded by the resume-decisions profile; with an application key it also carries
``"mac": "hmac-sha256:<hex>"`` and parsing with the key refuses a missing or wrong MAC):
exactly one decision per pending call —
``approve`` (run an approval-gated tool), ``deny`` with a reason (an error result for the
model) or ``result`` with external content (appended without invoking application code).
:func:`match_decisions` enforces "exactly one fitting decision per deferred call".
"""

from __future__ import annotations

import enum
import hmac
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from zigai._owner import Owner
from zigai.agent.errors import ResultClosed
from zigai.agent.paused_state import (
    PAUSED_STATE_VERSION,
    ApprovalSource,
    DeferredCall,
    InvalidPausedState,
    PausedState,
    PausedStateIntegrityError,
    PausedStateTooLarge,
    UnsupportedPausedStateVersion,
    _canonical,
    check_key,
    decode_paused_state,
    encode_paused_state,
    keyed_mac,
    mac_matches,
)
from zigai.agent.paused_state import deferred_args as deferred_args
from zigai.agent.paused_state import new_start_invalid as new_start_invalid
from zigai.errors import AgentError, JsonError
from zigai.messages import Message
from zigai.usage import RunUsage

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
    "PausedStateIntegrityError",
    "PausedStateTooLarge",
    "UnsupportedPausedStateVersion",
    "InvalidResumeDecisions",
    "ResumeDecisionsForAnotherPause",
    "ResumeDecisionsIntegrityError",
    "ResumeDecisionsTooLarge",
    "UnsupportedResumeDecisionsVersion",
    "ResumeDecisionMismatch",
]

RESUME_DECISIONS_VERSION = 1


# -- errors ------------------------------------------------------------------------------------


class InvalidResumeDecisions(AgentError):
    """Resume decisions are malformed (JSON, shape, unknown action)."""


class ResumeDecisionsIntegrityError(InvalidResumeDecisions):
    """A resume-decisions document's keyed MAC is missing or does not match the key."""


class ResumeDecisionsForAnotherPause(ResumeDecisionsIntegrityError):
    """Resume decisions were made (and signed) for a different pause than the one resumed."""


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


_DENIED_TEXT = "The tool call was denied."

# A decision's content sits three containers deep in its document
# ({"decisions": [{"content": ...}]}), so it may nest three levels less than the profile.
_WRAPPER_DEPTH = 3


def _content_limits() -> Any:
    from zigai import json as zjson

    profile = zjson.defaults.resume_decisions
    return replace(profile, max_depth=profile.max_depth - _WRAPPER_DEPTH)


def _plain_content(content: Any) -> Any:
    """A plain-JSON copy of external result content, bounded like its decisions document."""
    from zigai import json as zjson
    from zigai.json import JsonLimitExceeded

    try:
        return zjson.parse(zjson.dumps(content), _content_limits())
    except JsonLimitExceeded as exc:
        raise ResumeDecisionsTooLarge(
            f"result content exceeds the resume-decisions limits: {exc}"
        ) from None
    except JsonError as exc:
        raise InvalidResumeDecisions(f"result content is not plain JSON: {exc}") from None


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
            object.__setattr__(self, "content", _plain_content(self.content))

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

    __slots__ = ("_decisions", "_pause")

    _closed_error = ResultClosed

    def __init__(self, decisions: tuple[ResumeDecision, ...], pause: str | None = None) -> None:
        self._decisions = decisions
        self._pause = pause
        super().__init__()

    @property
    def pause(self) -> str | None:
        """The digest of the pause these decisions are bound to (``"sha256:..."``), or None."""
        self._check()
        return self._pause

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
    def state_digest(self) -> str:
        """The pause's identity: the ``"sha256:..."`` digest of its state (see ``pause=``)."""
        self._check()
        return pause_digest(self._state_json)

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


# -- resume decisions --------------------------------------------------------------------------


def _decision_json(decision: ResumeDecision) -> dict[str, Any]:
    item: dict[str, Any] = {"tool_call_id": decision.tool_call_id, "action": decision.action.value}
    if decision.action is ResumeAction.deny and decision.reason is not None:
        item["reason"] = decision.reason
    if decision.action is ResumeAction.result:
        item["content"] = decision.content
    return item


_DECISIONS_KIND = "zigai.resume_decisions"


def pause_digest(pause: PausedRun | str | bytes) -> str:
    """The identity (``"sha256:<hex>"`` state digest) of a pause or of its state document.

    Read from the document's envelope (bounded parse, nothing else checked): resuming
    verifies that digest against the state, so decisions bound to it are bound to that state.
    """
    if isinstance(pause, PausedRun):
        return pause.state_digest
    from zigai import json as zjson
    from zigai.json import JsonLimitExceeded

    if not isinstance(pause, (str, bytes)):
        raise InvalidResumeDecisions(
            f"pause= takes a PausedRun or its state_json document, not {type(pause).__name__}"
        )
    try:
        document = zjson.parse(pause, zjson.defaults.paused_state)
    except JsonLimitExceeded as exc:
        raise PausedStateTooLarge(f"the paused state exceeds the paused-state JSON limits: {exc}") from exc
    except JsonError as exc:
        raise InvalidPausedState(f"invalid paused state: not one JSON document ({exc})") from exc
    digest = document.get("digest") if isinstance(document, dict) else None
    if not isinstance(digest, str) or not digest.startswith("sha256:"):
        raise InvalidPausedState("invalid paused state: the document has no state digest")
    return digest


def stringify_resume_decisions(
    decisions: Iterable[ResumeDecision], *, key: bytes | None = None,
    pause: PausedRun | str | bytes | None = None,
) -> str:
    """The versioned resume-decisions document (``{"version":1,"decisions":[...]}``).

    ``pause`` (the :class:`PausedRun` or its ``state_json``) binds the decisions to that one
    pause: the document carries its state digest, and resuming another pause with it raises
    :class:`ResumeDecisionsForAnotherPause`.  With ``key`` (at least 16 bytes) the document
    carries an HMAC-SHA256 ``mac`` over the decisions, their call ids and that binding; a
    signed document must be bound, so a decision signed once cannot be replayed elsewhere.
    """
    from zigai import json as zjson

    key = check_key(key, "the resume-decisions key")
    if key is not None and pause is None:
        raise InvalidResumeDecisions(
            "signed resume decisions must be bound to the pause they decide: pass pause= "
            "(the PausedRun or its state_json)"
        )
    items = []
    for decision in decisions:
        if not isinstance(decision, ResumeDecision):
            raise InvalidResumeDecisions(f"expected ResumeDecision values, got {type(decision).__name__}")
        items.append(_decision_json(decision))
    body: dict[str, Any] = {"version": RESUME_DECISIONS_VERSION, "decisions": items}
    if pause is not None:
        body["pause"] = pause_digest(pause)
    document = _canonical(body)
    if key is not None:
        mac = keyed_mac(key, _DECISIONS_KIND, document)
        document = document[:-1] + f',"mac":"{mac}"}}'
    try:
        zjson.validate(document, zjson.defaults.resume_decisions)
    except JsonError as exc:
        raise ResumeDecisionsTooLarge(f"the decisions exceed the resume-decisions limits: {exc}") from exc
    return document


def parse_resume_decisions(
    data: str | bytes, *, key: bytes | None = None, pause: PausedRun | str | bytes | None = None,
) -> OwnedResumeDecisions:
    """Parse a resume-decisions document bounded by the resume-decisions JSON profile.

    With ``key`` the document must carry the matching MAC and a pause binding
    (:class:`ResumeDecisionsIntegrityError`); without one a MAC present is not checked.
    With ``pause`` (a :class:`PausedRun`, its ``state_json`` or its ``state_digest``) a
    document bound to another pause raises :class:`ResumeDecisionsForAnotherPause`;
    ``resume_run_json`` always passes the pause it resumes.
    """
    from zigai import json as zjson
    from zigai.json import JsonLimitExceeded

    key = check_key(key, "the resume-decisions key")
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
    mac = document.pop("mac", None)
    bound = document.get("pause")
    if (
        set(document) - {"pause"} != {"version", "decisions"}
        or not isinstance(document["decisions"], list)
        or (bound is not None and not isinstance(bound, str))
    ):
        raise InvalidResumeDecisions(
            'resume decisions need exactly "version", a "decisions" array and an optional '
            '"pause" (string) and "mac"'
        )
    if key is not None and not mac_matches(key, _DECISIONS_KIND, _canonical(document), mac):
        raise ResumeDecisionsIntegrityError(
            "the resume decisions' MAC is missing or does not match the application key; "
            "refusing decisions this application did not sign"
        )
    if key is not None and bound is None:
        raise ResumeDecisionsIntegrityError(
            "the signed resume decisions are not bound to a pause, so they could be replayed "
            "against any pause; sign them with stringify_resume_decisions(..., pause=...)"
        )
    if pause is not None and bound is not None:
        expected = pause if isinstance(pause, str) and pause.startswith("sha256:") else pause_digest(pause)
        if not hmac.compare_digest(bound, expected):
            raise ResumeDecisionsForAnotherPause(
                f"these resume decisions were made for pause {bound[:19]}..., not for the pause "
                f"being resumed ({expected[:19]}...); decide this pause's calls afresh"
            )
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
    return OwnedResumeDecisions(tuple(decisions), bound)


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
