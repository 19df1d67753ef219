"""The two message envelopes, the ``Message`` union, finish reasons and short constructors.

A :class:`RequestMessage` holds only request parts (at least one); a
:class:`ResponseMessage` holds only response parts (possibly none: an empty model
answer is a condition the agent reports, not an unrepresentable value).  Putting
a part on the wrong side raises :class:`InvalidMessagePart` naming the part kind.

Responses retain usage, the normalized :class:`FinishReason` plus the provider's
raw reason, provider/model identity, the provider response id and structured
provider details.  ``metadata`` on either envelope is application-only.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, TypeAlias

from zigai.messages._base import (
    InvalidMessagePart,
    coerce_enum,
    optional_str,
    require_instance,
    require_literal,
    require_timestamp,
    set_field,
)
from zigai.messages.content import UserContent
from zigai.messages.details import Metadata, ProviderDetails
from zigai.messages.request_parts import (
    REQUEST_PART_TYPES,
    RequestPart,
    RetryPromptPart,
    SystemPromptPart,
    UserPromptPart,
)
from zigai.messages.response_parts import RESPONSE_PART_TYPES, ResponsePart, TextPart
from zigai.usage import RequestUsage

__all__ = [
    "FinishReason",
    "Message",
    "RequestMessage",
    "ResponseMessage",
    "retry_prompt",
    "system_prompt",
    "text",
    "user_prompt",
]


class FinishReason(enum.Enum):
    """Normalized reason a model stopped generating."""

    stop = "stop"
    length = "length"
    content_filter = "content_filter"
    tool_call = "tool_call"
    error = "error"
    other = "other"


_FINISH_REASONS = {reason.value: reason for reason in FinishReason}


def _name_or_none(value: object) -> bool:
    """True for the values ``optional_str`` (empty not allowed) accepts, in one test."""
    return value is None or (type(value) is str and value != "")


def _check_parts(
    message: RequestMessage | ResponseMessage,
    allowed: tuple[type, ...],
    other_side: tuple[type, ...],
    side: str,
    *,
    allow_empty: bool,
) -> None:
    given: object = message.parts
    if type(given) is tuple:
        parts = given
    elif isinstance(given, (str, bytes)) or not isinstance(given, Sequence):
        raise InvalidMessagePart(f"{type(message).__name__}.parts must be a sequence of parts")
    else:
        parts = tuple(given)
    for index, part in enumerate(parts):
        if isinstance(part, allowed):
            continue
        if isinstance(part, other_side):
            raise InvalidMessagePart(
                f"{type(message).__name__}.parts[{index}] is a {type(part).__name__} "
                f"({getattr(part, 'part_kind', None)!r}), which is not a {side} part"
            )
        raise InvalidMessagePart(
            f"{type(message).__name__}.parts[{index}] must be a {side} part, "
            f"got {type(part).__name__}"
        )
    if not parts and not allow_empty:
        raise InvalidMessagePart(f"{type(message).__name__}.parts must not be empty")
    if parts is not given:
        set_field(message, "parts", parts)


@dataclass(frozen=True, slots=True)
class RequestMessage:
    """What is sent to a model: request parts plus the run's rendered instructions."""

    parts: tuple[RequestPart, ...]
    instructions: str | None = None
    timestamp: datetime | None = None
    metadata: Metadata | None = None
    kind: Literal["request"] = "request"

    def __post_init__(self) -> None:
        _check_parts(self, REQUEST_PART_TYPES, RESPONSE_PART_TYPES, "request", allow_empty=False)
        instructions, stamp = self.instructions, self.timestamp
        if ((instructions is None or type(instructions) is str)
                and (stamp is None or (type(stamp) is datetime and stamp.tzinfo is UTC))
                and self.metadata is None and self.kind == "request"):
            return  # the common exact shape: every check below would pass unchanged
        self._check_fields()

    def _check_fields(self) -> None:
        """Every field check with its exact error (skipped for the common exact shape)."""
        optional_str(self, "instructions", allow_empty=True)
        require_timestamp(self)
        require_instance(self, "metadata", Metadata, optional=True)
        require_literal(self, "kind", "request")

    @classmethod
    def user(cls, content: str | Sequence[UserContent], *,
             instructions: str | None = None) -> RequestMessage:
        """A request with one user prompt."""
        return cls(parts=(user_prompt(content),), instructions=instructions)

    @classmethod
    def system_and_user(cls, system: str, user: str | Sequence[UserContent]) -> RequestMessage:
        """A request with a system prompt followed by a user prompt."""
        return cls(parts=(system_prompt(system), user_prompt(user)))


