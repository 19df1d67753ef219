"""The prompt service: managed prompt templates with immutable versions and local rendering.

A template is text with ``{{ name }}`` placeholders (names ``[A-Za-z_][A-Za-z0-9_]*``); it is
parsed when published, and any other ``{{`` or ``}}`` is refused (pass literal braces in
through a variable).  A published version never changes: publishing the same version again
with the same template returns it, with a different template raises
:class:`PromptVersionExists`.

Rendering is local and bounded: every placeholder needs a value, no unexpected value is
accepted, values are inserted literally (never re-expanded), and the output is checked
against ``max_chars`` before each piece is appended -- exactly at the bound is accepted, one
character more raises :class:`PromptTooLarge`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from zigai.runtime._keys import check_key
from zigai.runtime._service import LockedService
from zigai.runtime.errors import (
    InvalidRuntimeRecord,
    PromptRenderError,
    PromptTooLarge,
    PromptVersionExists,
    UnknownRecord,
)

__all__ = ["PromptLimits", "PromptVersion", "PromptStore", "InMemoryPromptStore", "parse_template"]

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


@dataclass(frozen=True, slots=True)
class PromptLimits:
    """Bounds of prompt templates and renders.  Exactly-at-limit is accepted; one more fails."""

    max_template_chars: int = 256 * 1024
    max_render_chars: int = 1024 * 1024
    max_versions: int = 10_000
    max_name_chars: int = 128

    def __post_init__(self) -> None:
        for name in ("max_template_chars", "max_render_chars", "max_versions", "max_name_chars"):
            value = getattr(self, name)
            if type(value) is not int or value <= 0:
                raise ValueError(f"PromptLimits.{name} must be an int > 0, got {value!r}")


def parse_template(template: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Split ``template`` into literal pieces and placeholder names (``len(pieces) == len(names) + 1``)."""
    pieces: list[str] = []
    names: list[str] = []
    position = 0
    for match in _PLACEHOLDER.finditer(template):
        pieces.append(template[position:match.start()])
        names.append(match.group(1))
        position = match.end()
    pieces.append(template[position:])
    for piece in pieces:
        if "{{" in piece or "}}" in piece:
            raise InvalidRuntimeRecord("template has '{{' or '}}' outside a '{{ name }}' placeholder; "
                                       "pass literal braces in through a variable")
    return tuple(pieces), tuple(names)


@dataclass(frozen=True, slots=True)
class PromptVersion:
    """One immutable published version of a named prompt."""

    name: str
    version: int
    template: str
    variables: tuple[str, ...] = field(init=False)
    _pieces: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _names: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.template, str):
            raise InvalidRuntimeRecord(f"prompt {self.name!r}: template must be a string")
        pieces, names = parse_template(self.template)
        object.__setattr__(self, "_pieces", pieces)
        object.__setattr__(self, "_names", names)
        object.__setattr__(self, "variables", tuple(dict.fromkeys(names)))

    def render(self, values: Mapping[str, str | int | float], *, max_chars: int = 1024 * 1024) -> str:
        """The template with every placeholder replaced by its value, within ``max_chars``."""
        if not isinstance(values, Mapping):
            raise PromptRenderError(f"prompt {self.name!r}: values must be a mapping of names to text")
        missing = [name for name in self.variables if name not in values]
        if missing:
            raise PromptRenderError(f"prompt {self.name!r} v{self.version}: no value for {missing}")
        unexpected = sorted(str(name) for name in values if name not in self.variables)
        if unexpected:
            raise PromptRenderError(f"prompt {self.name!r} v{self.version}: unexpected values {unexpected}")
        texts: dict[str, str] = {}
        for name in self.variables:
            value = values[name]
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise PromptRenderError(f"prompt {self.name!r}: value of {name!r} must be text or a number, "
                                        f"got {type(value).__name__}")
            try:
                texts[name] = value if isinstance(value, str) else repr(value)
            except ValueError:  # an int beyond the interpreter's digit limit
                raise PromptTooLarge(f"prompt {self.name!r}: the number given for {name!r} is too long to "
                                     "render", limit=max_chars) from None
        out: list[str] = []
        size = 0
        for index, piece in enumerate(self._pieces):
            for chunk in (piece, texts[self._names[index]] if index < len(self._names) else ""):
                size += len(chunk)
                if size > max_chars:
                    raise PromptTooLarge(f"prompt {self.name!r} v{self.version} renders to more than "
                                         f"{max_chars} characters", limit=max_chars)
                out.append(chunk)
        return "".join(out)


