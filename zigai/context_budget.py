"""Context budgets: measure the provider-facing bytes of one request and check them.

Job
    :func:`measure` classifies what a :class:`~zigai.model.ModelRequest` would send into four
    byte counts (:class:`ByteUsage`) — prompt text, tool definitions and traffic, JSON
    schemas, media sources — and estimates input tokens.  :class:`ContextBudget` holds the
    limits and :meth:`ContextBudget.check` names the first boundary a measurement crosses.
    The agent runs this after history processors and step toolsets, before the
    ``request_start`` hooks (``Agent.context_budget`` / ``RunOptions.context_budget``).

What counts where (UTF-8 bytes)
    * prompt — instructions, system and user prompt text, the model's own text and thinking,
      retry prompts that belong to no tool call, speech transcripts;
    * tools — each tool definition's name and description; tool calls' names and argument
      text; tool results (their JSON encoding) and tool retry prompts; provider-native and
      tool-search traffic;
    * schemas — tool parameter schemas and the output schema (compact JSON);
    * media — raw media sources: inline bytes, URLs and provider file ids.

Tokens
    The default estimate is provider-neutral: ``ceil((prompt + tools + schemas) / 4)`` plus
    ``MESSAGE_FRAMING_TOKENS`` per message and ``TOOL_FRAMING_TOKENS`` per tool definition.
    Media bytes are bounded by ``max_media_bytes`` but not converted to tokens (providers
    price media by dimensions or duration, not bytes).  A :data:`TokenEstimator` replaces the
    estimate.  ``max_total_tokens`` bounds the estimate plus the reserved output: the budget's
    ``reserve_output_tokens``, or when that is None the request's resolved ``max_tokens``.

Invariants: measuring never changes the request; exact limits are accepted and one byte or
token more fails with the boundary's named error; the agent runs the estimator and the
overflow hook under the run control (raced against the deadline) and measures a compacted
view once more.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from zigai.errors import AgentError

if TYPE_CHECKING:
    from zigai.messages import Message
    from zigai.model import ModelRequest

__all__ = [
    "MESSAGE_FRAMING_TOKENS",
    "TOOL_FRAMING_TOKENS",
    "BYTES_PER_TOKEN",
    "Boundary",
    "ByteUsage",
    "ContextBudget",
    "ContextLimitExceeded",
    "ContextMediaTooLarge",
    "ContextOverflow",
    "ContextOverflowHook",
    "ContextPromptTooLarge",
    "ContextSchemaTooLarge",
    "ContextTokenLimitExceeded",
    "ContextToolsTooLarge",
    "Measurement",
    "TokenEstimator",
    "default_token_estimate",
    "measure",
]

BYTES_PER_TOKEN = 4
MESSAGE_FRAMING_TOKENS = 4
TOOL_FRAMING_TOKENS = 8

Boundary = Literal["prompt", "tools", "schemas", "media", "input_tokens", "total_tokens"]


class ContextLimitExceeded(AgentError):
    """A request crossed a context-budget boundary (after any overflow compaction).

    ``boundary`` names it, ``limit`` is the configured ceiling and ``value`` the measured
    (or estimated) amount.
    """

    def __init__(self, message: str, *, boundary: str = "", limit: int = 0, value: int = 0) -> None:
        super().__init__(message)
        self.boundary = boundary
        self.limit = limit
        self.value = value


class ContextPromptTooLarge(ContextLimitExceeded):
    """The prompt text of a request exceeds ``max_prompt_bytes``."""


class ContextToolsTooLarge(ContextLimitExceeded):
    """Tool definitions and tool traffic exceed ``max_tool_bytes``."""


class ContextSchemaTooLarge(ContextLimitExceeded):
    """Tool parameter and output schemas exceed ``max_schema_bytes``."""


class ContextMediaTooLarge(ContextLimitExceeded):
    """Raw media sources exceed ``max_media_bytes``."""


class ContextTokenLimitExceeded(ContextLimitExceeded):
    """The estimated input tokens, or input plus reserved output, exceed their limit."""


@dataclass(frozen=True, slots=True)
class ByteUsage:
    """Provider-facing UTF-8 bytes of one request, by class (see the module docs)."""

    prompt: int = 0
    tools: int = 0
    schemas: int = 0
    media: int = 0
    messages: int = 0
    tool_definitions: int = 0


@dataclass(frozen=True, slots=True)
class Measurement:
    """One measured request: its bytes, estimated input tokens and reserved output tokens."""

    bytes: ByteUsage
    input_tokens: int
    reserved_output_tokens: int

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.reserved_output_tokens


TokenEstimator = Callable[["ModelRequest", ByteUsage], int]
"""``(request, byte_usage) -> input tokens``: replaces the 4-bytes-per-token estimate."""


@dataclass(frozen=True, slots=True)
class ContextOverflow:
    """What the overflow hook sees: the measurement, the first failed boundary, the request."""

    measurement: Measurement
    boundary: Boundary
    request: ModelRequest


ContextOverflowHook = Callable[[ContextOverflow], "Sequence[Message] | None"]
"""``(overflow) -> messages``: a compacted provider view (None: nothing to compact).