@dataclass(frozen=True, slots=True)
class ResponseMessage:
    """What a model returned, with usage, finish reason and provider identity."""

    parts: tuple[ResponsePart, ...]
    usage: RequestUsage = field(default_factory=RequestUsage)
    model_name: str | None = None
    provider_name: str | None = None
    provider_response_id: str | None = None
    finish_reason: FinishReason | None = None
    raw_finish_reason: str | None = None
    timestamp: datetime | None = None
    provider_details: ProviderDetails | None = None
    metadata: Metadata | None = None
    kind: Literal["response"] = "response"

    def __post_init__(self) -> None:
        _check_parts(self, RESPONSE_PART_TYPES, REQUEST_PART_TYPES, "response", allow_empty=True)
        reason = self.finish_reason
        if (type(self.usage) is RequestUsage and _name_or_none(self.model_name)
                and _name_or_none(self.provider_name) and _name_or_none(self.provider_response_id)
                and (reason is None or type(reason) is FinishReason
                     or (type(reason) is str and reason in _FINISH_REASONS))
                and (self.raw_finish_reason is None or type(self.raw_finish_reason) is str)
                and (self.timestamp is None
                     or (type(self.timestamp) is datetime and self.timestamp.tzinfo is UTC))
                and (self.provider_details is None
                     or type(self.provider_details) is ProviderDetails)
                and self.metadata is None and self.kind == "response"):
            # the common exact shape: every check below would pass, only a reason given as
            # its value text becomes the enum member (what coerce_enum does)
            if type(reason) is str:
                set_field(self, "finish_reason", _FINISH_REASONS[reason])
            return
        self._check_fields()

    def _check_fields(self) -> None:
        """Every field check with its exact error (skipped for the common exact shape)."""
        require_instance(self, "usage", RequestUsage)
        optional_str(self, "model_name")
        optional_str(self, "provider_name")
        optional_str(self, "provider_response_id")
        coerce_enum(self, "finish_reason", FinishReason, optional=True)
        optional_str(self, "raw_finish_reason", allow_empty=True)
        require_timestamp(self)
        require_instance(self, "provider_details", ProviderDetails, optional=True)
        require_instance(self, "metadata", Metadata, optional=True)
        require_literal(self, "kind", "response")

    @classmethod
    def from_text(cls, content: str, **fields: object) -> ResponseMessage:
        """A response with one text part; other envelope fields by keyword."""
        return cls(parts=(text(content),), **fields)  # type: ignore[arg-type]

    @property
    def text(self) -> str:
        """All text parts concatenated (empty when there are none)."""
        return "".join(p.content for p in self.parts if isinstance(p, TextPart))


Message: TypeAlias = RequestMessage | ResponseMessage


def system_prompt(content: str) -> SystemPromptPart:
    """Short form of :class:`SystemPromptPart` without a timestamp."""
    return SystemPromptPart(content)


def user_prompt(content: str | Sequence[UserContent]) -> UserPromptPart:
    """Short form of :class:`UserPromptPart`: text or a sequence of user content items."""
    if isinstance(content, str):
        return UserPromptPart(content)
    return UserPromptPart(tuple(content))


def retry_prompt(content: str, *, tool_name: str | None = None,
                 tool_call_id: str | None = None) -> RetryPromptPart:
    """Short form of :class:`RetryPromptPart`."""
    return RetryPromptPart(content, tool_name=tool_name, tool_call_id=tool_call_id)


def text(content: str) -> TextPart:
    """Short form of :class:`TextPart` without ids or provider data."""
    return TextPart(content)
