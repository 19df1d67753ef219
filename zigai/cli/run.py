"""``zigai run``: compose one Agent from settings, run it, print, persist history.

Composition only — the agent loop, tools, output validation and history are the library's:

1. settings (flags > ``ZIGAI_MODEL`` > config file) → model via :func:`zigai.models.infer_model`;
   with no model configured the deterministic ``test`` model is used and a notice says so on
   stderr (so a fresh offline machine still runs tools, history and output end to end);
2. ``--tools`` → reflected tools, each ``--mcp-stdio "CMD ARGS"`` → one MCP stdio server as a
   dynamic toolset (:mod:`zigai.cli.mcp_stdio`; closed when the command ends),
   ``--output-schema`` → one structured-output choice (native
   when the model's profile supports JSON Schema output, else tool output, else prompted);
3. ``--history FILE`` → canonical history loaded before and saved (atomically) after the run;
4. output: the final answer on stdout (structured output as JSON), or with ``--json`` one JSON
   object ``{"output", "output_name", "model", "finish_reason", "usage", "cost"}``, or with
   ``--events agui`` the run's AG-UI events as JSON lines (:mod:`zigai.cli.events`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass, replace
from typing import Any, TextIO

from zigai.cli.config import RunSettings
from zigai.cli.errors import CliUsageError, ExitCode
from zigai.cli.files import check_writable, load_history, read_json_file, save_history

__all__ = ["Invocation", "TEST_MODEL_NOTICE", "build_agent", "run_command", "result_json", "usage_json"]

TEST_MODEL_NOTICE = (
    "zigai: no model configured; using the deterministic offline 'test' model "
    "(choose one with --model, e.g. --model openai:gpt-5-mini)"
)


@dataclass(frozen=True, slots=True)
class Invocation:
    """One command's resolved inputs besides the agent settings."""

    settings: RunSettings
    history: str | None = None
    json_output: bool = False
    stream: bool = False
    pause_file: str = "zigai-pause.json"
    events: str | None = None


def resolve_settings(settings: RunSettings, env: Mapping[str, str]) -> RunSettings:
    """Apply the environment layer (``ZIGAI_MODEL``) under explicit settings."""
    if settings.model is None and not settings.spec and env.get("ZIGAI_MODEL"):
        return replace(settings, model=env["ZIGAI_MODEL"])
    return settings


def _output_spec(path: str, profile: Any) -> Any:
    from zigai.json import defaults
    from zigai.json_schema import validate_schema
    from zigai.output import OutputChoice, OutputSpec

    schema = read_json_file(path, defaults.json_schema, "output schema")
    if not isinstance(schema, dict):
        raise CliUsageError(f"output schema {path!r} must be a JSON object")
    try:
        validate_schema(schema)
        choices = [OutputChoice("result", schema)]
        if profile.json_schema_output:
            return OutputSpec.native(choices)
        if profile.supports_tools:
            return OutputSpec.tool(choices)
        return OutputSpec.prompted(choices)
    except Exception as exc:  # InvalidOutputSpec, InvalidJsonSchema ...
        raise CliUsageError(f"output schema {path!r} is not usable: {exc}") from None


def retry_policy(settings: RunSettings) -> Any:
    """The CLI's retry policy: ``RetryPolicy()``'s defaults with ``retries + 1`` attempts."""
    from zigai.cli.config import DEFAULT_RETRIES
    from zigai.retry import RetryPolicy

    retries = DEFAULT_RETRIES if settings.retries is None else settings.retries
    return RetryPolicy(max_attempts=retries + 1)


