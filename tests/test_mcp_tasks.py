"""The MCP Tasks extension: tagged states, the client calls, wait_task, the store, the server.

Every lifecycle runs twice where it matters: against a zigai :class:`TaskServer` (in process
and over 127.0.0.1 HTTP) and against a scripted loopback stub whose wire is asserted exactly.
"""

from __future__ import annotations

import os
import pickle
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.mcp_stub import ScriptedPeer
from support.mcp_tasks import (
    ELICIT,
    EXT,
    FAST,
    RESULT,
    SAMPLE,
    Counting,
    answer,
    build_task_server,
    served,
    task,
)

from zigai import mcp
from zigai.control import CancellationToken
from zigai.mcp.wire.tasks import parse_task
from zigai.tool import ModelRetry

# ----------------------------------------------------------------------------- the tagged union


def test_each_status_parses_to_its_own_state_with_its_own_payload() -> None:
    working = parse_task(task("working", statusMessage="busy"))
    assert isinstance(working, mcp.TaskWorking) and working.status_message == "busy" and not working.terminal
    needs = parse_task(task("input_required", inputRequests={"a": ELICIT}))
    assert isinstance(needs, mcp.TaskNeedsInput) and [r.key for r in needs.requests] == ["a"]
    done = parse_task(task("completed", result=RESULT))
    assert isinstance(done, mcp.TaskCompleted) and done.result == RESULT and done.terminal
    failed = parse_task(task("failed", error={"code": -32602, "message": "bad", "data": {"x": 1}}))
    assert isinstance(failed, mcp.TaskFailed) and (failed.code, failed.message, failed.data) == (-32602, "bad", {"x": 1})
    assert isinstance(parse_task(task("cancelled")), mcp.TaskCancelled)
    nested = parse_task({"resultType": "task", "task": task("working")})
    assert nested.task_id == "t1"
    for state in (working, needs, done, failed):
        assert parse_task(state.to_json()) == state


@pytest.mark.parametrize("value, message", [
    ([], "must be a JSON object"),
    ({"status": "working"}, "non-empty string taskId"),
    (task("finished"), "unknown status"),
    (task("completed"), "no result object"),
    (task("completed", result=RESULT, error={"code": 1, "message": "x"}), "carries 'error'"),
    (task("working", result=RESULT), "carries 'result'"),
    (task("failed", error={"code": "x", "message": "m"}), "no JSON-RPC error object"),
    (task("failed", error={"code": True, "message": "m"}), "no JSON-RPC error object"),
    (task("input_required"), "no inputRequests"),
    (task("input_required", inputRequests={}), "no inputRequests"),
    (task("cancelled", inputRequests={"a": ELICIT}), "carries 'inputRequests'"),
    (task("working", ttlMs="10"), "ttlMs has the wrong type"),
    (task("working", pollIntervalMs=-1), "pollIntervalMs has the wrong type"),
    (task("working", statusMessage=3), "statusMessage has the wrong type"),
])
def test_states_that_could_be_confused_are_refused(value: Any, message: str) -> None:
    with pytest.raises(mcp.InvalidMcpMessage, match=message):
        parse_task(value)


# ----------------------------------------------------------------------------- client calls on the wire


def test_without_the_extension_every_task_call_fails_before_io() -> None:
    peer = ScriptedPeer(lambda method, params: task("working"))
    with mcp.Client(peer) as client:
        for call in (lambda: client.get_task("t1"), lambda: client.update_task("t1", {"a": {}}),
                     lambda: client.cancel_task("t1"), lambda: client.wait_task("t1")):
            with pytest.raises(mcp.TaskExtensionRequired, match="declare it with ClientCapabilities"):
                call()
    assert peer.sent == []
    assert issubclass(mcp.TaskExtensionRequired, mcp.InvalidMcpRequest)


