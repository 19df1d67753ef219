"""UI stores in one SQLite file, shared by every worker process of a ``ui_app`` on one machine.

Job
    :class:`SqliteUiStore` implements the store contract of :mod:`zigai.ui.wsgi` — canonical
    history per thread, paused runs, and each run's replay log — in a SQLite database, so a
    request may land on any worker process: a run started on one worker is approved, resumed,
    reconnected to or cancelled through another.  ``ui_app(agent, store=SqliteUiStore(path))``.

Invariants
    * Same contract as the in-memory defaults: bounded (threads, pauses, retained runs,
      frames and bytes per run), a pause is claimed at most once (one ``DELETE`` decides, so
      racing workers cannot both resume it), replay sequence numbers start at 1 and a reader
      behind an evicted frame gets :class:`~zigai.ui.ReplayGap`.
    * Every write is one short transaction (``BEGIN IMMEDIATE``); readers poll every
      ``poll_s``; connections are per thread; the journal is WAL.
    * Nothing is unpickled: messages are stored as zigai's history JSON, calls as plain JSON.
    * One machine only (SQLite file locking); the same contract fits PostgreSQL or Redis.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from zigai.messages import Message
from zigai.ui.pauses import PauseStore, StoredPause, _interrupts
from zigai.ui.replay import ReplayGap, ReplayTimedOut

__all__ = ["SqliteHistoryStore", "SqlitePauseStore", "SqliteReplayLog", "SqliteUiStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS histories (thread_id TEXT PRIMARY KEY, messages TEXT NOT NULL, touched REAL NOT NULL);
CREATE TABLE IF NOT EXISTS pauses (pause_id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, state_json TEXT NOT NULL,
                                   calls TEXT NOT NULL, created INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, last INTEGER NOT NULL,
                                 bytes INTEGER NOT NULL, closed INTEGER NOT NULL, cancel INTEGER NOT NULL,
                                 max_events INTEGER NOT NULL, max_bytes INTEGER NOT NULL, created INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS frames (run_id TEXT NOT NULL, seq INTEGER NOT NULL, payload BLOB NOT NULL,
                                   PRIMARY KEY (run_id, seq));
"""


class SqliteUiStore:
    """Histories, pauses and replay logs in the SQLite file at ``path`` (created if missing)."""

    def __init__(self, path: str | os.PathLike[str], *, max_threads: int = 1024, max_pauses: int = 256,
                 max_runs: int = 256, poll_s: float = 0.05, busy_timeout_s: float = 10.0) -> None:
        for name, value in (("max_threads", max_threads), ("max_pauses", max_pauses), ("max_runs", max_runs)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int")
        if not 0 < poll_s <= 5:
            raise ValueError("poll_s must be in (0, 5] seconds")
        self.path = os.fspath(path)
        self.max_runs = max_runs
        self.poll_s = poll_s
        self.busy_timeout_s = busy_timeout_s
        self._local = threading.local()
        self._connection().executescript("PRAGMA journal_mode=WAL;" + _SCHEMA)
        self.histories = SqliteHistoryStore(self, max_threads)
        self.pauses = SqlitePauseStore(self, max_pauses)

    def _connection(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None)
            self._local.db = db
        return db

    def _write(self) -> _Transaction:
        return _Transaction(self._connection())

    def _counter(self, db: sqlite3.Connection, table: str) -> int:
        row = db.execute(f"SELECT COALESCE(MAX(created), 0) + 1 FROM {table}").fetchone()
        return int(row[0])

    # -- replay logs ---------------------------------------------------------------------------

    def replay_log(self, run_id: str, thread_id: str, max_events: int, max_bytes: int) -> SqliteReplayLog:
        """A new, empty replay log for ``run_id`` (the oldest finished runs beyond ``max_runs`` go)."""
        with self._write() as db:
            db.execute("DELETE FROM frames WHERE run_id = ?", (run_id,))
            db.execute("INSERT OR REPLACE INTO runs VALUES (?, ?, 0, 0, 0, 0, ?, ?, ?)",
                       (run_id, thread_id, max_events, max_bytes, self._counter(db, "runs")))
            extra = db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] - self.max_runs
            if extra > 0:
                old = [r[0] for r in db.execute(
                    "SELECT run_id FROM runs WHERE closed = 1 ORDER BY created LIMIT ?", (extra,))]
                for gone in old:
                    db.execute("DELETE FROM frames WHERE run_id = ?", (gone,))
                    db.execute("DELETE FROM runs WHERE run_id = ?", (gone,))
        return SqliteReplayLog(self, run_id)

    def open_replay(self, run_id: str) -> tuple[SqliteReplayLog, str] | None:
        """The replay log of a run any worker started, with its thread id; None when unknown."""
        row = self._connection().execute("SELECT thread_id FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return None if row is None else (SqliteReplayLog(self, run_id), str(row[0]))

    def request_cancel(self, run_id: str) -> bool:
        """Flag a run for cancellation; the worker producing it cancels it. False if unknown."""
        with self._write() as db:
            return db.execute("UPDATE runs SET cancel = 1 WHERE run_id = ?", (run_id,)).rowcount == 1


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, kind: object, *rest: object) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")


