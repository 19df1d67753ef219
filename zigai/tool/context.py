"""What a tool sees while it runs (``ToolRunContext``) and what it may return.

``ToolRunContext`` is built by the agent for each call and copied by the
scheduler when the call starts, adding the call's own deadline and a per-call
cancellation token.  Python cannot stop a thread: when a call loses the race
against its timeout, the run deadline or cancellation, the scheduler sets that
token and discards whatever the call produces later.  Tools that block should
poll :attr:`ToolRunContext.cancelled` or wait through :meth:`ToolRunContext.sleep`.

``ToolReturn`` (reflected tools) and ``ToolOutput`` (manual tools, and the
encoded form of every result) pair a value with follow-up request messages.

Invariants: follow-up messages are ``RequestMessage`` values made only of
``UserPromptPart`` parts, checked at construction (:class:`InvalidFollowUpMessage`);
both return types are immutable and hold tuples.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from zigai.control import CancellationToken, Cancelled, RunControl, RunTimedOut
from zigai.messages import Message, RequestMessage, UserPromptPart
from zigai.security import UrlPolicy
from zigai.tool.errors import DependencyTypeMismatch, InvalidFollowUpMessage, ToolTimedOut
from zigai.usage import RunUsage

__all__ = [
    "RunContext",
    "ToolRunContext",
    "ToolReturn",
    "ToolOutput",
    "check_follow_ups",
    "follow_up_bytes",
]

T = TypeVar("T")
if TYPE_CHECKING:  # a default (PEP 696) so an unsubscripted use means "deps of any type"
    from typing_extensions import TypeVar as _DefaultedTypeVar

    DepsT = _DefaultedTypeVar("DepsT", default=Any)
else:
    DepsT = TypeVar("DepsT")

_SLEEP_SLICE_S = 0.05


@dataclass(frozen=True, slots=True)
class RunContext(Generic[DepsT]):
    """What instruction functions see: dependencies, usage so far, history and run control.

    It is also the annotation PydanticAI users write on a tool's first parameter
    (``ctx: RunContext[MyDeps]``): such a tool is given the call's
    :class:`ToolRunContext`, which carries every field here plus the call's own deadline
    and token.  ``tool_name``, ``tool_call_id`` and ``retry`` are empty outside a tool call.
    """

    deps: DepsT
    usage: RunUsage
    request_count: int
    messages: tuple[Message, ...]
    control: RunControl
    capabilities: Any = None  # the run's CapabilitySnapshot when capabilities are configured
    tool_name: str = ""
    tool_call_id: str = ""
    retry: int = 0


@dataclass(slots=True)
class ToolRunContext(Generic[DepsT]):
    """Per-call state: dependencies, usage so far, history, run control and call identity.

    ``call_deadline`` and ``call_token`` belong to this one call (set by the
    scheduler); ``control`` is the run's shared deadline and token.  Annotate a tool's
    context as ``ToolRunContext[MyDeps]`` and type checkers know ``ctx.deps`` is a
    ``MyDeps`` (at run time the agent's ``deps_type`` check enforces it).  ``url_policy``
    is the agent's ``url_policy`` (None when it sets none): a tool that opens URLs checks
    them against it as well as against its own policy, see
    :func:`zigai.security.stricter_policy`.
    """

    deps: DepsT = None  # type: ignore[assignment]  # None when the run passes no deps
    usage: RunUsage = field(default_factory=RunUsage)
    request_count: int = 0
    messages: tuple[Message, ...] = ()
    control: RunControl = field(default_factory=RunControl)
    tool_name: str = ""
    tool_call_id: str = ""
    retry: int = 0
    call_deadline: float | None = None
    call_token: CancellationToken = field(default_factory=CancellationToken)
    capabilities: Any = None  # the run's CapabilitySnapshot when capabilities are configured
    url_policy: UrlPolicy | None = None  # the agent's url_policy: tools that open URLs apply it too

    @property
    def deadline(self) -> float | None:
        """The call's absolute monotonic deadline: its own timeout or the run's, whichever is first."""
        candidates = [d for d in (self.call_deadline, self.control.deadline) if d is not None]
        return min(candidates) if candidates else None

    @property
    def cancelled(self) -> bool:
        """True once the run is cancelled or this call has lost its race (timeout, fatal sibling)."""
        return self.call_token.cancelled or self.control.cancelled

    def remaining(self) -> float | None:
        """Seconds left before :attr:`deadline` (never negative); None when unbounded."""
        deadline = self.deadline
        return None if deadline is None else max(0.0, deadline - time.monotonic())

    def check(self) -> None:
        """Raise Cancelled, ToolTimedOut or RunTimedOut when this call should stop now."""
        if self.control.cancelled:
            raise Cancelled(self.control.token.reason or "run cancelled")
        now = time.monotonic()
        if self.call_deadline is not None and now >= self.call_deadline:
            raise ToolTimedOut(f"tool {self.tool_name!r} timed out")
        if self.call_token.cancelled:
            raise Cancelled(self.call_token.reason or "tool call cancelled")
        if self.control.deadline is not None and now >= self.control.deadline:
            raise RunTimedOut("run deadline exceeded")

    def sleep(self, seconds: float) -> None:
        """Wait cooperatively; raise as :meth:`check` does if the call must stop meanwhile."""
        if seconds < 0:
            raise ValueError("seconds must be >= 0")
        end = time.monotonic() + seconds
        while True:
            self.check()
            now = time.monotonic()
            if now >= end:
                return
            wait = min(end - now, _SLEEP_SLICE_S)
            left = self.remaining()
            if left is not None:
                wait = min(wait, left)
            self.call_token.wait(wait)
            if left is not None and left <= wait:
                self.check()

    def dependency(self, expected_type: type[T]) -> T:
        """Return ``deps`` as ``expected_type``; raise DependencyTypeMismatch otherwise."""
        if not isinstance(self.deps, expected_type):
            raise DependencyTypeMismatch(
                f"tool {self.tool_name!r} expected dependencies of type "
                f"{expected_type.__qualname__}, got {type(self.deps).__qualname__}"
            )
        return self.deps

    def for_call(self, *, call_deadline: float | None, call_token: CancellationToken) -> ToolRunContext:
        """A copy bound to one started call (used by the scheduler; the original is not changed)."""
        return dataclasses.replace(self, call_deadline=call_deadline, call_token=call_token)


def _checked_follow_ups(messages: object, owner: str) -> tuple[RequestMessage, ...]:
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise InvalidFollowUpMessage(f"{owner}.follow_up_messages must be a sequence of RequestMessage")
    checked = tuple(messages)
    for index, message in enumerate(checked):
        if not isinstance(message, RequestMessage):
            raise InvalidFollowUpMessage(
                f"{owner}.follow_up_messages[{index}] must be a RequestMessage, "
                f"got {type(message).__name__}"
            )
        for part_index, part in enumerate(message.parts):
            if not isinstance(part, UserPromptPart):
                raise InvalidFollowUpMessage(
                    f"{owner}.follow_up_messages[{index}].parts[{part_index}] is a "
                    f"{type(part).__name__}; follow-ups may contain only user prompts"
                )
    return checked


@dataclass(frozen=True, slots=True)
class ToolReturn(Generic[T]):
    """A typed tool value plus user-prompt requests to add before the next model step."""

    value: T
    follow_up_messages: tuple[RequestMessage, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "follow_up_messages", _checked_follow_ups(self.follow_up_messages, "ToolReturn")
        )


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """An encoded tool result: a JSON value and its follow-up requests."""

    content: Any = None
    follow_up_messages: tuple[RequestMessage, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "follow_up_messages", _checked_follow_ups(self.follow_up_messages, "ToolOutput")
        )


_SKIPPED_FIELDS = frozenset({"kind", "part_kind", "timestamp"})


def _data_bytes(value: object) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return len(value)
    if isinstance(value, (tuple, list)):
        return sum(_data_bytes(item) for item in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sum(
            _data_bytes(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if f.name not in _SKIPPED_FIELDS
        )
    return 0


def follow_up_bytes(messages: Sequence[RequestMessage]) -> int:
    """Aggregate size of follow-up strings (UTF-8) and binary data.

    Counts every string and bytes field of the user-prompt parts and their
    content items (text, tags, URLs, file ids, media types, inline data);
    discriminator tags and timestamps are not data and are not counted.
    """
    return sum(_data_bytes(part) for message in messages for part in message.parts)


def check_follow_ups(messages: Sequence[RequestMessage], *, max_count: int, max_bytes: int) -> str | None:
    """None when the follow-ups fit; otherwise a model-safe reason they do not."""
    if len(messages) > max_count:
        return f"the tool returned {len(messages)} follow-up messages; at most {max_count} are allowed"
    size = follow_up_bytes(messages)
    if size > max_bytes:
        return f"the tool's follow-up messages hold {size} bytes of data; at most {max_bytes} are allowed"
    return None
