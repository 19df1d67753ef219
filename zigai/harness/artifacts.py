"""The run-scoped artifact collector: bounded, copying, thread-safe.

Invariants: every artifact is copied on ``add`` (bytes become an immutable ``bytes``, text
stays ``str``); the count, each artifact's size, the total size and the name length are
bounded by :class:`ArtifactLimits` — exactly at a limit is accepted, one more raises
:class:`~zigai.harness.errors.ArtifactLimitExceeded` and collects nothing; names are unique.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from zigai.harness.errors import ArtifactLimitExceeded, InvalidHarness

__all__ = ["Artifact", "ArtifactLimits", "ArtifactCollector"]


@dataclass(frozen=True, slots=True)
class ArtifactLimits:
    """Bounds of one run's artifacts (defaults: 64 artifacts, 4 MiB each, 16 MiB in total)."""

    max_artifacts: int = 64
    max_artifact_bytes: int = 4 * 1024 * 1024
    max_total_bytes: int = 16 * 1024 * 1024
    max_name_chars: int = 256

    def __post_init__(self) -> None:
        for name in ("max_artifacts", "max_artifact_bytes", "max_total_bytes", "max_name_chars"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidHarness(f"ArtifactLimits.{name} must be an int >= 1")


@dataclass(frozen=True, slots=True)
class Artifact:
    """One collected artifact: a unique name, its media type and its copied content."""

    name: str
    content: bytes | str
    media_type: str = "text/plain"

    @property
    def size(self) -> int:
        return len(self.content.encode("utf-8")) if isinstance(self.content, str) else len(self.content)


class ArtifactCollector:
    """Collects the artifacts of one run within :class:`ArtifactLimits`."""

    def __init__(self, limits: ArtifactLimits | None = None) -> None:
        self.limits = limits or ArtifactLimits()
        self._items: list[Artifact] = []
        self._total = 0
        self._lock = threading.Lock()
        self._sealed = False

    def add(self, name: str, content: bytes | bytearray | memoryview | str,
            media_type: str = "text/plain") -> Artifact:
        """Copy one artifact in; raises ArtifactLimitExceeded (collecting nothing) past a bound."""
        if not isinstance(name, str) or not name:
            raise InvalidHarness("an artifact needs a non-empty name")
        if not isinstance(media_type, str) or "/" not in media_type:
            raise InvalidHarness(f"artifact {name!r}: media_type must look like 'text/plain'")
        if isinstance(content, str):
            copied: bytes | str = content
        elif isinstance(content, (bytes, bytearray, memoryview)):
            copied = bytes(content)
        else:
            raise InvalidHarness(f"artifact {name!r}: content must be bytes or str")
        artifact = Artifact(name, copied, media_type)
        limits = self.limits
        if len(name) > limits.max_name_chars:
            raise ArtifactLimitExceeded(f"artifact name is longer than {limits.max_name_chars} characters")
        if artifact.size > limits.max_artifact_bytes:
            raise ArtifactLimitExceeded(
                f"artifact {name!r} is {artifact.size} bytes; the limit is {limits.max_artifact_bytes}")
        with self._lock:
            if self._sealed:
                raise InvalidHarness("the run's producers have finished; nothing more is collected")
            if any(item.name == name for item in self._items):
                raise InvalidHarness(f"an artifact named {name!r} was already collected")
            if len(self._items) >= limits.max_artifacts:
                raise ArtifactLimitExceeded(f"a run collects at most {limits.max_artifacts} artifacts")
            if self._total + artifact.size > limits.max_total_bytes:
                raise ArtifactLimitExceeded(
                    f"artifacts would total {self._total + artifact.size} bytes; the limit is "
                    f"{limits.max_total_bytes}")
            self._items.append(artifact)
            self._total += artifact.size
        return artifact

    def seal(self) -> tuple[Artifact, ...]:
        """Stop collecting (a late producer cannot add) and return the artifacts in order."""
        with self._lock:
            self._sealed = True
            return tuple(self._items)

    @property
    def total_bytes(self) -> int:
        with self._lock:
            return self._total