class SqliteHistoryStore:
    """Canonical history per thread (history JSON), the least recently written thread evicted."""

    def __init__(self, store: SqliteUiStore, max_threads: int) -> None:
        self._store = store
        self.max_threads = max_threads

    def get(self, thread_id: str) -> tuple[Message, ...] | None:
        from zigai.history import parse

        row = self._store._connection().execute(
            "SELECT messages FROM histories WHERE thread_id = ?", (thread_id,)).fetchone()
        if row is None:
            return None
        with parse(row[0]) as owned:
            return tuple(owned.messages)

    def put(self, thread_id: str, messages: Sequence[Message]) -> None:
        from zigai.history import stringify

        text = stringify(list(messages))
        with self._store._write() as db:
            db.execute("INSERT OR REPLACE INTO histories VALUES (?, ?, ?)", (thread_id, text, time.time()))
            db.execute("DELETE FROM histories WHERE thread_id NOT IN "
                       "(SELECT thread_id FROM histories ORDER BY touched DESC LIMIT ?)", (self.max_threads,))


def _call_json(call: Any) -> dict[str, Any]:
    return {"tool_call_id": call.tool_call_id, "tool_name": call.tool_name, "args": call.args,
            "execution": call.execution, "approval": call.approval.value}


class SqlitePauseStore(PauseStore):
    """:class:`~zigai.ui.PauseStore` whose pauses live in the shared database."""

    def __init__(self, store: SqliteUiStore, max_pauses: int) -> None:
        super().__init__(max_pauses)
        self._store = store

    def _save(self, stored: StoredPause) -> None:
        calls = json.dumps([_call_json(c) for c in stored.calls])
        with self._store._write() as db:
            db.execute("INSERT INTO pauses VALUES (?, ?, ?, ?, ?)",
                       (stored.pause_id, stored.thread_id, stored.state_json, calls,
                        self._store._counter(db, "pauses")))
            db.execute("DELETE FROM pauses WHERE pause_id NOT IN "
                       "(SELECT pause_id FROM pauses ORDER BY created DESC LIMIT ?)", (self.max_pauses,))

    def _row(self, row: Any) -> StoredPause:
        from zigai.agent.deferred import DeferredCall
        from zigai.agent.paused_state import ApprovalSource

        calls = tuple(DeferredCall(c["tool_call_id"], c["tool_name"], c["args"], c["execution"],
                                   ApprovalSource(c["approval"])) for c in json.loads(row[3]))
        return StoredPause(row[0], row[1], row[2], calls, _interrupts(row[0], calls))

    def _load(self, pause_id: str) -> StoredPause | None:
        row = self._store._connection().execute("SELECT * FROM pauses WHERE pause_id = ?", (pause_id,)).fetchone()
        return None if row is None else self._row(row)

    def _newest_first(self, thread_id: str) -> list[StoredPause]:
        rows = self._store._connection().execute(
            "SELECT * FROM pauses WHERE thread_id = ? ORDER BY created DESC", (thread_id,)).fetchall()
        return [self._row(row) for row in rows]

    def _delete(self, pause_id: str) -> bool:
        with self._store._write() as db:
            return db.execute("DELETE FROM pauses WHERE pause_id = ?", (pause_id,)).rowcount == 1

    def __len__(self) -> int:
        return int(self._store._connection().execute("SELECT COUNT(*) FROM pauses").fetchone()[0])


