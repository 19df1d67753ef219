"""Phase 1, *parse*: strict, data-only JSON or YAML text into an owned :class:`Owned` spec.

Invariants:

* the text is bounded by the ``cli_manifest`` JSON profile (:data:`LIMITS`: 1 MiB document,
  256 KiB strings, depth 32, 4,096 items per collection) whichever syntax it uses: JSON goes
  through :func:`zigai.json.parse`; YAML is read with a strict ``yaml.SafeLoader`` (aliases,
  anchors, custom tags and merge keys refused; duplicate keys refused at their path) and the
  resulting plain values are checked against the same profile;
* every refusal is an :class:`~zigai.agent_spec.errors.InvalidAgentSpec` whose ``path`` is the
  exact location (``$.limits.max_requests``) and whose message starts with it: unknown keys,
  wrong types, duplicate keys, out-of-range values, an unsupported ``version``;
* credentials never appear: a key that looks like one (``api_key``, ``token``, ``password``,
  …) is refused with a pointer to ``api_key_env``, which holds a variable NAME;
* ``${NAME}`` is accepted only in :data:`~zigai.agent_spec.document.SUBSTITUTED_FIELDS`, only
  for names listed in the document's ``env`` allowlist, and never for a secret-looking name;
  ``$${`` is a literal ``${``.  Parsing records the references and reads no environment.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from zigai._owner import Owner
from zigai._strict_yaml import child_path, load_plain
from zigai.agent_spec.document import (
    SPEC_VERSION,
    AgentSpec,
    CapabilityRef,
    EnvReference,
    LimitsDoc,
    McpServerDoc,
    ModelRef,
    OutputDoc,
    RetryDoc,
    SettingsDoc,
)
from zigai.agent_spec.errors import AgentSpecClosed, InvalidAgentSpec
from zigai.json import defaults

__all__ = ["LIMITS", "Owned", "parse", "load", "child_path", "ENV_NAME"]

LIMITS = defaults.cli_manifest
"""The named JSON limit profile every agent spec is read under (JSON and YAML alike)."""

ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]{0,127}$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,127}$")
_REFERENCE = re.compile(r"\$\$\{|\$\{([^}]*)\}|\$\{")
_SECRET_KEY_WORDS = ("key", "token", "secret", "password", "passwd", "credential", "auth", "bearer")
_SECRET_ENV_WORDS = {"KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL",
                     "CREDENTIALS", "PAT", "AUTH", "BEARER"}
_MAX_TIMEOUT_MS = 86_400_000
_RETRY_CATEGORIES = ("rate_limit", "server_error", "timeout", "connection", "decode")
Format = Literal["json", "yaml"]


class Owned(Owner):
    """A parsed agent spec, owned until :meth:`close` (data only: no secrets, no clients)."""

    __slots__ = ("_spec", "source_format")
    _closed_error = AgentSpecClosed

    def __init__(self, spec: AgentSpec, source_format: Format) -> None:
        super().__init__()
        self._spec = spec
        self.source_format = source_format

    @property
    def spec(self) -> AgentSpec:
        self._check()
        return self._spec

    def _release(self) -> None:
        self._spec = None  # type: ignore[assignment]


def _fail(path: str, what: str) -> InvalidAgentSpec:
    return InvalidAgentSpec(f"{path}: {what}", path=path)


# -- syntax --------------------------------------------------------------------------------------


def _detect(text: str, path: str | None) -> Format:
    if path is not None:
        suffix = Path(path).suffix.lower()
        if suffix == ".json":
            return "json"
        if suffix in (".yaml", ".yml"):
            return "yaml"
    return "json" if text.lstrip()[:1] in ("{", "[") else "yaml"


def _parse_json(data: bytes) -> Any:
    from zigai import json as zjson
    from zigai.errors import JsonError

    try:
        return zjson.parse(data, LIMITS)
    except zjson.MalformedJson as exc:
        if "duplicate object key" not in str(exc):
            raise _fail("$", f"not valid JSON: {exc}") from None
    except JsonError as exc:
        raise _fail("$", f"the document exceeds the {_profile()} limits: {exc}") from None
    # The bounded preflight passed (it runs before decoding), so decoding again into ordered
    # pairs is safe; it locates the duplicate key's exact path.
    import json

    pairs = json.loads(data, object_pairs_hook=_Pairs)
    _find_duplicate(pairs, "$")
    raise _fail("$", "duplicate object key")  # pragma: no cover - _find_duplicate raised


class _Pairs(list):
    """An object decoded as its ordered (key, value) pairs."""


def _find_duplicate(value: Any, path: str) -> None:
    if isinstance(value, _Pairs):
        seen: set[str] = set()
        for key, item in value:
            where = child_path(path, key)
            if key in seen:
                raise _fail(where, "duplicate key")
            seen.add(key)
            _find_duplicate(item, where)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _find_duplicate(item, child_path(path, index))


def _profile() -> str:
    return (f"agent-spec (cli_manifest: {LIMITS.max_document_bytes} bytes, "
            f"{LIMITS.max_value_bytes}-byte strings, depth {LIMITS.max_depth}, "
            f"{LIMITS.max_items} items)")


def _parse_yaml(text: str) -> Any:
    return load_plain(text, _fail, "an agent spec", _profile())


def _bounded(value: Any) -> None:
    from zigai import json as zjson
    from zigai.errors import JsonError

    try:
        zjson.validate(zjson.dumps(value), LIMITS)
    except JsonError as exc:
        raise _fail("$", f"the document exceeds the {_profile()} limits: {exc}") from None


# -- structure -----------------------------------------------------------------------------------


Reader = Callable[[Any, str], Any]


class _Context:
    def __init__(self) -> None:
        self.references: list[EnvReference] = []
        self.allowed_env: frozenset[str] = frozenset()


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _object(value: Any, path: str, readers: dict[str, Reader], required: tuple[str, ...] = ()) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(path, f"expected an object, got {_type_name(value)}")
    out: dict[str, Any] = {}
    for key, item in value.items():
        where = child_path(path, key)
        reader = readers.get(key)
        if reader is None:
            lowered = key.lower()
            if any(word in lowered for word in _SECRET_KEY_WORDS) and not lowered.endswith("_env"):
                raise _fail(where, "credentials are never written in an agent spec; put the NAME "
                                   "of an environment variable in 'api_key_env' instead")
            raise _fail(where, f"unknown key (known here: {', '.join(sorted(readers))})")
        out[key] = reader(item, where)
    for key in required:
        if key not in out:
            raise _fail(child_path(path, key), "is required")
    return out


def _string(max_len: int = LIMITS.max_value_bytes, *, allow_empty: bool = False) -> Reader:
    def read(value: Any, path: str) -> str:
        if not isinstance(value, str):
            raise _fail(path, f"expected a string, got {_type_name(value)}")
        if not value.strip() and not allow_empty:
            raise _fail(path, "must not be empty")
        if len(value) > max_len:
            raise _fail(path, f"is longer than {max_len} characters")
        if "${" in value.replace("$${", ""):
            raise _fail(path, "'${…}' substitution is only allowed in model.name, instructions "
                              "and mcp_servers[].command / url (write '$${' for a literal '${')")
        return value
    return read


def _name(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise _fail(path, f"expected a name string, got {_type_name(value)}")
    if not _NAME.match(value):
        raise _fail(path, f"{value[:64]!r} is not a name (letters, digits, '_', '-', '.'; at most "
                          "128; not starting with a digit)")
    return value


def _env_name(value: Any, path: str) -> str:
    if not isinstance(value, str) or not ENV_NAME.match(value):
        raise _fail(path, "must be an environment variable NAME such as OPENAI_API_KEY "
                          "(upper-case letters, digits, '_')")
    return value


def _integer(low: int, high: int) -> Reader:
    def read(value: Any, path: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(path, f"expected a whole number, got {_type_name(value)}")
        if not low <= value <= high:
            raise _fail(path, f"must be between {low} and {high}, got {value}")
        return value
    return read


def _number(low: float, high: float) -> Reader:
    def read(value: Any, path: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _fail(path, f"expected a number, got {_type_name(value)}")
        if not (math.isfinite(value) and low <= value <= high):
            raise _fail(path, f"must be between {low} and {high}, got {value}")
        return float(value)
    return read


def _boolean(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise _fail(path, f"expected true or false, got {_type_name(value)}")
    return value


def _choice(*options: str) -> Reader:
    def read(value: Any, path: str) -> str:
        if value not in options or not isinstance(value, str):
            raise _fail(path, f"must be one of {', '.join(options)}, got {value!r}")
        return value
    return read


def _list(item: Reader, *, max_items: int = LIMITS.max_items, unique: bool = False,
          min_items: int = 0) -> Reader:
    def read(value: Any, path: str) -> tuple[Any, ...]:
        if not isinstance(value, list):
            raise _fail(path, f"expected a list, got {_type_name(value)}")
        if not min_items <= len(value) <= max_items:
            raise _fail(path, f"must hold {min_items} to {max_items} items, got {len(value)}")
        items = tuple(item(entry, child_path(path, i)) for i, entry in enumerate(value))
        if unique:
            seen: set[Any] = set()
            for i, entry in enumerate(items):
                key = getattr(entry, "name", entry)
                if key in seen:
                    raise _fail(child_path(path, i), f"{key!r} is listed twice")
                seen.add(key)
        return items
    return read


def _substituted(context: _Context, max_len: int = LIMITS.max_value_bytes) -> Reader:
    """A string in which ``${NAME}`` references (allowlisted, non-secret) are recorded."""

    def read(value: Any, path: str) -> str:
        if not isinstance(value, str):
            raise _fail(path, f"expected a string, got {_type_name(value)}")
        if not value.strip():
            raise _fail(path, "must not be empty")
        if len(value) > max_len:
            raise _fail(path, f"is longer than {max_len} characters")
        for match in _REFERENCE.finditer(value):
            if match.group(0) == "$${":
                continue
            name = match.group(1)
            if name is None or not ENV_NAME.match(name):
                raise _fail(path, "a substitution is written ${NAME} with an upper-case variable "
                                  "name (write '$${' for a literal '${')")
            if _secret_env_name(name):
                raise _fail(path, f"${{{name}}} looks like a credential; credentials are never "
                                  "substituted into a spec, only named in 'api_key_env'")
            if name not in context.allowed_env:
                raise _fail(path, f"${{{name}}} is not in the document's 'env' allowlist")
            context.references.append(EnvReference(name, path))
        return value
    return read


def _secret_env_name(name: str) -> bool:
    return any(word in _SECRET_ENV_WORDS for word in name.split("_"))


def _instructions(context: _Context) -> Reader:
    text = _substituted(context)

    def read(value: Any, path: str) -> tuple[str, ...]:
        if isinstance(value, str):
            return (text(value, path),)
        return _list(text, max_items=256)(value, path)
    return read


def _profile_overrides(value: Any, path: str) -> dict[str, Any]:
    from zigai.model import InvalidProfileOverride, ModelProfile, apply_profile_overrides

    if not isinstance(value, dict):
        raise _fail(path, f"expected an object of ModelProfile fields, got {_type_name(value)}")
    try:
        apply_profile_overrides(ModelProfile(), value, path)  # every field and value checked once, here
    except InvalidProfileOverride as exc:
        raise InvalidAgentSpec(str(exc), path=path) from None  # the message names the field
    return dict(value)


def _model(context: _Context) -> Reader:
    readers = {"provider": _name, "name": _substituted(context, 256), "api_key_env": _env_name,
               "profile": _profile_overrides}

    def read(value: Any, path: str) -> ModelRef:
        return ModelRef(**_object(value, path, readers, ("provider", "name")))
    return read


def _schema(value: Any, path: str) -> dict[str, Any]:
    from zigai.json_schema import validate_schema

    if not isinstance(value, dict):
        raise _fail(path, f"expected a JSON Schema object, got {_type_name(value)}")
    try:
        validate_schema(value)
    except Exception as exc:  # InvalidJsonSchema / UnsupportedJsonSchema
        raise _fail(path, f"is not a usable JSON Schema: {exc}") from None
    return value


_OUTPUT = {
    "mode": _choice("native", "tool", "prompted"), "name": _name,
    "description": _string(4096), "schema": _schema, "strict": _boolean,
}


def _output(value: Any, path: str) -> OutputDoc:
    return OutputDoc(**_object(value, path, _OUTPUT, ("schema",)))


def _mcp_server(context: _Context) -> Reader:
    readers = {
        "name": _name,
        "command": _list(_substituted(context, 4096), max_items=64, min_items=1),
        "timeout_ms": _integer(1, 600_000),
        "url": _substituted(context, 2048),
    }

    def read(value: Any, path: str) -> McpServerDoc:
        fields = _object(value, path, readers, ("name",))
        if ("command" in fields) == ("url" in fields):
            raise _fail(path, "needs exactly one of 'command' (a stdio server) and 'url' (a Streamable HTTP server)")
        if "command" in fields:
            fields["command"] = tuple(fields["command"])
        return McpServerDoc(**fields)
    return read


def _capability(value: Any, path: str) -> CapabilityRef:
    if isinstance(value, str):
        return CapabilityRef(_name(value, path))
    fields = _object(value, path, {"name": _name, "loading": _choice("eager", "on_demand")}, ("name",))
    return CapabilityRef(**fields)


_POSITIVE = _integer(1, 2**53)
_LIMITS = {
    "max_requests": _integer(1, 100_000), "max_tool_calls": _POSITIVE,
    "max_input_tokens": _POSITIVE, "max_output_tokens": _POSITIVE, "max_total_tokens": _POSITIVE,
    "run_timeout_ms": _integer(1, _MAX_TIMEOUT_MS), "request_timeout_ms": _integer(1, _MAX_TIMEOUT_MS),
    "max_tool_retries": _integer(0, 100), "max_output_retries": _integer(0, 100),
}
_RETRY = {
    "max_attempts": _integer(1, 20), "initial_delay_ms": _integer(0, 600_000),
    "max_delay_ms": _integer(0, 600_000), "multiplier": _number(1.0, 10.0), "jitter": _boolean,
    "honor_retry_after": _boolean, "max_total_delay_ms": _integer(0, 3_600_000),
    "retry_on": _list(_choice(*_RETRY_CATEGORIES), max_items=len(_RETRY_CATEGORIES), unique=True),
}
_SETTINGS = {
    "max_tokens": _POSITIVE, "temperature": _number(0.0, 2.0), "top_p": _number(0.0, 1.0),
    "top_k": _POSITIVE, "seed": _integer(-(2**63), 2**63 - 1),
    "stop_sequences": _list(_string(1024), max_items=16),
    "presence_penalty": _number(-2.0, 2.0), "frequency_penalty": _number(-2.0, 2.0),
    "parallel_tool_calls": _boolean, "thinking": _string(64),
    "thinking_budget_tokens": _POSITIVE, "service_tier": _string(64),
}


def _document(value: Any) -> AgentSpec:
    if not isinstance(value, dict):
        raise _fail("$", f"an agent spec is an object, got {_type_name(value)}")
    version = value.get("version")
    if "version" not in value:
        raise _fail("$.version", f"is required (this parser reads version {SPEC_VERSION})")
    if isinstance(version, bool) or version != SPEC_VERSION:
        raise _fail("$.version", f"unsupported version {version!r}; this parser reads version {SPEC_VERSION}")
    context = _Context()
    if "env" in value:
        context.allowed_env = frozenset(_list(_env_name, max_items=256, unique=True)(value["env"], "$.env"))
    readers: dict[str, Reader] = {
        "version": lambda v, p: v,
        "name": _name,
        "description": _string(4096),
        "model": _model(context),
        "instructions": _instructions(context),
        "env": lambda v, p: tuple(v),
        "tools": _list(_name, max_items=1024, unique=True),
        "toolsets": _list(_name, max_items=256, unique=True),
        "mcp_servers": _list(_mcp_server(context), max_items=16, unique=True),
        "output": _output,
        "settings": lambda v, p: SettingsDoc(**_object(v, p, _SETTINGS)),
        "limits": lambda v, p: LimitsDoc(**_object(v, p, _LIMITS)),
        "retry": lambda v, p: RetryDoc(**_object(v, p, _RETRY)),
        "capabilities": _list(_capability, max_items=256, unique=True),
    }
    fields = _object(value, "$", readers, ("model",))
    unused = sorted(context.allowed_env - {r.name for r in context.references})
    if unused:
        raise _fail("$.env", f"{', '.join(unused)} is allowlisted but never referenced; list only "
                             "the variables the spec substitutes")
    return AgentSpec(**fields, references=tuple(context.references))


# -- entry points --------------------------------------------------------------------------------


def parse(text: str | bytes, *, format: Format | None = None, source: str | None = None) -> Owned:
    """Parse one agent spec document (JSON or YAML; detected from ``source``'s suffix or the
    first character when ``format`` is not given).  Raises :class:`InvalidAgentSpec`."""
    if format not in (None, "json", "yaml"):
        raise ValueError("format is 'json', 'yaml' or None")
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    if len(data) > LIMITS.max_document_bytes:
        raise _fail("$", f"the document is {len(data)} bytes; the {_profile()} limit is "
                         f"{LIMITS.max_document_bytes}")
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _fail("$", "the document is not UTF-8") from None
    chosen: Format = format or _detect(decoded, source)
    if chosen == "json":
        value = _parse_json(data)
    else:
        value = _parse_yaml(decoded)
        _bounded(value)
    return Owned(_document(value), chosen)


def load(path: str | os.PathLike[str], *, format: Format | None = None) -> Owned:
    """Read (bounded) and :func:`parse` the spec file at ``path``."""
    where = os.fspath(path)
    try:
        with open(where, "rb") as handle:
            data = handle.read(LIMITS.max_document_bytes + 1)
    except OSError as exc:
        raise InvalidAgentSpec(f"$: cannot read agent spec {where!r}: {exc.strerror or exc}") from None
    return parse(data, format=format, source=where)
