"""Tool execution modes and the bounded execution policy (``ToolLimits``).

Defaults follow the specification: eight calls active at once, 64 waiting,
1 MiB for one encoded result, 16 follow-up messages and 1 MiB of aggregate
follow-up strings and binary data, no per-call timeout.

Invariants: a :class:`ToolLimits` value is immutable and validated at
construction; :meth:`ToolLimits.tightened_by` can only make a policy stricter
(field-wise minimum; a timeout of ``None`` means "no timeout" and never
loosens a set one).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from zigai.tool.errors import ToolDefinitionError

__all__ = ["ToolExecution", "ReturnSchemaVisibility", "ToolLimits"]


class ToolExecution(enum.Enum):
    """Whether a call runs at once, waits for approval, or is executed outside zigai."""

    immediate = "immediate"
    requires_approval = "requires_approval"
    external = "external"


class ReturnSchemaVisibility(enum.Enum):
    """Where a reflected return schema is shown: only locally, or also in the description."""

    local = "local"
    model_description = "model_description"


_MIB = 1 << 20


@dataclass(frozen=True, slots=True)
class ToolLimits:
    """Bounds for local tool execution; agent-wide, optionally tightened per tool."""

    max_active: int = 8
    max_queued: int = 64
    max_result_bytes: int = _MIB
    max_follow_ups: int = 16
    max_follow_up_bytes: int = _MIB
    timeout_ms: int | None = None

    def __post_init__(self) -> None:
        minimums = {
            "max_active": 1,
            "max_queued": 0,
            "max_result_bytes": 0,
            "max_follow_ups": 0,
            "max_follow_up_bytes": 0,
        }
        for name, minimum in minimums.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ToolDefinitionError(f"ToolLimits.{name} must be an int >= {minimum}, got {value!r}")
        timeout = self.timeout_ms
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 0):
            raise ToolDefinitionError(f"ToolLimits.timeout_ms must be None or an int >= 0, got {timeout!r}")

    def tightened_by(self, per_tool: ToolLimits | None) -> ToolLimits:
        """The field-wise stricter combination of this policy and a per-tool one."""
        if per_tool is None:
            return self
        if self.timeout_ms is None:
            timeout = per_tool.timeout_ms
        elif per_tool.timeout_ms is None:
            timeout = self.timeout_ms
        else:
            timeout = min(self.timeout_ms, per_tool.timeout_ms)
        return ToolLimits(
            max_active=min(self.max_active, per_tool.max_active),
            max_queued=min(self.max_queued, per_tool.max_queued),
            max_result_bytes=min(self.max_result_bytes, per_tool.max_result_bytes),
            max_follow_ups=min(self.max_follow_ups, per_tool.max_follow_ups),
            max_follow_up_bytes=min(self.max_follow_up_bytes, per_tool.max_follow_up_bytes),
            timeout_ms=timeout,
        )
