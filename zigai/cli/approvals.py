"""Approval handoff: a paused run is saved to a versioned pause file; ``zigai resume`` continues.

``zigai run`` drives the agent with ``Agent.run_until_pause`` (``run_until_pause_stream`` under
``--stream``, so a streamed run pauses and hands off exactly like a buffered one).  When the model calls a tool
declared ``requires_approval`` (or ``external``), the run stops *before* any call of that
response executes and the CLI writes, atomically, the pause file::

    {"version": 1, "kind": "zigai.cli.pause",
     "settings": {<RunSettings: model string, system, tools, schema, limits>},
     "history": "<history file or null>",
     "calls": [{"tool_call_id", "tool_name", "args", "execution"}, ...],
     "state": "<the agent's opaque versioned paused-state JSON, as a string>"}

It then prints one line per pending call on stderr and exits with code 5.  The file holds no
credential: the model is rebuilt from its model string and the environment on resume.

``zigai resume FILE --approve ID | --deny ID [--reason TEXT] | --result ID JSON`` needs exactly
one decision per pending call, rebuilds the same agent, and calls ``Agent.resume_run_json``
(``resume_run_stream`` with ``--stream``).
A run that pauses again rewrites the file (exit 5); a completed run saves its history, prints
its answer and deletes the pause file, so one pause is resumed at most once.

A pause that was paid for is never lost: when the pause file cannot be written after the run
(its folder vanished or became read-only mid-run; the path is checked before the run), the same
document is saved to an owner-only file in the system temporary folder, stderr names it and
the command to continue, and the run still fails with :class:`OutputFileNotWritten` (exit 1)
so scripts notice that the requested path is empty.  The agent checks
the state's own version and digest; this module checks the envelope and the decisions.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from typing import TYPE_CHECKING, Any, TextIO

from zigai.cli.errors import CliUsageError, ExitCode, InvalidPauseFile, OutputFileNotWritten
from zigai.cli.files import atomic_write_text, read_bounded

if TYPE_CHECKING:
    from zigai.cli.progress import Progress

__all__ = ["PAUSE_FILE_VERSION", "PAUSE_FILE_KIND", "Outcome", "progress_for", "start", "save_pause",
           "read_pause_file", "decisions_from_args", "streamed", "unwrap"]

PAUSE_FILE_VERSION = 1
PAUSE_FILE_KIND = "zigai.cli.pause"


class Outcome:
    """Either a finished ``result`` or a ``paused`` run (exactly one is set)."""

    __slots__ = ("result", "paused")

    def __init__(self, result: Any = None, paused: Any = None) -> None:
        self.result = result
        self.paused = paused


def unwrap(outcome: Any) -> Outcome:
    if outcome.is_paused:
        return Outcome(paused=outcome.paused)
    return Outcome(result=outcome.result)


def progress_for(invocation: Any, out: TextIO, err: TextIO) -> Progress | None:
    """The live view for ``--stream`` (text hidden under ``--json``), else None."""
    if not invocation.stream:
        return None
    from zigai.cli.progress import Progress

    return Progress(out, err, show_text=not invocation.json_output)


def streamed(stream: Any, progress: Progress) -> Outcome:
    """Show every event of a pause-aware agent stream, then take its owned outcome."""
    with stream:
        for event in stream:
            progress.handle(event)
        return unwrap(stream.outcome())


def start(agent: Any, prompt: str, history: tuple[Any, ...], progress: Progress | None = None) -> Outcome:
    """Run until the answer or the first approval pause (streamed when ``progress`` is given)."""
    if progress is not None:
        return streamed(agent.run_until_pause_stream(prompt, message_history=history), progress)
    return unwrap(agent.run_until_pause(prompt, message_history=history))


def _limits() -> Any:
    from zigai.json import Limits, defaults

    state = defaults.paused_state
    return Limits(state.max_document_bytes + 1024 * 1024, state.max_document_bytes,
                  state.max_depth, state.max_items)


def save_pause(paused: Any, invocation: Any, err: TextIO) -> int:
    """Write the pause file for ``paused`` and report the pending calls; exit code 5."""
    with paused:
        calls = [
            {"tool_call_id": c.tool_call_id, "tool_name": c.tool_name, "args": c.args,
             "execution": str(getattr(c.execution, "value", c.execution))}
            for c in paused.calls
        ]
        document = {
            "version": PAUSE_FILE_VERSION, "kind": PAUSE_FILE_KIND,
            "settings": invocation.settings.to_json(), "history": invocation.history,
            "calls": calls, "state": paused.state_json,
        }
    text = json.dumps(document, ensure_ascii=False, indent=1) + "\n"
    try:
        atomic_write_text(invocation.pause_file, text, "pause file")
    except OutputFileNotWritten as failure:
        try:
            salvage = _salvage(text)
        except OSError:  # no temporary folder either: the document itself goes to stderr
            err.write("zigai: the paused state could not be saved anywhere; save the document "
                      "between these lines to a file and resume from it\n-----\n" + text + "-----\n")
            raise failure from None
        _report_pending(calls, salvage, err)
        raise OutputFileNotWritten(f"{failure}; the paused state was saved to {salvage!r} "
                                   "instead (resume from there)") from None
    _report_pending(calls, invocation.pause_file, err)
    return ExitCode.approval


def _report_pending(calls: list[dict[str, Any]], saved_to: str, err: TextIO) -> None:
    err.write(f"zigai: paused for approval; state saved to {saved_to}\n")
    for call in calls:
        verb = "--result ID JSON" if call["execution"] == "external" else "--approve ID or --deny ID"
        err.write(f"[pending] {call['tool_call_id']} {call['tool_name']} {call['args']} ({verb})\n")
    err.write(f"zigai: continue with: zigai resume {saved_to} --approve <id>\n")


def _salvage(text: str) -> str:
    """Write a pause document the requested path refused to an owner-only temporary file."""
    fd, path = tempfile.mkstemp(prefix="zigai-pause-", suffix=".json")  # mode 0600
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


def read_pause_file(path: str) -> dict[str, Any]:
    """The validated pause-file envelope (the agent validates the inner state)."""
    from zigai import json as zjson
    from zigai.errors import JsonError

    try:
        data = read_bounded(path, _limits().max_document_bytes, "pause file")
    except CliUsageError as exc:
        raise InvalidPauseFile(str(exc)) from None
    try:
        document = zjson.parse(data, _limits())
    except JsonError as exc:
        raise InvalidPauseFile(f"pause file {path!r} is not valid JSON: {exc}") from None
    if not isinstance(document, dict) or set(document) != {
        "version", "kind", "settings", "history", "calls", "state"
    }:
        raise InvalidPauseFile(f"pause file {path!r} does not have the pause-file fields")
    if document["version"] != PAUSE_FILE_VERSION or isinstance(document["version"], bool):
        raise InvalidPauseFile(f"pause file {path!r} has unsupported version {document['version']!r}")
    if document["kind"] != PAUSE_FILE_KIND:
        raise InvalidPauseFile(f"{path!r} is not a zigai CLI pause file")
    if not isinstance(document["state"], str) or not isinstance(document["calls"], list):
        raise InvalidPauseFile(f"pause file {path!r} is malformed")
    if document["history"] is not None and not isinstance(document["history"], str):
        raise InvalidPauseFile(f"pause file {path!r} has a malformed history path")
    for call in document["calls"]:
        if not isinstance(call, dict) or not isinstance(call.get("tool_call_id"), str):
            raise InvalidPauseFile(f"pause file {path!r} has a malformed pending call")
    return document


def decisions_from_args(args: argparse.Namespace, calls: list[dict[str, Any]]) -> list[Any]:
    """Exactly one decision per pending call, from ``--approve`` / ``--deny`` / ``--result``."""
    from zigai import json as zjson
    from zigai.agent.deferred import ResumeDecision
    from zigai.errors import JsonError
    from zigai.json import defaults

    if len(args.reason) > len(args.deny):
        raise CliUsageError("--reason follows a --deny ID")
    reasons = list(args.reason) + [None] * (len(args.deny) - len(args.reason))
    chosen: dict[str, Any] = {}

    def add(call_id: str, decision: Any) -> None:
        if call_id in chosen:
            raise CliUsageError(f"call {call_id!r} has more than one decision")
        chosen[call_id] = decision

    for call_id in args.approve:
        add(call_id, ResumeDecision.approve(call_id))
    for call_id, reason in zip(args.deny, reasons, strict=True):
        add(call_id, ResumeDecision.deny(call_id, reason))
    for call_id, text in args.result:
        try:
            content = zjson.parse(text, defaults.tool_payload)
        except JsonError as exc:
            raise CliUsageError(f"--result {call_id}: not valid JSON: {exc}") from None
        add(call_id, ResumeDecision.result(call_id, content))
    pending = [call["tool_call_id"] for call in calls]
    unknown = sorted(set(chosen) - set(pending))
    if unknown:
        raise CliUsageError(f"no pending call has id {', '.join(unknown)} (pending: {', '.join(pending)})")
    missing = [call_id for call_id in pending if call_id not in chosen]
    if missing:
        raise CliUsageError(f"every pending call needs a decision; missing: {', '.join(missing)}")
    return [chosen[call_id] for call_id in pending]
