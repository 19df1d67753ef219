"""Deadline-bounded writes to a pipe or socket whose reader may have stopped reading.

Job
    :func:`write_before` writes a whole message to a file descriptor, waiting for room with
    ``poll`` and giving up at a monotonic deadline, so a stdio peer that stops reading its input
    (an MCP or ACP child, or the client of ``serve_stdio``) cannot block the writer for ever.

Invariants
    * The descriptor is never left in a state its owner did not choose: a blocking descriptor
      stays blocking and is written in chunks of at most ``select.PIPE_BUF`` bytes, each only
      after ``poll`` reported room (on a pipe, such a write does not block); a non-blocking
      descriptor is written in larger chunks and a short write just waits for room again.
    * On :class:`TimeoutError` part of the message may have been written: the stream is no
      longer framed, and the caller must treat the connection as broken.
    * Where ``select.poll`` does not exist (Windows) the write is a plain blocking write.
"""

from __future__ import annotations

import math
import os
import select
import time

__all__ = ["write_before"]

_NONBLOCKING_CHUNK = 64 * 1024
_BLOCKING_CHUNK = getattr(select, "PIPE_BUF", 512)


def write_before(fd: int, data: bytes, deadline: float | None) -> None:
    """Write all of ``data`` to ``fd`` before ``deadline`` (``time.monotonic()``; None: no bound).

    Raises :class:`TimeoutError` when the reader has not made room in time and
    :class:`BrokenPipeError` (an :class:`OSError`) when the reader is gone.
    """
    view = memoryview(data)
    if not hasattr(select, "poll"):  # pragma: no cover - Windows
        while view:
            view = view[os.write(fd, view):]
        return
    chunk = _BLOCKING_CHUNK if os.get_blocking(fd) else _NONBLOCKING_CHUNK
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    while view:
        if deadline is None:
            wait_ms = None
        else:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"the reader did not take {len(view)} more bytes in time")
            wait_ms = max(1, math.ceil(left * 1000))
        if not poller.poll(wait_ms):
            continue
        try:
            view = view[os.write(fd, view[:chunk]):]
        except BlockingIOError:  # pragma: no cover - poll reported room; only a racing writer takes it
            continue
