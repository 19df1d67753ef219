"""A listening loopback socket that a refused request must never reach.

Policy tests point a client at it and then assert :func:`no_connection`: a URL refused "before
any socket opens" leaves the socket's accept queue empty.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def silent_listener(backlog: int = 8) -> Iterator[socket.socket]:
    """A bound, listening socket on 127.0.0.1 whose ``accept`` gives up after 0.2 s."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(backlog)
        sock.settimeout(0.2)
        yield sock


def no_connection(sock: socket.socket) -> bool:
    """True when nobody connected to ``sock`` (within its 0.2 s accept timeout)."""
    try:
        conn, _ = sock.accept()
    except TimeoutError:
        return True
    conn.close()
    return False
