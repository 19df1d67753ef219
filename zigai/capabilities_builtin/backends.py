"""The small structural backend interfaces of the built-in capabilities (no vendor clients).

An application passes any object with the named methods; zigai imports no browser engine,
image service or skill store.  Backends return plain values and the capability bounds them
before the model sees them.  zigai ships two defaults over its own layers:
:class:`~zigai.capabilities_builtin.HttpBrowser` (over :class:`~zigai.transport.HttpTransport`)
and :class:`~zigai.capabilities_builtin.DirectorySkills` (over a
:class:`~zigai.environments.RootedDirectory`).

Invariants: a browser backend is only ever given URLs the capability's
:class:`~zigai.security.UrlPolicy` allowed, plus the call's deadline and cancellation token;
an image backend's ``describe`` likewise only sees allowed URLs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from zigai.control import CancellationToken

__all__ = [
    "FileSlice", "FetchedPage", "BrowserBackend", "GeneratedImage", "ImageBackend", "SkillInfo", "SkillBackend",
]


@dataclass(frozen=True, slots=True)
class FileSlice:
    """Part of a file: at most the requested bytes from ``offset``, and the file's whole ``size``."""

    data: bytes
    size: int
    offset: int = 0


@dataclass(frozen=True, slots=True)
class FetchedPage:
    """A page a browser backend loaded: the final URL (after redirects), its title and text."""

    url: str
    text: str
    title: str = ""
    status: int = 200


@runtime_checkable
class BrowserBackend(Protocol):
    """Loads one page.  ``url`` was allowed by the policy; honour ``deadline`` (monotonic
    seconds or None) and ``cancellation``, and read at most ``max_bytes`` of the body."""

    def fetch(self, url: str, *, max_bytes: int, deadline: float | None,
              cancellation: CancellationToken) -> FetchedPage: ...


@dataclass(frozen=True, slots=True)
class GeneratedImage:
    """An image a backend produced: where it is stored (``url``) and/or its bytes."""

    media_type: str
    data: bytes = b""
    url: str | None = None
    description: str = ""


@runtime_checkable
class ImageBackend(Protocol):
    """Generates images from a prompt and describes images given by URL."""

    def generate(self, prompt: str, *, size: str) -> GeneratedImage: ...

    def describe(self, url: str, *, question: str) -> str: ...


@dataclass(frozen=True, slots=True)
class SkillInfo:
    """One skill as listed to the model: its name and when to use it."""

    name: str
    description: str


@runtime_checkable
class SkillBackend(Protocol):
    """A store of skills: list them, load one's instructions, read a file that belongs to it."""

    def list_skills(self) -> list[SkillInfo]: ...

    def load_skill(self, name: str) -> str: ...

    def read_skill_file(self, name: str, path: str, *, offset: int, max_bytes: int) -> FileSlice: ...
