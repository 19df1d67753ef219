"""A child process for the durable crash test: one agent workflow on a SQLite DBOS database.

``python durable_worker.py DIR first``  starts workflow ``crash-run`` and, when the model is
asked for its second response (so the first model request and the first tool call are both
recorded), writes ``DIR/ready`` and blocks until the parent SIGKILLs it.

``python durable_worker.py DIR second`` launches DBOS again (which recovers the pending
workflow), waits for its result and prints it with the recorded step names as JSON.

Every model request that really ran and every tool call is counted in ``DIR/counts.sqlite``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time

directory, mode = sys.argv[1], sys.argv[2]
COUNTS = os.path.join(directory, "counts.sqlite")
with sqlite3.connect(COUNTS) as setup:
    setup.execute("CREATE TABLE IF NOT EXISTS executed (what TEXT NOT NULL)")


def count(what: str) -> None:
    """Record one executed side effect, committed before the caller goes on."""
    with sqlite3.connect(COUNTS, isolation_level=None) as db:
        db.execute("INSERT INTO executed (what) VALUES (?)", (what,))


from dbos import DBOS  # noqa: E402

from zigai import Agent, Tool  # noqa: E402
from zigai.durable import DurableAgent, current_step_id  # noqa: E402
from zigai.messages import ResponseMessage, TextPart, ToolCallPart, ToolReturnPart  # noqa: E402
from zigai.testing import FunctionModel  # noqa: E402


def respond(messages, info):
    returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
    turn = len(returns)
    if turn == 1 and mode == "first":
        open(os.path.join(directory, "ready"), "w").close()
        time.sleep(600)  # the parent kills this process here, before this request "sends"
    count(f"model:{turn}")
    if turn < 2:
        label = "AB"[turn]
        return ResponseMessage(parts=(ToolCallPart("tally", json.dumps({"label": label}), f"call-{label}"),))
    return ResponseMessage(parts=(TextPart("done after " + ",".join(str(r.content) for r in returns)),))


def tally(args):
    step = current_step_id()
    count(f"tool:{args['label']}:{step}")
    return args["label"]


tool = Tool.manual("tally", "count one side effect",
                   {"type": "object", "properties": {"label": {"type": "string"}}, "required": ["label"]},
                   tally)
durable = DurableAgent(Agent(FunctionModel(respond), tools=[tool]), name="crash-test")
DBOS(config={"name": "zigai-crash-test", "log_level": "WARNING",
             "system_database_url": "sqlite:///" + os.path.join(directory, "dbos.sqlite")})
DBOS.launch()
if mode == "first":
    durable.run("count twice", workflow_id="crash-run")
    raise SystemExit("the first process should have been killed")
with durable.result("crash-run") as result:
    steps = [s["function_name"] for s in DBOS.list_workflow_steps("crash-run")]
    print(json.dumps({"output": result.output, "steps": steps, "messages": len(result.messages)}))
DBOS.destroy()