def test_task_calls_carry_the_id_in_the_body_and_as_the_routing_name() -> None:
    def reply(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"tasks/get": task("working"), "tasks/update": {}, "tasks/cancel": task("cancelled")}[method]

    peer = ScriptedPeer(reply)
    with mcp.Client(peer, capabilities=EXT, task_store=mcp.MemoryStore()) as client:
        assert isinstance(client.get_task("t1"), mcp.TaskWorking)
        assert client.update_task("t1", {"a": {"action": "decline"}}) == {}
        assert isinstance(client.cancel_task("t1"), mcp.TaskCancelled)
        with pytest.raises(mcp.InvalidMcpRequest, match="non-empty inputResponses"):
            client.update_task("t1", {})
        with pytest.raises(mcp.InvalidMcpRequest, match="non-empty string"):
            client.get_task("")
    assert peer.routes == [("tasks/get", "t1"), ("tasks/update", "t1"), ("tasks/cancel", "t1")]
    assert [m["params"]["taskId"] for m in peer.sent] == ["t1", "t1", "t1"]
    assert peer.sent[1]["params"]["inputResponses"] == {"a": {"action": "decline"}}


def test_a_reply_about_another_task_or_an_empty_cancel_ack() -> None:
    peer = ScriptedPeer(lambda method, params: task("working", "other") if method == "tasks/get" else {})
    with mcp.Client(peer, capabilities=EXT) as client:
        with pytest.raises(mcp.InvalidMcpMessage, match="answered task 'other'"):
            client.get_task("t1")
        assert client.cancel_task("t1") is None


def scripted_task(states: list[dict[str, Any]], log: list[str] | None = None) -> ScriptedPeer:
    """tools/call creates task t1; each tasks/get returns the next state (the last repeats)."""
    polls = iter(states)
    last: list[dict[str, Any]] = []

    def reply(method: str, params: dict[str, Any]) -> Any:
        if log is not None:
            log.append(method)
        if method == "tools/call":
            return {**task("working"), "resultType": "task"}
        if method == "tasks/get":
            last[:] = [next(polls, last[0] if last else states[-1])]
            return last[0]
        if method == "tasks/cancel":
            return task("cancelled")
        return {}

    return ScriptedPeer(reply)


def test_stub_task_needs_input_twice_and_repeated_keys_are_not_asked_again() -> None:
    peer = scripted_task([
        task("working"),
        task("input_required", inputRequests={"who": ELICIT}),
        task("input_required", inputRequests={"who": ELICIT}),  # eventually consistent: still listed
        task("input_required", inputRequests={"who": ELICIT, "note": SAMPLE}),
        task("completed", result=RESULT),
    ])
    handler = Counting()
    store = mcp.MemoryStore()
    with mcp.Client(peer, capabilities=EXT, input_handler=handler, task_store=store, task_polling=FAST) as client:
        assert client.call_tool("slow", {}).text == "done"
    assert handler.keys == ["who", "note"]
    updates = [m["params"]["inputResponses"] for m in peer.sent if m["method"] == "tasks/update"]
    assert updates == [{"who": {"action": "accept", "content": {"name": "Ada"}}},
                       {"note": answer(mcp.InputRequest("note", mcp.InputKind.sampling)).to_json()}]
    assert store.load() == []  # terminal: removed


def test_a_failed_or_cancelled_task_raises_from_call_tool() -> None:
    failed = scripted_task([task("failed", error={"code": -32602, "message": "no such city"})])
    with mcp.Client(failed, capabilities=EXT, task_polling=FAST) as client, \
            pytest.raises(mcp.InvalidParams, match="no such city"):
        client.call_tool("slow", {})
    cancelled = scripted_task([task("cancelled")])
    with mcp.Client(cancelled, capabilities=EXT, task_polling=FAST) as client, \
            pytest.raises(mcp.McpRequestCancelled, match="cancelled task 't1'"):
        client.call_tool("slow", {})


def test_a_task_handle_is_unknown_to_a_client_without_the_extension() -> None:
    with mcp.Client(scripted_task([task("working")])) as client, \
            pytest.raises(mcp.InvalidMcpMessage, match="unknown resultType 'task'"):
        client.call_tool("slow", {})


def test_needing_input_without_a_handler_raises_and_keeps_the_record() -> None:
    store = mcp.MemoryStore()
    peer = scripted_task([task("input_required", inputRequests={"who": ELICIT})])
    with mcp.Client(peer, capabilities=EXT, task_store=store, task_polling=FAST) as client, \
            pytest.raises(mcp.McpInputRequired, match="no input_handler"):
        client.call_tool("slow", {})
    assert [r.task_id for r in store.load()] == ["t1"]


# ----------------------------------------------------------------------------- bounds and cancellation


