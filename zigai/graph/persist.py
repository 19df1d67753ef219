"""Snapshots of a settled run and their checked restore.

A snapshot is one JSON document (the *envelope*)::

    {"format": "zigai.graph.snapshot", "version": 1,
     "identity": <graph identity>, "digest": <graph digest>, "run_id": <run id>,
     "payload_version": <application payload version>,
     "frontier": {"node_index": i, "node_name": name, "completed_steps": k},
     "state": <encoded state>, "value": <encoded value>}

Invariants:

* Only a settled, ready run is captured: ``Run.next()`` joins or cancels every fork task
  before it returns, so there is no half-finished fork to serialize.  Finished and failed
  runs have nothing to resume and are refused.  Dependencies, callbacks, controls and
  observers stay process-local and are supplied again at restore.
* The envelope is bound to the definition: identity and digest must match exactly, and the
  frontier's node index must name the same stable node name.  Documentation metadata is
  not in the digest, so relabelling a node keeps old snapshots valid.
* The document is preflighted (bytes, string sizes, depth, items) before decoding, and a
  snapshot too large to be read back is refused when it is written.
* State and value are decoded into temporaries and type-checked before a run is built;
  nothing is published on failure.  Application decoder exceptions pass through unwrapped.
* Versions fail closed: an unknown envelope version, or a payload newer than the codec's,
  raises :class:`UnsupportedSnapshotVersion`; an older payload goes through the codec's one
  migration hook, or fails the same way when there is none.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from zigai import json as zjson
from zigai.errors import JsonError
from zigai.graph.errors import (
    GraphRunFinished,
    InvalidGraphSnapshot,
    SnapshotMismatch,
    UnsupportedSnapshotVersion,
)
from zigai.graph.run import Run
from zigai.graph.types import check_value

if TYPE_CHECKING:
    from zigai.control import RunControl
    from zigai.graph.definition import GraphDefinition
    from zigai.graph.run import GraphEvent

__all__ = ["SnapshotCodec", "SNAPSHOT_FORMAT", "SNAPSHOT_VERSION", "SNAPSHOT_LIMITS", "snapshot_run", "restore_run"]

S = TypeVar("S")
V = TypeVar("V")

SNAPSHOT_FORMAT = "zigai.graph.snapshot"
SNAPSHOT_VERSION = 1
SNAPSHOT_LIMITS = zjson.Limits(16 * 1024 * 1024, 4 * 1024 * 1024, 64, 65_536)
"""Default bounds of a snapshot document (bytes, one string, depth, items per collection)."""

_KEYS = frozenset({
    "format", "version", "identity", "digest", "run_id", "payload_version", "frontier", "state", "value",
})
_FRONTIER_KEYS = frozenset({"node_index", "node_name", "completed_steps"})

Migration = Callable[[int, dict[str, Any]], dict[str, Any]]
"""``migrate(from_version, {"state": ..., "value": ...}) -> payload at the codec's version``."""


def _identity(value: Any) -> Any:
    return value


@dataclass(frozen=True, slots=True)
class SnapshotCodec(Generic[S, V]):
    """How the application turns its state and value into JSON values and back.

    Encoders return plain JSON values (dict/list/str/int/float/bool/None); decoders receive
    them.  ``payload_version`` is the version of that encoding; ``migrate`` upgrades an
    older payload once, to exactly this version.
    """

    encode_state: Callable[[S], Any] = _identity
    decode_state: Callable[[Any], S] = _identity
    encode_value: Callable[[V], Any] = _identity
    decode_value: Callable[[Any], V] = _identity
    payload_version: int = 1
    migrate: Migration | None = None
    limits: zjson.Limits = SNAPSHOT_LIMITS

    def __post_init__(self) -> None:
        for name in ("encode_state", "decode_state", "encode_value", "decode_value"):
            if not callable(getattr(self, name)):
                raise InvalidGraphSnapshot(f"SnapshotCodec.{name} must be callable")
        if self.migrate is not None and not callable(self.migrate):
            raise InvalidGraphSnapshot("SnapshotCodec.migrate must be callable or None")
        if type(self.payload_version) is not int or self.payload_version < 1:
            raise InvalidGraphSnapshot(
                f"SnapshotCodec.payload_version must be an int >= 1, got {self.payload_version!r}"
            )
        if not isinstance(self.limits, zjson.Limits):
            raise InvalidGraphSnapshot("SnapshotCodec.limits must be a zigai.json.Limits")


