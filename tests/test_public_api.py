"""The root namespace is small, deliberate, lazy and cheap to import."""

from __future__ import annotations

import subprocess
import sys

import zigai

EXPECTED_ROOT = {
    "__version__",
    "AgentError",
    "HistoryError",
    "JsonError",
    "JsonSchemaError",
    "ProviderError",
    "ProviderRequestError",
    "TransportError",
    "ZigAIError",
    "messages", "history", "json", "json_schema", "usage", "settings", "model", "security",
    "transport", "provider", "retry", "testing", "reflect", "tool", "toolset",
    "Tool", "ToolReturn", "ToolOutput", "ToolRunContext", "RunContext", "ToolLimits", "ToolExecution",
    "ModelRetry", "Toolset", "agent", "output", "providers", "Agent", "RunOptions", "RunLimits",
    "Result", "TypedResult", "OutputSpec", "OutputChoice", "OutputResult", "EndStrategy",
    "UsageLimitExceeded", "PauseRequired", "pricing", "UsageCost", "PriceTable",
    "models", "hooks", "mcp", "infer_model", "AgentStream", "AgentStreamEvent", "RunOutcome", "PausedRun",
    "ResumeDecision", "stringify_resume_decisions", "parse_resume_decisions",
    "PendingMessageQueue", "PendingMessageQueueClosed",
    "Message", "RequestMessage", "ResponseMessage", "RequestUsage", "RunUsage", "ModelSettings",
    "ProviderExtraBody", "ModelProfile", "UrlPolicy", "RetryPolicy", "CancellationToken",
    "RunTimedOut", "Cancelled",
}


def test_root_all_is_exact() -> None:
    assert set(zigai.__all__) == EXPECTED_ROOT
    assert len(zigai.__all__) == len(EXPECTED_ROOT)


def test_every_root_name_resolves() -> None:
    for name in zigai.__all__:
        assert getattr(zigai, name) is not None


def test_unknown_root_name_is_an_attribute_error() -> None:
    try:
        zigai.NoSuchThing  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_import_zigai_loads_no_third_party_package() -> None:
    probe = (
        "import sys, zigai; "
        "heavy = [m for m in ('urllib3', 'jsonschema', 'yaml') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
