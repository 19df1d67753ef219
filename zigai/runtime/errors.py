"""The named errors of the runtime services (steps, blobs, prompts, tasks, executor).

Invariant: constructors pass only the message positionally; extra data are keyword-only
attributes with defaults, so every error pickles with its attributes.  Messages name ids,
revisions and sizes, never stored content.
"""

from __future__ import annotations

from zigai.errors import RuntimeServiceError

__all__ = [
    "InvalidRuntimeRecord",
    "UnknownRecord",
    "RevisionConflict",
    "StepStateTooLarge",
    "BlobTooLarge",
    "PromptVersionExists",
    "PromptRenderError",
    "PromptTooLarge",
    "InvalidTaskTransition",
    "TaskPayloadTooLarge",
    "TooManyTasks",
    "ExecutorClosed",
    "ServiceClosed",
]


class InvalidRuntimeRecord(RuntimeServiceError):
    """An id, name, template, content type or payload was malformed; nothing was stored."""


class UnknownRecord(RuntimeServiceError):
    """No record with this key exists (for a blob: none *in this tenant*)."""

    def __init__(self, message: str, *, key: str = "") -> None:
        super().__init__(message)
        self.key = key


class RevisionConflict(RuntimeServiceError):
    """A write named a revision that is no longer the current one; nothing was written."""

    def __init__(self, message: str, *, expected: int = 0, actual: int = 0) -> None:
        super().__init__(message)
        self.expected = expected
        self.actual = actual


class StepStateTooLarge(RuntimeServiceError):
    """A step state exceeds the store's JSON limits; nothing was written."""

    def __init__(self, message: str, *, limit: int = 0) -> None:
        super().__init__(message)
        self.limit = limit


class BlobTooLarge(RuntimeServiceError):
    """A blob exceeds the store's size or total-capacity limit; nothing was written."""

    def __init__(self, message: str, *, limit: int = 0) -> None:
        super().__init__(message)
        self.limit = limit


class PromptVersionExists(RuntimeServiceError):
    """A prompt version is already published with a different template (versions are immutable)."""

    def __init__(self, message: str, *, name: str = "", version: int = 0) -> None:
        super().__init__(message)
        self.name = name
        self.version = version


class PromptRenderError(RuntimeServiceError):
    """Rendering failed: a variable is missing, unexpected or not text."""


class PromptTooLarge(PromptRenderError):
    """The rendered prompt would exceed its character bound; rendering stopped before it."""

    def __init__(self, message: str, *, limit: int = 0) -> None:
        super().__init__(message)
        self.limit = limit


class InvalidTaskTransition(RuntimeServiceError):
    """A task cannot move from its current state to the requested one."""

    def __init__(self, message: str, *, task_id: str = "", state: str = "", target: str = "") -> None:
        super().__init__(message)
        self.task_id = task_id
        self.state = state
        self.target = target


class TaskPayloadTooLarge(RuntimeServiceError):
    """A task input or output exceeds the service's JSON limits, or the service is full."""

    def __init__(self, message: str, *, limit: int = 0) -> None:
        super().__init__(message)
        self.limit = limit


class TooManyTasks(RuntimeServiceError):
    """A bounded executor was given more items than ``max_tasks``; nothing ran."""

    def __init__(self, message: str, *, limit: int = 0) -> None:
        super().__init__(message)
        self.limit = limit


class ExecutorClosed(RuntimeServiceError):
    """A bounded executor or its results were used after ``close()``."""


class ServiceClosed(RuntimeServiceError):
    """An in-memory store was used after ``close()``."""
