"""``DurableRuns``: enqueue, list, inspect, cancel, resume and read durable agent runs from any process.

Job
    Operate on the durable runs kept in one DBOS system database (SQLite or PostgreSQL)
    through DBOS's own client (``dbos.DBOSClient``), so an operator process, a web handler or
    the ``zigai durable`` CLI needs neither the agents' code nor a launched DBOS.  Workers —
    processes that construct the :class:`~zigai.durable.DurableAgent` values, declare the
    queue and call ``DBOS.launch()`` — do the running.

Invariants
    * Every operation is DBOS's own (``enqueue``, ``list_workflows``, ``list_workflow_steps``,
      ``cancel_workflow``, ``resume_workflow``, ``retrieve_workflow``); nothing here writes the
      system database directly.
    * A durable agent run is the DBOS workflow named ``zigai.agent:<agent name>``; listings
      show only those.
    * Step outcomes are read from DBOS's step records, which DBOS writes when a step
      completes: ``ok`` (output recorded) or ``error`` (error recorded).  A step in flight is
      not listed yet.
    * Importing this module imports no third-party module; DBOS is imported on construction.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from zigai import history
from zigai.durable.errors import (
    DurableRunCancelled,
    DurableRunNotFound,
    DurableRunWaitTimedOut,
    DurableSetupError,
)
from zigai.messages import Message

__all__ = ["DurableRuns", "RunSummary", "RunDetails", "StepRecord", "WORKFLOW_PREFIX"]

WORKFLOW_PREFIX = "zigai.agent:"
_PAGE = 50
_FINISHED = ("SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED")


@dataclass(frozen=True, slots=True)
class RunSummary:
    """One durable agent run as DBOS lists it (times are epoch milliseconds).

    ``agent`` is the DurableAgent name; for a workflow that is not a zigai agent run (which
    ``inspect`` still shows), the DBOS workflow name.
    """

    workflow_id: str
    agent: str
    status: str
    queue: str | None
    executor_id: str | None
    app_version: str | None
    created_at_ms: int | None
    updated_at_ms: int | None


@dataclass(frozen=True, slots=True)
class StepRecord:
    """One recorded step: DBOS's step number, its name, and its outcome (``ok`` or ``error``)."""

    number: int
    name: str
    outcome: str
    error: str | None
    started_at_ms: int | None
    completed_at_ms: int | None


@dataclass(frozen=True, slots=True)
class RunDetails:
    """A run with its steps; ``error`` is the run's failure text when it failed."""

    summary: RunSummary
    steps: tuple[StepRecord, ...]
    error: str | None


def _summary(status: Any) -> RunSummary:
    name = str(status.name or "")
    agent = name[len(WORKFLOW_PREFIX):] if name.startswith(WORKFLOW_PREFIX) else name  # another workflow: its name
    return RunSummary(
        workflow_id=status.workflow_id, agent=agent, status=str(status.status),
        queue=status.queue_name, executor_id=status.executor_id, app_version=status.app_version,
        created_at_ms=status.created_at, updated_at_ms=status.updated_at,
    )


def _step(info: Any) -> StepRecord:
    error = info.get("error")
    return StepRecord(int(info["function_id"]), str(info["function_name"]), "ok" if error is None else "error",
                      None if error is None else f"{type(error).__name__}: {error}",
                      info.get("started_at_epoch_ms"), info.get("completed_at_epoch_ms"))


