#!/usr/bin/env python3
"""Tool-layer timings: parallel wall time, scheduler overhead, argument validation cost.

Usage::

    python scripts/bench_tools.py [--reps N] [--json]

Prints medians over ``--reps`` runs; with ``--json`` the last line is one JSON
object of the same numbers.  A script, never a timed assertion in the tests.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from zigai import reflect  # noqa: E402
from zigai.control import RunControl  # noqa: E402
from zigai.messages import ToolCallPart  # noqa: E402
from zigai.tool import ScheduledCall, Tool, ToolLimits, ToolRunContext, ToolScheduler  # noqa: E402


@dataclass
class Item:
    sku: str
    quantity: int
    tags: list[str]


@dataclass
class Order:
    customer: str
    items: list[Item]
    express: bool = False


def place(order: Order) -> int:
    return sum(item.quantity for item in order.items)


def _batch(tool: Tool, count: int, text: str = "{}") -> list[ScheduledCall]:
    return [
        ScheduledCall(ToolCallPart(tool.name, text, f"c{i}"), tool, tool.validate_arguments(text),
                      ToolRunContext(tool_name=tool.name, tool_call_id=f"c{i}"))
        for i in range(count)
    ]


def parallel_8x100ms_s() -> float:
    tool = Tool.manual("slow", "", {"type": "object"}, lambda args: time.sleep(0.1))
    with ToolScheduler(ToolLimits(), None) as scheduler:
        started = time.perf_counter()
        scheduler.run_batch(_batch(tool, 8), RunControl())
        return time.perf_counter() - started


def scheduler_overhead_us_per_call() -> float:
    tool = Tool.manual("noop", "", {"type": "object"}, lambda args: 1)
    with ToolScheduler(ToolLimits(max_active=8, max_queued=64), None) as scheduler:
        batch = _batch(tool, 64)
        scheduler.run_batch(batch, RunControl())  # warm the pool
        started = time.perf_counter()
        for _ in range(20):
            scheduler.run_batch(batch, RunControl())
        return (time.perf_counter() - started) / (20 * 64) * 1e6


def validate_us_per_call() -> float:
    tool = reflect.tool("place", "Place an order.", place)
    text = json.dumps({
        "customer": "c-1",
        "items": [{"sku": f"s{i}", "quantity": i, "tags": ["a", "b"]} for i in range(20)],
        "express": True,
    })
    tool.validate_arguments(text)
    started = time.perf_counter()
    for _ in range(2000):
        tool.validate_arguments(text)
    return (time.perf_counter() - started) / 2000 * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    workloads = {
        "tool_parallel_8x100ms_s": parallel_8x100ms_s,
        "tool_scheduler_overhead_us_per_call": scheduler_overhead_us_per_call,
        "tool_validate_20_items_us": validate_us_per_call,
    }
    metrics = {}
    for name, run in workloads.items():
        metrics[name] = statistics.median(run() for _ in range(max(1, args.reps)))
        print(f"{name:40s} {metrics[name]:12.6g}", flush=True)
    if args.json:
        print(json.dumps({"metrics": metrics}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
