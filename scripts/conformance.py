#!/usr/bin/env python3
"""Replay the conformance corpus through the real Agent, adapters and a strict ReplayTransport.

Usage::

    python scripts/conformance.py [--scenarios FILE] [PATH ...]
    python scripts/conformance.py --scenarios cassettes/own-scenarios.yaml cassettes   # ours

PATHs are cassette files or folders (default: ``$ZIGAI_CONFORMANCE_DIR/zigai-cassettes``,
where ``ZIGAI_CONFORMANCE_DIR`` defaults to ``../shared/conformance`` beside the checkout).
For every cassette the runner finds the scenario family in
``cassettes/conformance-scenarios.yaml`` (``--scenarios FILE`` entries take precedence),
builds the neutral run it describes and replays it with strict matching of method, URI and
JSON body value.  From a recording it takes only the provider route (URI), the model id (the
``model`` field or the Gemini resource path) and the named provider (file name); prompts,
tools, settings and expectations come from the scenario.

Prints ``PASS path``, ``FAIL path: reason`` or ``SKIP path: reason`` per cassette and ends
with ``N passed, M failed, K skipped``.  Exits 1 when anything failed.  Routes that belong to
later work are skipped with that reason, never passed.
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import json
import os
import sys
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import yaml  # noqa: E402

DEFAULT_SCENARIOS = ROOT / "cassettes" / "conformance-scenarios.yaml"
FAMILIES = frozenset(
    {"buffered", "function-tool", "streamed-text", "streamed-function-tool",
     "structured-output", "thinking", "provider-error", "provider-files"}
)
STREAMED_FAMILIES = frozenset({"streamed-text", "streamed-function-tool", "thinking"})
EXPECT_KEYS = frozenset(
    {"output", "output_contains", "tool_calls", "tool_names", "native_tool_calls", "requests",
     "thinking", "error", "status", "file", "download_json"}
)
SCENARIO_KEYS = frozenset(
    {"match", "family", "system", "prompt", "prompt_parts", "history", "tool", "tool_until_returned", "settings",
     "output_schema", "output_name", "output_mode", "profile", "chat_options", "responses_options",
     "follow_up", "retry",
     "runs", "expect", "file", "operations", "builtin_tools"}
)
OUTPUT_MODES = frozenset({"native", "tool"})
PROFILE_KEYS = frozenset({"sampling", "reasoning_efforts"})
CHAT_OPTION_KEYS = frozenset({"replay_reasoning_field"})
RESPONSES_OPTION_KEYS = frozenset({"replay_reasoning"})
RUN_KEYS = frozenset({"expect", "model"})
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
FILE_KEYS = frozenset({"filename", "content", "media_type", "purpose"})
FILE_OPERATIONS = ("upload", "inspect", "download", "delete")
FILE_PROVIDERS = ("anthropic", "google", "openai")
BUILTIN_TOOLS = frozenset({"web_search", "web_fetch", "code_execution", "tool_search"})
# Routes the corpus records but this port implements in later work (none today).
LATER_WORK: dict[str, str] = {}
NAMED_COMPATIBLE = (
    "azure_openai", "bedrock", "cerebras", "cohere", "crusoe", "deepseek", "doubleword", "groq",
    "huggingface", "mistral", "ollama", "openrouter", "ovhcloud", "snowflake", "together", "zai",
)


class ScenarioError(Exception):
    """The scenarios file is malformed."""


class Skip(Exception):
    """This cassette cannot run here, for the stated reason."""


def default_corpus() -> Path:
    base = os.environ.get("ZIGAI_CONFORMANCE_DIR") or str(ROOT.parent / "shared" / "conformance")
    return Path(base) / "zigai-cassettes"


# --------------------------------------------------------------------------- scenarios


@dataclass(frozen=True)
class Scenario:
    match: str
    family: str
    prompt: str | tuple[Any, ...]
    system: str | None = None
    tool: dict[str, Any] | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    output_schema: dict[str, Any] | None = None
    output_name: str = "response"
    retry: dict[str, Any] | None = None
    runs: tuple[dict[str, Any], ...] = ()
    expect: dict[str, Any] = field(default_factory=dict)
    file: dict[str, Any] | None = None
    operations: tuple[str, ...] = ()
    builtin_tools: tuple[str, ...] = ()
    history: tuple[dict[str, Any], ...] = ()
    tool_until_returned: bool = False
    output_mode: str = "native"
    profile: dict[str, Any] | None = None
    chat_options: dict[str, Any] | None = None
    responses_options: dict[str, Any] | None = None
    follow_up: str | None = None
    prompt_parts: tuple[Any, ...] = ()


def _check_prompt(value: Any, where: str) -> str | tuple[Any, ...]:
    """A prompt is one string, or a list of parts: strings (text) and ``{image: {...}}``."""
    if isinstance(value, str) and value:
        return value
    if not isinstance(value, list) or not value:
        raise ScenarioError(f"{where}: 'prompt' is required (a string or a non-empty list)")
    return _check_items(value, "prompt", where)


def _check_prompt_parts(value: Any, where: str) -> tuple[Any, ...]:
    """``prompt_parts``: a list in the ``prompt`` list syntax, sent before the prompt."""
    if value is None:
        return ()
    if not isinstance(value, list) or not value:
        raise ScenarioError(f"{where}: 'prompt_parts' must be a non-empty list of parts")
    return _check_items(value, "prompt_parts", where)


def _check_items(value: list[Any], key: str, where: str) -> tuple[Any, ...]:
    for index, item in enumerate(value):
        if isinstance(item, str):
            continue
        image = item.get("image") if isinstance(item, dict) and set(item) == {"image"} else None
        if not (isinstance(image, dict) and set(image) == {"media_type", "base64"}
                and all(isinstance(image[k], str) and image[k] for k in image)):
            raise ScenarioError(
                f"{where}: {key}[{index}] must be a string or "
                "{image: {media_type: STR, base64: STR}}"
            )
    return tuple(value)


def _check_builtin_tools(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ScenarioError(f"{where}: 'builtin_tools' must be a list of names")
    unknown = sorted(set(value) - BUILTIN_TOOLS)
    if unknown:
        raise ScenarioError(f"{where}: unknown builtin tools {unknown}")
    if len(set(value)) != len(value):
        raise ScenarioError(f"{where}: 'builtin_tools' names a tool twice")
    return tuple(value)


def _check_settings(value: Any, where: str) -> dict[str, Any]:
    """Portable settings; ``extra_body`` is a tagged extension ``{tag: STR, body: {...}}``."""
    settings = dict(value or {})
    extra = settings.get("extra_body")
    if extra is not None and not (
        isinstance(extra, dict) and set(extra) == {"tag", "body"}
        and isinstance(extra["tag"], str) and isinstance(extra["body"], dict)
    ):
        raise ScenarioError(f"{where}: settings.extra_body must be {{tag: STR, body: {{...}}}}")
    return settings


def load_scenarios(path: Path) -> list[Scenario]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("scenarios"), list):
        raise ScenarioError(f"{path}: expected a mapping with a 'scenarios' list")
    found = []
    for index, raw in enumerate(data["scenarios"]):
        where = f"{path}: scenarios[{index}]"
        if not isinstance(raw, dict):
            raise ScenarioError(f"{where}: must be a mapping")
        unknown = set(raw) - SCENARIO_KEYS
        if unknown:
            raise ScenarioError(f"{where}: unknown keys {sorted(unknown)}")
        for key in ("match", "family"):
            if not isinstance(raw.get(key), str) or not raw[key]:
                raise ScenarioError(f"{where}: '{key}' is required")
        if raw.get("family") == "provider-files" and raw.get("prompt") is None:
            prompt: str | tuple[Any, ...] = ""
        else:
            prompt = _check_prompt(raw.get("prompt"), where)
        if raw["family"] not in FAMILIES:
            raise ScenarioError(f"{where}: unknown family {raw['family']!r}")
        if raw["family"] == "provider-files":
            _check_file_scenario(raw, where)
        expectations = [raw.get("expect") or {}] + [r.get("expect") or {} for r in raw.get("runs") or []]
        for expect in expectations:
            bad = set(expect) - EXPECT_KEYS
            if bad:
                raise ScenarioError(f"{where}: unknown expectation keys {sorted(bad)}")
        if raw["family"] == "provider-error" and not raw.get("runs"):
            raise ScenarioError(f"{where}: provider-error scenarios need 'runs'")
        for run in raw.get("runs") or []:
            if not isinstance(run, dict) or set(run) - RUN_KEYS or not isinstance(run.get("model", "m"), str):
                raise ScenarioError(f"{where}: each run is {{expect: ..., model: STR}} (model optional)")
        if raw["family"] == "structured-output" and not isinstance(raw.get("output_schema"), dict):
            raise ScenarioError(f"{where}: structured-output scenarios need 'output_schema'")
        history = raw.get("history") or []
        if not isinstance(history, list) or not all(isinstance(m, dict) for m in history):
            raise ScenarioError(f"{where}: 'history' must be a list of version-2 history messages")
        if raw.get("output_mode", "native") not in OUTPUT_MODES:
            raise ScenarioError(f"{where}: 'output_mode' must be one of {sorted(OUTPUT_MODES)}")
        profile = raw.get("profile")
        if profile is not None and not (
            isinstance(profile, dict) and set(profile) <= PROFILE_KEYS
            and isinstance(profile.get("sampling", False), bool)
            and isinstance(profile.get("reasoning_efforts", []), list)
        ):
            raise ScenarioError(f"{where}: 'profile' takes {{sampling: BOOL, reasoning_efforts: [...]}}")
        chat_options = raw.get("chat_options")
        if chat_options is not None and not (isinstance(chat_options, dict)
                                             and set(chat_options) <= CHAT_OPTION_KEYS):
            raise ScenarioError(f"{where}: 'chat_options' takes only {sorted(CHAT_OPTION_KEYS)}")
        responses_options = raw.get("responses_options")
        if responses_options is not None and not (
            isinstance(responses_options, dict) and set(responses_options) <= RESPONSES_OPTION_KEYS
            and all(isinstance(v, bool) for v in responses_options.values())
        ):
            raise ScenarioError(f"{where}: 'responses_options' takes only "
                                f"{sorted(RESPONSES_OPTION_KEYS)} (true or false)")
        follow_up = raw.get("follow_up")
        if follow_up is not None and not (isinstance(follow_up, str) and follow_up):
            raise ScenarioError(f"{where}: 'follow_up' must be a prompt string")
        if not isinstance(raw.get("tool_until_returned", False), bool):
            raise ScenarioError(f"{where}: 'tool_until_returned' must be true or false")
        found.append(
            Scenario(
                match=raw["match"], family=raw["family"], prompt=prompt,
                system=raw.get("system"), tool=raw.get("tool"),
                settings=_check_settings(raw.get("settings"), where),
                output_schema=raw.get("output_schema"),
                output_name=raw.get("output_name", "response"), retry=raw.get("retry"),
                runs=tuple(raw.get("runs") or ()), expect=dict(raw.get("expect") or {}),
                file=raw.get("file"), operations=tuple(raw.get("operations") or ()),
                builtin_tools=_check_builtin_tools(raw.get("builtin_tools"), where),
                history=tuple(history), tool_until_returned=raw.get("tool_until_returned", False),
                output_mode=raw.get("output_mode", "native"), profile=profile,
                chat_options=chat_options, responses_options=responses_options,
                follow_up=follow_up,
                prompt_parts=_check_prompt_parts(raw.get("prompt_parts"), where),
            )
        )
    return found


def _check_file_scenario(raw: dict[str, Any], where: str) -> None:
    spec = raw.get("file")
    if not isinstance(spec, dict) or not {"filename", "content", "media_type"} <= set(spec):
        raise ScenarioError(f"{where}: provider-files scenarios need file: {{filename, content, "
                            "media_type[, purpose]}")
    unknown = set(spec) - FILE_KEYS
    if unknown:
        raise ScenarioError(f"{where}: unknown file keys {sorted(unknown)}")
    operations = raw.get("operations")
    if (not isinstance(operations, list) or not operations or operations[0] != "upload"
            or any(op not in FILE_OPERATIONS for op in operations)):
        raise ScenarioError(f"{where}: operations must start with upload and use only "
                            f"{', '.join(FILE_OPERATIONS)}")


def find_scenario(relative: str, scenarios: list[Scenario]) -> Scenario | None:
    for scenario in scenarios:
        if fnmatch.fnmatchcase(relative, scenario.match):
            return scenario
    return None


# --------------------------------------------------------------------------- routes


@dataclass(frozen=True)
class Route:
    kind: str
    api_root: str
    model_id: str
    named: str | None


def detect_route(path: Path, first: Any) -> Route:
    uri = first.uri
    parts = urlsplit(uri)
    body = first.request_body
    content = body.content if body is not None and body.type == "json" else {}
    model_id = content.get("model") if isinstance(content, dict) else None
    stem = path.stem
    # The named provider is the file name (corpus: ``buffered/groq.yaml``) or, for the
    # project's own recordings, the folder (``katan/groq/buffered_text.yaml``).
    named = next((n for n in sorted(NAMED_COMPATIBLE, key=len, reverse=True)
                  if stem == n or stem.startswith(n + "_") or path.parent.name == n), None)
    origin = f"{parts.scheme}://{parts.netloc}"
    p = parts.path
    if p.endswith("/files") or "/files/" in p:
        provider = next((n for n in FILE_PROVIDERS if stem == n or stem.startswith(n + "_")), None)
        root = p.rsplit("/files", 1)[0]
        if root.startswith("/upload/"):  # Google's resumable upload root mirrors the API root
            root = root[len("/upload"):]
        return Route("provider-files", origin + root, "", provider)
    if p.endswith("/converse") or p.endswith("/converse-stream"):
        from urllib.parse import unquote

        encoded = p.removeprefix("/model/").rsplit("/", 1)[0]
        return Route("bedrock-converse", origin, unquote(encoded), None)
    if p.endswith("/conversations"):
        root = origin + p[: -len("/conversations")]
        return Route("mistral-conversations", root, model_id or "", None)
    if p.endswith("/v2/chat"):
        return Route("cohere-v2", origin + p[: -len("/chat")], model_id or "", None)
    if ":generateContent" in p or ":streamGenerateContent" in p:
        root, _, rest = p.partition("/models/")
        return Route("gemini", origin + root, rest.split(":", 1)[0], None)
    if p.endswith("/chat/completions"):
        return Route("chat-completions", origin + p[: -len("/chat/completions")], model_id or "", named)
    if p.endswith("/responses"):
        kind = "azure-responses" if parts.netloc.endswith(".openai.azure.com") else "openai-responses"
        return Route(kind, origin + p[: -len("/responses")], model_id or "", None)
    if p.endswith("/messages"):
        return Route("anthropic-messages", origin + p[: -len("/messages")], model_id or "", None)
    raise Skip(f"no adapter route recognizes {uri}")


def _import(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise Skip(f"{module} is not implemented yet ({exc})") from None


def _openai_profile(profile: dict[str, Any]) -> Any:
    """The conservative profile of a model the catalog does not know (a local server's),
    with what the scenario says that server accepts."""
    import dataclasses

    from zigai.providers.openai import profiles

    settings = profiles.BASE_SETTINGS
    if profile.get("sampling"):
        settings = settings | profiles.SAMPLING_SETTINGS
    efforts = frozenset(profile.get("reasoning_efforts", ()))
    if not efforts:
        return dataclasses.replace(profiles.UNKNOWN_PROFILE, settings=settings)
    return dataclasses.replace(profiles.UNKNOWN_PROFILE, settings=settings, supports_thinking=True,
                               reasoning_efforts=efforts)


def build_model(route: Route, transport: Any, profile: dict[str, Any] | None = None,
                chat_options: dict[str, Any] | None = None,
                responses_options: dict[str, Any] | None = None) -> Any:
    """The adapter client for a route, configured only from route facts (and, for a model
    the catalog does not know, the scenario's ``profile``; for a Chat Completions server, its
    ``chat_options``; for a Responses one, its ``responses_options``)."""
    from zigai.security import UrlPolicy

    if route.kind in LATER_WORK:
        raise Skip(LATER_WORK[route.kind])
    if profile is not None and route.kind != "openai-responses":
        raise AssertionError(f"a scenario profile applies to openai-responses routes, not {route.kind}")
    if chat_options is not None and (route.kind != "chat-completions" or route.named is not None):
        raise AssertionError(f"chat_options apply to plain chat-completions routes, not {route.kind}")
    if responses_options is not None and route.kind != "openai-responses":
        raise AssertionError(f"responses_options apply to openai-responses routes, not {route.kind}")
    host = urlsplit(route.api_root).hostname or ""
    # Recordings on reserved test hosts (*.test) and of local servers (loopback) need an
    # explicit local-development policy.
    loopback = host in LOOPBACK_HOSTS
    policy = UrlPolicy.local_development() if host.endswith(".test") or loopback else UrlPolicy()
    key = "sk-conformance-not-a-secret"
    if route.kind == "openai-responses":
        openai = _import("zigai.providers.openai")
        provider = openai.Provider(key, transport=transport, base_url=route.api_root, url_policy=policy)
        options = responses_options or {}
        if profile is None:
            return openai.Client(route.model_id, provider, **options)
        return openai.Client(route.model_id, provider, profile=_openai_profile(profile), **options)
    if route.kind == "azure-responses":
        azure = _import("zigai.providers.azure_openai")
        provider = azure.Provider(key, transport, resource=host.split(".", 1)[0])
        return azure.ResponsesClient(route.model_id, provider)
    if route.kind == "bedrock-converse":
        bedrock = _import("zigai.providers.bedrock")
        provider = bedrock.Provider(key, host.split(".")[1], transport)
        return bedrock.Client(route.model_id, provider)
    if route.kind == "mistral-conversations":
        mistral = _import("zigai.providers.mistral")
        provider = mistral.ConversationsProvider(key, transport, base_url=route.api_root,
                                                 url_policy=policy)
        return mistral.ConversationsClient(route.model_id, provider)
    if route.kind == "cohere-v2":
        cohere = _import("zigai.providers.cohere")
        provider = cohere.ChatProvider(key, transport, base_url=route.api_root, url_policy=policy)
        return cohere.ChatClient(route.model_id, provider)
    if route.kind == "anthropic-messages":
        anthropic = _import("zigai.providers.anthropic")
        provider = anthropic.Provider(key, transport=transport, base_url=route.api_root, url_policy=policy)
        return anthropic.Client(route.model_id, provider)
    if route.kind == "gemini":
        google = _import("zigai.providers.google")
        provider = google.Provider(key, transport=transport, base_url=route.api_root, url_policy=policy)
        return google.Client(route.model_id, provider)
    if route.kind == "chat-completions":
        if route.named is None:
            compat = _import("zigai.providers.openai_compatible")
            provider = compat.Provider(
                key, transport=transport, base_url=route.api_root, name="openai_compatible",
                url_policy=policy,
            )
            if chat_options is None:
                return compat.Client(route.model_id, provider)
            return compat.Client(route.model_id, provider, options=compat.ChatOptions(**chat_options))
        module = _import(f"zigai.providers.{route.named}")
        # Deployment-scoped roots take their one route fact (resource, region) from the host;
        # every other named provider must reproduce the recording from its built-in root.
        if route.named == "azure_openai":
            resource = host.split(".", 1)[0]
            return module.ChatClient(route.model_id, module.Provider(key, transport, resource=resource))
        if route.named == "bedrock":
            region = host.split(".")[1]
            return module.MantleClient(route.model_id, module.MantleProvider(key, transport, region=region))
        if loopback:  # a local server standing in for the named provider's own root
            return module.Client(route.model_id, module.Provider(
                key, transport, base_url=route.api_root, url_policy=policy))
        return module.Client(route.model_id, module.Provider(key, transport))
    raise Skip(f"route {route.kind} is not implemented")


def build_file_provider(route: Route, transport: Any) -> Any:
    """The provider object whose file operations a files route exercises."""
    key = "sk-conformance-not-a-secret"
    if route.named == "openai":
        openai = _import("zigai.providers.openai")
        return openai.Provider(key, transport=transport, base_url=route.api_root)
    if route.named == "anthropic":
        anthropic = _import("zigai.providers.anthropic")
        return anthropic.Provider(key, transport, base_url=route.api_root)
    if route.named == "google":
        google = _import("zigai.providers.google")
        parts = urlsplit(route.api_root)
        upload = f"{parts.scheme}://{parts.netloc}/upload{parts.path}"
        return google.Provider(key, transport, base_url=route.api_root, upload_base_url=upload)
    raise Skip(f"no files provider is named by this cassette ({route.api_root})")


# --------------------------------------------------------------------------- runs


def _check_file(descriptor: Any, expect: dict[str, Any], provider_name: str) -> None:
    if descriptor.provider_name != provider_name:
        raise AssertionError(f"descriptor owner {descriptor.provider_name!r} != {provider_name!r}")
    for key, want in (expect.get("file") or {}).items():
        got = getattr(descriptor, key)
        if got != want:
            raise AssertionError(f"file {key} {got!r} != expected {want!r}")


def run_file_operations(provider: Any, scenario: Scenario) -> None:
    """Upload the scenario's file, then inspect / download / delete it through its handle."""
    from zigai.provider import ProviderFileInput

    spec = scenario.file or {}
    content = spec["content"].encode("utf-8")
    upload = ProviderFileInput(spec["filename"], content, spec["media_type"], spec.get("purpose"))
    with provider.upload_file(upload) as uploaded:
        _check_file(uploaded.value, scenario.expect, provider.name)
        handle = uploaded.uploaded_file()
    for operation in scenario.operations[1:]:
        if operation == "inspect":
            with provider.inspect_file(handle) as inspected:
                if inspected.value.file_id != handle.file_id:
                    raise AssertionError(f"inspected {inspected.value.file_id!r} != {handle.file_id!r}")
                _check_file(inspected.value, scenario.expect, provider.name)
        elif operation == "download":
            with provider.download_file(handle) as download:
                if "download_json" in scenario.expect:
                    got = json.loads(download.data)
                    if got != scenario.expect["download_json"]:
                        raise AssertionError(f"downloaded {got!r} != {scenario.expect['download_json']!r}")
        else:
            provider.delete_file(handle)


def _until_returned(ctx: Any) -> Any:
    """Offer the toolset's tools only until a tool return is in the history (a server that
    calls a declared tool on every turn, like llm-katan, then answers in text)."""
    from zigai.messages import RequestMessage, ToolReturnPart

    returned = any(isinstance(part, ToolReturnPart) for message in ctx.messages
                   if isinstance(message, RequestMessage) for part in message.parts)
    return () if returned else None


def _build_agent(scenario: Scenario, model: Any) -> Any:
    from zigai.agent import Agent, OutputChoice, OutputSpec
    from zigai.retry import RetryPolicy
    from zigai.tool import Tool
    from zigai.toolset import Toolset

    tools = []
    if scenario.tool is not None:
        spec = scenario.tool
        returns = spec.get("returns")

        def _weather(args: dict[str, Any]) -> Any:
            return returns

        tools.append(
            Tool.manual(
                spec["name"], spec.get("description", ""),
                spec.get("parameters", {"type": "object"}), _weather,
            )
        )
    toolsets = [Toolset(tools, prepare=_until_returned)] if scenario.tool_until_returned else []
    if toolsets:
        tools = []
    output = OutputSpec.text()
    if scenario.output_schema is not None and scenario.output_mode == "tool":
        output = OutputSpec.tool([OutputChoice(scenario.output_name, scenario.output_schema)])
    elif scenario.output_schema is not None:
        output = OutputSpec.json_schema(scenario.output_name, scenario.output_schema)
    retry = None
    if scenario.retry is not None:
        retry = RetryPolicy(
            max_attempts=int(scenario.retry.get("max_attempts", 1)),
            retry_on=frozenset(scenario.retry.get("retry_on", ())),
            initial_delay_ms=0, max_delay_ms=0, jitter=False, honor_retry_after=False,
        )
    kwargs: dict[str, Any] = {}
    if scenario.system is not None:
        kwargs["system_prompt"] = scenario.system
    if scenario.builtin_tools:
        from zigai.model import ManagedTool

        kwargs["builtin_tools"] = tuple(ManagedTool(name) for name in scenario.builtin_tools)
    return Agent(
        model=model, tools=tools, toolsets=toolsets, output=output,
        model_settings=_settings(scenario.settings), retry_policy=retry, **kwargs,
    )


def _settings(values: dict[str, Any]) -> Any:
    from zigai.settings import ModelSettings, ProviderExtraBody

    if not values:
        return None
    fields: dict[str, Any] = {key: tuple(value) if isinstance(value, list) else value
                              for key, value in values.items()}
    extra = fields.pop("extra_body", None)
    if extra is not None:
        fields["extra_body"] = ProviderExtraBody(extra["tag"], extra["body"])
    return ModelSettings(**fields)


def _prompt(scenario: Scenario) -> Any:
    """The run's user prompt: the string itself, or one content part per list item."""
    if isinstance(scenario.prompt, str):
        return scenario.prompt
    return _content(scenario.prompt)


def _content(items: Iterable[Any]) -> tuple[Any, ...]:
    """UserContent for checked list items: a string is text, ``{image: ...}`` an image."""
    import base64

    from zigai.messages import BytesSource, ImageContent, TextContent

    parts: list[Any] = []
    for item in items:
        if isinstance(item, str):
            parts.append(TextContent(item))
        else:
            image = item["image"]
            data = base64.b64decode(image["base64"], validate=True)
            parts.append(ImageContent(BytesSource(data, image["media_type"])))
    return tuple(parts)


def _history(scenario: Scenario) -> tuple[Any, ...]:
    """The scenario's prior messages, read through the canonical history codec."""
    if not scenario.history:
        return ()
    from zigai.history import parse

    with parse(json.dumps({"version": 2, "messages": list(scenario.history)})) as owned:
        return tuple(owned.messages)


def _run_once(agent: Any, scenario: Scenario) -> Any:
    from zigai.agent import RunOptions

    options = RunOptions(message_history=_history(scenario), prompt_parts=_content(scenario.prompt_parts))
    if scenario.family in STREAMED_FAMILIES:
        run_stream = getattr(agent, "run_stream", None)
        if run_stream is None:
            raise Skip("Agent.run_stream is not implemented yet")
        with run_stream(_prompt(scenario), options=options) as stream:
            for _ in stream:
                pass
            return stream.result()
    return agent.run(_prompt(scenario), options=options)


def _tool_calls(messages: Iterable[Any]) -> list[dict[str, Any]]:
    from zigai.messages import ResponseMessage, ToolCallPart

    calls = []
    for message in messages:
        if isinstance(message, ResponseMessage):
            for part in message.parts:
                if isinstance(part, ToolCallPart):
                    calls.append({"name": part.tool_name, "args": part.args_as_dict()})
    return calls


def _native_tool_calls(messages: Iterable[Any]) -> list[str]:
    from zigai.messages import NativeToolCallPart, ResponseMessage

    return [part.tool_name for message in messages if isinstance(message, ResponseMessage)
            for part in message.parts if isinstance(part, NativeToolCallPart)]


def check_result(result: Any, expect: dict[str, Any]) -> None:
    from zigai.messages import ResponseMessage, ThinkingPart

    output = result.output
    if "output" in expect:
        want = expect["output"]
        got = output
        if isinstance(want, (dict, list)) and isinstance(got, str):
            got = json.loads(got)
        if got != want:
            raise AssertionError(f"output {got!r} != expected {want!r}")
    if "output_contains" in expect:
        if not isinstance(output, str) or expect["output_contains"].lower() not in output.lower():
            raise AssertionError(f"output {output!r} does not contain {expect['output_contains']!r}")
    if "tool_calls" in expect:
        got_calls = _tool_calls(result.new_messages())
        if got_calls != expect["tool_calls"]:
            raise AssertionError(f"tool calls {got_calls!r} != expected {expect['tool_calls']!r}")
    if "tool_names" in expect:
        got_names = [call["name"] for call in _tool_calls(result.new_messages())]
        if got_names != expect["tool_names"]:
            raise AssertionError(f"tools called {got_names!r} != expected {expect['tool_names']!r}")
    if "native_tool_calls" in expect:
        got_native = _native_tool_calls(result.new_messages())
        if got_native != expect["native_tool_calls"]:
            raise AssertionError(
                f"provider-run tool calls {got_native!r} != expected {expect['native_tool_calls']!r}"
            )
    if "requests" in expect and result.usage.requests != expect["requests"]:
        raise AssertionError(f"{result.usage.requests} model requests, expected {expect['requests']}")
    if expect.get("thinking"):
        last = [m for m in result.messages if isinstance(m, ResponseMessage)][-1]
        if not any(isinstance(p, ThinkingPart) for p in last.parts):
            raise AssertionError("final response carries no thinking part")


def _error_category(exc: BaseException) -> str:
    from zigai import provider as p
    from zigai.errors import ProviderError

    if isinstance(exc, p.RateLimited):
        return "rate_limit"
    if isinstance(exc, p.ProviderServerError):
        return "server_error"
    if isinstance(exc, p.ProviderResponseDecodeError):
        return "decode"
    if isinstance(exc, ProviderError) and "Decode" in type(exc).__name__:
        return "decode"
    if isinstance(exc, p.ProviderBadRequest):
        return "bad_request"
    if isinstance(exc, p.ProviderAuthError):
        return "auth"
    if isinstance(exc, p.ProviderNotFound):
        return "not_found"
    if isinstance(exc, p.ProviderClientError):
        return "client_error"
    return type(exc).__name__


def run_cassette(path: Path, relative: str, scenarios: list[Scenario]) -> None:
    from support.cassettes import ReplayTransport

    transport = ReplayTransport.load(path)
    route = detect_route(path, transport.interactions[0])
    if route.kind == "provider-files":
        from support.file_redaction import file_filters

        transport = ReplayTransport.load(path, filters=file_filters())
    # A route that belongs to later work skips by its name before scenario lookup, so a
    # missing scenario is never hidden behind a later-work skip (or the other way round).
    if route.kind in LATER_WORK:
        raise Skip(LATER_WORK[route.kind])
    scenario = find_scenario(relative, scenarios)
    if scenario is None:
        raise Skip("no scenario matches this cassette")
    if route.kind == "provider-files" or scenario.family == "provider-files":
        if route.kind != "provider-files" or scenario.family != "provider-files":
            raise AssertionError(f"route {route.kind} does not fit family {scenario.family}")
        run_file_operations(build_file_provider(route, transport), scenario)
        transport.assert_all_consumed()
        return
    model = build_model(route, transport, scenario.profile, scenario.chat_options,
                        scenario.responses_options)
    agent = _build_agent(scenario, model)
    if scenario.family == "provider-error":
        for index, run in enumerate(scenario.runs):
            expect = run.get("expect") or {}
            run_agent = agent
            if "model" in run:  # this run asks for another model of the same route
                other = build_model(dataclasses.replace(route, model_id=run["model"]), transport,
                                    scenario.profile, scenario.chat_options,
                                    scenario.responses_options)
                run_agent = _build_agent(scenario, other)
            try:
                result = _run_once(run_agent, scenario)
            except Exception as exc:  # noqa: BLE001 - the expectation decides
                if "error" not in expect:
                    raise AssertionError(f"run {index}: unexpected {type(exc).__name__}: {exc}") from exc
                category = _error_category(exc)
                if category != expect["error"]:
                    raise AssertionError(
                        f"run {index}: error {category} ({type(exc).__name__}: {exc}) "
                        f"!= expected {expect['error']}"
                    ) from exc
                if "status" in expect and getattr(exc, "status", None) != expect["status"]:
                    raise AssertionError(
                        f"run {index}: status {getattr(exc, 'status', None)} != {expect['status']}"
                    ) from exc
                continue
            with result:
                if "error" in expect:
                    raise AssertionError(f"run {index}: expected {expect['error']}, got success")
                check_result(result, expect)
    else:
        with _run_once(agent, scenario) as result:
            check_result(result, scenario.expect)
            if scenario.follow_up is not None:
                _run_follow_up(agent, scenario.follow_up, result.messages)
    transport.assert_all_consumed()


def _run_follow_up(agent: Any, prompt: str, history: tuple[Any, ...]) -> None:
    """A second, buffered turn over the first run's conversation (what a recording of a
    provider's replay rule, for reasoning say, holds after its first exchange)."""
    from zigai.agent import RunOptions

    with agent.run(prompt, options=RunOptions(message_history=history)) as second:
        check_result(second, {"requests": 1})


def iter_cassettes(paths: list[Path]) -> Iterable[tuple[Path, Path]]:
    for base in paths:
        if base.is_file():
            yield base, base.parent
        else:
            for path in sorted(base.rglob("*.yaml")):
                if not path.name.endswith("scenarios.yaml"):  # scenario files, not recordings
                    yield path, base


def run(paths: list[Path], scenarios: list[Scenario], out: Any = sys.stdout) -> tuple[int, int, int]:
    passed = failed = skipped = 0
    for path, base in iter_cassettes(paths):
        relative = path.relative_to(base).as_posix()
        try:
            run_cassette(path, relative, scenarios)
        except Skip as exc:
            skipped += 1
            print(f"SKIP {relative}: {exc}", file=out)
        except Exception as exc:  # noqa: BLE001 - every failure is reported, not raised
            failed += 1
            reason = f"{type(exc).__name__}: {exc}".replace("\n", " ")[:600]
            print(f"FAIL {relative}: {reason}", file=out)
            if os.environ.get("ZIGAI_CONFORMANCE_TRACEBACK"):
                traceback.print_exc(file=out)
        else:
            passed += 1
            print(f"PASS {relative}", file=out)
    print(f"{passed} passed, {failed} failed, {skipped} skipped", file=out)
    return passed, failed, skipped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Replay the conformance corpus strictly.")
    parser.add_argument("--scenarios", type=Path, help="extra scenarios (take precedence)")
    parser.add_argument("paths", nargs="*", type=Path, help="cassette files or folders")
    args = parser.parse_args(argv)
    scenarios = load_scenarios(DEFAULT_SCENARIOS)
    if args.scenarios is not None:
        scenarios = load_scenarios(args.scenarios) + scenarios
    paths = args.paths or [default_corpus()]
    missing = [p for p in paths if not p.exists()]
    if missing:
        parser.error(f"not found: {', '.join(map(str, missing))}")
    _, failed, _ = run(paths, scenarios)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
