"""Graph snapshots: settled boundaries, definition binding, bounded restore, migrations."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from support.graph_flow import CODEC, Ledger, build

from zigai.graph import (
    END,
    GraphBuilder,
    GraphLimits,
    GraphRunFinished,
    GraphTypeMismatch,
    GraphTypes,
    InvalidGraphSnapshot,
    SnapshotCodec,
    SnapshotMismatch,
    UnsupportedSnapshotVersion,
)
from zigai.json import Limits

FLOW = Path(__file__).parent / "support" / "graph_flow.py"


def _flow(*args: str) -> str:
    done = subprocess.run([sys.executable, str(FLOW), *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("steps", [0, 2, 4, 8])
def test_snapshot_process_restart_restore_reaches_the_same_final_state(steps: int, tmp_path: Path) -> None:
    uninterrupted = build().run(1, state=Ledger(), deps="d")
    path = tmp_path / "snapshot.json"
    _flow("start", str(steps), str(path))
    resumed = json.loads(_flow("resume", str(path)))
    assert resumed == {"output": uninterrupted.output, "state": asdict(uninterrupted.state),
                       "steps": uninterrupted.steps}
    envelope = json.loads(path.read_text())
    assert envelope["frontier"]["completed_steps"] == steps
    assert envelope["frontier"]["node_name"] == ["add", "spread", "check"][steps % 3]


def _settled(steps: int = 1) -> tuple[Any, Any, str]:
    graph = build()
    run = graph.start(1, state=Ledger(), deps="d", run_id="run-1")
    for _ in range(steps):
        run.next()
    return graph, run, graph.snapshot(run, CODEC)


def test_the_envelope_holds_state_value_and_frontier_only() -> None:
    graph, run, text = _settled(2)
    envelope = json.loads(text)
    assert envelope == {
        "format": "zigai.graph.snapshot", "version": 1, "identity": "ledger/v1", "digest": graph.digest,
        "run_id": "run-1", "payload_version": 1,
        "frontier": {"node_index": 2, "node_name": "check", "completed_steps": 2},
        "state": {"entries": ["add:1@0"], "total": 1}, "value": 8,
    }
    restored = graph.restore(text, CODEC, deps="d")
    assert (restored.run_id, restored.completed_steps, restored.value, restored.upcoming.name) == ("run-1", 2, 8, "check")
    assert restored.state == run.state and restored.state is not run.state


def test_only_ready_runs_are_captured() -> None:
    graph = build()
    finished = graph.start(1, state=Ledger(), deps="d")
    finished.run_to_end()
    with pytest.raises(GraphRunFinished, match="a finished run has no frontier"):
        graph.snapshot(finished, CODEC)
    failing = GraphBuilder(identity="f").step("x", lambda c, v: 1 / 0, next=END).build("x")
    run = failing.start(0, state=None)
    with pytest.raises(ZeroDivisionError):
        run.next()
    with pytest.raises(GraphRunFinished, match="a failed run"):
        failing.snapshot(run)
    with pytest.raises(ValueError, match="belongs to another graph"):
        build().snapshot(graph.start(1, state=Ledger(), deps="d"), CODEC)


def test_digest_changes_with_topology_types_and_ceilings_but_not_with_labels() -> None:
    def make(label: str = "Add", target: Any = "b", limits: GraphLimits | None = None, value: Any = int,
             description: str | None = None) -> Any:
        builder = GraphBuilder(GraphTypes(value=value), identity="d", limits=limits)
        builder.step("a", lambda c, v: v, next="b", label=label, description=description, source="x.py:1")
        builder.decision("b", lambda c, v: ("end", v), routes={"end": target if target != "b" else END, "loop": "a"},
                         route_labels={"end": label})
        builder.group("g", ["a"], label=label)
        return builder.build("a")
    base = make().digest
    assert make(label="Relabelled", description="now documented").digest == base
    assert make(target="a").digest != base  # topology: the "end" branch now loops
    assert make(value=str).digest != base  # types
    assert make(limits=GraphLimits(max_steps=999)).digest != base  # execution ceiling
    assert make(limits=GraphLimits(max_nodes=10)).digest == base  # a size bound, not execution
    reordered = (GraphBuilder(GraphTypes(value=int), identity="d")
                 .step("a", lambda c, v: v, next="b")
                 .decision("b", lambda c, v: ("end", v), routes={"loop": "a", "end": END})
                 .build("a"))
    assert reordered.digest != base  # branch layout


def test_a_relabelled_definition_still_restores_a_snapshot() -> None:
    graph, _, text = _settled(1)
    relabelled = (
        GraphBuilder(graph.types, identity="ledger/v1", finish=lambda v: f"final {v}")
        .add(graph.definition(0).__class__("add", graph.definition(0).run, "spread"))
        .add(graph.definition(1))
        .add(graph.definition(2))
        .group("docs", ["add", "check"], label="Documented later")
        .build("add")
    )
    assert relabelled.digest == graph.digest
    assert relabelled.restore(text, CODEC, deps="d").run_to_end().output == "final 8744"


def _mutate(text: str, **changes: Any) -> str:
    document = json.loads(text)
    for key, value in changes.items():
        if key.startswith("frontier_"):
            document["frontier"][key[len("frontier_"):]] = value
        elif value is KeyError:
            del document[key]
        else:
            document[key] = value
    return json.dumps(document)


@pytest.mark.parametrize(("changes", "error", "message"), [
    ({"identity": "ledger/v2"}, SnapshotMismatch, "belongs to definition 'ledger/v2'"),
    ({"digest": "0" * 64}, SnapshotMismatch, "digest differs"),
    ({"frontier_node_index": 0}, SnapshotMismatch, "frontier node 0 'spread'"),
    ({"frontier_node_index": 3}, SnapshotMismatch, "frontier node 3"),
    ({"frontier_node_name": "Spread"}, SnapshotMismatch, "'Spread' is not a node"),
    ({"frontier_node_index": -1}, InvalidGraphSnapshot, "'node_index' must be int"),
    ({"frontier_completed_steps": True}, InvalidGraphSnapshot, "'completed_steps' must be int"),
    ({"frontier_completed_steps": 1001}, InvalidGraphSnapshot, "beyond the graph step ceiling 1000"),
    ({"frontier": [1]}, InvalidGraphSnapshot, "frontier must be an object"),
    ({"version": 2}, UnsupportedSnapshotVersion, "envelope version 2 is not supported"),
    ({"version": "1"}, UnsupportedSnapshotVersion, "envelope version '1'"),
    ({"format": "other"}, InvalidGraphSnapshot, "not a graph snapshot"),
    ({"run_id": KeyError}, InvalidGraphSnapshot, r"missing \['run_id'\]"),
    ({"extra": 1}, InvalidGraphSnapshot, r"unexpected \['extra'\]"),
    ({"identity": 7}, InvalidGraphSnapshot, "'identity' must be str"),
    ({"payload_version": 2}, UnsupportedSnapshotVersion, "payload version 2 is newer than this codec's 1"),
    ({"payload_version": 0}, UnsupportedSnapshotVersion, "payload version 0 is invalid"),
    ({"value": "eight"}, GraphTypeMismatch, "graph value must be int"),
])
def test_restore_refuses_what_does_not_fit(changes: dict[str, Any], error: type[Exception], message: str) -> None:
    graph, _, text = _settled(1)
    with pytest.raises(error, match=message):
        graph.restore(_mutate(text, **changes), CODEC, deps="d")
    assert graph.restore(text, CODEC, deps="d").completed_steps == 1  # the original still restores


def test_the_frontier_step_count_may_sit_exactly_at_the_ceiling() -> None:
    graph, _, text = _settled(1)
    run = graph.restore(_mutate(text, frontier_completed_steps=1000), CODEC, deps="d")
    assert run.completed_steps == 1000


def test_restore_preflights_the_document() -> None:
    graph, _, text = _settled(1)
    tight = SnapshotCodec(encode_state=asdict, decode_state=lambda d: Ledger(**d),
                          limits=Limits(len(text.encode()), 64, 4, 16))
    assert graph.restore(text, tight, deps="d").completed_steps == 1
    smaller = SnapshotCodec(encode_state=asdict, decode_state=lambda d: Ledger(**d),
                            limits=Limits(len(text.encode()) - 1, 64, 4, 16))
    with pytest.raises(InvalidGraphSnapshot, match="the limit is"):
        graph.restore(text, smaller, deps="d")
    with pytest.raises(InvalidGraphSnapshot):
        graph.restore("{not json", CODEC)
    with pytest.raises(InvalidGraphSnapshot):
        graph.restore('{"format": "zigai.graph.snapshot", "format": "again"}', CODEC)
    with pytest.raises(InvalidGraphSnapshot, match="not a graph snapshot"):
        graph.restore("[]", CODEC)
    deep = SnapshotCodec(encode_state=asdict, decode_state=lambda d: Ledger(**d), limits=Limits(1 << 20, 64, 3, 16))
    with pytest.raises(InvalidGraphSnapshot):
        graph.restore(_mutate(text, value=[[[[1]]]]), deep)


def test_a_snapshot_that_could_not_be_read_back_is_refused_when_written() -> None:
    graph = build()
    run = graph.start(1, state=Ledger(entries=["x" * 100]), deps="d")
    small = SnapshotCodec(encode_state=asdict, decode_state=lambda d: Ledger(**d), limits=Limits(1 << 20, 99, 8, 16))
    with pytest.raises(InvalidGraphSnapshot, match="cannot be written so that it reads back"):
        graph.snapshot(run, small)
    with pytest.raises(InvalidGraphSnapshot, match="cannot be written"):
        graph.snapshot(run, SnapshotCodec(encode_state=lambda s: {1, 2}))


def test_an_older_payload_goes_through_the_one_migration_hook() -> None:
    graph, _, text = _settled(1)
    calls: list[int] = []

    def migrate(version: int, payload: dict[str, Any]) -> dict[str, Any]:
        calls.append(version)
        old = payload["state"]
        return {"state": {"entries": old["log"], "total": old["sum"]}, "value": payload["value"]}
    old_text = _mutate(text, state={"log": ["add:1@0"], "sum": 1})
    v2 = SnapshotCodec(encode_state=asdict, decode_state=lambda d: Ledger(**d), payload_version=2, migrate=migrate)
    restored = graph.restore(old_text, v2, deps="d")
    assert calls == [1] and restored.state == Ledger(["add:1@0"], 1)
    assert restored.run_to_end().output == "final 8744"
    no_hook = SnapshotCodec(encode_state=asdict, decode_state=lambda d: Ledger(**d), payload_version=2)
    with pytest.raises(UnsupportedSnapshotVersion, match="no migrate hook"):
        graph.restore(old_text, no_hook, deps="d")
    broken = SnapshotCodec(payload_version=2, migrate=lambda v, p: {"state": 1})
    with pytest.raises(InvalidGraphSnapshot, match="exactly 'state' and 'value'"):
        graph.restore(old_text, broken, deps="d")


def test_decoders_run_before_anything_is_published_and_their_errors_pass_through() -> None:
    graph, _, text = _settled(1)

    def refuse(data: Any) -> Ledger:
        raise LookupError("tenant unknown")
    with pytest.raises(LookupError, match="tenant unknown"):
        graph.restore(text, SnapshotCodec(decode_state=refuse), deps="d")
    with pytest.raises(GraphTypeMismatch, match="graph state must be"):
        graph.restore(text, SnapshotCodec(), deps="d")  # the dict is not a Ledger


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"encode_state": 1}, "encode_state must be callable"),
    ({"migrate": 1}, "migrate must be callable"),
    ({"payload_version": 0}, "payload_version must be an int >= 1"),
    ({"limits": {}}, "limits must be a zigai.json.Limits"),
])
def test_codec_arguments_are_checked(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidGraphSnapshot, match=message):
        SnapshotCodec(**kwargs)
