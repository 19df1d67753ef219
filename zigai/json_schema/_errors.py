"""Named errors of the local JSON Schema dialect (re-exported by ``zigai.json_schema``).

Three outcomes are kept apart so callers can react precisely: the schema itself is
malformed (``InvalidJsonSchema``), the schema is well formed but uses vocabulary this
fail-closed dialect does not implement (``UnsupportedJsonSchema``), or a value was checked
against an accepted schema and missed an assertion (``OutputSchemaValidationFailed``).
"""

from __future__ import annotations

from zigai.errors import JsonSchemaError

__all__ = ["InvalidJsonSchema", "UnsupportedJsonSchema", "OutputSchemaValidationFailed"]


class InvalidJsonSchema(JsonSchemaError):
    """Supported vocabulary was used with a malformed value (``"minimum": "x"``).

    ``location`` is the JSON Pointer (``#/properties/a``) of the offending subschema.
    """

    def __init__(self, message: str, location: str = "#") -> None:
        super().__init__(message)
        self.location = location


class UnsupportedJsonSchema(JsonSchemaError):
    """A well-formed schema used vocabulary the local dialect rejects instead of ignoring.

    ``keyword`` names the rejected keyword (or ``$ref`` for an unsupported reference) and
    ``location`` is the JSON Pointer of the subschema that used it.
    """

    def __init__(self, message: str, keyword: str = "", location: str = "#") -> None:
        super().__init__(message)
        self.keyword = keyword
        self.location = location


class OutputSchemaValidationFailed(JsonSchemaError):
    """A value did not satisfy an accepted schema.

    ``errors`` is a list of ``(json_path, message)`` pairs (``("$.items[0].id", "...")``),
    at most :data:`zigai.json_schema.MAX_REPORTED_ERRORS` of them, in evaluation order.
    """

    def __init__(self, message: str, errors: list[tuple[str, str]] | None = None) -> None:
        super().__init__(message)
        self.errors: list[tuple[str, str]] = list(errors or [])
