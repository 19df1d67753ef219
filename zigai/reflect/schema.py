"""JSON Schema derivation from Python annotations (the local 2020-12 dialect subset).

``json_schema(tp)`` returns a fresh JSON object every call.  Mapping of shapes:

* ``bool``/``int``/``float``/``str``/``None`` -> ``boolean``/``integer``/``number``/``string``/``null``;
  ``Any`` -> ``{}`` (any JSON value);
* ``Literal[...]`` -> ``enum`` (``const`` for one value); ``Enum`` subclasses -> ``enum``
  of their values; both add ``type`` when every value has the same JSON type;
* ``X | Y`` / ``Optional[X]`` -> ``anyOf``;
* ``list[T]``, ``Sequence[T]``, ``tuple[T, ...]`` -> ``array`` with ``items``;
  ``tuple[A, B]`` -> ``prefixItems`` with ``items: false`` and exact ``minItems``/``maxItems``;
* ``dict[str, T]`` / ``Mapping[str, T]`` -> ``object`` with ``additionalProperties``;
* dataclasses and TypedDicts -> closed ``object`` (``additionalProperties: false``)
  whose ``required`` lists the members without defaults;
* ``set[T]`` / ``frozenset[T]`` -> ``array`` with ``uniqueItems``; ``datetime``, ``date``,
  ``time``, ``timedelta``, ``UUID``, ``Decimal`` and ``bytes`` -> the forms listed in
  :mod:`zigai.reflect._formats`; a pydantic ``BaseModel`` -> its ``model_json_schema()``;
* ``Annotated[T, "text"]`` adds ``description``.

Invariants: named object types are inlined, except types that contain
themselves; those go to ``$defs`` (keyed by class name, made unique) and are
referenced as ``#/$defs/<name>``, which the local dialect resolves.  Every
output passes :func:`zigai.json_schema.validate_schema`.  Unsupported
annotations raise :class:`ToolDefinitionError` naming the path to them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zigai.reflect._formats import FORMATTED_TYPES, formatted_schema
from zigai.reflect._types import FieldInfo, Shape, object_fields, shape_of
from zigai.tool.errors import ToolDefinitionError

__all__ = ["json_schema", "object_schema"]

_FORMATTED_KINDS = frozenset(FORMATTED_TYPES.values())

_JSON_TYPE_NAMES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (type(None), "null"),
)


def _json_type(value: Any) -> str:
    for python_type, name in _JSON_TYPE_NAMES:
        if isinstance(value, python_type):
            return name
    raise ToolDefinitionError(f"{value!r} is not a JSON scalar")


def _enum_schema(values: Sequence[Any]) -> dict[str, Any]:
    values = list(values)
    kinds = {_json_type(v) for v in values}
    schema: dict[str, Any] = {}
    if len(kinds) == 1:
        schema["type"] = kinds.pop()
    if len(values) == 1:
        schema["const"] = values[0]
    else:
        schema["enum"] = values
    return schema


class _Restart(Exception):
    """A type turned out to be recursive; generation restarts with it in $defs."""


class _Builder:
    def __init__(self, recursive: set[type]) -> None:
        self.recursive = recursive
        self.defs: dict[str, dict[str, Any]] = {}
        self.def_names: dict[type, str] = {}
        self.stack: list[type] = []

    def schema(self, tp: Any, path: str) -> dict[str, Any]:
        try:
            shape = shape_of(tp)
        except TypeError as exc:
            raise ToolDefinitionError(f"{path}: {exc}") from None
        schema = self._shape_schema(shape, path)
        if shape.description:
            schema = {**schema, "description": shape.description}
        return schema

    def _shape_schema(self, shape: Shape, path: str) -> dict[str, Any]:
        kind = shape.kind
        if kind == "any":
            return {}
        simple = {"null": "null", "bool": "boolean", "int": "integer", "float": "number", "str": "string"}
        if kind in simple:
            return {"type": simple[kind]}
        if kind == "literal":
            return _enum_schema(shape.args)
        if kind == "enum":
            return _enum_schema([member.value for member in shape.args[0]])
        if kind == "union":
            return {"anyOf": [self.schema(arm, f"{path}|{i}") for i, arm in enumerate(shape.args)]}
        if kind in ("list", "tuple_var"):
            return {"type": "array", "items": self.schema(shape.args[0], f"{path}[]")}
        if kind == "tuple_fixed":
            items = [self.schema(arm, f"{path}[{i}]") for i, arm in enumerate(shape.args)]
            schema: dict[str, Any] = {"type": "array"}
            if items:
                schema["prefixItems"] = items
            schema.update(items=False, minItems=len(items), maxItems=len(items))
            return schema
        if kind == "dict":
            return {"type": "object", "additionalProperties": self.schema(shape.args[0], f"{path}{{}}")}
        if kind == "set":
            return {"type": "array", "items": self.schema(shape.args[0], f"{path}[]"), "uniqueItems": True}
        if kind in _FORMATTED_KINDS:
            return formatted_schema(kind)
        if kind == "pydantic":
            return self._pydantic(shape.args[0], path)
        return self._named(shape.args[0], path)

    def _pydantic(self, model: Any, path: str) -> dict[str, Any]:
        """The model's own schema; its ``$defs`` join ours (a clashing name is an error)."""
        schema = model.model_json_schema(ref_template="#/$defs/{model}")
        for name, definition in schema.pop("$defs", {}).items():
            if name in self.defs and self.defs[name] != definition:
                raise ToolDefinitionError(f"{path}: two different schemas are named {name!r}")
            self.defs[name] = definition
        return dict(schema)

    def _named(self, tp: type, path: str) -> dict[str, Any]:
        if tp in self.recursive:
            name = self.def_names.get(tp)
            if name is None:
                name = self._unique_name(tp)
                self.def_names[tp] = name
                self.defs[name] = {}
                self.defs[name] = self.object_schema(object_fields(tp), path, owner=tp)
            return {"$ref": f"#/$defs/{name}"}
        if tp in self.stack:
            self.recursive.add(tp)
            raise _Restart
        return self.object_schema(object_fields(tp), path, owner=tp)

    def _unique_name(self, tp: type) -> str:
        base = "".join(c if c.isalnum() or c in "_-" else "_" for c in tp.__name__) or "Type"
        name, counter = base, 2
        while name in self.defs:
            name, counter = f"{base}{counter}", counter + 1
        return name

    def object_schema(
        self, fields: Sequence[FieldInfo], path: str, owner: type | None = None
    ) -> dict[str, Any]:
        if owner is not None:
            self.stack.append(owner)
        try:
            properties = {f.name: self.schema(f.annotation, f"{path}.{f.name}") for f in fields}
        finally:
            if owner is not None:
                self.stack.pop()
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        required = [f.name for f in fields if f.required]
        if required:
            schema["required"] = required
        schema["additionalProperties"] = False
        return schema


def _build(make: Any) -> dict[str, Any]:
    recursive: set[type] = set()
    while True:
        builder = _Builder(recursive)
        try:
            root = make(builder)
        except _Restart:
            continue
        if builder.defs:
            root = {**root, "$defs": builder.defs}
        return root


def json_schema(tp: Any) -> dict[str, Any]:
    """The JSON Schema of values of type ``tp`` (see the module docstring for the mapping)."""
    return _build(lambda builder: builder.schema(tp, "$"))


def object_schema(fields: Sequence[FieldInfo]) -> dict[str, Any]:
    """A closed object schema whose members are ``fields`` (used for function parameters)."""
    return _build(lambda builder: builder.object_schema(fields, "$"))
