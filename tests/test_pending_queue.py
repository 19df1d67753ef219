"""PendingMessageQueue: deep copies, safe-boundary insertion, closing with finalization."""

from __future__ import annotations

import threading

import pytest

from zigai.agent import (
    Agent,
    EnqueuedMessagesEvent,
    InvalidPendingMessages,
    PendingMessageQueue,
    PendingMessageQueueClosed,
    RunOptions,
)
from zigai.errors import AgentError
from zigai.messages import RequestMessage, ResponseMessage, TextPart, UserPromptPart
from zigai.testing import FunctionModel


def _user(text: str) -> RequestMessage:
    return RequestMessage((UserPromptPart(text),))


def _prompts(messages: tuple[object, ...]) -> list[str]:
    return [
        part.content for m in messages if isinstance(m, RequestMessage)
        for part in m.parts if isinstance(part, UserPromptPart)
    ]


def test_errors_are_agent_errors() -> None:
    assert issubclass(PendingMessageQueueClosed, AgentError)
    assert issubclass(InvalidPendingMessages, AgentError)


def test_enqueue_validates_and_deep_copies() -> None:
    queue = PendingMessageQueue()
    with pytest.raises(InvalidPendingMessages):
        queue.enqueue([])
    with pytest.raises(InvalidPendingMessages):
        queue.enqueue(["text"])  # type: ignore[list-item]
    batch = [_user("a"), _user("b")]
    queue.enqueue(batch)
    batch.append(_user("c"))
    assert len(queue) == 1
    taken = queue.take()
    assert _prompts(taken) == ["a", "b"]
    assert taken[0] == batch[0] and taken[0] is not batch[0]
    assert queue.take() == ()


def test_closed_queue_rejects_and_returns_leftovers() -> None:
    queue = PendingMessageQueue()
    queue.enqueue(_user("late"))
    left = queue.close()
    assert [_prompts(b) for b in left] == [["late"]]
    assert queue.closed
    with pytest.raises(PendingMessageQueueClosed):
        queue.enqueue(_user("x"))


def test_a_queue_serves_one_run() -> None:
    agent = Agent(FunctionModel(lambda m, i: ResponseMessage((TextPart("ok"),))))
    queue = PendingMessageQueue()
    with agent.run("hi", pending_messages=queue):
        pass
    assert queue.closed
    with pytest.raises(PendingMessageQueueClosed):
        agent.run("again", pending_messages=queue)


def test_batch_enqueued_during_a_model_step_gets_another_model_step() -> None:
    queue = PendingMessageQueue()
    seen: list[list[str]] = []

    def respond(messages: tuple[object, ...], info: object) -> ResponseMessage:
        seen.append(_prompts(messages))
        if len(seen) == 1:
            queue.enqueue(_user("also this"))  # arrives while the "final" answer is produced
        return ResponseMessage((TextPart(f"answer {len(seen)}"),))

    agent = Agent(FunctionModel(respond))
    with agent.run("first", pending_messages=queue) as result:
        assert result.output == "answer 2"
        assert seen == [["first"], ["first", "also this"]]
        kinds = [type(m).__name__ for m in result.messages]
        assert kinds == ["RequestMessage", "ResponseMessage", "RequestMessage", "ResponseMessage"]
    assert queue.closed


def test_batches_before_the_first_request_join_it_and_stream_an_event() -> None:
    queue = PendingMessageQueue()
    queue.enqueue([_user("x"), _user("y")])

    def stream(messages: tuple[object, ...], info: object):  # type: ignore[no-untyped-def]
        yield "done"

    agent = Agent(FunctionModel(stream_function=stream))
    with agent.run_stream("p", pending_messages=queue) as events:
        collected = list(events)
        result = events.result()
    enqueued = [e for e in collected if isinstance(e, EnqueuedMessagesEvent)]
    assert len(enqueued) == 1 and _prompts(enqueued[0].messages) == ["x", "y"]
    assert collected.index(enqueued[0]) == 0  # before the model request's events
    with result:
        assert _prompts(result.messages) == ["p", "x", "y"]


def test_failure_closes_the_queue_and_discards_batches() -> None:
    queue = PendingMessageQueue()

    def boom(messages: tuple[object, ...], info: object) -> ResponseMessage:
        queue.enqueue(_user("lost with the run"))
        raise RuntimeError("model down")

    with pytest.raises(RuntimeError):
        Agent(FunctionModel(boom)).run("p", options=RunOptions(pending_messages=queue))
    assert queue.closed and len(queue) == 0


def test_producer_thread_batches_are_in_history_exactly_once_or_rejected() -> None:
    queue = PendingMessageQueue()
    accepted: list[str] = []
    rejected: list[str] = []
    started = threading.Event()
    steps = {"n": 0}

    def stream(messages: tuple[object, ...], info: object):  # type: ignore[no-untyped-def]
        started.set()
        steps["n"] += 1
        for i in range(30):
            yield f"w{i} "
        # keep the run alive for a few steps so batches land at several boundaries
        if steps["n"] >= 4:
            return

    def produce() -> None:
        started.wait(5)
        for i in range(400):
            label = f"batch-{i}"
            try:
                queue.enqueue(_user(label))
            except PendingMessageQueueClosed:
                rejected.append(label)
            else:
                accepted.append(label)

    producer = threading.Thread(target=produce)
    producer.start()
    agent = Agent(FunctionModel(stream_function=stream))
    with agent.run_stream("start", pending_messages=queue) as events:
        for _ in events:
            pass
        result = events.result()
    producer.join(10)
    assert not producer.is_alive()
    with result:
        in_history = [p for p in _prompts(result.messages) if p.startswith("batch-")]
    assert sorted(in_history) == sorted(accepted)
    assert len(in_history) == len(set(in_history))
    assert set(accepted).isdisjoint(rejected)
    assert len(accepted) + len(rejected) == 400
    assert in_history == sorted(in_history, key=lambda s: int(s.split("-")[1]))  # FIFO