def test_the_poll_budget_holds_at_the_limit_and_one_past_it() -> None:
    log: list[str] = []
    at_limit = scripted_task([task("working"), task("working"), task("completed", result=RESULT)], log)
    with mcp.Client(at_limit, capabilities=EXT) as client:
        state = client.wait_task("t1", polling=mcp.TaskPolling(min_interval_ms=0, max_interval_ms=0, max_polls=3))
    assert isinstance(state, mcp.TaskCompleted) and log.count("tasks/get") == 3 and "tasks/cancel" not in log
    log.clear()
    past = scripted_task([task("working")] * 3 + [task("completed", result=RESULT)], log)
    with mcp.Client(past, capabilities=EXT) as client, pytest.raises(mcp.TaskWaitExhausted, match="after 3 polls") as caught:
        client.wait_task("t1", polling=mcp.TaskPolling(min_interval_ms=0, max_interval_ms=0, max_polls=3))
    assert log == ["tasks/get"] * 3 + ["tasks/cancel"]
    assert (caught.value.task_id, caught.value.last_status) == ("t1", "working")
    copy = pickle.loads(pickle.dumps(caught.value))
    assert (copy.task_id, copy.last_status) == ("t1", "working")


def test_the_interval_floor_overrides_a_server_asking_for_zero() -> None:
    log: list[str] = []
    peer = scripted_task([task("working")] * 4 + [task("completed", result=RESULT)], log)
    started = time.monotonic()
    with mcp.Client(peer, capabilities=EXT) as client:
        client.wait_task("t1", polling=mcp.TaskPolling(min_interval_ms=30, max_interval_ms=1000))
    assert time.monotonic() - started >= 4 * 0.03  # four sleeps between five polls, never faster
    assert mcp.TaskPolling(min_interval_ms=10, max_interval_ms=50).interval_s(10_000) == 0.05


def test_cancellation_at_the_deadline_sends_a_best_effort_cancel() -> None:
    log: list[str] = []
    with mcp.Client(scripted_task([task("working", pollIntervalMs=5)], log), capabilities=EXT) as client:
        started = time.monotonic()
        with pytest.raises(mcp.McpRequestTimedOut, match="before the deadline"):
            client.wait_task("t1", options=mcp.RequestOptions(timeout_ms=150), polling=FAST)
    assert 0.14 <= time.monotonic() - started < 5
    assert log[-1] == "tasks/cancel" and log.count("tasks/cancel") == 1


def test_local_cancellation_sends_a_best_effort_cancel_even_when_that_fails() -> None:
    token = CancellationToken()
    calls: list[str] = []

    def reply(method: str, params: dict[str, Any]) -> Any:
        calls.append(method)
        if method == "tasks/cancel":
            return mcp.McpConnectionFailed("the server went away")
        return task("working")

    with mcp.Client(ScriptedPeer(reply), capabilities=EXT) as client, \
            pytest.raises(mcp.McpRequestCancelled, match="was cancelled"):
        client.wait_task("t1", options=mcp.RequestOptions(cancel=token), polling=FAST,
                         on_state=lambda state: token.cancel())
    assert calls == ["tasks/get", "tasks/cancel"]


def test_a_request_timing_out_inside_the_wait_cancels_the_task() -> None:
    calls: list[str] = []

    def reply(method: str, params: dict[str, Any]) -> Any:
        calls.append(method)
        return mcp.McpRequestTimedOut("no answer") if method == "tasks/get" else task("cancelled")

    with mcp.Client(ScriptedPeer(reply), capabilities=EXT) as client, pytest.raises(mcp.McpRequestTimedOut):
        client.wait_task("t1", polling=FAST)
    assert calls == ["tasks/get", "tasks/cancel"]


def test_polling_values_are_checked() -> None:
    for kwargs in ({"min_interval_ms": -1}, {"max_polls": 0}, {"max_interval_ms": True},
                   {"min_interval_ms": 10, "max_interval_ms": 5}):
        with pytest.raises(mcp.InvalidMcpRequest, match="TaskPolling"):
            mcp.TaskPolling(**kwargs)
    peer = ScriptedPeer(lambda method, params: {})
    with pytest.raises(mcp.InvalidMcpRequest, match="task_store must implement"):
        mcp.Client(peer, task_store=object())  # type: ignore[arg-type]
    with pytest.raises(mcp.InvalidMcpRequest, match="task_polling must be"):
        mcp.Client(peer, task_polling={"max_polls": 1})  # type: ignore[arg-type]
    with mcp.Client(peer, capabilities=EXT) as client, pytest.raises(mcp.InvalidMcpRequest, match="needs a client with"):
        client.resume_tasks()


