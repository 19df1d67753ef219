"""zigai.runtime: step, blob, prompt and task services and the bounded executor."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from zigai.control import CancellationToken, Cancelled, RunControl, RunTimedOut
from zigai.json import Limits
from zigai.runtime import (
    BlobLimits,
    BlobStore,
    BlobTooLarge,
    BoundedExecutor,
    ExecutorClosed,
    InMemoryBlobStore,
    InMemoryPromptStore,
    InMemoryStepStore,
    InMemoryTaskService,
    InvalidRuntimeRecord,
    InvalidTaskTransition,
    PromptLimits,
    PromptRenderError,
    PromptStore,
    PromptTooLarge,
    PromptVersion,
    PromptVersionExists,
    RevisionConflict,
    ServiceClosed,
    SqliteStepStore,
    StepLimits,
    StepStateTooLarge,
    StepStore,
    StepStoreBase,
    TaskContext,
    TaskLimits,
    TaskPayloadTooLarge,
    TaskService,
    TaskState,
    TooManyTasks,
    UnknownRecord,
    blob_id_for,
)

TINY = Limits(12, 12, 4, 4)  # '"xxxxxxxxxx"' is exactly 12 bytes


@pytest.fixture(params=["in_memory", "sqlite"])
def make_steps(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., StepStoreBase]]:
    made: list[StepStoreBase] = []

    def make(limits: StepLimits | None = None) -> StepStoreBase:
        store: StepStoreBase = (InMemoryStepStore(limits) if request.param == "in_memory"
                                else SqliteStepStore(tmp_path / f"steps-{len(made)}.sqlite", limits))
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()

# -- steps ------------------------------------------------------------------------------------


def test_step_revisions_are_optimistic_and_monotonic(make_steps: Any) -> None:
    store = make_steps()
    assert isinstance(store, StepStore)
    assert store.get("run-1", "s1") is None
    first = store.save("run-1", "s1", {"cursor": 1}, expected_revision=0)
    assert (first.revision, first.state) == (1, {"cursor": 1})
    second = store.save("run-1", "s1", {"cursor": 2}, expected_revision=1)
    assert second.revision == 2
    with pytest.raises(RevisionConflict) as info:
        store.save("run-1", "s1", {"cursor": 99}, expected_revision=1)
    assert (info.value.expected, info.value.actual) == (1, 2)
    assert store.load("run-1", "s1").state == {"cursor": 2}
    with pytest.raises(RevisionConflict):
        store.save("run-1", "new", {}, expected_revision=3)
    with pytest.raises(RevisionConflict):
        store.delete("run-1", "s1", expected_revision=1)
    store.delete("run-1", "s1", expected_revision=2)
    with pytest.raises(UnknownRecord):
        store.load("run-1", "s1")
    with pytest.raises(UnknownRecord):
        store.delete("run-1", "s1", expected_revision=2)
    # a writer holding revision 2 from before the delete cannot overwrite the new record
    recreated = store.save("run-1", "s1", {"cursor": 0}, expected_revision=0)
    assert recreated.revision == 3
    with pytest.raises(RevisionConflict):
        store.save("run-1", "s1", {"stale": True}, expected_revision=2)
    with pytest.raises(ValueError):
        store.save("run-1", "s1", {}, expected_revision=-1)


def test_step_states_are_independent_copies(make_steps: Any) -> None:
    store = make_steps()
    state = {"items": [1, 2]}
    saved = store.save("r", "s", state, expected_revision=0)
    state["items"].append(3)
    saved.state["items"].append(4)
    assert store.load("r", "s").state == {"items": [1, 2]}
    store.save("r", "t", None, expected_revision=0)
    store.save("other", "s", 1, expected_revision=0)
    assert [(r.step_id, r.state) for r in store.steps("r")] == [("s", {"items": [1, 2]}), ("t", None)]


def test_step_bounds_hold_at_the_limit_and_fail_one_past(make_steps: Any) -> None:
    store = make_steps(StepLimits(state=TINY, max_records=2, max_key_chars=3))
    store.save("abc", "s", "x" * 10, expected_revision=0)
    with pytest.raises(StepStateTooLarge) as info:
        store.save("abc", "t", "x" * 11, expected_revision=0)
    assert info.value.limit == 12
    store.save("abc", "t", 1, expected_revision=0)
    with pytest.raises(StepStateTooLarge):
        store.save("abc", "u", 1, expected_revision=0)  # a third record
    store.save("abc", "t", 2, expected_revision=1)  # replacing is not a new record
    with pytest.raises(InvalidRuntimeRecord):
        store.save("abcd", "s", 1, expected_revision=0)
    for bad_key in ("", "a b", 3):
        with pytest.raises(InvalidRuntimeRecord):
            store.get(bad_key, "s")  # type: ignore[arg-type]
    with pytest.raises(InvalidRuntimeRecord):
        store.save("abc", "s", {1, 2}, expected_revision=1)
    for bad in ({"state": 1}, {"max_records": 0}):
        with pytest.raises(ValueError):
            StepLimits(**bad)  # type: ignore[arg-type]


def test_concurrent_writers_one_revision_wins(make_steps: Any) -> None:
    store = make_steps()
    store.save("r", "s", 0, expected_revision=0)
    wins: list[int] = []
    conflicts: list[int] = []
    barrier = threading.Barrier(8)

    def writer(n: int) -> None:
        barrier.wait()
        try:
            store.save("r", "s", n, expected_revision=1)
            wins.append(n)
        except RevisionConflict:
            conflicts.append(n)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert len(wins) == 1 and len(conflicts) == 7
    assert store.load("r", "s") .state == wins[0]


def test_sqlite_step_state_survives_reopening_and_conflicts_across_connections(tmp_path: Path) -> None:
    path = tmp_path / "steps.sqlite"
    with SqliteStepStore(path) as first:
        first.save("run", "s", {"n": 1}, expected_revision=0)
    with SqliteStepStore(path) as a, SqliteStepStore(path) as b:
        assert a.load("run", "s").state == {"n": 1}
        a.save("run", "s", {"n": 2}, expected_revision=1)
        with pytest.raises(RevisionConflict):
            b.save("run", "s", {"n": 3}, expected_revision=1)  # b's connection sees a's commit
        assert b.load("run", "s") == a.load("run", "s")


def test_sqlite_step_writers_in_separate_processes_one_revision_wins(tmp_path: Path) -> None:
    path = tmp_path / "steps.sqlite"
    with SqliteStepStore(path) as store:
        store.save("run", "s", "start", expected_revision=0)
    script = (
        "import sys\n"
        "from zigai.runtime import RevisionConflict, SqliteStepStore\n"
        "store = SqliteStepStore(sys.argv[1])\n"
        "try:\n"
        "    store.save('run', 's', sys.argv[2], expected_revision=1)\n"
        "    print('won')\n"
        "except RevisionConflict:\n"
        "    print('conflict')\n"
    )
    workers = [subprocess.Popen([sys.executable, "-c", script, str(path), f"worker-{n}"], stdout=subprocess.PIPE,
                                text=True) for n in range(4)]
    outcomes = sorted(worker.communicate(timeout=60)[0].strip() for worker in workers)
    assert outcomes == ["conflict", "conflict", "conflict", "won"]
    with SqliteStepStore(path) as store:
        record = store.load("run", "s")
        assert record.revision == 2 and record.state.startswith("worker-")


def test_sqlite_deletion_overwrites_the_state_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "steps.sqlite"
    with SqliteStepStore(path) as store:
        store.save("run", "s", {"token": "sekrit-value-123"}, expected_revision=0)
        store.delete("run", "s", expected_revision=1)
        assert store.steps("run") == ()
    assert b"sekrit-value-123" not in path.read_bytes()


def test_stores_expose_their_limits_and_refuse_use_after_close() -> None:
    limits = (StepLimits(max_records=5), BlobLimits(max_blob_bytes=5), PromptLimits(max_versions=5),
              TaskLimits(max_tasks=5))
    stores = (InMemoryStepStore(limits[0]), InMemoryBlobStore(limits[1]), InMemoryPromptStore(limits[2]),
              InMemoryTaskService(limits[3]))
    assert tuple(store.limits for store in stores) == limits
    with InMemoryStepStore() as steps, InMemoryBlobStore() as blobs, InMemoryPromptStore() as prompts, \
            InMemoryTaskService() as tasks:
        steps.save("r", "s", 1, expected_revision=0)
    for use in (lambda: steps.get("r", "s"), lambda: steps.steps("r"), lambda: blobs.blobs("t"),
                lambda: blobs.put("t", b"x"), lambda: prompts.versions("p"), lambda: tasks.tasks(),
                lambda: tasks.submit("k"), lambda: prompts.publish("p", "x")):
        with pytest.raises(ServiceClosed):
            use()


# -- blobs ------------------------------------------------------------------------------------


def test_blob_identity_is_scoped_to_the_tenant() -> None:
    store = InMemoryBlobStore()
    assert isinstance(store, BlobStore)
    a = store.put("tenant-a", b"report", content_type="text/plain")
    b = store.put("tenant-b", bytearray(b"report"), content_type="text/plain")
    assert a.blob_id == b.blob_id == blob_id_for(b"report", "text/plain") and a.tenant_id != b.tenant_id
    assert store.put("tenant-a", memoryview(b"report"), content_type="text/plain") == a  # idempotent
    assert store.total_bytes == 12
    assert store.put("tenant-a", b"report").blob_id != a.blob_id  # another content type, another blob
    store.delete("tenant-a", a.blob_id)
    with pytest.raises(UnknownRecord):
        store.get("tenant-a", a.blob_id)
    assert store.get("tenant-b", b.blob_id) == b"report"
    assert store.stat("tenant-b", b.blob_id) == b
    for use in (lambda: store.get("tenant-c", b.blob_id), lambda: store.stat("tenant-c", b.blob_id),
                lambda: store.delete("tenant-c", b.blob_id), lambda: store.get("tenant-b", 7)):
        with pytest.raises(UnknownRecord):
            use()  # another tenant's blob is simply not there
    assert [ref.content_type for ref in store.blobs("tenant-a")] == ["application/octet-stream"]


def test_blob_bounds_hold_at_the_limit_and_fail_one_past() -> None:
    store = InMemoryBlobStore(BlobLimits(max_blob_bytes=4, max_total_bytes=6, max_tenant_chars=2))
    store.put("t", b"1234")
    with pytest.raises(BlobTooLarge) as info:
        store.put("t", b"12345")
    assert info.value.limit == 4
    store.put("t", b"ab")  # total 6: exactly the capacity
    with pytest.raises(BlobTooLarge) as info:
        store.put("t", b"c")
    assert info.value.limit == 6
    assert store.total_bytes == 6
    with pytest.raises(InvalidRuntimeRecord):
        store.put("ttt", b"")
    for bad in ({"data": "text"}, {"data": b"", "content_type": "plain"}, {"data": b"", "content_type": 5}):
        with pytest.raises(InvalidRuntimeRecord):
            store.put("t", **bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        BlobLimits(max_blob_bytes=0)


def test_stored_blobs_do_not_follow_the_callers_buffer() -> None:
    store = InMemoryBlobStore()
    buffer = bytearray(b"abc")
    ref = store.put("t", buffer)
    buffer[0] = ord("z")
    assert store.get("t", ref.blob_id) == b"abc"


# -- prompts ----------------------------------------------------------------------------------


def test_prompt_versions_are_immutable() -> None:
    store = InMemoryPromptStore()
    assert isinstance(store, PromptStore)
    first = store.publish("greet", "Hello {{ name }}!")
    assert (first.version, first.variables) == (1, ("name",))
    assert store.publish("greet", "Hello {{ name }}!", version=1) is first  # same text: idempotent
    with pytest.raises(PromptVersionExists) as info:
        store.publish("greet", "Hi {{ name }}", version=1)
    assert (info.value.name, info.value.version) == ("greet", 1)
    second = store.publish("greet", "Hi {{name}}, from {{ team }}")
    assert second.version == 2 and store.versions("greet") == (1, 2)
    assert store.get("greet") is second and store.get("greet", 1) is first
    store.publish("greet", "v5", version=5)
    with pytest.raises(InvalidRuntimeRecord):
        store.publish("greet", "v3", version=3)
    for bad in ({"version": 0}, {"version": True}):
        with pytest.raises(InvalidRuntimeRecord):
            store.publish("greet", "x", **bad)  # type: ignore[arg-type]
    with pytest.raises(UnknownRecord):
        store.get("greet", 4)
    with pytest.raises(UnknownRecord):
        store.get("missing")
    assert store.versions("missing") == ()


def test_rendering_is_strict_and_literal() -> None:
    store = InMemoryPromptStore()
    store.publish("p", "{{ who }} asked: {{ question }} ({{who}})")
    assert store.render("p", {"who": "Ana", "question": "{{ who }}?"}) == "Ana asked: {{ who }}? (Ana)"
    assert store.render("p", {"who": 7, "question": 1.5}) == "7 asked: 1.5 (7)"
    for values in ({"who": "Ana"}, {"who": "Ana", "question": "q", "extra": "x"}, {"who": None, "question": "q"},
                   {"who": True, "question": "q"}, ["who"]):
        with pytest.raises(PromptRenderError):
            store.render("p", values)  # type: ignore[arg-type]
    for template in ("{{ not valid }}", "stray }} brace", "{{", "{{ 1x }}"):
        with pytest.raises(InvalidRuntimeRecord):
            PromptVersion("p", 1, template)
    with pytest.raises(InvalidRuntimeRecord):
        PromptVersion("p", 1, 5)  # type: ignore[arg-type]


def test_prompt_bounds_hold_at_the_limit_and_fail_one_past() -> None:
    store = InMemoryPromptStore(PromptLimits(max_template_chars=10, max_render_chars=8, max_versions=2,
                                             max_name_chars=3))
    store.publish("abc", "ab{{ x }}")  # 9 characters
    store.publish("abc", "0123456789")  # exactly 10
    with pytest.raises(InvalidRuntimeRecord):
        store.publish("def", "01234567890")
    with pytest.raises(InvalidRuntimeRecord):
        store.publish("abcd", "x")
    with pytest.raises(InvalidRuntimeRecord):
        store.publish("def", "x")  # a third version
    assert store.render("abc", {"x": "345678"}, version=1) == "ab345678"  # exactly 8
    with pytest.raises(PromptTooLarge) as info:
        store.render("abc", {"x": "3456789"}, version=1)
    assert info.value.limit == 8
    with pytest.raises(PromptTooLarge):
        store.render("abc", {})  # the literal text alone is 10 characters
    with pytest.raises(PromptTooLarge):
        store.render("abc", {"x": 10 ** 5000}, version=1)  # beyond the interpreter's int digit limit
    with pytest.raises(ValueError):
        PromptLimits(max_render_chars=0)


# -- tasks ------------------------------------------------------------------------------------


def test_task_lifecycle_follows_the_state_machine() -> None:
    service = InMemoryTaskService()
    assert isinstance(service, TaskService)
    task = service.submit("index", {"doc": "a"})
    other = service.submit("email", None)
    assert (task.task_id, task.state, task.revision, task.input) == ("task-1", TaskState.queued, 1, {"doc": "a"})
    assert service.claim("missing-kind") is None
    claimed = service.claim("email")
    assert claimed is not None and claimed.task_id == other.task_id and claimed.state is TaskState.running
    claimed_index = service.claim()
    assert claimed_index is not None and claimed_index.task_id == "task-1" and claimed_index.revision == 2
    assert service.claim() is None
    with pytest.raises(RevisionConflict):
        service.complete("task-1", {"ok": True}, expected_revision=1)
    done = service.complete("task-1", {"ok": True}, expected_revision=2)
    assert (done.state, done.output, done.revision) == (TaskState.succeeded, {"ok": True}, 3)
    assert done.state.terminal
    with pytest.raises(InvalidTaskTransition) as info:
        service.cancel("task-1")
    assert (info.value.state, info.value.target) == ("succeeded", "cancelled")
    failed = service.fail("task-2", "smtp refused")
    assert (failed.state, failed.error) == (TaskState.failed, "smtp refused")
    queued = service.submit("index")
    assert service.cancel(queued.task_id).state is TaskState.cancelled
    with pytest.raises(InvalidTaskTransition):
        service.complete(queued.task_id)
    with pytest.raises(InvalidTaskTransition):
        service.fail(service.submit("x").task_id, "never started")
    assert [t.task_id for t in service.tasks(TaskState.queued)] == ["task-4"]
    assert len(service.tasks()) == 4
    with pytest.raises(UnknownRecord):
        service.get("task-99")
    assert service.get("task-1").output == {"ok": True}


def test_two_workers_never_claim_the_same_task() -> None:
    service = InMemoryTaskService()
    for n in range(50):
        service.submit("work", n)
    claimed: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        while (task := service.claim()) is not None:
            with lock:
                claimed.append(task.task_id)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert sorted(claimed) == sorted(f"task-{n}" for n in range(1, 51))


def test_task_bounds_hold_at_the_limit_and_fail_one_past() -> None:
    service = InMemoryTaskService(TaskLimits(payload=TINY, max_tasks=2, max_error_chars=3, max_kind_chars=2))
    service.submit("ab", "x" * 10)
    with pytest.raises(TaskPayloadTooLarge):
        service.submit("ab", "x" * 11)
    running = service.submit("ab")
    with pytest.raises(TaskPayloadTooLarge):
        service.submit("ab")  # a third task
    with pytest.raises(InvalidRuntimeRecord):
        service.submit("abc")
    service.claim()
    service.claim()
    with pytest.raises(TaskPayloadTooLarge):
        service.complete(running.task_id, "x" * 11)
    with pytest.raises(TaskPayloadTooLarge):
        service.fail(running.task_id, "abcd")
    with pytest.raises(InvalidRuntimeRecord):
        service.fail(running.task_id, 3)  # type: ignore[arg-type]
    assert service.fail(running.task_id, "abc").error == "abc"
    with pytest.raises(ValueError):
        TaskLimits(max_tasks=0)
    with pytest.raises(ValueError):
        TaskLimits(payload=None)  # type: ignore[arg-type]


# -- bounded executor -------------------------------------------------------------------------


def test_results_keep_source_order_whatever_finishes_first() -> None:
    active = 0
    peak = 0
    lock = threading.Lock()

    def work(item: int, ctx: TaskContext) -> tuple[int, int]:
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        time.sleep(0.002 * (10 - item))
        with lock:
            active -= 1
        return (ctx.index, item * item)

    with BoundedExecutor(max_workers=3) as executor, executor.map(work, iter(range(10))) as results:
        assert results.values == tuple((n, n * n) for n in range(10))
        assert len(results) == 10
    assert peak <= 3
    assert results.closed
    with pytest.raises(ExecutorClosed):
        _ = results.values
    with pytest.raises(ExecutorClosed):
        executor.map(work, [1])
    with BoundedExecutor() as empty, empty.map(work, []) as results:
        assert results.values == ()


def test_max_tasks_is_checked_before_anything_runs() -> None:
    ran: list[int] = []
    executor = BoundedExecutor(max_tasks=3)
    with executor.map(lambda item, ctx: ran.append(item), [1, 2, 3]) as results:
        assert len(results) == 3
    ran.clear()
    with pytest.raises(TooManyTasks) as info:
        executor.map(lambda item, ctx: ran.append(item), range(4))
    assert info.value.limit == 3 and ran == []
    for bad in ({"max_workers": 0}, {"max_tasks": True}, {"drain_timeout_s": -1}):
        with pytest.raises(ValueError):
            BoundedExecutor(**bad)  # type: ignore[arg-type]
    assert (executor.max_workers, executor.max_tasks) == (4, 3)


def test_a_failure_cancels_siblings_and_drains_before_raising() -> None:
    class Broken(Exception):
        pass

    finished: list[int] = []
    saw_cancel: list[int] = []
    started = threading.Event()

    def work(item: int, ctx: TaskContext) -> int:
        if item == 0:
            started.wait(2)
            raise Broken("item 0 failed")
        if item == 1:
            started.set()
            while not ctx.cancelled:
                time.sleep(0.005)
            saw_cancel.append(item)
            time.sleep(0.05)  # the coordinator must wait for this before raising
            finished.append(item)
            return item
        finished.append(item)
        return item

    with pytest.raises(Broken, match="item 0 failed"):
        BoundedExecutor(max_workers=2).map(work, range(6))
    assert saw_cancel == [1] and finished == [1]  # items 2..5 never started


def test_the_lowest_index_failure_is_raised_even_when_it_fails_last() -> None:
    barrier = threading.Barrier(2)

    def work(item: int, ctx: TaskContext) -> int:
        barrier.wait(2)
        if item == 1:
            raise KeyError("fails first")
        time.sleep(0.05)  # still running when item 1 fails: drained, then its own error wins
        raise IndexError("item 0 fails last")

    with pytest.raises(IndexError, match="item 0 fails last"):
        BoundedExecutor(max_workers=2, drain_timeout_s=1).map(work, range(2))


def test_run_cancellation_and_deadline_stop_the_batch() -> None:
    token = CancellationToken()

    def slow(item: int, ctx: TaskContext) -> int:
        if item == 0:
            token.cancel("operator stop")
        while not ctx.cancelled:
            time.sleep(0.005)
        return item

    with pytest.raises(Cancelled, match="operator stop"):
        BoundedExecutor(max_workers=2).map(slow, range(3), control=RunControl(token=token))
    stuck = threading.Event()

    def never_returns(item: int, ctx: TaskContext) -> int:
        stuck.wait(30)
        return item

    began = time.monotonic()
    with pytest.raises(RunTimedOut):
        BoundedExecutor(max_workers=1, drain_timeout_s=20).map(never_returns, [1],
                                                               control=RunControl.start(50))
    assert time.monotonic() - began < 10  # the drain (20 s) never outlives the run deadline (50 ms)
    stuck.set()
    cancelled_before = CancellationToken()
    cancelled_before.cancel()
    with pytest.raises(Cancelled):
        BoundedExecutor().map(slow, [1], control=RunControl(token=cancelled_before))


def test_values_returned_by_tasks_are_kept_as_they_are() -> None:
    def work(item: Any, ctx: TaskContext) -> Any:
        return {"item": item, "index": ctx.index}

    with BoundedExecutor(max_workers=2).map(work, ["a", "b"]) as results:
        assert results.values == ({"item": "a", "index": 0}, {"item": "b", "index": 1})
