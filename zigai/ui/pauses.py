"""Paused runs a browser may answer: server-minted interrupt ids bound to a paused state.

A browser never sends a paused state or a tool call id the server acts on.  When a run
pauses, :class:`PauseStore` keeps its versioned ``state_json`` and deferred calls under a
random pause id and hands out one opaque interrupt id per call (``<pause>:<position>``).
A reply names interrupt ids only; :meth:`PauseStore.decisions` rebuilds the
:class:`~zigai.agent.ResumeDecision` values from the *stored* calls, so a reply can
approve, deny or answer exactly the calls that are waiting — nothing else — and the
resume goes through ``Agent.resume_run_stream`` like any other (validation included).

Invariants: the store is bounded (oldest pause evicted first); a pause is taken at most
once (:meth:`take` claims and removes it atomically), so one approval cannot run a tool
twice, even when two requests (or two worker processes sharing a store) race.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from zigai.agent.deferred import DeferredCall, ResumeDecision
from zigai.errors import UiError
from zigai.messages import InvalidMessagePart
from zigai.ui.events import Interrupt

__all__ = ["ApprovalReply", "PauseStore", "StoredPause", "UnknownInterrupt", "InvalidApprovalReply"]


class UnknownInterrupt(UiError):
    """A reply names an interrupt id this server did not issue, or one already answered."""


class InvalidApprovalReply(UiError):
    """A reply does not answer every waiting call of one pause exactly once, or does not fit."""


@dataclass(frozen=True, slots=True)
class ApprovalReply:
    """A browser's answer to one interrupt.

    ``decision`` is ``approve`` / ``deny`` (for ``tool_approval``) or ``result`` (for
    ``external_result``, with ``result`` the JSON value); ``reason`` goes to the model
    with a denial.
    """

    interrupt_id: str
    decision: Literal["approve", "deny", "result"]
    reason: str | None = None
    result: Any = None


@dataclass(frozen=True, slots=True)
class StoredPause:
    pause_id: str
    thread_id: str
    state_json: str
    calls: tuple[DeferredCall, ...]
    interrupts: tuple[Interrupt, ...]


def _interrupts(pause_id: str, calls: Sequence[DeferredCall]) -> tuple[Interrupt, ...]:
    found = []
    for position, call in enumerate(calls):
        reason: Literal["tool_approval", "external_result"] = (
            "external_result" if call.execution == "external" else "tool_approval"
        )
        try:
            args: Any = call.args_as_dict()
        except InvalidMessagePart:
            # The model's arguments are not a JSON object: show their text as it is (the
            # agent validates them again on resume, so approving cannot bypass validation).
            args = call.args
        found.append(Interrupt(f"{pause_id}:{position}", call.tool_call_id, call.tool_name,
                               args, reason))
    return tuple(found)


class PauseStore:
    """A bounded, thread-safe map of paused runs awaiting browser decisions (in memory).

    The storage primitives (``_save``, ``_load``, ``_newest_first``, ``_delete``, ``__len__``)
    are the whole contract a shared store replaces (:class:`zigai.ui.sqlite.SqlitePauseStore`);
    the logic — interrupt ids, reply checks, decisions — stays here.
    """

    def __init__(self, max_pauses: int = 256) -> None:
        if isinstance(max_pauses, bool) or not isinstance(max_pauses, int) or max_pauses < 1:
            raise ValueError("max_pauses must be a positive int")
        self.max_pauses = max_pauses
        self._lock = threading.Lock()
        self._pauses: OrderedDict[str, StoredPause] = OrderedDict()

    # -- storage primitives --------------------------------------------------------------------

    def _save(self, stored: StoredPause) -> None:
        with self._lock:
            self._pauses[stored.pause_id] = stored
            while len(self._pauses) > self.max_pauses:
                self._pauses.popitem(last=False)

    def _load(self, pause_id: str) -> StoredPause | None:
        with self._lock:
            return self._pauses.get(pause_id)

    def _newest_first(self, thread_id: str) -> list[StoredPause]:
        with self._lock:
            return [p for p in reversed(self._pauses.values()) if p.thread_id == thread_id]

    def _delete(self, pause_id: str) -> bool:
        with self._lock:
            return self._pauses.pop(pause_id, None) is not None

    def __len__(self) -> int:
        with self._lock:
            return len(self._pauses)

    # -- the contract ----------------------------------------------------------------------------

    def put(self, thread_id: str, state_json: str, calls: Sequence[DeferredCall]) -> StoredPause:
        """Keep a pause; returns it with its interrupts (oldest pause evicted at the bound)."""
        pause_id = secrets.token_hex(12)
        stored = StoredPause(pause_id, thread_id, state_json, tuple(calls),
                             _interrupts(pause_id, calls))
        self._save(stored)
        return stored

    def find(self, replies: Sequence[ApprovalReply]) -> StoredPause:
        """The one stored pause every reply belongs to (not removed)."""
        if not replies:
            raise InvalidApprovalReply("a resume needs at least one interrupt reply")
        pause_ids = {reply.interrupt_id.partition(":")[0] for reply in replies}
        if len(pause_ids) != 1:
            raise InvalidApprovalReply("the replies answer interrupts of more than one paused run")
        stored = self._load(pause_ids.pop())
        known = {i.interrupt_id for i in stored.interrupts} if stored else set()
        unknown = [r.interrupt_id for r in replies if r.interrupt_id not in known]
        if stored is None or unknown:
            raise UnknownInterrupt(
                f"interrupt {(unknown or [replies[0].interrupt_id])[0]!r} is unknown or already "
                "answered; start a new run"
            )
        return stored

    def interrupt_for_call(self, thread_id: str, call_id: str) -> str | None:
        """The interrupt id of the newest pause of ``thread_id`` waiting on ``call_id``."""
        for stored in self._newest_first(thread_id):
            for interrupt in stored.interrupts:
                if interrupt.call_id == call_id:
                    return interrupt.interrupt_id
        return None

    def take(self, pause_id: str) -> bool:
        """Claim a pause for its resume (removing it); False when another request claimed it
        first — so a pause is answered at most once, also across worker processes."""
        return self._delete(pause_id)

    @staticmethod
    def decisions(stored: StoredPause, replies: Sequence[ApprovalReply]) -> tuple[ResumeDecision, ...]:
        """The resume decisions ``replies`` make for the stored calls (one per call)."""
        by_id: dict[str, ApprovalReply] = {}
        for given in replies:
            if given.interrupt_id in by_id:
                raise InvalidApprovalReply(f"interrupt {given.interrupt_id!r} is answered twice")
            by_id[given.interrupt_id] = given
        decisions = []
        for interrupt in stored.interrupts:
            reply = by_id.get(interrupt.interrupt_id)
            if reply is None:
                raise InvalidApprovalReply(
                    f"interrupt {interrupt.interrupt_id!r} ({interrupt.tool_name}) has no reply; "
                    "answer every waiting call"
                )
            call_id = interrupt.call_id
            if reply.decision == "deny":
                decisions.append(ResumeDecision.deny(call_id, reply.reason))
            elif interrupt.reason == "tool_approval":
                if reply.decision != "approve":
                    raise InvalidApprovalReply(
                        f"{interrupt.tool_name!r} needs approval; answer approve or deny"
                    )
                decisions.append(ResumeDecision.approve(call_id))
            else:
                if reply.decision != "result":
                    raise InvalidApprovalReply(
                        f"{interrupt.tool_name!r} runs outside zigai; answer with its result or deny"
                    )
                decisions.append(ResumeDecision.result(call_id, reply.result))
        return tuple(decisions)