class SqliteReplayLog:
    """The replay log of one run in the shared database (the :class:`~zigai.ui.ReplayLog` API)."""

    def __init__(self, store: SqliteUiStore, run_id: str) -> None:
        self._store = store
        self.run_id = run_id

    def _state(self) -> tuple[int, int, bool, bool]:
        db = self._store._connection()
        last, closed, cancel = db.execute(
            "SELECT last, closed, cancel FROM runs WHERE run_id = ?", (self.run_id,)).fetchone() or (0, 1, 0)
        first = db.execute("SELECT MIN(seq) FROM frames WHERE run_id = ?", (self.run_id,)).fetchone()[0]
        return int(last), int(first if first is not None else last + 1), bool(closed), bool(cancel)

    @property
    def last_sequence(self) -> int:
        return self._state()[0]

    @property
    def first_sequence(self) -> int:
        return self._state()[1]

    @property
    def closed(self) -> bool:
        return self._state()[2]

    @property
    def cancel_requested(self) -> bool:
        return self._state()[3]

    def append(self, frame: bytes) -> int:
        with self._store._write() as db:
            row = db.execute("SELECT last, bytes, closed, max_events, max_bytes FROM runs WHERE run_id = ?",
                             (self.run_id,)).fetchone()
            if row is None or row[2]:
                raise ValueError("the replay log is closed")
            last, size, _, max_events, max_bytes = row
            last, size = last + 1, size + len(frame)
            db.execute("INSERT INTO frames VALUES (?, ?, ?)", (self.run_id, last, frame))
            held = db.execute("SELECT seq, LENGTH(payload) FROM frames WHERE run_id = ? ORDER BY seq",
                              (self.run_id,)).fetchall()
            while len(held) > 1 and (len(held) > max_events or size > max_bytes):
                seq, length = held.pop(0)
                db.execute("DELETE FROM frames WHERE run_id = ? AND seq = ?", (self.run_id, seq))
                size -= length
            db.execute("UPDATE runs SET last = ?, bytes = ? WHERE run_id = ?", (last, size, self.run_id))
            return int(last)

    def close(self) -> None:
        with self._store._write() as db:
            db.execute("UPDATE runs SET closed = 1 WHERE run_id = ?", (self.run_id,))

    def read(self, after: int = 0, *, timeout: float | None = 30.0) -> Iterator[tuple[int, bytes]]:
        """Frames with sequence > ``after``, polling the database until the run is closed."""
        position = after
        waited = 0.0
        while True:
            last, first, closed, _ = self._state()
            if position >= last and not closed:
                if timeout is not None and waited >= timeout:
                    raise ReplayTimedOut(f"no event within {timeout} s")
                time.sleep(self._store.poll_s)
                waited += self._store.poll_s
                continue
            if position + 1 < first:
                raise ReplayGap(f"events {position + 1}..{first - 1} were evicted from the replay log")
            rows = self._store._connection().execute(
                "SELECT seq, payload FROM frames WHERE run_id = ? AND seq > ? ORDER BY seq",
                (self.run_id, position)).fetchall()
            for sequence, payload in rows:
                position = int(sequence)
                waited = 0.0
                yield position, bytes(payload)
            if closed and position >= last:
                return
