"""Request parts: what the application (or the agent) sends to a model.

The ``RequestPart`` union: ``system-prompt``, ``user-prompt``, ``retry-prompt``,
``instruction``, ``speech-prompt``, ``tool-availability``, ``tool-return`` and
``capability-load-return`` (``part_kind`` discriminators).  Only these may appear
in a :class:`~zigai.messages.RequestMessage`.

Invariants: identifiers (tool names, call ids, capability ids) are non-empty
strings; sequences are tuples; timestamps are optional, timezone-aware and
normalized to UTC; tool-return content is an immutable JSON value (lists become
tuples, dicts become :class:`~zigai.messages.json_value.FrozenDict`).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, TypeAlias

from zigai.messages._base import (
    InvalidMessagePart,
    coerce_enum,
    optional_str,
    require_instance,
    require_literal,
    require_str,
    require_timestamp,
    require_tuple,
    set_field,
)
from zigai.messages.content import USER_CONTENT_TYPES, AudioContent, UserContent
from zigai.messages.details import Metadata
from zigai.messages.json_value import freeze_json

__all__ = [
    "CapabilityLoadReturnPart",
    "InstructionPart",
    "REQUEST_PART_TYPES",
    "RequestPart",
    "RetryPromptPart",
    "SpeechPromptPart",
    "SystemPromptPart",
    "ToolAvailabilityPart",
    "ToolOutcome",
    "ToolReturnPart",
    "UserPromptPart",
]


class ToolOutcome(enum.Enum):
    """How a tool call ended; anything but ``success`` is reported to the model as a failure."""

    success = "success"
    error = "error"
    denied = "denied"
    interrupted = "interrupted"
    skipped = "skipped"  # not run: the end strategy had already accepted an output


_OUTCOMES = {outcome.value: outcome for outcome in ToolOutcome}


def _utc_or_none(stamp: object) -> bool:
    """True for the timestamps ``require_timestamp`` accepts unchanged in one test."""
    return stamp is None or (type(stamp) is datetime and stamp.tzinfo is UTC)


def freeze_content(value: object, owner: str) -> Any:
    """Validate and freeze a JSON tool-return content value."""
    return freeze_json(value, lambda m: InvalidMessagePart(f"{owner}.content: {m}"))


@dataclass(frozen=True, slots=True)
class SystemPromptPart:
    """A system prompt from the application."""

    content: str
    timestamp: datetime | None = None
    part_kind: Literal["system-prompt"] = "system-prompt"

    def __post_init__(self) -> None:
        if (type(self.content) is str and _utc_or_none(self.timestamp)
                and self.part_kind == "system-prompt"):
            return  # the common exact shape: every check below would pass unchanged
        self._check_fields()

    def _check_fields(self) -> None:
        """Every field check with its exact error (skipped for the common exact shape)."""
        require_str(self, "content", allow_empty=True)
        require_timestamp(self)
        require_literal(self, "part_kind", "system-prompt")


@dataclass(frozen=True, slots=True)
class UserPromptPart:
    """A user prompt: plain text or a non-empty tuple of rich :data:`UserContent` items."""

    content: str | tuple[UserContent, ...]
    timestamp: datetime | None = None
    part_kind: Literal["user-prompt"] = "user-prompt"

    def __post_init__(self) -> None:
        if (type(self.content) is str and _utc_or_none(self.timestamp)
                and self.part_kind == "user-prompt"):
            return  # the common exact shape: every check below would pass unchanged
        self._check_fields()

    def _check_fields(self) -> None:
        """Every field check with its exact error (skipped for the common exact shape)."""
        if not isinstance(self.content, str):
            require_tuple(self, "content", USER_CONTENT_TYPES, allow_empty=False,
                          what="UserContent")
        require_timestamp(self)
        require_literal(self, "part_kind", "user-prompt")


@dataclass(frozen=True, slots=True)
class RetryPromptPart:
    """Asks the model to try again (bad tool arguments, failed output validation ...)."""

    content: str
    tool_name: str | None = None
    tool_call_id: str | None = None
    timestamp: datetime | None = None
    part_kind: Literal["retry-prompt"] = "retry-prompt"

    def __post_init__(self) -> None:
        require_str(self, "content", allow_empty=True)
        optional_str(self, "tool_name")
        optional_str(self, "tool_call_id")
        require_timestamp(self)
        require_literal(self, "part_kind", "retry-prompt")


@dataclass(frozen=True, slots=True)
class InstructionPart:
    """One resolved instruction; ``dynamic`` marks instructions computed per run."""

    content: str
    dynamic: bool = False
    timestamp: datetime | None = None
    part_kind: Literal["instruction"] = "instruction"

    def __post_init__(self) -> None:
        require_str(self, "content", allow_empty=True)
        if not isinstance(self.dynamic, bool):
            raise InvalidMessagePart("InstructionPart.dynamic must be a bool")
        require_timestamp(self)
        require_literal(self, "part_kind", "instruction")


@dataclass(frozen=True, slots=True)
class SpeechPromptPart:
    """Spoken user input: the audio and, when known, its transcript."""

    audio: AudioContent
    transcript: str | None = None
    timestamp: datetime | None = None
    part_kind: Literal["speech-prompt"] = "speech-prompt"

    def __post_init__(self) -> None:
        require_instance(self, "audio", AudioContent)
        optional_str(self, "transcript", allow_empty=True)
        require_timestamp(self)
        require_literal(self, "part_kind", "speech-prompt")


@dataclass(frozen=True, slots=True)
class ToolAvailabilityPart:
    """Tells the model which tools became available (``added``) or were withdrawn."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    tool_call_id: str | None = None
    timestamp: datetime | None = None
    part_kind: Literal["tool-availability"] = "tool-availability"

    def __post_init__(self) -> None:
        require_tuple(self, "added", str)
        require_tuple(self, "removed", str)
        if not self.added and not self.removed:
            raise InvalidMessagePart("ToolAvailabilityPart needs at least one added or removed tool")
        both = set(self.added) & set(self.removed)
        if both:
            raise InvalidMessagePart(
                f"ToolAvailabilityPart lists tools as both added and removed: {sorted(both)}"
            )
        optional_str(self, "tool_call_id")
        require_timestamp(self)
        require_literal(self, "part_kind", "tool-availability")


