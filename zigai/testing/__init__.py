"""Deterministic model doubles for application tests (layer 4: imports layers 1–3 only).

* :class:`TestModel` — calls every offered function tool once with arguments generated
  from its JSON schema, then answers (output tool, JSON text or a summary of the tool
  returns).  Nothing random: the same requests and seed give the same responses.
* :class:`FunctionModel` — an application callable decides every response, buffered
  (``function``) or streamed (``stream_function`` yielding ``str`` / :class:`DeltaToolCall`
  / :class:`DeltaThinking` items that become part events with stable indexes).
* :func:`generate_from_schema` — the schema-valid value generator TestModel uses.
* :func:`estimate_usage` — the documented, deterministic token estimate both models report.
* :func:`response_events` — replays a finished ResponseMessage as part events (text in
  words, tool arguments in chunks); handy for custom streaming doubles.

Both models implement :class:`zigai.model.Model`, accept every capability by default
(:data:`PERMISSIVE_PROFILE`; pass ``profile=`` to test capability gating), honour the
request's cancellation token and deadlines, and record ``last_request`` for assertions.
Their streamed responses accumulate to the same message their buffered call returns.
"""

from __future__ import annotations

from zigai.testing._common import (
    ARGS_CHUNK_CHARS,
    MEDIA_ITEM_TOKENS,
    PERMISSIVE_PROFILE,
    InvalidFunctionResponse,
    InvalidTestModelConfig,
    MissingModelFunction,
    estimate_tokens,
    estimate_usage,
    response_events,
)
from zigai.testing._function_model import (
    AgentInfo,
    DeltaThinking,
    DeltaToolCall,
    FunctionModel,
    ModelFunction,
    StreamFunction,
    StreamItem,
)
from zigai.testing._test_model import NO_TOOL_CALLS_TEXT, TestModel
from zigai.testing.schema_data import (
    DEFAULT_MAX_ATTEMPTS,
    SchemaGenerationFailed,
    generate_from_schema,
)

__all__ = [
    "TestModel",
    "FunctionModel",
    "AgentInfo",
    "DeltaToolCall",
    "DeltaThinking",
    "StreamItem",
    "ModelFunction",
    "StreamFunction",
    "generate_from_schema",
    "estimate_usage",
    "estimate_tokens",
    "response_events",
    "PERMISSIVE_PROFILE",
    "NO_TOOL_CALLS_TEXT",
    "MEDIA_ITEM_TOKENS",
    "ARGS_CHUNK_CHARS",
    "DEFAULT_MAX_ATTEMPTS",
    "SchemaGenerationFailed",
    "MissingModelFunction",
    "InvalidFunctionResponse",
    "InvalidTestModelConfig",
]
