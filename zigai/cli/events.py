"""``zigai run --events agui``: the run's AG-UI events as JSON lines on stdout.

Structured event output reuses the AG-UI adapter (:mod:`zigai.ui`): the same bridge and
encoder a browser endpoint uses, one compact JSON object per line, flushed as it happens.
A run that pauses for approval writes the usual pause file (exit code 5) and ends with a
``RUN_FINISHED`` interrupt outcome whose interrupt ids are the tool call ids ``zigai resume``
takes; a failed run ends with ``RUN_ERROR`` and the command's usual exit code.  History is
saved exactly as in a plain run.  Nothing else is written to stdout.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from typing import Any, TextIO

from zigai.cli.errors import ExitCode, error_line, exit_code_for

__all__ = ["run_agui_events"]


class _CliPauses:
    """A pause 'store' that hands the pause to the pause file and names calls by their ids."""

    def __init__(self) -> None:
        self.stored: Any = None

    def put(self, thread_id: str, state_json: str, calls: Sequence[Any]) -> Any:
        from zigai.ui.pauses import StoredPause, _interrupts

        interrupts = tuple(
            type(i)(c.tool_call_id, i.call_id, i.tool_name, i.args, i.reason)
            for i, c in zip(_interrupts("cli", calls), calls, strict=True)
        )
        self.stored = StoredPause("cli", thread_id, state_json, tuple(calls), interrupts)
        return self.stored


def run_agui_events(agent: Any, prompt: str, history: tuple[Any, ...], invocation: Any,
                    out: TextIO, err: TextIO) -> int:
    from zigai.cli import approvals
    from zigai.cli.files import save_history
    from zigai.ui import AguiEncoder, UiBridge

    bridge = UiBridge("zigai-cli", secrets.token_hex(8))
    encoder = AguiEncoder()
    pauses = _CliPauses()
    code = int(ExitCode.ok)

    def on_outcome(_thread: str, outcome: Any) -> None:
        nonlocal code
        if outcome.is_paused:
            code = approvals.save_pause(outcome.paused, invocation, err)
        elif invocation.history:
            save_history(invocation.history, outcome.result.messages)

    stream = agent.run_until_pause_stream(prompt, message_history=history)
    for event in bridge.events(stream, pauses, on_outcome):  # type: ignore[arg-type]
        for item in encoder.encode(event):
            out.write(json.dumps(item, ensure_ascii=False, separators=(",", ":")) + "\n")
            out.flush()
    if bridge.error is not None:
        err.write(error_line(bridge.error))
        return int(exit_code_for(bridge.error))
    return int(code)
