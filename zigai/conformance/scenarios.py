"""Language-neutral scenario files: what an implementation must do for each recording.

Job
    Load scenario files (YAML; the schema is ``scenario.schema.json`` beside this module,
    documented in docs/conformance.md), check them, and find the scenario of a cassette.

A scenario describes one *family* of recordings and applies to every cassette whose path,
relative to its cassette root, matches its ``match`` glob (``fnmatch``; ``*`` crosses ``/``).
The first matching entry wins; files given first take precedence.

Invariants
    * A file is validated against the shipped JSON Schema first, then by the checks below that
      a schema cannot express; any failure raises :class:`InvalidScenarios` naming the entry.
    * Normalizations apply only when a scenario names them (``normalize``), never globally.
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from zigai.conformance.normalize import NORMALIZATIONS
from zigai.errors import ConformanceError

__all__ = ["FAMILIES", "STREAMED_FAMILIES", "InvalidScenarios", "Scenario", "find_scenario", "load_scenarios",
           "scenario_schema"]

MAX_SCENARIO_BYTES = 4 * 1024 * 1024
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
    {"match", "family", "system", "prompt", "history", "tool", "tool_until_returned", "settings",
     "output_schema", "output_name", "output_mode", "profile", "chat_options", "responses_options",
     "follow_up", "retry",
     "runs", "expect", "file", "operations", "builtin_tools", "normalize"}
)
OUTPUT_MODES = frozenset({"native", "tool"})
PROFILE_KEYS = frozenset({"sampling", "reasoning_efforts"})
CHAT_OPTION_KEYS = frozenset({"replay_reasoning_field"})
RESPONSES_OPTION_KEYS = frozenset({"replay_reasoning"})
RUN_KEYS = frozenset({"expect", "model"})
FILE_KEYS = frozenset({"filename", "content", "media_type", "purpose"})
FILE_OPERATIONS = ("upload", "inspect", "download", "delete")
BUILTIN_TOOLS = frozenset({"web_search", "web_fetch", "code_execution", "tool_search"})


class InvalidScenarios(ConformanceError):
    """A scenario file breaks the scenario schema (the message names the file and the entry)."""


@lru_cache(maxsize=1)
def scenario_schema() -> dict[str, Any]:
    """The JSON Schema of a scenario file (shipped as ``scenario.schema.json``)."""
    text = resources.files("zigai.conformance").joinpath("scenario.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


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
    normalize: frozenset[str] = frozenset()


def _check_prompt(value: Any, where: str) -> str | tuple[Any, ...]:
    """A prompt is one string, or a list of parts: strings (text) and ``{image: {...}}``."""
    if isinstance(value, str) and value:
        return value
    if not isinstance(value, list) or not value:
        raise InvalidScenarios(f"{where}: 'prompt' is required (a string or a non-empty list)")
    for index, item in enumerate(value):
        if isinstance(item, str):
            continue
        image = item.get("image") if isinstance(item, dict) and set(item) == {"image"} else None
        if not (isinstance(image, dict) and set(image) == {"media_type", "base64"}
                and all(isinstance(image[k], str) and image[k] for k in image)):
            raise InvalidScenarios(
                f"{where}: prompt[{index}] must be a string or "
                "{image: {media_type: STR, base64: STR}}"
            )
    return tuple(value)


def _check_builtin_tools(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidScenarios(f"{where}: 'builtin_tools' must be a list of names")
    unknown = sorted(set(value) - BUILTIN_TOOLS)
    if unknown:
        raise InvalidScenarios(f"{where}: unknown builtin tools {unknown}")
    if len(set(value)) != len(value):
        raise InvalidScenarios(f"{where}: 'builtin_tools' names a tool twice")
    return tuple(value)


def _check_settings(value: Any, where: str) -> dict[str, Any]:
    """Portable settings; ``extra_body`` is a tagged extension ``{tag: STR, body: {...}}``."""
    settings = dict(value or {})
    extra = settings.get("extra_body")
    if extra is not None and not (
        isinstance(extra, dict) and set(extra) == {"tag", "body"}
        and isinstance(extra["tag"], str) and isinstance(extra["body"], dict)
    ):
        raise InvalidScenarios(f"{where}: settings.extra_body must be {{tag: STR, body: {{...}}}}")
    return settings


def _read(path: Path) -> Any:
    import jsonschema
    import yaml

    with path.open("rb") as handle:
        raw = handle.read(MAX_SCENARIO_BYTES + 1)
    if len(raw) > MAX_SCENARIO_BYTES:
        raise InvalidScenarios(f"{path}: larger than {MAX_SCENARIO_BYTES} bytes")
    try:
        data = yaml.safe_load(raw.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise InvalidScenarios(f"{path}: not a UTF-8 YAML document ({exc})") from None
    validator = jsonschema.Draft202012Validator(scenario_schema())
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(document)"
        raise InvalidScenarios(f"{path}: {where}: {error.message} (see scenario.schema.json)")
    return data


def load_scenarios(path: Path) -> list[Scenario]:
    """Every scenario of one file, in file order."""
    data = _read(path)
    if not isinstance(data, dict) or not isinstance(data.get("scenarios"), list):
        raise InvalidScenarios(f"{path}: expected a mapping with a 'scenarios' list")
    found = []
    for index, raw in enumerate(data["scenarios"]):
        where = f"{path}: scenarios[{index}]"
        if not isinstance(raw, dict):
            raise InvalidScenarios(f"{where}: must be a mapping")
        unknown = set(raw) - SCENARIO_KEYS
        if unknown:
            raise InvalidScenarios(f"{where}: unknown keys {sorted(unknown)}")
        for key in ("match", "family"):
            if not isinstance(raw.get(key), str) or not raw[key]:
                raise InvalidScenarios(f"{where}: '{key}' is required")
        if raw.get("family") == "provider-files" and raw.get("prompt") is None:
            prompt: str | tuple[Any, ...] = ""
        else:
            prompt = _check_prompt(raw.get("prompt"), where)
        if raw["family"] not in FAMILIES:
            raise InvalidScenarios(f"{where}: unknown family {raw['family']!r}")
        if raw["family"] == "provider-files":
            _check_file_scenario(raw, where)
        expectations = [raw.get("expect") or {}] + [r.get("expect") or {} for r in raw.get("runs") or []]
        for expect in expectations:
            bad = set(expect) - EXPECT_KEYS
            if bad:
                raise InvalidScenarios(f"{where}: unknown expectation keys {sorted(bad)}")
        if raw["family"] == "provider-error" and not raw.get("runs"):
            raise InvalidScenarios(f"{where}: provider-error scenarios need 'runs'")
        for run in raw.get("runs") or []:
            if not isinstance(run, dict) or set(run) - RUN_KEYS or not isinstance(run.get("model", "m"), str):
                raise InvalidScenarios(f"{where}: each run is {{expect: ..., model: STR}} (model optional)")
        if raw["family"] == "structured-output" and not isinstance(raw.get("output_schema"), dict):
            raise InvalidScenarios(f"{where}: structured-output scenarios need 'output_schema'")
        history = raw.get("history") or []
        if not isinstance(history, list) or not all(isinstance(m, dict) for m in history):
            raise InvalidScenarios(f"{where}: 'history' must be a list of version-2 history messages")
        if raw.get("output_mode", "native") not in OUTPUT_MODES:
            raise InvalidScenarios(f"{where}: 'output_mode' must be one of {sorted(OUTPUT_MODES)}")
        profile = raw.get("profile")
        if profile is not None and not (
            isinstance(profile, dict) and set(profile) <= PROFILE_KEYS
            and isinstance(profile.get("sampling", False), bool)
            and isinstance(profile.get("reasoning_efforts", []), list)
        ):
            raise InvalidScenarios(f"{where}: 'profile' takes {{sampling: BOOL, reasoning_efforts: [...]}}")
        chat_options = raw.get("chat_options")
        if chat_options is not None and not (isinstance(chat_options, dict)
                                             and set(chat_options) <= CHAT_OPTION_KEYS):
            raise InvalidScenarios(f"{where}: 'chat_options' takes only {sorted(CHAT_OPTION_KEYS)}")
        responses_options = raw.get("responses_options")
        if responses_options is not None and not (
            isinstance(responses_options, dict) and set(responses_options) <= RESPONSES_OPTION_KEYS
            and all(isinstance(v, bool) for v in responses_options.values())
        ):
            raise InvalidScenarios(f"{where}: 'responses_options' takes only "
                                f"{sorted(RESPONSES_OPTION_KEYS)} (true or false)")
        follow_up = raw.get("follow_up")
        if follow_up is not None and not (isinstance(follow_up, str) and follow_up):
            raise InvalidScenarios(f"{where}: 'follow_up' must be a prompt string")
        normalize = raw.get("normalize") or []
        if not isinstance(normalize, list) or not set(normalize) <= NORMALIZATIONS:
            raise InvalidScenarios(f"{where}: 'normalize' names only {sorted(NORMALIZATIONS)}")
        if not isinstance(raw.get("tool_until_returned", False), bool):
            raise InvalidScenarios(f"{where}: 'tool_until_returned' must be true or false")
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
                follow_up=follow_up, normalize=frozenset(normalize),
            )
        )
    return found


def _check_file_scenario(raw: dict[str, Any], where: str) -> None:
    spec = raw.get("file")
    if not isinstance(spec, dict) or not {"filename", "content", "media_type"} <= set(spec):
        raise InvalidScenarios(f"{where}: provider-files scenarios need file: {{filename, content, "
                            "media_type[, purpose]}")
    unknown = set(spec) - FILE_KEYS
    if unknown:
        raise InvalidScenarios(f"{where}: unknown file keys {sorted(unknown)}")
    operations = raw.get("operations")
    if (not isinstance(operations, list) or not operations or operations[0] != "upload"
            or any(op not in FILE_OPERATIONS for op in operations)):
        raise InvalidScenarios(f"{where}: operations must start with upload and use only "
                            f"{', '.join(FILE_OPERATIONS)}")


def find_scenario(relative: str, scenarios: list[Scenario]) -> Scenario | None:
    """The first scenario whose ``match`` glob matches the cassette path ``relative``."""
    for scenario in scenarios:
        if fnmatch.fnmatchcase(relative, scenario.match):
            return scenario
    return None