class DurableRuns:
    """The durable runs of one DBOS system database (a context manager; see module docstring).

    ``application_name`` must be the DBOS application name of the workers when several
    applications share the system database.
    """

    def __init__(self, system_database_url: str, *, application_name: str | None = None) -> None:
        if not isinstance(system_database_url, str) or "://" not in system_database_url:
            raise DurableSetupError(
                "DurableRuns needs the DBOS system database URL, e.g. sqlite:///dbos.sqlite or "
                "postgresql://user@host:5432/dbos"
            )
        if system_database_url.startswith("sqlite:///") and not os.path.exists(system_database_url[10:]):
            raise DurableSetupError(
                f"no DBOS system database at {system_database_url[10:]!r}: point at the file your workers "
                "launch DBOS with (DBOS creates it on launch)"
            )
        try:
            from dbos import DBOSClient
        except ImportError as exc:  # pragma: no cover - the dev extra installs dbos
            raise DurableSetupError("zigai.durable needs DBOS: pip install 'zigai[dbos]'") from exc
        # an operator tool reports a lost database instead of blocking until it comes back
        self._client: Any = DBOSClient(system_database_url=system_database_url, application_name=application_name,
                                       retry_connection_errors=False)

    def close(self) -> None:
        self._client.destroy()

    def __enter__(self) -> DurableRuns:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _status(self, workflow_id: str) -> Any:
        found = self._client.list_workflows(workflow_ids=[workflow_id], load_input=False, load_output=False)
        if not found:
            raise DurableRunNotFound(f"no durable run {workflow_id!r} in this system database; "
                                     "check the id and the --db URL", workflow_id=workflow_id)
        return found[0]

    def enqueue(self, agent: str, prompt: str | None = None, *, workflow_id: str, queue: str,
                message_history: Sequence[Message] = ()) -> str:
        """Put a run of the durable agent named ``agent`` on ``queue``; a worker will run it.

        Every worker declares ``dbos.Queue(queue)`` and constructs the agent before
        ``DBOS.launch()``.  Enqueueing an id that exists attaches to that run (DBOS's
        default), so the id doubles as an idempotency key for the whole run.
        """
        from zigai.durable.ids import StepId

        StepId(workflow_id, 0)  # the id becomes part of every step id
        options = {"workflow_name": WORKFLOW_PREFIX + agent, "queue_name": queue, "workflow_id": workflow_id}
        handle = self._client.enqueue(options, prompt, history.stringify(message_history))
        return str(handle.workflow_id)

    def list(self, *, agent: str | None = None, status: str | None = None, limit: int = 100) -> tuple[RunSummary, ...]:
        """The newest ``limit`` runs (of one agent, in one status), newest first."""
        names = [WORKFLOW_PREFIX + agent] if agent is not None else None
        found = self._client.list_workflows(name=names, status=status, limit=limit, sort_desc=True,
                                            load_input=False, load_output=False)
        return tuple(_summary(s) for s in found if str(s.name or "").startswith(WORKFLOW_PREFIX))

    def inspect(self, workflow_id: str) -> RunDetails:
        """The run's summary and every recorded step with its outcome."""
        status = self._status(workflow_id)
        records: list[StepRecord] = []
        while True:  # pages, so a long run's recorded outputs are never all in memory at once
            page = self._client.list_workflow_steps(workflow_id, load_output=True, limit=_PAGE,
                                                    offset=len(records))
            records.extend(_step(s) for s in page)
            if len(page) < _PAGE:
                break
        steps = tuple(records)
        error = None
        if str(status.status) in ("ERROR", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"):
            full = self._client.list_workflows(workflow_ids=[workflow_id], load_input=False)[0]
            error = None if full.error is None else f"{type(full.error).__name__}: {full.error}"
        return RunDetails(_summary(status), steps, error)

    def cancel(self, workflow_id: str) -> None:
        """Cancel the run (DBOS stops it at its next step; completed steps stay recorded)."""
        self._status(workflow_id)
        self._client.cancel_workflow(workflow_id)

    def resume(self, workflow_id: str) -> None:
        """Resume a cancelled or failed run from its last completed step (on DBOS's internal queue)."""
        self._status(workflow_id)
        self._client.resume_workflow(workflow_id)

    def events(self, workflow_id: str, *, offset: int = 0, timeout_s: float | None = None) -> Iterator[dict[str, Any]]:
        """The event records of a run started with ``stream_events=True``, from ``offset`` on, until it ends.

        ``timeout_s`` bounds the wait for each next record; the records and what a consumer sees
        after a crash are described in :mod:`zigai.durable.events`.
        """
        from zigai.durable.events import EVENTS_STREAM

        self._status(workflow_id)
        yield from self._client.read_stream(workflow_id, EVENTS_STREAM, offset=offset, polling_interval_sec=0.05,
                                            timeout_seconds=timeout_s)

    def result(self, workflow_id: str, *, timeout_s: float | None = None) -> Any:
        """Wait for the run and return its :class:`~zigai.durable.DurableRunResult` (close it).

        A failed run re-raises its error; a cancelled one raises :class:`DurableRunCancelled`;
        ``timeout_s`` bounds the wait (:class:`DurableRunWaitTimedOut`).
        """
        from zigai.durable.dbos_agent import _decode_result

        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            status = str(self._status(workflow_id).status)
            if status == "CANCELLED":
                raise DurableRunCancelled(f"durable run {workflow_id!r} was cancelled; `zigai durable resume "
                                          f"{workflow_id}` continues it", workflow_id=workflow_id)
            if status in _FINISHED:
                break
            if deadline is not None and time.monotonic() >= deadline:
                raise DurableRunWaitTimedOut(f"durable run {workflow_id!r} is still {status} after {timeout_s} s",
                                             workflow_id=workflow_id)
            time.sleep(0.05)
        return _decode_result(workflow_id, self._client.retrieve_workflow(workflow_id).get_result())
