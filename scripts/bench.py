#!/usr/bin/env python3
"""zigai benchmark harness: named workloads, medians, and a side-by-side peer.

Usage::

    python scripts/bench.py [--reps N] [--only a,b] [--json]

Every workload reports one number for zigai under its name.  When the dev-only
peer ``pydantic_ai`` is importable in the same interpreter, the workloads that
have a peer implementation run against it in the same process run, and
``ratios`` says how many times better zigai is (peer/zigai for times,
zigai/peer for rates, so > 1 always means zigai wins).  With ``--json`` the
last line printed is one JSON object::

    {"metrics": {name: value}, "peer": {name: value}, "ratios": {name: value}}

Benchmarks are scripts, never timed assertions in the test suite.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))


@dataclass(frozen=True)
class Workload:
    name: str
    unit: str
    lower_is_better: bool
    run: Callable[[int], float]
    peer: Callable[[int], float] | None = None


def _peer_available() -> bool:
    return importlib.util.find_spec("pydantic_ai") is not None


def _workloads() -> list[Workload]:
    from bench_workloads import import_workloads

    found = [
        Workload(
            "import_s",
            "s",
            True,
            lambda reps: import_workloads.import_seconds("zigai", reps),
            lambda reps: import_workloads.import_seconds("pydantic_ai", reps),
        ),
    ]
    found += _optional_workloads()
    return found


def _optional_workloads() -> list[Workload]:
    """Workloads whose modules exist; each module may still be missing in a partial checkout."""
    found: list[Workload] = []
    try:
        from bench_workloads import json_workloads
    except ImportError:
        json_workloads = None
    if json_workloads is not None:
        found.append(
            Workload(
                "bounded_json_16mib_vs_loads",
                "x json.loads",
                True,
                lambda reps: json_workloads.bounded_json_16mib_vs_loads(reps)["ratio"],
            )
        )
    try:
        from bench_workloads import history_workloads
    except ImportError:
        history_workloads = None
    if history_workloads is not None:
        found.append(
            Workload(
                "history_1000_roundtrip_ms",
                "ms",
                True,
                history_workloads.history_1000_roundtrip_ms,
                getattr(history_workloads, "peer_history_1000_roundtrip_ms", None),
            )
        )
    try:
        from bench_workloads import sse_workloads
    except ImportError:
        sse_workloads = None
    if sse_workloads is not None:
        found.append(
            Workload(
                "sse_decode_vs_split_floor",
                "x floor (higher is better)",
                False,
                lambda reps: sse_workloads.sse_decode_vs_split_floor(reps)["ratio"],
            )
        )
        found.append(
            Workload(
                "sse_decode_mb_s",
                "MB/s",
                False,
                lambda reps: sse_workloads.sse_decode_vs_split_floor(reps)["decode_mb_s"],
            )
        )
    # each module of bench_workloads/ with a WORKLOADS table (a peer it needs may be missing)
    for name in ("agent_workloads", "evals_workloads", "stream_workloads", "mcp_workloads", "memory_workloads",
                 "durable_workloads"):
        try:
            module = importlib.import_module(f"bench_workloads.{name}")
        except ImportError:  # the module, or a peer it needs (DBOS for durable), is missing
            continue
        found.extend(Workload(**spec) for spec in module.WORKLOADS)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5, help="repetitions per workload (median)")
    parser.add_argument("--only", default="", help="comma-separated workload names")
    parser.add_argument("--json", action="store_true", help="print one JSON object last")
    args = parser.parse_args(argv)
    if args.reps < 1:
        parser.error("--reps must be at least 1")

    workloads = _workloads()
    if args.only:
        wanted = [n.strip() for n in args.only.split(",") if n.strip()]
        known = {w.name for w in workloads}
        unknown = [n for n in wanted if n not in known]
        if unknown:
            parser.error(f"unknown workload(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        workloads = [w for w in workloads if w.name in wanted]

    peer_ok = _peer_available()
    metrics: dict[str, float] = {}
    peer: dict[str, float] = {}
    ratios: dict[str, float] = {}
    for w in workloads:
        value = w.run(args.reps)
        metrics[w.name] = value
        line = f"{w.name:40s} {value:14.6g} {w.unit}"
        if peer_ok and w.peer is not None:
            peer_value = w.peer(args.reps)
            peer[w.name] = peer_value
            if value > 0 and peer_value > 0:
                ratio = peer_value / value if w.lower_is_better else value / peer_value
                ratios[w.name] = ratio
                line += f"   peer {peer_value:12.6g}   zigai {ratio:6.2f}x better"
        print(line, flush=True)
    if not peer_ok:
        print("(pydantic_ai not importable: peer columns empty)", flush=True)
    if args.json:
        print(json.dumps({"metrics": metrics, "peer": peer, "ratios": ratios}, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
