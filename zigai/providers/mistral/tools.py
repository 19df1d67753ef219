"""Mistral-managed tools for the Conversations API: portable mapping and Mistral-only configs.

Portable provider-managed tools (``ModelRequest.managed_tools``) map to Mistral's built-in
tools: ``web_search`` → ``{"type": "web_search"}`` and ``code_execution`` →
``{"type": "code_interpreter"}``.  Tools only Mistral offers are configured on the client
(``ConversationsClient(managed_tools=...)``) with the typed values below:

* :class:`WebSearchPremium` — ``web_search_premium`` (news agencies as well as the web);
* :class:`ImageGeneration` — ``image_generation``;
* :class:`DocumentLibrary` — ``document_library`` over the given library ids;
* :class:`Connector` — a registered connector (``connector_id`` is its name or UUID), with
  an optional include *or* exclude list of its tools and an optional ``authorization``.

Invariants: each built-in tool appears at most once per request (connectors are keyed by
``connector_id``); invalid values fail on construction, before any request.  A connector's
``authorization`` is the application's object, borrowed: it is read when a request is
encoded, never copied into the client, never shown in ``repr`` and never pickled.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from zigai import json as zjson
from zigai.errors import JsonError
from zigai.messages.json_value import thaw_json
from zigai.model import ModelRequest
from zigai.providers.mistral._errors import MistralEncodeError

__all__ = [
    "Connector",
    "DocumentLibrary",
    "ImageGeneration",
    "MistralTool",
    "PORTABLE_TOOLS",
    "WebSearchPremium",
    "encode_tools",
]

#: Portable managed tool kind → Mistral built-in tool type.
PORTABLE_TOOLS: Mapping[str, str] = {"web_search": "web_search", "code_execution": "code_interpreter"}
_IDENTIFIER = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")


def _check_id(value: Any, what: str) -> str:
    if not isinstance(value, str) or not _IDENTIFIER.match(value):
        raise MistralEncodeError(f"{what} must be 1-128 letters, digits, '_', '-', '.' or ':'")
    return value


@dataclass(frozen=True, slots=True)
class WebSearchPremium:
    """Mistral's premium web search (``web_search_premium``)."""

    def wire(self) -> dict[str, Any]:
        return {"type": "web_search_premium"}

    @property
    def key(self) -> str:
        return "web_search_premium"


@dataclass(frozen=True, slots=True)
class ImageGeneration:
    """Mistral's image generation tool (``image_generation``)."""

    def wire(self) -> dict[str, Any]:
        return {"type": "image_generation"}

    @property
    def key(self) -> str:
        return "image_generation"


@dataclass(frozen=True, slots=True)
class DocumentLibrary:
    """Search over Mistral document libraries (``document_library``)."""

    library_ids: tuple[str, ...]

    def __post_init__(self) -> None:
        if isinstance(self.library_ids, str):
            raise MistralEncodeError("library_ids must be a sequence of ids, not one string")
        ids = tuple(self.library_ids)
        if not ids:
            raise MistralEncodeError("a document library tool needs at least one library id")
        for value in ids:
            _check_id(value, "a library id")
        if len(set(ids)) != len(ids):
            raise MistralEncodeError("library_ids repeats an id")
        object.__setattr__(self, "library_ids", ids)

    def wire(self) -> dict[str, Any]:
        return {"type": "document_library", "library_ids": list(self.library_ids)}

    @property
    def key(self) -> str:
        return "document_library"


@dataclass(frozen=True, slots=True)
class Connector:
    """A registered Mistral connector; ``include`` *or* ``exclude`` filters its tools.

    ``authorization`` (a JSON object, e.g. an OAuth token description) is borrowed: the
    connector keeps the application's object and reads it per request.
    """

    connector_id: str
    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None
    authorization: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_id(self.connector_id, "connector_id")
        if self.include is not None and self.exclude is not None:
            raise MistralEncodeError("a connector takes include or exclude, not both")
        for name in ("include", "exclude"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, str) or not all(isinstance(v, str) and v for v in value):
                raise MistralEncodeError(f"connector {name} must be a sequence of tool names")
            object.__setattr__(self, name, tuple(value))
        if self.authorization is not None and not isinstance(self.authorization, Mapping):
            raise MistralEncodeError("connector authorization must be a JSON object")

    def __reduce__(self) -> Any:
        raise TypeError("a Connector may hold an authorization and cannot be pickled")

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "connector", "connector_id": self.connector_id}
        if self.include is not None:
            out["tool_configuration"] = {"include": list(self.include)}
        elif self.exclude is not None:
            out["tool_configuration"] = {"exclude": list(self.exclude)}
        if self.authorization is not None:
            try:
                out["authorization"] = zjson.parse(zjson.dumps(dict(self.authorization)),
                                                   zjson.defaults.tool_payload)
            except JsonError:
                raise MistralEncodeError(
                    f"connector {self.connector_id!r}: authorization is not a JSON object"
                ) from None
        return out

    @property
    def key(self) -> str:
        return f"connector:{self.connector_id}"


MistralTool = WebSearchPremium | ImageGeneration | DocumentLibrary | Connector
_TOOL_TYPES = (WebSearchPremium, ImageGeneration, DocumentLibrary, Connector)


def check_managed_tools(tools: Any) -> tuple[MistralTool, ...]:
    """The client's Mistral-only tools, type-checked and free of duplicates."""
    values = tuple(tools)
    seen: set[str] = set()
    for tool in values:
        if not isinstance(tool, _TOOL_TYPES):
            raise MistralEncodeError(f"unknown Mistral managed tool {type(tool).__name__}")
        if tool.key in seen:
            raise MistralEncodeError(f"Mistral managed tool {tool.key!r} is configured twice")
        seen.add(tool.key)
    return values


def _strict_compatible(schema: Any) -> bool:
    """True when every object in ``schema`` closes its properties and requires all of them."""
    if isinstance(schema, dict):
        if schema.get("type") == "object" or "properties" in schema:
            properties = schema.get("properties", {})
            if schema.get("additionalProperties") is not False:
                return False
            if not isinstance(properties, dict) or set(schema.get("required", ())) != set(properties):
                return False
        return all(_strict_compatible(v) for v in schema.values())
    if isinstance(schema, list):
        return all(_strict_compatible(v) for v in schema)
    return True


def encode_tools(request: ModelRequest, managed: tuple[MistralTool, ...]) -> list[dict[str, Any]]:
    """``tools``: portable managed tools, then the client's Mistral tools, then functions.

    A function's ``strict`` is its definition's flag; when the definition leaves it unset,
    strict mode is requested exactly when the schema already satisfies it (every object closed
    with all properties required), so a loose schema is never rejected by Mistral.
    """
    tools: list[dict[str, Any]] = []
    for portable in request.managed_tools:  # ModelRequest already refused a repeated kind
        wire_type = PORTABLE_TOOLS.get(portable.kind)
        if wire_type is None:
            raise MistralEncodeError(f"Mistral Conversations has no {portable.kind} tool")
        if portable.config:
            raise MistralEncodeError(f"Mistral's {wire_type} tool takes no options")
        tools.append({"type": wire_type})
    for tool in managed:
        tools.append(tool.wire())
    for definition in request.tools:
        parameters = thaw_json(definition.parameters_json_schema)
        function: dict[str, Any] = {"name": definition.name}
        if definition.description:
            function["description"] = definition.description
        function["parameters"] = parameters
        strict = definition.strict
        function["strict"] = _strict_compatible(parameters) if strict is None else strict
        tools.append({"type": "function", "function": function})
    return tools
