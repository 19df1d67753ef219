"""Structured output: the agent-side ``OutputSpec`` and its preparation for one model.

``zigai.output.spec`` holds the immutable behaviour values (modes, choices,
end strategies, output results and the output run context);
``zigai.output.prepare`` turns a spec into the provider-facing ``OutputFormat``
and synthetic output tools, and checks candidates locally with the fail-closed
JSON Schema dialect.  The agent loop (``zigai.agent``) drives both.
"""

from __future__ import annotations

from zigai.output.prepare import (
    Candidate,
    OutputRejected,
    PreparedChoice,
    PreparedOutput,
    prepare_output,
)
from zigai.output.spec import (
    DEFAULT_PROMPT_TEMPLATE,
    SCHEMA_MARKER,
    EndStrategy,
    InvalidOutputSpec,
    OutputChoice,
    OutputFunction,
    OutputMode,
    OutputResult,
    OutputRunContext,
    OutputSpec,
    OutputValidator,
)

__all__ = [
    "OutputSpec",
    "OutputChoice",
    "OutputMode",
    "OutputResult",
    "OutputRunContext",
    "OutputFunction",
    "OutputValidator",
    "EndStrategy",
    "InvalidOutputSpec",
    "DEFAULT_PROMPT_TEMPLATE",
    "SCHEMA_MARKER",
    "PreparedOutput",
    "PreparedChoice",
    "Candidate",
    "OutputRejected",
    "prepare_output",
]