@runtime_checkable
class PromptStore(Protocol):
    """The prompt service contract."""

    def publish(self, name: str, template: str, *, version: int | None = None) -> PromptVersion: ...

    def get(self, name: str, version: int | None = None) -> PromptVersion: ...

    def versions(self, name: str) -> tuple[int, ...]: ...

    def render(self, name: str, values: Mapping[str, str | int | float], *, version: int | None = None) -> str: ...


class InMemoryPromptStore(LockedService):
    """A thread-safe in-process :class:`PromptStore`."""

    _service_name = "prompt store"

    def __init__(self, limits: PromptLimits | None = None) -> None:
        self._limits = limits if limits is not None else PromptLimits()
        super().__init__()
        self._prompts: dict[str, dict[int, PromptVersion]] = {}
        self._count = 0

    @property
    def limits(self) -> PromptLimits:
        return self._limits

    def _clear(self) -> None:
        self._prompts.clear()

    def publish(self, name: str, template: str, *, version: int | None = None) -> PromptVersion:
        """Publish ``template`` as ``version`` (default: one more than the latest)."""
        check_key(name, "prompt name", self._limits.max_name_chars)
        if version is not None and (type(version) is not int or version < 1):
            raise InvalidRuntimeRecord(f"prompt version must be an int >= 1, got {version!r}")
        if isinstance(template, str) and len(template) > self._limits.max_template_chars:
            raise InvalidRuntimeRecord(f"prompt {name!r}: template is {len(template)} characters; the limit is "
                                       f"{self._limits.max_template_chars}")
        with self._lock:
            self._check_open()
            published = self._prompts.get(name, {})
            latest = max(published, default=0)
            chosen = latest + 1 if version is None else version
            existing = published.get(chosen)
            if existing is not None:
                if existing.template == template:
                    return existing
                raise PromptVersionExists(f"prompt {name!r} v{chosen} is published with another template; "
                                          "versions are immutable, publish a new one", name=name, version=chosen)
            if chosen < latest:
                raise InvalidRuntimeRecord(f"prompt {name!r}: version {chosen} is older than the latest "
                                           f"({latest}); versions only grow")
            if self._count >= self._limits.max_versions:
                raise InvalidRuntimeRecord(f"the prompt store holds {self._limits.max_versions} versions, its limit")
            created = PromptVersion(name, chosen, template)
            self._prompts.setdefault(name, {})[chosen] = created
            self._count += 1
        return created

    def get(self, name: str, version: int | None = None) -> PromptVersion:
        """``version`` of ``name`` (default: the latest)."""
        with self._lock:
            self._check_open()
            published = self._prompts.get(name, {})
            chosen = max(published, default=0) if version is None else version
            found = published.get(chosen)
        if found is None:
            what = "any version" if version is None else f"version {version}"
            raise UnknownRecord(f"prompt {name!r} has no {what}", key=f"{name}@{version}")
        return found

    def versions(self, name: str) -> tuple[int, ...]:
        with self._lock:
            self._check_open()
            return tuple(sorted(self._prompts.get(name, {})))

    def render(self, name: str, values: Mapping[str, str | int | float], *, version: int | None = None) -> str:
        """Render a stored version locally within the store's ``max_render_chars``."""
        return self.get(name, version).render(values, max_chars=self._limits.max_render_chars)
