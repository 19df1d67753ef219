"""Task and memory stores shared by several writers (issue 32, defect 9), with real processes.

Two processes saving into one MCP ``FileStore`` must not lose records; a deeply nested snapshot
is a ``TaskStoreError``; temporary files of an interrupted write are cleaned; two
``SqliteStore`` instances on one file cannot together pass the per-tenant cap.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from zigai import mcp
from zigai.mcp.client.task_store import MAX_PENDING_DEPTH
from zigai.mcp.errors import TaskStoreError
from zigai.memory import MemoryCapacityExceeded, MemoryLimits, SqliteStore
from zigai.memory.errors import MemoryRecordNotFound
from zigai.memory.records import CompactionRecord, ConversationRecord
from zigai.messages import RequestMessage, UserPromptPart

ROOT = Path(__file__).resolve().parent.parent


def said(text: str) -> ConversationRecord:
    return ConversationRecord("s", (RequestMessage((UserPromptPart(text),)),))

WRITER = """
import sys
from zigai.mcp import FileStore, TaskRecord
path, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = FileStore(path)
for index in range(count):
    store.save(TaskRecord(f"{tag}-{index}", pending={"k": index}))
    if index % 4 == 3:
        store.remove(f"{tag}-{index - 1}")
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def test_two_processes_saving_into_one_file_store_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), tag, "40"], env=_env())
               for tag in ("a", "b")]
    assert [writer.wait(120) for writer in writers] == [0, 0]
    ids = {record.task_id for record in mcp.FileStore(path).load()}
    expected = {f"{tag}-{i}" for tag in ("a", "b") for i in range(40) if i % 4 != 2}
    assert ids == expected  # 30 per writer: every save kept, every removal honoured


def test_a_deeply_nested_snapshot_is_a_task_store_error(tmp_path: Path) -> None:
    def snapshot(depth: int) -> str:
        pending = "[" * depth + "]" * depth
        return '{"version":1,"tasks":[{"taskId":"t","method":"m","pending":{"k":' + pending + "}}]}"

    path = tmp_path / "tasks.json"
    for depth in (MAX_PENDING_DEPTH, 600, 100_000):  # within max_bytes, past the interpreter's stack
        path.write_text(snapshot(depth))
        with pytest.raises(TaskStoreError, match="nest"):
            mcp.FileStore(path).load()
    path.write_text(snapshot(MAX_PENDING_DEPTH - 1))  # "pending" itself is one level: exactly at the limit
    assert [r.task_id for r in mcp.FileStore(path).load()] == ["t"]
    deep: object = []
    for _ in range(MAX_PENDING_DEPTH):
        deep = [deep]
    store = mcp.FileStore(tmp_path / "other.json")
    with pytest.raises(TaskStoreError, match=f"deeper than {MAX_PENDING_DEPTH}"):
        store.save(mcp.TaskRecord("t", pending={"k": deep}))
    assert store.load() == []


def test_orphaned_temporary_files_are_cleaned_by_the_next_load_or_write(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    store = mcp.FileStore(path)
    store.save(mcp.TaskRecord("a"))
    for name in (".tasks.json.abc123.tmp", ".tasks.json.zz.tmp"):  # what a killed writer leaves
        (tmp_path / name).write_bytes(b'{"version": 1, "ta')
    (tmp_path / ".other.json.x.tmp").write_bytes(b"")  # another store's: left alone
    assert [r.task_id for r in mcp.FileStore(path).load()] == ["a"]  # a restarted client's first load
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.json.x.tmp", "tasks.json", "tasks.json.lock"]
    (tmp_path / ".tasks.json.late.tmp").write_bytes(b"")
    store.save(mcp.TaskRecord("b"))
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.json.x.tmp", "tasks.json", "tasks.json.lock"]


def test_the_lock_file_folder_must_exist_for_a_write(tmp_path: Path) -> None:
    store = mcp.FileStore(tmp_path / "missing" / "tasks.json")
    assert store.load() == []
    with pytest.raises(TaskStoreError, match="cannot write"):
        store.save(mcp.TaskRecord("a"))
    (tmp_path / "tasks.json.lock").mkdir()  # a lock that cannot be opened is named, not ignored
    with pytest.raises(TaskStoreError, match="lock"):
        mcp.FileStore(tmp_path / "tasks.json").save(mcp.TaskRecord("a"))


def test_two_sqlite_stores_on_one_file_hold_the_tenant_cap_exactly(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    limits = MemoryLimits(max_records_per_tenant=50)
    first, second = SqliteStore(path, limits), SqliteStore(path, limits)
    for n in range(49):
        first.put("tenant", said(f"m{n}"))
    results: list[str] = []
    racers: list[threading.Thread] = []
    original = first._size

    def counted_then_raced(tenant_id: str) -> int:
        size = original(tenant_id)
        # the other store puts right after this one counted 49: it must wait for our write
        racers.append(threading.Thread(target=lambda: results.append(_put(second, "late"))))
        racers[0].start()
        racers[0].join(0.5)
        return size

    first._size = counted_then_raced  # type: ignore[method-assign]
    first.put("tenant", said("first"))
    first._size = original  # type: ignore[method-assign]
    racers[0].join(30)
    assert second.count("tenant") == 50 and results == ["refused"]
    first.close()
    second.close()


def _put(store: SqliteStore, text: str) -> str:
    try:
        store.put("tenant", said(text))
    except MemoryCapacityExceeded:
        return "refused"
    return "stored"


def test_a_compaction_whose_source_another_store_removed_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    first, second = SqliteStore(path), SqliteStore(path)
    ids = [first.put("t", said(f"m{n}")) for n in range(3)]
    compaction = CompactionRecord("s", "summary", tuple(ids[:2]))

    original = first._swap

    def racing_swap(tenant_id: str, row: object, remove: object) -> None:
        second.delete("t", [ids[1]])  # another process deletes a source between check and swap
        original(tenant_id, row, remove)  # type: ignore[arg-type]

    first._swap = racing_swap  # type: ignore[method-assign]
    with pytest.raises(MemoryRecordNotFound):
        first.replace("t", compaction)
    assert [r.record_id for r in second.session("t", "s")] == [ids[0], ids[2]]
    first.close()
    second.close()


def test_the_snapshot_is_still_json_after_concurrent_threads(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    stores = [mcp.FileStore(path), mcp.FileStore(path)]  # two instances: separate thread locks

    def save(index: int) -> None:
        for n in range(25):
            stores[index].save(mcp.TaskRecord(f"{index}-{n}"))

    threads = [threading.Thread(target=save, args=(i,)) for i in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(json.loads(path.read_text())["tasks"]) == 50
