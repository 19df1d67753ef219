"""A graph used by the snapshot tests across a real process restart.

``python tests/support/graph_flow.py start STEPS PATH`` runs STEPS transitions and writes a
snapshot to PATH; ``python tests/support/graph_flow.py resume PATH`` restores it in a fresh
interpreter, finishes the run and prints ``{"output": ..., "state": ...}`` as JSON.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from zigai.graph import END, GraphBuilder, GraphTypes, Join, SnapshotCodec


@dataclass
class Ledger:
    entries: list[str] = field(default_factory=list)
    total: int = 0


def add(ctx: Any, value: int) -> int:
    ctx.state.total += value
    ctx.state.entries.append(f"add:{value}@{ctx.step}")
    return value + 1


def fan(ctx: Any, value: int) -> int:
    return value


def square(ctx: Any, item: int) -> int:
    return item * item


def check(ctx: Any, value: int) -> tuple[str, int]:
    ctx.state.entries.append(f"check:{value}")
    return ("again" if value < 1000 else "stop", value)


def build() -> Any:
    return (
        GraphBuilder(GraphTypes(state=Ledger, deps=str, input=int, value=int, output=str),
                     identity="ledger/v1", finish=lambda v: f"final {v}")
        .step("add", add, next="spread", label="Add the value")
        .fork("spread", branches=[square, fan], items=lambda c, v, emit: [emit(v), emit(1)],
              join=Join(lambda: 0, lambda acc, v: acc + v), next="check")
        .decision("check", check, routes={"again": "add", "stop": END})
        .build("add")
    )


CODEC = SnapshotCodec(
    encode_state=asdict,
    decode_state=lambda data: Ledger(**data),
)


def main(argv: list[str]) -> int:
    graph = build()
    if argv[0] == "start":
        run = graph.start(1, state=Ledger(), deps="d")
        for _ in range(int(argv[1])):
            run.next()
        Path(argv[2]).write_text(graph.snapshot(run, CODEC), encoding="utf-8")
        return 0
    run = graph.restore(Path(argv[1]).read_text(encoding="utf-8"), CODEC, deps="d")
    result = run.run_to_end()
    print(json.dumps({"output": result.output, "state": asdict(result.state), "steps": result.steps}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
