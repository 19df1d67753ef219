"""Language-neutral scenario files: what an implementation must do for each recording.

Job
    Load scenario files (YAML; the schema is ``scenario.schema.json`` beside this module,
    documented in docs/conformance.md), check them, and find the scenario of a cassette.

A scenario describes one *family* of recordings and applies to every cassette whose path,
relative to its cassette root, matches its ``match`` glob (``fnmatch``; ``*`` crosses ``/``).
The first matching entry wins; files given first take precedence.

Invariants
    * A file is validated against the shipped JSON Schema, which holds every rule (so a port
      loading scenarios mechanically gets the same checks); a failure raises
      :class:`InvalidScenarios` naming the file and the place.
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

from zigai.errors import ConformanceError

__all__ = ["FAMILIES", "STREAMED_FAMILIES", "InvalidScenarios", "Scenario", "find_scenario", "load_scenarios",
           "scenario_schema"]

MAX_SCENARIO_BYTES = 4 * 1024 * 1024
FAMILIES = frozenset(
    {"buffered", "function-tool", "streamed-text", "streamed-function-tool",
     "structured-output", "thinking", "provider-error", "provider-files"}
)
STREAMED_FAMILIES = frozenset({"streamed-text", "streamed-function-tool", "thinking"})


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
    prompt_parts: tuple[Any, ...] = ()


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
    """Every scenario of one file, in file order (the file is checked against the schema)."""
    return [_scenario(raw) for raw in _read(path)["scenarios"]]


def _scenario(raw: dict[str, Any]) -> Scenario:
    prompt = raw.get("prompt", "")
    return Scenario(
        match=raw["match"], family=raw["family"], prompt=prompt if isinstance(prompt, str) else tuple(prompt),
        system=raw.get("system"), tool=raw.get("tool"), settings=dict(raw.get("settings") or {}),
        output_schema=raw.get("output_schema"), output_name=raw.get("output_name", "response"),
        retry=raw.get("retry"), runs=tuple(raw.get("runs") or ()), expect=dict(raw.get("expect") or {}),
        file=raw.get("file"), operations=tuple(raw.get("operations") or ()),
        builtin_tools=tuple(raw.get("builtin_tools") or ()), history=tuple(raw.get("history") or ()),
        tool_until_returned=raw.get("tool_until_returned", False), output_mode=raw.get("output_mode", "native"),
        profile=raw.get("profile"), chat_options=raw.get("chat_options"),
        responses_options=raw.get("responses_options"), follow_up=raw.get("follow_up"),
        normalize=frozenset(raw.get("normalize") or ()), prompt_parts=tuple(raw.get("prompt_parts") or ()),
    )


def find_scenario(relative: str, scenarios: list[Scenario]) -> Scenario | None:
    """The first scenario whose ``match`` glob matches the cassette path ``relative``."""
    for scenario in scenarios:
        if fnmatch.fnmatchcase(relative, scenario.match):
            return scenario
    return None


