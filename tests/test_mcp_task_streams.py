"""Task status streams: the taskIds filter, notifications/tasks, Client.watch_task.

Against a zigai TaskServer (in process and over 127.0.0.1 HTTP, whose listen stream is real
SSE) and against a loopback stub whose events and replies are scripted.  The polling floor is
set to 30 s in the streaming tests: a watch that finishes in well under that observed the
states through the stream, not by polling.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support.mcp_tasks import ELICIT, EXT, FAST, Counting, build_task_server, served, task

from zigai import mcp
from zigai.control import CancellationToken
from zigai.mcp.wire.jsonrpc import JsonRpcNotification, JsonRpcResponse
from zigai.mcp.wire.transport import NotificationSink, OutgoingRequest, Reply

SLOW = mcp.TaskPolling(min_interval_ms=30_000, max_interval_ms=30_000, max_polls=100)
SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"


# ----------------------------------------------------------------------------- the filter and the event


def test_the_filter_carries_task_ids_and_admits_only_their_events() -> None:
    wanted = mcp.SubscriptionFilter(tools_list_changed=True, task_ids=("a", "b"))
    assert wanted.to_json() == {"toolsListChanged": True, "taskIds": ["a", "b"]}
    assert mcp.SubscriptionFilter.from_json(wanted.to_json()) == wanted
    assert wanted.narrowed_to(mcp.SubscriptionFilter(task_ids=("b", "c"))).task_ids == ("b",)
    event = mcp.Notification.task_status(mcp.TaskWorking(task_id="b"), 9)
    assert event.to_json() == {"jsonrpc": "2.0", "method": "notifications/tasks",
                               "params": {"taskId": "b", "status": "working", "_meta": {SUBSCRIPTION: 9}}}
    assert wanted.admits(event) and isinstance(event.task, mcp.TaskWorking)
    assert not wanted.admits(mcp.Notification.task_status(mcp.TaskWorking(task_id="z"), 9))
    assert mcp.Notification.tools_list_changed(9).task is None
    for bad in ({"taskIds": [""]}, {"taskIds": [1]}, {"taskIds": "a"}):
        with pytest.raises(mcp.InvalidMcpMessage):
            mcp.SubscriptionFilter.from_json(bad)


@pytest.mark.parametrize("params, message", [
    ({**task("completed"), "_meta": {SUBSCRIPTION: 1}}, "has no result object"),
    ({**task("working"), "result": {}, "_meta": {SUBSCRIPTION: 1}}, "carries 'result'"),
    ({"status": "working", "_meta": {SUBSCRIPTION: 1}}, "needs a non-empty string taskId"),
    (task("working"), "must carry _meta"),
])
def test_an_incomplete_or_inconsistent_task_event_is_an_invalid_message(params: dict[str, Any], message: str) -> None:
    with pytest.raises(mcp.InvalidMcpMessage, match=message):
        mcp.Notification.from_wire("notifications/tasks", params)


# ----------------------------------------------------------------------------- the zigai server


class Recording(mcp.InProcessTransport):
    def __init__(self, server: mcp.Server) -> None:
        super().__init__(server)
        self.methods: list[str] = []

    def request(self, request: OutgoingRequest, **kwargs: Any) -> Reply:
        self.methods.append(request.method)
        return super().request(request, **kwargs)


def build_server() -> tuple[mcp.Server, mcp.TaskServer, dict[str, Any]]:
    # the watch subscribes before the first question, usually
    return build_task_server(30_000, first_question_after_s=0.05)


@pytest.fixture(params=["in-process", "http"])
def zigai_tasks(request: pytest.FixtureRequest) -> Iterator[tuple[mcp.McpTransport, dict[str, Any]]]:
    server, tasks, seen = build_server()
    with tasks, served(request.param, server, in_process=Recording) as transport:
        yield transport, seen


def test_watch_follows_a_task_that_needs_input_twice_through_its_stream(
        zigai_tasks: tuple[mcp.McpTransport, dict[str, Any]]) -> None:
    transport, _ = zigai_tasks
    handler = Counting()
    states: list[mcp.TaskState] = []
    with mcp.Client(transport, capabilities=EXT, input_handler=handler, task_polling=SLOW,
                    task_store=mcp.MemoryStore(), default_timeout_ms=20_000) as client:
        created = client.request_json("tools/call", {"name": "interview", "arguments": {}})
        started = time.monotonic()
        final = client.watch_task(created["taskId"], on_state=states.append)
        assert time.monotonic() - started < 15  # well under the 30 s polling floor: the stream delivered
        assert isinstance(final, mcp.TaskCompleted) and final.result["content"][0]["text"] == "Ada: a note"
        assert client.task_store is not None and client.task_store.load() == []
    assert handler.keys == ["who", "note"]  # each key asked once, though the stream repeats states
    assert any(s.status_message == "writing a note" for s in states)
    assert {s.status for s in states} >= {"input_required", "completed"} and states[-1].terminal
    if isinstance(transport, Recording):
        assert transport.methods.count("tasks/get") == 1  # the one read after the acknowledgement
        assert transport.methods.count("tasks/update") == 2


def test_watch_cancels_the_task_at_the_deadline(zigai_tasks: tuple[mcp.McpTransport, dict[str, Any]]) -> None:
    transport, seen = zigai_tasks
    with mcp.Client(transport, capabilities=EXT, task_polling=SLOW, default_timeout_ms=20_000) as client:
        created = client.request_json("tools/call", {"name": "forever", "arguments": {}})
        started = time.monotonic()
        with pytest.raises(mcp.McpRequestTimedOut, match="the task was cancelled"):
            client.watch_task(created["taskId"], options=mcp.RequestOptions(timeout_ms=300))
        assert time.monotonic() - started < 5
        assert seen["cancelled"].wait(5)
        assert isinstance(client.get_task(created["taskId"]), mcp.TaskCancelled)


def test_watch_budget_and_local_cancel_cancel_the_task() -> None:
    server, tasks, seen = build_server()
    with tasks, mcp.Client(mcp.InProcessTransport(server), capabilities=EXT, default_timeout_ms=20_000) as client:
        created = client.request_json("tools/call", {"name": "forever", "arguments": {}})
        polling = mcp.TaskPolling(min_interval_ms=1, max_interval_ms=20, max_polls=3)
        observed: list[str] = []
        with pytest.raises(mcp.TaskWaitExhausted, match="after 3 observed states") as caught:
            client.watch_task(created["taskId"], polling=polling, on_state=lambda s: observed.append(s.status))
        assert caught.value.last_status == "working" and observed == ["working"] * 3  # exactly at the limit
        assert seen["cancelled"].wait(5)

        other = client.request_json("tools/call", {"name": "forever", "arguments": {}})
        token = CancellationToken()
        threading.Timer(0.2, token.cancel).start()
        with pytest.raises(mcp.McpRequestCancelled, match="the task was cancelled"):
            client.watch_task(other["taskId"], options=mcp.RequestOptions(cancel=token))
        assert isinstance(client.get_task(other["taskId"]), mcp.TaskCancelled)


def test_task_streams_need_the_extension_on_both_sides() -> None:
    server, tasks, _ = build_server()
    with tasks:
        plain = mcp.Client(mcp.InProcessTransport(server))
        with pytest.raises(mcp.TaskExtensionRequired):  # refused before anything is sent
            plain.listen(mcp.SubscriptionFilter(task_ids=("t1",)), lambda event: None)
        with pytest.raises(mcp.TaskExtensionRequired):
            plain.watch_task("t1")
        reply = server.handle_value({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {
            "notifications": {"taskIds": ["t1"]},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}}}})
        assert reply is not None and reply["error"]["code"] == -32021

    # A server without the Tasks extension acknowledges the stream without the task ids.
    bare = mcp.Server("bare", "1.0")
    events: list[mcp.Notification] = []
    with mcp.Client(mcp.InProcessTransport(bare), capabilities=EXT, default_timeout_ms=5_000) as client:
        threading.Timer(0.2, bare.close_listeners).start()
        result = client.listen(mcp.SubscriptionFilter(tools_list_changed=True, task_ids=("t1",)), events.append)
    assert result.acknowledged == mcp.SubscriptionFilter(tools_list_changed=True)
    assert events[0].acknowledged_filter == mcp.SubscriptionFilter(tools_list_changed=True)


def test_only_the_subscribed_tasks_events_reach_the_stream() -> None:
    server, tasks, _ = build_server()
    events: list[mcp.Notification] = []
    with tasks, mcp.Client(mcp.InProcessTransport(server), capabilities=EXT, input_handler=Counting(),
                           task_polling=FAST, default_timeout_ms=20_000) as client:
        first = client.request_json("tools/call", {"name": "interview", "arguments": {}})["taskId"]
        second = client.request_json("tools/call", {"name": "interview", "arguments": {}})["taskId"]
        listening = threading.Thread(target=client.listen, args=(mcp.SubscriptionFilter(task_ids=(first,)),
                                                                 events.append))
        listening.start()
        client.wait_task(second)
        client.wait_task(first)
        time.sleep(0.1)
        server.close_listeners()
        listening.join(5)
    reported = {event.task.task_id for event in events if event.task is not None}
    assert reported == {first}
    assert [event.task.status for event in events if event.task is not None][-1] == "completed"


# ----------------------------------------------------------------------------- a loopback stub


class StreamingStub:
    """Answers subscriptions/listen with scripted events, everything else through ``reply``."""

    mirrors_headers = False

    def __init__(self, events: Callable[[int], list[dict[str, Any]]], reply: Callable[[str, dict[str, Any]], Any]):
        self.events = events
        self.reply = reply
        self.sent: list[str] = []

    def request(self, request: OutgoingRequest, *, deadline: float | None, is_cancelled: Callable[[], bool],
                on_notification: NotificationSink) -> Reply:
        message = json.loads(request.body)
        self.sent.append(message["method"])
        if message["method"] == "subscriptions/listen":
            for event in self.events(message["id"]):
                on_notification(JsonRpcNotification(event["method"], event["params"]))
            while not is_cancelled():
                time.sleep(0.01)
            raise mcp.McpRequestCancelled("the client stopped listening")
        return JsonRpcResponse(request.id, dict(self.reply(message["method"], message["params"])))

    def notify(self, method: str, body: bytes, *, protocol_version: str, deadline: float | None) -> None:
        pass

    def close(self) -> None:
        pass


def _event(subscription: int, state: dict[str, Any]) -> dict[str, Any]:
    return {"method": "notifications/tasks", "params": {**state, "_meta": {SUBSCRIPTION: subscription}}}


def test_stub_stream_events_drive_the_watch_and_other_tasks_are_ignored() -> None:
    def events(subscription: int) -> list[dict[str, Any]]:
        ack = {"method": "notifications/subscriptions/acknowledged",
               "params": {"notifications": {"taskIds": ["t1"]}, "_meta": {SUBSCRIPTION: subscription}}}
        return [ack, _event(subscription, task("completed", "t2", result={"content": []})),
                _event(subscription, task("input_required", inputRequests={"who": ELICIT})),
                _event(subscription, task("completed", result={"content": [{"type": "text", "text": "ok"}]}))]

    answers: list[dict[str, Any]] = []

    def reply(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "tasks/get":
            return task("working")
        answers.append(params["inputResponses"])
        return {}

    stub = StreamingStub(events, reply)
    handler = Counting()
    with mcp.Client(stub, protocol_version=mcp.PROTOCOL_VERSION, capabilities=EXT, input_handler=handler, task_polling=SLOW,
                    default_timeout_ms=10_000) as client:
        final = client.watch_task("t1")
    assert isinstance(final, mcp.TaskCompleted) and final.result["content"][0]["text"] == "ok"
    assert final.task_id == "t1" and handler.keys in (["who"], [])  # the newest state may skip the question
    assert stub.sent.count("tasks/get") == 1 and "tasks/cancel" not in stub.sent


def test_stub_without_task_streams_falls_back_to_polling() -> None:
    def events(subscription: int) -> list[dict[str, Any]]:
        return [{"method": "notifications/subscriptions/acknowledged",
                 "params": {"notifications": {}, "_meta": {SUBSCRIPTION: subscription}}}]

    polls = iter([task("working"), task("input_required", inputRequests={"who": ELICIT}),
                  task("completed", result={"content": []})])

    def reply(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return next(polls) if method == "tasks/get" else {}

    stub = StreamingStub(events, reply)
    handler = Counting()
    with mcp.Client(stub, protocol_version=mcp.PROTOCOL_VERSION, capabilities=EXT, input_handler=handler, task_polling=FAST,
                    default_timeout_ms=10_000) as client:
        assert isinstance(client.watch_task("t1"), mcp.TaskCompleted)
    assert handler.keys == ["who"] and stub.sent.count("tasks/get") == 3 and stub.sent.count("tasks/update") == 1


def test_stub_refusing_the_stream_raises_its_error() -> None:
    class Refusing(StreamingStub):
        def request(self, request: OutgoingRequest, **kwargs: Any) -> Reply:
            from zigai.mcp.wire.jsonrpc import JsonRpcError

            if json.loads(request.body)["method"] == "subscriptions/listen":
                return JsonRpcError(request.id, -32021, "needs the extension", None)
            return super().request(request, **kwargs)

    stub = Refusing(lambda subscription: [], lambda method, params: task("working"))
    with mcp.Client(stub, protocol_version=mcp.PROTOCOL_VERSION, capabilities=EXT, default_timeout_ms=5_000) as client:
        with pytest.raises(mcp.MissingRequiredClientCapability):
            client.watch_task("t1")

    missing = Refusing(lambda subscription: [], lambda method, params: task("completed", result={}))

    def not_found(request: OutgoingRequest, **kwargs: Any) -> Reply:
        from zigai.mcp.wire.jsonrpc import JsonRpcError

        if json.loads(request.body)["method"] == "subscriptions/listen":
            return JsonRpcError(request.id, -32601, "Method not found", None)
        return StreamingStub.request(missing, request, **kwargs)

    missing.request = not_found  # type: ignore[method-assign]
    with mcp.Client(missing, protocol_version=mcp.PROTOCOL_VERSION, capabilities=EXT, task_polling=FAST, default_timeout_ms=5_000) as client:
        assert isinstance(client.watch_task("t1"), mcp.TaskCompleted)  # no listen at all: polling


def _acknowledging(subscription: int) -> list[dict[str, Any]]:
    return [{"method": "notifications/subscriptions/acknowledged",
             "params": {"notifications": {"taskIds": ["t1"]}, "_meta": {SUBSCRIPTION: subscription}}}]


def test_stub_a_restart_resends_persisted_answers_without_asking_again() -> None:
    sent: list[dict[str, Any]] = []

    def reply(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "tasks/update":
            sent.append(params["inputResponses"])
            return {}
        return task("completed", result={"content": []})

    store = mcp.MemoryStore()
    store.save(mcp.TaskRecord("t1", pending={"who": {"action": "accept", "content": {"name": "Ada"}}}))
    handler = Counting()
    with mcp.Client(StreamingStub(_acknowledging, reply), protocol_version=mcp.PROTOCOL_VERSION, capabilities=EXT, input_handler=handler, task_store=store,
                    task_polling=SLOW, default_timeout_ms=5_000) as client:
        assert isinstance(client.watch_task("t1"), mcp.TaskCompleted)
    assert sent == [{"who": {"action": "accept", "content": {"name": "Ada"}}}] and handler.keys == []
    assert store.load() == []


@pytest.mark.parametrize("failure", ["timeout", "connection"])
def test_stub_a_request_stuck_past_the_deadline_cancels_the_task(failure: str) -> None:
    cancelled: list[str] = []

    def reply(method: str, params: dict[str, Any]) -> Any:
        if method == "tasks/cancel":
            cancelled.append(params["taskId"])
            return task("cancelled")
        time.sleep(0.4)  # past the watch's 200 ms deadline
        if failure == "connection":
            raise mcp.McpConnectionFailed("the peer went away")
        return task("working")

    stub = StreamingStub(_acknowledging, reply)
    with mcp.Client(stub, protocol_version=mcp.PROTOCOL_VERSION, capabilities=EXT, task_polling=SLOW, default_timeout_ms=5_000) as client:
        with pytest.raises(mcp.McpRequestTimedOut):
            client.watch_task("t1", options=mcp.RequestOptions(timeout_ms=200))
    assert cancelled == ["t1"]


def test_stub_a_real_failure_inside_the_watch_keeps_the_record() -> None:
    def reply(method: str, params: dict[str, Any]) -> Any:
        return {"taskId": "t1", "status": "bogus"}

    store = mcp.MemoryStore()
    with mcp.Client(StreamingStub(_acknowledging, reply), protocol_version=mcp.PROTOCOL_VERSION, capabilities=EXT, task_store=store, task_polling=SLOW,
                    default_timeout_ms=5_000) as client:
        with pytest.raises(mcp.InvalidMcpMessage, match="unknown status"):
            client.watch_task("t1")
    assert [record.task_id for record in store.load()] == ["t1"]
