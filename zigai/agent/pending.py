"""``PendingMessageQueue``: a thread-safe, one-run FIFO of request batches for a live run.

Another thread (a UI, a chat front end) may :meth:`~PendingMessageQueue.enqueue` request
messages while a run executes.  The run takes accepted batches only at its safe
boundaries — before a model request, after tool results, and after a provisional final
response — so a batch never splits a tool call from its result.  Streaming runs emit one
``enqueued_messages`` event per insertion.

Invariants:

* every accepted batch is a deep copy, so the caller may reuse or mutate its input;
* one lock guards the batches and the closed flag: the run's finalization takes the
  remaining batches (continuing the run when there are any) or closes the queue in one
  critical section, so an ``enqueue`` either lands in a later model step or raises
  :class:`PendingMessageQueueClosed` — it never disappears behind a final result;
* a pause takes the remaining batches into the paused state (they are inserted after the
  deferred tool results on resume) and closes the queue; cancellation or any other
  terminal failure closes it and discards batches that did not enter history;
* a queue serves one run: attaching it to a second run raises
  :class:`PendingMessageQueueClosed` (it was closed when the first run ended).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Sequence

from zigai.errors import AgentError
from zigai.messages import RequestMessage

__all__ = ["PendingMessageQueue", "PendingMessageQueueClosed", "InvalidPendingMessages"]


class PendingMessageQueueClosed(AgentError):
    """The queue's run finished, paused or failed; the batch was not accepted."""


class InvalidPendingMessages(AgentError):
    """An enqueued batch is empty or holds something other than RequestMessage values."""


class PendingMessageQueue:
    """Thread-safe one-run FIFO of deep-copied ``RequestMessage`` batches (see module docs)."""

    __slots__ = ("_lock", "_batches", "_closed", "_attached", "_accepted")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._batches: list[tuple[RequestMessage, ...]] = []
        self._closed = False
        self._attached = False
        self._accepted = 0

    # -- producer side ----------------------------------------------------------------------

    def enqueue(self, batch: RequestMessage | Sequence[RequestMessage]) -> None:
        """Accept one batch for the run's next safe boundary, or raise PendingMessageQueueClosed."""
        items = (batch,) if isinstance(batch, RequestMessage) else tuple(batch)
        if not items:
            raise InvalidPendingMessages("a pending batch needs at least one RequestMessage")
        for item in items:
            if not isinstance(item, RequestMessage):
                raise InvalidPendingMessages(
                    f"pending batches hold RequestMessage values, got {type(item).__name__}"
                )
        copied = copy.deepcopy(items)
        with self._lock:
            if self._closed:
                raise PendingMessageQueueClosed("the run of this PendingMessageQueue has ended")
            self._batches.append(copied)
            self._accepted += 1

    @property
    def closed(self) -> bool:
        with self._lock:
            return self._closed

    def __len__(self) -> int:
        """Batches accepted and not yet taken by the run."""
        with self._lock:
            return len(self._batches)

    @property
    def accepted(self) -> int:
        """Batches accepted over the queue's life."""
        with self._lock:
            return self._accepted

    def close(self) -> tuple[tuple[RequestMessage, ...], ...]:
        """Close the queue; returns (and forgets) the batches that never entered a run."""
        with self._lock:
            self._closed = True
            left, self._batches = tuple(self._batches), []
        return left

    deinit = close

    def __enter__(self) -> PendingMessageQueue:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PendingMessageQueue(pending={len(self)}, closed={self.closed})"

    # -- run side (used by the agent loop) --------------------------------------------------

    def attach(self) -> None:
        """Bind the queue to one run (called once when the run starts)."""
        with self._lock:
            if self._closed or self._attached:
                raise PendingMessageQueueClosed("a PendingMessageQueue serves exactly one run")
            self._attached = True

    def take(self) -> tuple[RequestMessage, ...]:
        """Every accepted message in FIFO order, removing them (the run inserts them now)."""
        with self._lock:
            if not self._batches:
                return ()
            batches, self._batches = self._batches, []
        return tuple(message for batch in batches for message in batch)

    def take_or_close(self) -> tuple[RequestMessage, ...]:
        """Finalization: take the remaining messages, or close when none are left (one lock)."""
        with self._lock:
            if self._batches:
                batches, self._batches = self._batches, []
                return tuple(message for batch in batches for message in batch)
            self._closed = True
            return ()

    def take_and_close(self) -> tuple[RequestMessage, ...]:
        """Pause: take every remaining message and close the queue in one critical section."""
        with self._lock:
            self._closed = True
            batches, self._batches = self._batches, []
        return tuple(message for batch in batches for message in batch)
