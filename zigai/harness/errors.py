"""Errors of :mod:`zigai.harness` (all under :class:`zigai.errors.HarnessError`)."""

from __future__ import annotations

from zigai.errors import HarnessError

__all__ = ["HarnessError", "InvalidHarness", "ArtifactLimitExceeded", "HarnessResultClosed"]


class InvalidHarness(HarnessError):
    """The harness configuration is unusable (not an Agent, a non-callable producer, …)."""


class ArtifactLimitExceeded(HarnessError):
    """A producer tried to collect more than :class:`~zigai.harness.ArtifactLimits` allows."""


class HarnessResultClosed(HarnessError):
    """A harness result was used after ``close()``."""
