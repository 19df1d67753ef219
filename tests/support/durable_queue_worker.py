"""A durable worker process: serves the ``zigai-runs`` DBOS queue until its stop file appears.

``python durable_queue_worker.py DIR DB_URL EXECUTOR_ID``

Registers the durable agent ``queued`` (two tool calls, then an answer), launches DBOS with
the given executor id (so a restart with the same id recovers what the killed process was
running), registers the queue and then only waits.  The first worker to reach the run's third
model request writes ``DIR/ready-<executor>`` and blocks there for the parent's SIGKILL; a
worker that finds a ready file already written goes on.  Model requests and tool calls are
counted in ``DIR/counts.sqlite``; ``DIR/started-<executor>`` says DBOS is launched.
"""

from __future__ import annotations

import glob
import json
import os
import sqlite3
import sys
import time

directory, db_url, executor = sys.argv[1], sys.argv[2], sys.argv[3]
COUNTS = os.path.join(directory, "counts.sqlite")
with sqlite3.connect(COUNTS) as setup:
    setup.execute("CREATE TABLE IF NOT EXISTS executed (what TEXT NOT NULL)")


def count(what: str) -> None:
    with sqlite3.connect(COUNTS, isolation_level=None) as db:
        db.execute("INSERT INTO executed (what) VALUES (?)", (what,))


from dbos import DBOS  # noqa: E402

from zigai import Agent, Tool  # noqa: E402
from zigai.durable import DurableAgent, current_step_id  # noqa: E402
from zigai.messages import ResponseMessage, TextPart, ToolCallPart, ToolReturnPart  # noqa: E402
from zigai.testing import FunctionModel  # noqa: E402


def respond(messages, info):
    turn = sum(1 for m in messages if isinstance(m, ResponseMessage))
    if turn == 2 and not glob.glob(os.path.join(directory, "ready-*")):
        open(os.path.join(directory, f"ready-{executor}"), "w").close()
        time.sleep(600)  # the parent kills this worker here
    count(f"model:{turn}")
    if turn < 2:
        label = "AB"[turn]
        return ResponseMessage(parts=(ToolCallPart("tally", json.dumps({"label": label}), f"call-{label}"),))
    returned = [str(p.content) for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
    return ResponseMessage(parts=(TextPart("done after " + ",".join(returned)),))


def tally(args):
    count(f"tool:{args['label']}:{current_step_id()}")
    return args["label"]


tool = Tool.manual("tally", "count one side effect",
                   {"type": "object", "properties": {"label": {"type": "string"}}, "required": ["label"]}, tally)
DurableAgent(Agent(FunctionModel(respond), tools=[tool]), name="queued")
DBOS(config={"name": "zigai-queue-test", "log_level": "WARNING", "system_database_url": db_url,
             "executor_id": executor, "application_version": "queue-test-1"})
DBOS.launch()
DBOS.register_queue("zigai-runs", polling_interval_sec=0.2)  # in every worker, after launch (DBOS 3.4)
open(os.path.join(directory, f"started-{executor}"), "w").close()
while not os.path.exists(os.path.join(directory, "stop")):
    time.sleep(0.05)
DBOS.destroy()
