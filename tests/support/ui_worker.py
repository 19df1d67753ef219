"""One worker process of a ``ui_app`` whose stores live in a shared SQLite file.

``python ui_worker.py DB LEDGER`` serves an AG-UI app on 127.0.0.1 (free port), prints its
URL on stdout and serves until stdin closes.  The agent's ``publish`` tool needs approval and
appends one line to LEDGER per execution, so tests can count executions across processes.
Prompts: ``publish`` (approval-gated tool), ``count`` (tool results in the thread so far),
``slow`` (streams until cancelled).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from typing import Any

from zigai.agent import Agent
from zigai.messages import ToolReturnPart, UserPromptPart
from zigai.testing import DeltaToolCall, FunctionModel
from zigai.tool import Tool, ToolExecution
from zigai.ui import LocalServer, ui_app
from zigai.ui.sqlite import SqliteUiStore

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def main(db: str, ledger: str) -> None:
    def publish(args: dict[str, Any]) -> str:
        with open(ledger, "a", encoding="utf-8") as out:
            out.write(f"publish {args['city']}\n")
        return f"published {args['city']}"

    def stream(messages: tuple[Any, ...], info: Any) -> Iterator[Any]:
        prompt, returns = "", 0
        for message in messages:
            for part in getattr(message, "parts", ()):
                if isinstance(part, UserPromptPart):
                    prompt, returns = str(part.content), 0
                elif isinstance(part, ToolReturnPart):
                    returns += 1
        total = sum(isinstance(p, ToolReturnPart) for m in messages for p in getattr(m, "parts", ()))
        if prompt == "count":
            yield f"tool results in this thread: {total}"
        elif prompt == "slow":
            for index in range(600):
                time.sleep(0.05)
                yield f"tick {index} "
        elif returns == 0:
            yield DeltaToolCall(name="publish", json_args='{"city": "Oslo"}', tool_call_id="call_pub")
        else:
            yield "Done."

    tool = Tool.manual("publish", "Publish a report.", CITY, publish, execution=ToolExecution.requires_approval)
    app = ui_app(Agent(FunctionModel(stream_function=stream), tools=[tool]), "agui", store=SqliteUiStore(db))
    with LocalServer(app) as server:
        print(server.url, flush=True)
        sys.stdin.read()  # serve until the parent closes our stdin


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
