"""zigai.runtime: execution runtime service contracts and their in-memory stores (layer 6).

Job
    Give durable and distributed agent work four independent, replaceable service contracts --
    step state, blobs, managed prompts, tasks -- plus a bounded executor, so hosted services
    and remote workers plug in as application adapters instead of core dependencies.

Invariants
    * Steps: optimistic, monotonic revisions (a write names the revision it saw; revisions only
      grow, across deletes too); states are bounded JSON (:class:`StepStateTooLarge`); an
      in-memory and a SQLite store (stdlib ``sqlite3``) pass the same tests.
    * Blobs: identity is ``(tenant_id, blob_id)``; another tenant's blob is not found; sizes are
      bounded before storing (:class:`BlobTooLarge`).
    * Prompts: published versions are immutable (:class:`PromptVersionExists`); rendering is
      local, strict about variables, literal and bounded (:class:`PromptTooLarge`).
    * Tasks: an explicit state machine (:class:`InvalidTaskTransition`) with optimistic revisions.
    * The in-memory stores own each item independently (stored as its own bytes or JSON text)
      and hand out fresh copies; every store is thread-safe and refuses use after ``close()``.
    * :class:`BoundedExecutor` keeps source-ordered results and cancels, then drains, before
      it raises.

Submodules: ``errors``, ``steps``, ``blobs``, ``prompts``, ``tasks``, ``executor``
(``_keys``: shared key validation and the bounded-JSON round trip; ``_service``: the
lifecycle of the in-memory stores).
"""

from __future__ import annotations

from zigai.runtime.blobs import BlobLimits, BlobRef, BlobStore, InMemoryBlobStore, blob_id_for
from zigai.runtime.errors import (
    BlobTooLarge,
    ExecutorClosed,
    InvalidRuntimeRecord,
    InvalidTaskTransition,
    PromptRenderError,
    PromptTooLarge,
    PromptVersionExists,
    RevisionConflict,
    ServiceClosed,
    StepStateTooLarge,
    TaskPayloadTooLarge,
    TooManyTasks,
    UnknownRecord,
)
from zigai.runtime.executor import BoundedExecutor, ExecutorResults, TaskContext
from zigai.runtime.prompts import InMemoryPromptStore, PromptLimits, PromptStore, PromptVersion
from zigai.runtime.steps import (
    InMemoryStepStore,
    SqliteStepStore,
    StepLimits,
    StepRecord,
    StepStore,
    StepStoreBase,
)
from zigai.runtime.tasks import InMemoryTaskService, TaskLimits, TaskRecord, TaskService, TaskState

__all__ = [
    "StepStore",
    "StepRecord",
    "StepLimits",
    "InMemoryStepStore",
    "SqliteStepStore",
    "StepStoreBase",
    "BlobStore",
    "BlobRef",
    "BlobLimits",
    "InMemoryBlobStore",
    "blob_id_for",
    "PromptStore",
    "PromptVersion",
    "PromptLimits",
    "InMemoryPromptStore",
    "TaskService",
    "TaskRecord",
    "TaskState",
    "TaskLimits",
    "InMemoryTaskService",
    "BoundedExecutor",
    "ExecutorResults",
    "TaskContext",
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