# ----------------------------------------------------------------------------- the store and recovery


def test_a_restart_between_persisting_and_the_ack_resends_without_asking_again(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    handler = Counting()
    acked: list[dict[str, Any]] = []
    polls = {"n": 0}
    first_update_fails = [True]

    def reply(method: str, params: dict[str, Any]) -> Any:
        if method == "tools/call":
            return {**task("working"), "resultType": "task"}
        if method == "tasks/update":
            if first_update_fails:
                first_update_fails.clear()
                return mcp.McpConnectionFailed("connection reset before the acknowledgement")
            acked.append(params["inputResponses"])
            return {}
        if method == "tasks/get":
            polls["n"] += 1
            if not acked:
                return task("input_required", inputRequests={"who": ELICIT})
            return task("completed", result=RESULT)
        return task("cancelled")

    peer = ScriptedPeer(reply)
    with mcp.Client(peer, capabilities=EXT, input_handler=handler, task_store=mcp.FileStore(path),
                    task_polling=FAST) as client, pytest.raises(mcp.McpConnectionFailed):
        client.call_tool("slow", {})
    stored = mcp.FileStore(path).load()
    assert [(r.task_id, list(r.pending), r.answered) for r in stored] == [("t1", ["who"], ())]

    def must_not_be_called(request: mcp.InputRequest) -> mcp.InputResponse:
        raise AssertionError("the handler was called twice for the same key")

    with mcp.Client(peer, capabilities=EXT, input_handler=must_not_be_called, task_store=mcp.FileStore(path),
                    task_polling=FAST) as client:
        states = client.resume_tasks()
    assert [type(s) for s in states] == [mcp.TaskCompleted] and handler.keys == ["who"]
    assert acked == [{"who": {"action": "accept", "content": {"name": "Ada"}}}]
    assert mcp.FileStore(path).load() == []


def test_a_failed_first_write_cancels_the_remote_task() -> None:
    class Broken(mcp.MemoryStore):
        def save(self, record: mcp.TaskRecord) -> None:
            raise mcp.TaskStoreError("disk full")

    log: list[str] = []
    with mcp.Client(scripted_task([task("working")], log), capabilities=EXT, task_store=Broken()) as client, \
            pytest.raises(mcp.TaskStoreError, match="disk full"):
        client.call_tool("slow", {})
    assert log == ["tools/call", "tasks/cancel"]


def test_file_store_snapshot_is_versioned_atomic_and_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    store = mcp.FileStore(path)
    store.save(mcp.TaskRecord("a", name="slow", pending={"k": {"action": "cancel"}}))
    store.save(mcp.TaskRecord("b"))
    store.save(mcp.TaskRecord("a", name="slow", answered=("k",)))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tasks.json", "tasks.json.lock"]  # no temporary file
    assert [(r.task_id, r.answered) for r in store.load()] == [("a", ("k",)), ("b", ())]
    store.remove("a")
    store.remove("missing")
    assert [r.task_id for r in mcp.FileStore(path).load()] == ["b"]
    assert b'"version":1' in path.read_bytes()


def test_file_store_bounds_hold_at_the_limit_and_one_past_it(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    mcp.FileStore(path).save(mcp.TaskRecord("a"))
    size = path.stat().st_size
    assert [r.task_id for r in mcp.FileStore(path, max_bytes=size).load()] == ["a"]
    with pytest.raises(mcp.TaskStoreError, match=f"larger than {size - 1} bytes"):
        mcp.FileStore(path, max_bytes=size - 1).load()
    with pytest.raises(mcp.TaskStoreError, match="would exceed"):
        mcp.FileStore(tmp_path / "other.json", max_bytes=size - 1).save(mcp.TaskRecord("a"))
    two = mcp.FileStore(tmp_path / "two.json", max_tasks=2)
    two.save(mcp.TaskRecord("a"))
    two.save(mcp.TaskRecord("b"))
    with pytest.raises(mcp.TaskStoreError, match="at most 2 tasks"):
        two.save(mcp.TaskRecord("c"))
    with pytest.raises(mcp.TaskStoreError, match="at most 1 tasks"):
        mcp.FileStore(tmp_path / "two.json", max_tasks=1).load()


@pytest.mark.parametrize("content, message", [
    (b"{nope", "not JSON"),
    (b'{"version": 2, "tasks": []}', "not version 1"),
    (b'{"version": 1, "tasks": [{"taskId": 3}]}', "wrong shape"),
    (b'{"version": 1, "tasks": [7]}', "must be a JSON object"),
])
def test_file_store_refuses_a_snapshot_it_cannot_trust(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "tasks.json"
    path.write_bytes(content)
    with pytest.raises(mcp.TaskStoreError, match=message):
        mcp.FileStore(path).load()


def test_file_store_reports_unwritable_places_and_bad_settings(tmp_path: Path) -> None:
    with pytest.raises(mcp.TaskStoreError, match="cannot write"):
        mcp.FileStore(tmp_path / "missing" / "tasks.json").save(mcp.TaskRecord("a"))
    with pytest.raises(mcp.TaskStoreError, match="cannot read"):
        mcp.FileStore(tmp_path).load()  # a folder, not a file
    with pytest.raises(mcp.TaskStoreError, match="max_bytes"):
        mcp.FileStore(tmp_path / "x", max_bytes=0)
    with pytest.raises(mcp.TaskStoreError, match="needs a TaskRecord"):
        mcp.FileStore(tmp_path / "x").save({"taskId": "a"})  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- the zigai server


@pytest.fixture(params=["in-process", "http"])
def zigai_tasks(request: pytest.FixtureRequest) -> Iterator[tuple[mcp.McpTransport, dict[str, Any]]]:
    server, tasks, seen = build_task_server()
    with tasks, served(request.param, server) as transport:
        yield transport, seen


def test_zigai_server_task_needs_input_twice(zigai_tasks: tuple[mcp.McpTransport, dict[str, Any]]) -> None:
    transport, _ = zigai_tasks
    handler = Counting()
    states: list[str] = []
    store = mcp.MemoryStore()
    with mcp.Client(transport, capabilities=EXT, input_handler=handler, task_store=store, task_polling=FAST,
                    default_timeout_ms=20_000) as client:
        assert client.discover().capabilities.extensions == {mcp.TASKS_EXTENSION: {}}
        created = client.request_json("tools/call", {"name": "interview", "arguments": {}})
        assert created["resultType"] == "task" and created["status"] in ("working", "input_required")
        final = client.wait_task(created["taskId"], on_state=lambda s: states.append(s.status))
        assert isinstance(final, mcp.TaskCompleted) and final.result["content"][0]["text"] == "Ada: a note"
        assert client.call_tool("interview", {}).text == "Ada: a note"
    assert handler.keys == ["who", "note", "who", "note"]
    assert "input_required" in states and states[-1] == "completed" and store.load() == []


def test_zigai_server_cancellation_at_the_deadline(zigai_tasks: tuple[mcp.McpTransport, dict[str, Any]]) -> None:
    transport, seen = zigai_tasks
    with mcp.Client(transport, capabilities=EXT, task_polling=FAST, default_timeout_ms=20_000) as client:
        created = client.request_json("tools/call", {"name": "forever", "arguments": {}})
        with pytest.raises(mcp.McpRequestTimedOut):
            client.wait_task(created["taskId"], options=mcp.RequestOptions(timeout_ms=200))
        assert seen["cancelled"].wait(5)
        assert isinstance(client.get_task(created["taskId"]), mcp.TaskCancelled)
        # cancelling a finished task is acknowledged (empty, as the Tasks extension says) and leaves it as it is
        assert client.cancel_task(created["taskId"]) is None
        assert isinstance(client.get_task(created["taskId"]), mcp.TaskCancelled)


def test_zigai_server_failures_become_failed_tasks(zigai_tasks: tuple[mcp.McpTransport, dict[str, Any]]) -> None:
    transport, _ = zigai_tasks
    with mcp.Client(transport, capabilities=EXT, task_polling=FAST, default_timeout_ms=20_000) as client:
        with pytest.raises(mcp.InvalidParams, match="bad city"):
            client.call_tool("broken", {"kind": "params"})
        with pytest.raises(mcp.InternalError, match="the task failed on the server") as caught:
            client.call_tool("broken", {})
        assert "secret" not in str(caught.value)


def test_zigai_server_enforces_capability_ids_and_answer_families() -> None:
    server, tasks, _ = build_task_server()
    with tasks, mcp.Client(mcp.InProcessTransport(server), capabilities=EXT, task_polling=FAST) as client, \
            mcp.Client(mcp.InProcessTransport(server)) as plain:
        with pytest.raises(mcp.MissingRequiredClientCapability):
            plain.request_json("tasks/get", {"taskId": "x"})
        with pytest.raises(mcp.InvalidParams, match="Unknown task"):
            client.get_task("nope")
        raw = server.handle_value({"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
                                   "params": {"taskId": 5, "_meta": client.envelope()}})
        assert raw is not None and raw["error"]["code"] == -32602 and "string 'taskId'" in raw["error"]["message"]
        created = client.request_json("tools/call", {"name": "interview", "arguments": {}})
        task_id = created["taskId"]

        def await_question(key: str) -> None:
            # The task thread asks each question in its own time; an answer sent before it asks
            # is ignored like any unasked key, so wait (bounded) until the question is out.
            give_up = time.monotonic() + 30
            while True:
                state = client.get_task(task_id)
                if isinstance(state, mcp.TaskNeedsInput) and key in {r.key for r in state.requests}:
                    return
                assert time.monotonic() < give_up, f"the task never asked {key!r}: {state!r}"
                time.sleep(0.005)

        await_question("who")
        with pytest.raises(mcp.InvalidParams, match="elicitation action must be one of"):
            client.update_task(task_id, {"who": mcp.InputResponse.sampled("x", model="m").to_json()})
        with pytest.raises(mcp.InvalidParams, match="must be an object"):
            client.update_task(task_id, {"who": "yes"})
        with pytest.raises(mcp.InvalidParams, match="'inputResponses' object"):
            client.request_json("tasks/update", {"taskId": task_id, "inputResponses": []})
        assert client.update_task(task_id, {"never-asked": {"action": "cancel"}})["resultType"] == "complete"
        client.update_task(task_id, {"who": {"action": "accept", "content": {"name": "Bo"}}})
        client.update_task(task_id, {"who": {"action": "decline"}})  # already satisfied: ignored
        await_question("note")
        client.update_task(task_id, {"note": {"role": "assistant", "model": "m",
                                              "content": {"type": "text", "text": "n"}}})
        final = client.wait_task(task_id, polling=FAST)
    assert isinstance(final, mcp.TaskCompleted) and final.result["content"][0]["text"] == "Bo: n"
    # without the extension a task tool runs inline and cannot ask for input
    with mcp.Client(mcp.InProcessTransport(server)) as plain:
        with pytest.raises(mcp.InvalidParams, match="needs input"):
            plain.call_tool("interview", {})


def test_task_context_guards_and_inline_runs() -> None:
    server = mcp.Server("guards", "1.0")
    tasks = mcp.TaskServer(server, poll_interval_ms=1, ttl_ms=0, max_tasks=1)
    outcome: dict[str, Any] = {}

    def inline(arguments: dict[str, Any], context: mcp.TaskContext) -> str:
        context.status("ignored inline")
        return f"inline {context.task_id} {context.cancelled}"

    def guarded(arguments: dict[str, Any], context: mcp.TaskContext) -> str:
        for attempt in (lambda: context.ask(), lambda: context.ask("x")):  # type: ignore[arg-type]
            try:
                attempt()
            except mcp.InvalidParams as exc:
                outcome.setdefault("errors", []).append(str(exc))
        request = mcp.InputRequest.from_json("k", ELICIT)
        try:
            context.ask(request, timeout_s=0.05)
        except mcp.InternalError as exc:
            outcome["timeout"] = str(exc)
        try:
            context.ask(request)
        except mcp.InvalidParams as exc:
            outcome["duplicate"] = str(exc)
        raise ModelRetry("try another city")

    def late(request: mcp.InputRequest) -> mcp.InputResponse:
        time.sleep(0.3)  # slower than the task's 0.05 s input timeout
        return answer(request)

    tasks.add_tool(mcp.ToolInfo("inline", {"type": "object"}), inline)
    tasks.add_tool(mcp.ToolInfo("guarded", {"type": "object"}), guarded)
    with tasks, mcp.Client(mcp.InProcessTransport(server)) as plain, \
            mcp.Client(mcp.InProcessTransport(server), capabilities=EXT, task_polling=FAST, input_handler=late) as client:
        assert plain.call_tool("inline", {}).text == "inline None False"
        result = client.call_tool("guarded", {})
        assert result.is_error and result.text == "try another city"
        # ttl 0: the finished task is dropped when the next one is created, so max_tasks=1 holds
        assert client.call_tool("inline", {}).text.startswith("inline ")
    assert outcome["errors"] == ["TaskContext.ask needs InputRequest values"] * 2
    assert "got no input within 0.05 s" in outcome["timeout"] and "already asked" in outcome["duplicate"]


def test_the_server_task_bound_holds_and_waiting_input_sees_cancel() -> None:
    server = mcp.Server("bounded", "1.0")
    tasks = mcp.TaskServer(server, poll_interval_ms=1, ttl_ms=None, max_tasks=1)
    stopped = threading.Event()

    def waits(arguments: dict[str, Any], context: mcp.TaskContext) -> str:
        try:
            return str(context.ask(mcp.InputRequest.from_json("k", ELICIT)))
        finally:
            stopped.set()

    tasks.add_tool(mcp.ToolInfo("waits", {"type": "object"}), waits)
    with tasks, mcp.Client(mcp.InProcessTransport(server), capabilities=EXT, task_polling=FAST) as client:
        first = client.request_json("tools/call", {"name": "waits", "arguments": {}})
        with pytest.raises(mcp.InternalError, match="already holds 1 tasks"):
            client.request_json("tools/call", {"name": "waits", "arguments": {}})
        assert client.cancel_task(first["taskId"]) is None
        assert stopped.wait(5)
        assert isinstance(client.get_task(first["taskId"]), mcp.TaskCancelled)


def test_a_required_task_tool_and_input_rounds_that_end_in_a_task() -> None:
    server = mcp.Server("tasks", "1.0")
    tasks = mcp.TaskServer(server, poll_interval_ms=1)
    tasks.add_tool(mcp.ToolInfo("must", {"type": "object"}), lambda arguments, context: "ran", required=True)
    who = mcp.InputRequest.from_json("who", ELICIT)

    def greet(arguments: dict[str, Any], request: mcp.ServerRequest) -> Any:
        name = request.ask(who)["who"]["content"]["name"]  # multi round-trip first, then the background part
        return tasks.start(lambda args, context: f"Hello, {name}!", arguments, request)

    server.add_tool(mcp.ToolInfo("greet", {"type": "object"}), greet)
    plain = mcp.ClientCapabilities(elicitation={})
    with tasks:
        with mcp.Client(mcp.InProcessTransport(server), capabilities=plain, input_handler=answer) as client:
            for name in ("must", "greet"):  # greet asks first, then cannot start its task
                with pytest.raises(mcp.MissingRequiredClientCapability) as caught:
                    client.call_tool(name, {})
                assert caught.value.data == {"requiredCapabilities": {"extensions": {mcp.TASKS_EXTENSION: {}}}}
        handler = Counting()
        with mcp.Client(mcp.InProcessTransport(server), capabilities=EXT, input_handler=handler,
                        task_polling=FAST, default_timeout_ms=20_000) as client:
            assert client.call_tool("must", {}).text == "ran"
            assert client.call_tool("greet", {}).text == "Hello, Ada!"
            first = client.request_json("tools/call", {"name": "greet", "arguments": {}})
            assert first["resultType"] == "input_required" and "taskId" not in first
            handle = client.request_json("tools/call", {"name": "greet", "arguments": {}, "requestState":
                                                        first["requestState"],
                                                        "inputResponses": {"who": answer(who).to_json()}})
            assert handle["resultType"] == "task" and "requestState" not in handle
            assert client.get_task(handle["taskId"]).task_id == handle["taskId"]  # it exists on return
    assert handler.keys == ["who"]

