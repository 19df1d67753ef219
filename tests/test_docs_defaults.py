"""The defaults table of docs/agents.md ("## Defaults") equals the code's defaults.

Each row names a setting and states its default as a Python literal; this test reads the
value from the code (dataclass field defaults, constructor signatures, module constants, the
CLI parser) and compares.  A row the test does not know, or a known setting missing from the
table, fails too, so neither side can drift or drop a default silently.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from zigai.agent import Agent, RunLimits
from zigai.agent.config import AgentConfig
from zigai.cli import build_parser
from zigai.cli.config import DEFAULT_RETRIES
from zigai.retry import RetryPolicy
from zigai.tool import ToolLimits
from zigai.tool.scheduler import DEFAULT_MAX_ABANDONED_TOOL_THREADS
from zigai.transport import HttpTransport, Limits

AGENTS_MD = Path(__file__).resolve().parent.parent / "docs" / "agents.md"


def _field(cls: type, name: str) -> Any:
    for field in dataclasses.fields(cls):
        if field.name == name:
            assert field.default is not dataclasses.MISSING, f"{cls.__name__}.{name} has no plain default"
            return field.default
    raise AssertionError(f"{cls.__name__} has no field {name}")


def _parameter(fn: Callable[..., Any], name: str) -> Any:
    default = inspect.signature(fn).parameters[name].default
    assert default is not inspect.Parameter.empty, f"{fn.__qualname__}({name}) has no default"
    return default


def _cli_run_default(dest: str) -> Any:
    return getattr(build_parser().parse_args(["run", "a prompt"]), dest)


CODE_DEFAULTS: dict[str, Callable[[], Any]] = {
    "RunLimits.max_requests": lambda: _field(RunLimits, "max_requests"),
    "RunLimits.max_tool_calls": lambda: _field(RunLimits, "max_tool_calls"),
    "Agent.url_policy": lambda: _field(AgentConfig, "url_policy"),
    "RunLimits.max_input_tokens": lambda: _field(RunLimits, "max_input_tokens"),
    "Agent.run_timeout_ms": lambda: _field(AgentConfig, "run_timeout_ms"),
    "Agent.request_timeout_ms": lambda: _field(AgentConfig, "request_timeout_ms"),
    "Agent.max_tool_retries": lambda: _field(AgentConfig, "max_tool_retries"),
    "Agent.max_output_retries": lambda: _field(AgentConfig, "max_output_retries"),
    "Agent.retry_policy": lambda: _field(AgentConfig, "retry_policy"),
    "RetryPolicy.max_attempts": lambda: _field(RetryPolicy, "max_attempts"),
    "RetryPolicy.initial_delay_ms": lambda: _field(RetryPolicy, "initial_delay_ms"),
    "RetryPolicy.multiplier": lambda: _field(RetryPolicy, "multiplier"),
    "RetryPolicy.max_delay_ms": lambda: _field(RetryPolicy, "max_delay_ms"),
    "RetryPolicy.max_total_delay_ms": lambda: _field(RetryPolicy, "max_total_delay_ms"),
    "RetryPolicy.jitter": lambda: _field(RetryPolicy, "jitter"),
    "RetryPolicy.honor_retry_after": lambda: _field(RetryPolicy, "honor_retry_after"),
    "zigai run --retries": lambda: DEFAULT_RETRIES,
    "zigai run --pause-file": lambda: _cli_run_default("pause_file"),
    "HttpTransport.default_timeout_s": lambda: _parameter(HttpTransport, "default_timeout_s"),
    "HttpTransport.max_connections_per_host": lambda: _parameter(HttpTransport, "max_connections_per_host"),
    "Limits.max_response_body_bytes": lambda: _field(Limits, "max_response_body_bytes"),
    "Limits.max_stream_line_bytes": lambda: _field(Limits, "max_stream_line_bytes"),
    "ToolLimits.timeout_ms": lambda: _field(ToolLimits, "timeout_ms"),
    "ToolLimits.max_active": lambda: _field(ToolLimits, "max_active"),
    "ToolLimits.max_queued": lambda: _field(ToolLimits, "max_queued"),
    "ToolLimits.max_result_bytes": lambda: _field(ToolLimits, "max_result_bytes"),
    "max_abandoned_tool_threads()": lambda: DEFAULT_MAX_ABANDONED_TOOL_THREADS,
}

ROW = re.compile(r"^\| `([^`]+)` \| `([^`]+)` \| (.+) \|$")


def _documented() -> dict[str, Any]:
    text = AGENTS_MD.read_text(encoding="utf-8")
    section = text.split("\n## Defaults\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, Any] = {}
    for line in section.splitlines():
        match = ROW.match(line)
        if match:
            name, literal, meaning = match.groups()
            assert name not in rows, f"{name} is documented twice"
            assert meaning.strip(), f"{name}: say what the default means"
            rows[name] = ast.literal_eval(literal)
    return rows


DOCUMENTED = _documented()


def test_the_table_documents_exactly_the_known_defaults() -> None:
    assert set(DOCUMENTED) - set(CODE_DEFAULTS) == set(), "teach this test where the new rows' defaults live"
    assert set(CODE_DEFAULTS) - set(DOCUMENTED) == set(), "document these defaults in docs/agents.md"


@pytest.mark.parametrize("name", sorted(CODE_DEFAULTS))
def test_documented_default_equals_the_code(name: str) -> None:
    actual, documented = CODE_DEFAULTS[name](), DOCUMENTED[name]
    assert type(actual) is type(documented) and actual == documented, (
        f"docs/agents.md says {name} defaults to {documented!r}, the code says {actual!r}"
    )


def test_a_model_value_is_not_retried_but_a_model_string_and_the_cli_are(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from zigai.cli.config import RunSettings
    from zigai.cli.run import retry_policy
    from zigai.testing import TestModel

    assert Agent(TestModel()).retry_policy is None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-only")
    assert Agent("openai:gpt-5-mini").retry_policy == RetryPolicy()
    assert Agent("test").retry_policy is None  # the offline test model has nothing to retry
    assert retry_policy(RunSettings()) == RetryPolicy(max_attempts=DEFAULT_RETRIES + 1)
    assert retry_policy(RunSettings(retries=0)) == RetryPolicy.no_retry()
