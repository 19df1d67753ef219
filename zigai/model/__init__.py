"""The Model contract: a profile, one buffered request function and one streaming function.

A ``Model`` accepts provider-neutral messages (``ModelRequest``) and returns a
``ResponseMessage`` (alias ``ModelResponse``) or a ``StreamedResponse`` of part
events.  A new provider implements this protocol without touching the agent.

A model may also expose ``settings`` (a ``ModelSettings``): the agent merges it
as the lowest layer (model → agent → run).  It is optional, so it is not part
of the runtime-checkable protocol.

Invariants: ``profile`` is resolved before the agent runs and never changes
for a model value; ``request``/``stream`` must honour ``request.deadline`` and
``request.control`` and must not be called for features the profile lacks
(the agent calls :func:`check_request_supported` first).  A user-written override of a
resolved profile (CLI ``--profile``, spec ``model.profile``) is read by
:func:`apply_profile_overrides` (``overrides``).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from zigai.messages import FinishReason, Message, RequestMessage, ResponseMessage
from zigai.model.overrides import InvalidProfileOverride, apply_profile_overrides
from zigai.model.profile import ALL_CONTENT_KINDS, COMMON_SETTINGS, MANAGED_TOOL_KINDS, ModelProfile
from zigai.model.request import (
    TEXT_OUTPUT,
    TOOL_NAME_PATTERN,
    InvalidToolDefinition,
    ManagedTool,
    ModelRequest,
    OutputFormat,
    ToolDefinition,
    UnsupportedModelFeature,
    check_request_supported,
)
from zigai.model.stream import (
    InvalidStreamEvent,
    ModelStreamEvent,
    PartAccumulator,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    ReplacePartDelta,
    ResponsePartDelta,
    StreamedResponse,
    TextPartDelta,
    ThinkingPartDelta,
    ToolCallPartDelta,
)

ModelResponse = ResponseMessage

__all__ = [
    "Model",
    "ModelProfile",
    "ModelRequest",
    "ModelResponse",
    "ToolDefinition",
    "OutputFormat",
    "ManagedTool",
    "TEXT_OUTPUT",
    "TOOL_NAME_PATTERN",
    "COMMON_SETTINGS",
    "ALL_CONTENT_KINDS",
    "MANAGED_TOOL_KINDS",
    "UnsupportedModelFeature",
    "InvalidProfileOverride",
    "apply_profile_overrides",
    "InvalidToolDefinition",
    "InvalidStreamEvent",
    "check_request_supported",
    "StreamedResponse",
    "PartAccumulator",
    "ModelStreamEvent",
    "PartStartEvent",
    "PartDeltaEvent",
    "PartEndEvent",
    "ResponsePartDelta",
    "TextPartDelta",
    "ThinkingPartDelta",
    "ToolCallPartDelta",
    "ReplacePartDelta",
    # compatibility aliases for model implementers
    "Message",
    "RequestMessage",
    "ResponseMessage",
    "FinishReason",
]


@runtime_checkable
class Model(Protocol):
    """What the agent needs from any model implementation."""

    @property
    def model_name(self) -> str: ...

    @property
    def provider_name(self) -> str: ...

    @property
    def profile(self) -> ModelProfile: ...

    def request(self, request: ModelRequest) -> ResponseMessage: ...

    def stream(self, request: ModelRequest) -> StreamedResponse: ...
