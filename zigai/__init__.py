"""zigai: a provider-neutral agent framework (synchronous Python reference implementation).

The root re-exports a small set of short names.  Everything is loaded lazily on
first attribute access so that ``import zigai`` stays cheap and imports no
third-party package; subsystems live in their own modules (``zigai.messages``,
``zigai.json``, ``zigai.history`` ...).

Invariant: ``__all__`` is exactly the set of names ``_LAZY`` can resolve plus
the error bases; ``tests/test_public_api.py`` pins it.
"""

from __future__ import annotations

import importlib
from typing import Any

from zigai.errors import (
    AgentError,
    HistoryError,
    JsonError,
    JsonSchemaError,
    ProviderError,
    ProviderRequestError,
    TransportError,
    ZigAIError,
)

__version__ = "0.1.0"

# short name -> (module, attribute); attribute None means the module itself.
_LAZY: dict[str, tuple[str, str | None]] = {
    # subsystem modules
    "messages": ("zigai.messages", None),
    "history": ("zigai.history", None),
    "json": ("zigai.json", None),
    "json_schema": ("zigai.json_schema", None),
    "usage": ("zigai.usage", None),
    "pricing": ("zigai.pricing", None),
    "settings": ("zigai.settings", None),
    "model": ("zigai.model", None),
    "security": ("zigai.security", None),
    "transport": ("zigai.transport", None),
    "provider": ("zigai.provider", None),
    "retry": ("zigai.retry", None),
    "testing": ("zigai.testing", None),
    "reflect": ("zigai.reflect", None),
    "tool": ("zigai.tool", None),
    "toolset": ("zigai.toolset", None),
    "agent": ("zigai.agent", None),
    "output": ("zigai.output", None),
    "providers": ("zigai.providers", None),
    "models": ("zigai.models", None),
    "hooks": ("zigai.hooks", None),
    "mcp": ("zigai.mcp", None),
    # short names
    "Message": ("zigai.messages", "Message"),
    "RequestMessage": ("zigai.messages", "RequestMessage"),
    "ResponseMessage": ("zigai.messages", "ResponseMessage"),
    "RequestUsage": ("zigai.usage", "RequestUsage"),
    "RunUsage": ("zigai.usage", "RunUsage"),
    "UsageCost": ("zigai.pricing", "UsageCost"),
    "PriceTable": ("zigai.pricing", "PriceTable"),
    "ModelSettings": ("zigai.settings", "ModelSettings"),
    "ProviderExtraBody": ("zigai.settings", "ProviderExtraBody"),
    "ModelProfile": ("zigai.model", "ModelProfile"),
    "UrlPolicy": ("zigai.security", "UrlPolicy"),
    "RetryPolicy": ("zigai.retry", "RetryPolicy"),
    "Agent": ("zigai.agent", "Agent"),
    "RunOptions": ("zigai.agent", "RunOptions"),
    "RunLimits": ("zigai.agent", "RunLimits"),
    "Result": ("zigai.agent", "Result"),
    "TypedResult": ("zigai.agent", "TypedResult"),
    "OutputSpec": ("zigai.output", "OutputSpec"),
    "OutputChoice": ("zigai.output", "OutputChoice"),
    "OutputResult": ("zigai.output", "OutputResult"),
    "EndStrategy": ("zigai.output", "EndStrategy"),
    "UsageLimitExceeded": ("zigai.agent", "UsageLimitExceeded"),
    "PauseRequired": ("zigai.agent", "PauseRequired"),
    "infer_model": ("zigai.models", "infer_model"),
    "AgentStream": ("zigai.agent", "AgentStream"),
    "AgentStreamEvent": ("zigai.agent", "AgentStreamEvent"),
    "RunOutcome": ("zigai.agent", "RunOutcome"),
    "PausedRun": ("zigai.agent", "PausedRun"),
    "ResumeDecision": ("zigai.agent", "ResumeDecision"),
    "stringify_resume_decisions": ("zigai.agent", "stringify_resume_decisions"),
    "parse_resume_decisions": ("zigai.agent", "parse_resume_decisions"),
    "PendingMessageQueue": ("zigai.agent", "PendingMessageQueue"),
    "PendingMessageQueueClosed": ("zigai.agent", "PendingMessageQueueClosed"),
    "Tool": ("zigai.tool", "Tool"),
    "ToolReturn": ("zigai.tool", "ToolReturn"),
    "ToolOutput": ("zigai.tool", "ToolOutput"),
    "ToolRunContext": ("zigai.tool", "ToolRunContext"),
    "RunContext": ("zigai.agent", "RunContext"),
    "ToolLimits": ("zigai.tool", "ToolLimits"),
    "ToolExecution": ("zigai.tool", "ToolExecution"),
    "ModelRetry": ("zigai.tool", "ModelRetry"),
    "Toolset": ("zigai.toolset", "Toolset"),
    "CancellationToken": ("zigai.control", "CancellationToken"),
    "RunTimedOut": ("zigai.control", "RunTimedOut"),
    "Cancelled": ("zigai.control", "Cancelled"),
}

__all__ = [
    "__version__",
    "AgentError",
    "HistoryError",
    "JsonError",
    "JsonSchemaError",
    "ProviderError",
    "ProviderRequestError",
    "TransportError",
    "ZigAIError",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    try:
        module_name, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'zigai' has no attribute {name!r}") from None
    module = importlib.import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