def build_agent(settings: RunSettings, env: Mapping[str, str], err: TextIO, stack: ExitStack | None = None) -> Any:
    """The Agent ``settings`` describe (announcing the offline test model when it is used).

    MCP stdio servers are started here and registered on ``stack`` for shutdown; settings
    that name servers need a stack.
    """
    from zigai.agent import Agent, RunLimits
    from zigai.cli.tools_file import load_tools
    from zigai.models import infer_model

    if settings.spec:
        from zigai.cli.spec import spec_agent

        if stack is None:
            raise CliUsageError("an agent spec needs a stack that closes what it starts")
        return spec_agent(settings, env, stack)
    if settings.model is None:
        model = infer_model("test")
    else:
        model = infer_model(settings.model, env=env, api_key_env=settings.api_key_env)
    options: dict[str, Any] = {}
    if settings.system:
        options["instructions"] = settings.system
    if settings.tools:
        options["tools"] = load_tools(settings.tools)
    if settings.mcp_stdio:
        from zigai.cli.mcp_stdio import mcp_toolsets

        if stack is None:
            raise CliUsageError("MCP stdio servers need a stack that closes them")
        options["toolsets"] = mcp_toolsets(settings.mcp_stdio, stack, settings.mcp_env or (),
                                           inherit_env=bool(settings.mcp_inherit_env))
    if settings.output_schema:
        options["output"] = _output_spec(settings.output_schema, model.profile)
    if settings.max_requests is not None:
        options["limits"] = RunLimits(max_requests=settings.max_requests)
    if settings.timeout is not None:
        options["run_timeout_ms"] = max(1, int(settings.timeout * 1000))
    options["retry_policy"] = retry_policy(settings)
    agent = Agent(model, name="zigai-cli", **options)
    if settings.model is None:
        err.write(TEST_MODEL_NOTICE + "\n")
    return agent


def usage_json(usage: Any) -> dict[str, Any]:
    """RunUsage as a flat JSON object (token counters, request and tool-call counts)."""
    value = {
        "requests": usage.requests, "tool_calls": usage.tool_calls,
        "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens, "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens, "reasoning_tokens": usage.reasoning_tokens,
    }
    if usage.details:
        value["details"] = dict(usage.details)
    return value


def _cost(model: Any, usage: Any) -> dict[str, Any] | None:
    try:
        from zigai import pricing

        table = pricing.builtin()
        cost = table.estimate(str(model.provider_name), str(model.model_name), usage)
    except Exception:  # pricing is optional: an unknown or unpriced model has no cost
        return None
    if cost is None:
        return None
    return {"usd": str(cost.usd), "nano_usd": cost.nano_usd, "price_table": table.version}


def result_json(result: Any, model: Any) -> dict[str, Any]:
    """The ``--json`` document for a finished result."""
    finish = result.finish_reason
    return {
        "output": result.output,
        "output_name": result.output_name,
        "model": f"{getattr(model, 'provider_name', '?')}:{getattr(model, 'model_name', '?')}",
        "finish_reason": None if finish is None else getattr(finish, "value", str(finish)),
        "usage": usage_json(result.usage),
        "cost": _cost(model, result.usage),
    }


def print_result(result: Any, agent: Any, invocation: Invocation, out: TextIO, progress: Any) -> None:
    """Print the final answer (or the JSON document) for a finished run."""
    if invocation.json_output:
        out.write(json.dumps(result_json(result, agent.model), ensure_ascii=False) + "\n")
        return
    if progress is not None and progress.text_written:
        out.write("\n")  # the answer already streamed
        return
    output = result.output
    text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, indent=2)
    out.write(text + "\n")


def finish(result: Any, agent: Any, invocation: Invocation, out: TextIO, progress: Any) -> int:
    """Print the answer, then save the history: a failing save never loses a paid answer."""
    with result:
        print_result(result, agent, invocation, out, progress)
        out.flush()
        if invocation.history:
            save_history(invocation.history, result.messages)
    return ExitCode.ok


def check_output_paths(invocation: Invocation) -> None:
    """Refuse unwritable ``--history`` / ``--pause-file`` paths before any request is made.

    The pause file is checked only when tools are configured (only a tool call can pause)."""
    if invocation.history:
        check_writable(invocation.history, "history file")
    if invocation.settings.tools:
        check_writable(invocation.pause_file, "pause file")


def run_command(prompt: str, invocation: Invocation, env: Mapping[str, str],
                out: TextIO, err: TextIO) -> int:
    """``zigai run PROMPT`` (returns the exit code; exceptions are mapped by the caller)."""
    from zigai.cli import approvals

    if not prompt.strip():
        raise CliUsageError("the prompt is empty")
    settings = resolve_settings(invocation.settings, env)
    invocation = replace(invocation, settings=settings)
    check_output_paths(invocation)
    with ExitStack() as stack:
        agent = build_agent(settings, env, err, stack)
        history = load_history(invocation.history) if invocation.history else ()
        if invocation.events == "agui":
            from zigai.cli.events import run_agui_events

            return run_agui_events(agent, prompt, history, invocation, out, err)
        progress = approvals.progress_for(invocation, out, err)
        outcome = approvals.start(agent, prompt, history, progress)
        if outcome.paused is not None:
            return approvals.save_pause(outcome.paused, invocation, err)
        return finish(outcome.result, agent, invocation, out, progress)