The returned messages replace the request's messages for this one request only; the run's
canonical history is never changed.  The result is measured once more.
"""


def _utf8(text: str) -> int:
    return len(text.encode("utf-8"))


def _json_bytes(value: Any) -> int:
    if isinstance(value, str):
        return _utf8(value)
    try:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=_mapping)
    except (TypeError, ValueError):
        text = repr(value)
    return _utf8(text)


def _mapping(value: Any) -> Any:
    if hasattr(value, "items"):
        return dict(value.items())
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(type(value).__name__)


def _source(source: Any) -> int:
    kind = getattr(source, "kind", "")
    if kind == "bytes":
        return len(source.data)
    if kind == "url":
        return _utf8(source.url)
    if kind == "provider-file":
        return _utf8(source.file_id)
    return 0


class _Counter:
    __slots__ = ("prompt", "tools", "media")

    def __init__(self) -> None:
        self.prompt = self.tools = self.media = 0

    def content(self, item: Any) -> None:
        """One user-content item."""
        if isinstance(item, str):
            self.prompt += _utf8(item)
            return
        kind = getattr(item, "kind", "")
        if kind in ("text", "tagged-text"):
            self.prompt += _utf8(item.text)
        elif kind == "binary":
            self.media += len(item.data)
        elif kind == "uploaded-file":
            self.media += _utf8(getattr(item.file, "file_id", "") or "")
        elif hasattr(item, "source"):
            self.media += _source(item.source)

    def part(self, part: Any) -> None:
        kind = part.part_kind
        if kind in ("system-prompt", "instruction", "text", "thinking"):
            self.prompt += _utf8(part.content)
        elif kind == "user-prompt":
            content = part.content
            if isinstance(content, str):
                self.prompt += _utf8(content)
            else:
                for item in content:
                    self.content(item)
        elif kind == "retry-prompt":
            if part.tool_call_id is not None or part.tool_name is not None:
                self.tools += _utf8(part.content) + _utf8(part.tool_name or "")
            else:
                self.prompt += _utf8(part.content)
        elif kind in ("tool-call", "native-tool-call", "tool-search-call", "capability-load-call"):
            self.tools += _utf8(getattr(part, "tool_name", "") or "") + _utf8(getattr(part, "args", "") or "")
        elif kind in ("tool-return", "native-tool-return", "capability-load-return"):
            self.tools += _utf8(getattr(part, "tool_name", "") or "") + _json_bytes(getattr(part, "content", None))
        elif kind == "tool-search-return":
            self.tools += sum(_utf8(name) for name in part.tool_names)
        elif kind == "tool-availability":
            self.tools += sum(_utf8(name) for name in (*part.added, *part.removed))
        elif kind in ("speech-prompt", "speech"):
            if part.transcript:
                self.prompt += _utf8(part.transcript)
            if part.audio is not None:
                self.media += _source(part.audio.source)
        elif kind == "file":
            self.media += _source(part.source)
        elif kind == "compaction":
            self.prompt += _utf8(part.content or "")


def _schema_bytes(schema: Any) -> int:
    return 0 if schema is None else _json_bytes(schema)


def measure_bytes(request: ModelRequest) -> ByteUsage:
    """The :class:`ByteUsage` of ``request`` (pure; changes nothing)."""
    counter = _Counter()
    counter.prompt += sum(_utf8(text) for text in request.instructions)
    for message in request.messages:
        for part in message.parts:
            counter.part(part)
    schemas = _schema_bytes(request.output_format.schema)
    for tool in request.tools:
        counter.tools += _utf8(tool.name) + _utf8(tool.description or "")
        schemas += _schema_bytes(tool.parameters_json_schema)
    return ByteUsage(
        counter.prompt, counter.tools, schemas, counter.media, len(request.messages), len(request.tools),
    )


def default_token_estimate(request: ModelRequest, usage: ByteUsage) -> int:
    """Four bytes per token (rounded up) plus fixed message and tool framing."""
    text = usage.prompt + usage.tools + usage.schemas
    return (
        -(-text // BYTES_PER_TOKEN)
        + usage.messages * MESSAGE_FRAMING_TOKENS
        + usage.tool_definitions * TOOL_FRAMING_TOKENS
    )


def _limit(name: str, value: object) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise ValueError(f"ContextBudget.{name} must be None or an int >= 0, got {value!r}")


@dataclass(frozen=True, slots=True)
class ContextBudget:
    """Limits on one provider request (None: unbounded); exact limits are accepted."""

    max_prompt_bytes: int | None = None
    max_tool_bytes: int | None = None
    max_schema_bytes: int | None = None
    max_media_bytes: int | None = None
    max_input_tokens: int | None = None
    max_total_tokens: int | None = None
    reserve_output_tokens: int | None = None
    estimator: TokenEstimator | None = None
    on_overflow: ContextOverflowHook | None = None

    def __post_init__(self) -> None:
        for name in (
            "max_prompt_bytes", "max_tool_bytes", "max_schema_bytes", "max_media_bytes",
            "max_input_tokens", "max_total_tokens", "reserve_output_tokens",
        ):
            _limit(name, getattr(self, name))
        for name in ("estimator", "on_overflow"):
            value = getattr(self, name)
            if value is not None and not callable(value):
                raise ValueError(f"ContextBudget.{name} must be callable")

    def reserved_output(self, request: ModelRequest) -> int:
        if self.reserve_output_tokens is not None:
            return self.reserve_output_tokens
        return request.settings.max_tokens or 0

    def check(self, measurement: Measurement) -> ContextLimitExceeded | None:
        """The error of the first boundary ``measurement`` crosses (in the order of the
        module docs), or None when it fits."""
        usage = measurement.bytes
        for boundary, limit, value, error in (
            ("prompt", self.max_prompt_bytes, usage.prompt, ContextPromptTooLarge),
            ("tools", self.max_tool_bytes, usage.tools, ContextToolsTooLarge),
            ("schemas", self.max_schema_bytes, usage.schemas, ContextSchemaTooLarge),
            ("media", self.max_media_bytes, usage.media, ContextMediaTooLarge),
            ("input_tokens", self.max_input_tokens, measurement.input_tokens, ContextTokenLimitExceeded),
            ("total_tokens", self.max_total_tokens, measurement.total_tokens, ContextTokenLimitExceeded),
        ):
            if limit is not None and value > limit:
                unit = "tokens" if boundary.endswith("tokens") else "bytes"
                return error(
                    f"the request's {boundary.replace('_', ' ')} come to {value} {unit}; the context "
                    f"budget allows {limit}. Trim the history (a history processor or "
                    "ContextBudget.on_overflow) or raise the limit.",
                    boundary=boundary, limit=limit, value=value,
                )
        return None


EstimatorRunner = Callable[[TokenEstimator, "ModelRequest", ByteUsage], Any]


def measure(
    request: ModelRequest, budget: ContextBudget, run_estimator: EstimatorRunner | None = None
) -> Measurement:
    """Measure ``request`` against ``budget``'s estimator (or the default estimate).

    ``run_estimator(estimator, request, usage)`` lets the caller run an application
    estimator under its run control (the agent races it against the deadline).
    """
    usage = measure_bytes(request)
    estimator = budget.estimator
    if estimator is None:
        tokens: Any = default_token_estimate(request, usage)
    elif run_estimator is None:
        tokens = estimator(request, usage)
    else:
        tokens = run_estimator(estimator, request, usage)
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
        raise TypeError(f"the context budget's token estimator returned {tokens!r}, not an int >= 0")
    return Measurement(usage, tokens, budget.reserved_output(request))