@dataclass(frozen=True, slots=True)
class ToolReturnPart:
    """The result of a function tool call, matched to its call by ``tool_call_id``."""

    tool_name: str
    tool_call_id: str
    content: Any = None
    outcome: ToolOutcome = ToolOutcome.success
    timestamp: datetime | None = None
    metadata: Metadata | None = None
    part_kind: Literal["tool-return"] = "tool-return"

    def __post_init__(self) -> None:
        tool_name, tool_call_id, outcome = self.tool_name, self.tool_call_id, self.outcome
        if (type(tool_name) is str and tool_name and type(tool_call_id) is str and tool_call_id
                and (type(outcome) is ToolOutcome
                     or (type(outcome) is str and outcome in _OUTCOMES))
                and _utc_or_none(self.timestamp)
                and self.metadata is None and self.part_kind == "tool-return"):
            # the common exact shape: the content gets its (always-run) freeze and an outcome
            # given as its value text becomes the enum member (what coerce_enum does)
            set_field(self, "content", freeze_content(self.content, "ToolReturnPart"))
            if type(outcome) is str:
                set_field(self, "outcome", _OUTCOMES[outcome])
            return
        self._check_fields()

    def _check_fields(self) -> None:
        """Every field check with its exact error (skipped for the common exact shape)."""
        require_str(self, "tool_name")
        require_str(self, "tool_call_id")
        set_field(self, "content", freeze_content(self.content, "ToolReturnPart"))
        coerce_enum(self, "outcome", ToolOutcome)
        require_timestamp(self)
        require_instance(self, "metadata", Metadata, optional=True)
        require_literal(self, "part_kind", "tool-return")


@dataclass(frozen=True, slots=True)
class CapabilityLoadReturnPart:
    """Result of the framework-owned ``load_capability`` call.

    ``loaded`` lists the capability ids activated in dependency-first order and
    ``instructions`` their instructions in the same order; on failure ``outcome``
    is not ``success``, ``loaded`` is empty and ``content`` explains why.
    """

    tool_call_id: str
    capability_id: str
    outcome: ToolOutcome = ToolOutcome.success
    loaded: tuple[str, ...] = ()
    instructions: tuple[str, ...] = ()
    content: str | None = None
    tool_name: str = "load_capability"
    timestamp: datetime | None = None
    part_kind: Literal["capability-load-return"] = "capability-load-return"

    def __post_init__(self) -> None:
        require_str(self, "tool_call_id")
        require_str(self, "capability_id")
        coerce_enum(self, "outcome", ToolOutcome)
        require_tuple(self, "loaded", str)
        _require_texts(self, "instructions")
        optional_str(self, "content", allow_empty=True)
        require_str(self, "tool_name")
        require_timestamp(self)
        if self.outcome is not ToolOutcome.success and self.loaded:
            raise InvalidMessagePart("a failed CapabilityLoadReturnPart cannot list loaded ids")
        require_literal(self, "part_kind", "capability-load-return")


def _require_texts(value: object, name: str) -> None:
    items = getattr(value, name)
    if isinstance(items, str) or not isinstance(items, Sequence):
        raise InvalidMessagePart(f"{type(value).__name__}.{name} must be a sequence of str")
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise InvalidMessagePart(f"{type(value).__name__}.{name}[{index}] must be a str")
    set_field(value, name, tuple(items))


RequestPart: TypeAlias = (
    SystemPromptPart
    | UserPromptPart
    | RetryPromptPart
    | InstructionPart
    | SpeechPromptPart
    | ToolAvailabilityPart
    | ToolReturnPart
    | CapabilityLoadReturnPart
)
REQUEST_PART_TYPES: tuple[type, ...] = (
    SystemPromptPart,
    UserPromptPart,
    RetryPromptPart,
    InstructionPart,
    SpeechPromptPart,
    ToolAvailabilityPart,
    ToolReturnPart,
    CapabilityLoadReturnPart,
)