def snapshot_run(run: Run[Any, Any, Any, Any, Any], codec: SnapshotCodec[Any, Any]) -> str:
    """The envelope of a settled, ready run as compact JSON text."""
    if run.status != "ready":
        raise GraphRunFinished(f"a {run.status} run has no frontier to snapshot; snapshot between next() calls")
    node = run.upcoming
    assert node is not None
    graph = run.graph
    envelope = {
        "format": SNAPSHOT_FORMAT,
        "version": SNAPSHOT_VERSION,
        "identity": graph.identity,
        "digest": graph.digest,
        "run_id": run.run_id,
        "payload_version": codec.payload_version,
        "frontier": {"node_index": node.index, "node_name": node.name, "completed_steps": run.completed_steps},
        "state": codec.encode_state(run.state),
        "value": codec.encode_value(run.value),
    }
    try:
        text = zjson.dumps(envelope)
        zjson.validate(text, codec.limits)
    except JsonError as error:
        raise InvalidGraphSnapshot(
            f"the snapshot cannot be written so that it reads back: {error}; "
            "encode state and value as smaller plain JSON values or raise SnapshotCodec.limits"
        ) from error
    return text


def _field(document: dict[str, Any], name: str, kind: type, what: str = "snapshot") -> Any:
    value = document[name]
    if kind is int:
        ok = type(value) is int and value >= 0
    else:
        ok = isinstance(value, kind)
    if not ok:
        raise InvalidGraphSnapshot(f"{what} field {name!r} must be {kind.__name__}, got {value!r}")
    return value


def _envelope(text: str | bytes, codec: SnapshotCodec[Any, Any]) -> dict[str, Any]:
    document = zjson.parse(text, codec.limits, InvalidGraphSnapshot)
    if not isinstance(document, dict) or document.get("format") != SNAPSHOT_FORMAT:
        raise InvalidGraphSnapshot(f"not a graph snapshot (expected format {SNAPSHOT_FORMAT!r})")
    version = document.get("version")
    if type(version) is not int or version != SNAPSHOT_VERSION:
        raise UnsupportedSnapshotVersion(
            f"snapshot envelope version {version!r} is not supported (this code reads {SNAPSHOT_VERSION})"
        )
    if set(document) != _KEYS:
        missing, extra = sorted(_KEYS - set(document)), sorted(set(document) - _KEYS)
        raise InvalidGraphSnapshot(f"snapshot fields are wrong: missing {missing}, unexpected {extra}")
    return document


def restore_run(
    graph: GraphDefinition[S, Any, Any, V, Any],
    text: str | bytes,
    codec: SnapshotCodec[S, V],
    *,
    deps: Any = None,
    max_steps: int | None = None,
    control: RunControl | None = None,
    observer: Callable[[GraphEvent], None] | None = None,
) -> Run[S, Any, Any, V, Any]:
    """Check ``text`` against ``graph`` and rebuild the run at its saved frontier."""
    document = _envelope(text, codec)
    identity = _field(document, "identity", str)
    if identity != graph.identity:
        raise SnapshotMismatch(f"snapshot belongs to definition {identity!r}, not {graph.identity!r}")
    if _field(document, "digest", str) != graph.digest:
        raise SnapshotMismatch(
            f"snapshot of {identity!r} was taken from a different definition (digest differs): "
            "types, topology, branch layout, entry or ceilings changed"
        )
    frontier = document["frontier"]
    if not isinstance(frontier, dict) or set(frontier) != _FRONTIER_KEYS:
        raise InvalidGraphSnapshot(f"snapshot frontier must be an object with {sorted(_FRONTIER_KEYS)}")
    index = _field(frontier, "node_index", int, "frontier")
    name = _field(frontier, "node_name", str, "frontier")
    completed = _field(frontier, "completed_steps", int, "frontier")
    if index >= len(graph.nodes) or graph.nodes[index].name != name:
        raise SnapshotMismatch(f"snapshot frontier node {index} {name!r} is not a node of this graph at that index")
    if completed > graph.limits.max_steps:
        raise InvalidGraphSnapshot(
            f"snapshot completed {completed} steps, beyond the graph step ceiling {graph.limits.max_steps}"
        )
    run_id = _field(document, "run_id", str)
    payload = {"state": document["state"], "value": document["value"]}
    payload = _migrate(_field(document, "payload_version", int), payload, codec)
    state = codec.decode_state(payload["state"])
    value = check_value(graph.types, "value", codec.decode_value(payload["value"]))
    return Run(
        graph, state=state, deps=deps, value=value, position=index, completed=completed,
        max_steps=max_steps, control=control, observer=observer, run_id=run_id,
    )


def _migrate(version: int, payload: dict[str, Any], codec: SnapshotCodec[Any, Any]) -> dict[str, Any]:
    current = codec.payload_version
    if version == current:
        return payload
    if version > current or version < 1:
        raise UnsupportedSnapshotVersion(
            f"snapshot payload version {version} is newer than this codec's {current}; "
            "restore it with the code that wrote it"
            if version > current else f"snapshot payload version {version} is invalid"
        )
    if codec.migrate is None:
        raise UnsupportedSnapshotVersion(
            f"snapshot payload version {version} is older than {current} and the codec has no migrate hook"
        )
    migrated = codec.migrate(version, payload)
    if not isinstance(migrated, dict) or set(migrated) != {"state", "value"}:
        raise InvalidGraphSnapshot("SnapshotCodec.migrate must return a dict with exactly 'state' and 'value'")
    return migrated
