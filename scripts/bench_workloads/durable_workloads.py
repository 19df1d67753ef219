"""Durable-run workload: what durability costs a short agent run on DBOS's embedded SQLite.

``durable_run_overhead_ms`` runs the same two-tool agent run (a model response calling two
tools in parallel, then a final answer; FunctionModel, no network) plainly and as a
``DurableAgent`` workflow on a SQLite system database in a temp dir, and reports the
difference of the medians in milliseconds: the three model steps, the two tool steps and
the workflow's own records written to SQLite (DBOS launched once, outside the timing).
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from typing import Any

import dbos  # noqa: F401  (an ImportError leaves the workload out of a checkout without DBOS)

__all__ = ["WORKLOADS", "durable_run_overhead_ms"]


def _agent() -> Any:
    from zigai import Agent, Tool
    from zigai.messages import ResponseMessage, TextPart, ToolCallPart, ToolReturnPart
    from zigai.testing import FunctionModel

    def respond(messages: Any, info: Any) -> ResponseMessage:
        returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        if not returns:
            return ResponseMessage(parts=(ToolCallPart("price", json.dumps({"sku": "a"}), "c1"),
                                          ToolCallPart("stock", json.dumps({"sku": "a"}), "c2")))
        return ResponseMessage(parts=(TextPart(f"{returns[0].content} / {returns[1].content}"),))

    schema = {"type": "object", "properties": {"sku": {"type": "string"}}}
    tools = [Tool.manual("price", "price of a sku", schema, lambda args: 12),
             Tool.manual("stock", "stock of a sku", schema, lambda args: 3)]
    return Agent(FunctionModel(respond), tools=tools)


def durable_run_overhead_ms(reps: int) -> float:
    from dbos import DBOS

    from zigai.durable import DurableAgent

    agent = _agent()
    durable = DurableAgent(agent, name="bench-overhead")
    folder = tempfile.mkdtemp(prefix="zigai-bench-dbos-")
    DBOS(config={"name": "zigai-bench", "log_level": "WARNING",
                 "system_database_url": "sqlite:///" + os.path.join(folder, "dbos.sqlite")})
    DBOS.launch()
    try:
        plain: list[float] = []
        durable_ms: list[float] = []
        rounds = max(reps, 5)
        for n in range(rounds + 1):  # the first round warms both paths up and is not counted
            start = time.perf_counter()
            agent.run("price and stock of a?").close()
            middle = time.perf_counter()
            durable.run("price and stock of a?", workflow_id=f"bench-{n}").close()
            end = time.perf_counter()
            if n:
                plain.append((middle - start) * 1000)
                durable_ms.append((end - middle) * 1000)
        return statistics.median(durable_ms) - statistics.median(plain)
    finally:
        DBOS.destroy(destroy_registry=True)


WORKLOADS: list[dict[str, Any]] = [
    {"name": "durable_run_overhead_ms", "unit": "ms", "lower_is_better": True, "run": durable_run_overhead_ms},
]
