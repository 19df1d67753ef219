"""``zigai durable list|show ID|cancel ID|resume ID --db URL``: operate on durable agent runs.

Composition only: every subcommand is one :class:`zigai.durable.DurableRuns` call against the
DBOS system database named by ``--db`` (or ``ZIGAI_DURABLE_DB``), so it needs neither the
agents' code nor a launched DBOS.  Tables go to stdout (``--json``: one JSON document).

Invariant: exit 0 when the operation was done; 2 for operator input (no database URL, a
SQLite database file that does not exist, an unknown run id); 1 for anything else (an unreachable database, a failed or unfinished run
with ``show --wait``).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any, TextIO

from zigai.cli.errors import CliUsageError, ExitCode

__all__ = ["add_durable_parser", "durable_command"]


def add_durable_parser(commands: Any, out: TextIO | None) -> None:
    """The ``durable`` subcommand group of the shared parser."""
    group = commands.add_parser("durable", out=out, help="list, show, cancel and resume durable agent runs")
    actions = group.add_subparsers(dest="durable_command", metavar="ACTION", parser_class=type(group))
    listing = actions.add_parser("list", out=out, help="the newest durable runs")
    listing.add_argument("--agent", metavar="NAME", help="only runs of this DurableAgent name")
    listing.add_argument("--status", metavar="STATUS", help="only runs in this DBOS status (PENDING, SUCCESS ...)")
    listing.add_argument("--limit", type=_positive, default=50, metavar="N", help="at most N runs (default 50)")
    show = actions.add_parser("show", out=out, help="one run with its steps and their outcomes")
    show.add_argument("workflow_id", metavar="ID")
    show.add_argument("--wait", type=float, metavar="SECONDS",
                      help="first wait up to SECONDS for the run to finish, then show it with its output")
    for name, text in (("cancel", "cancel a run (completed steps stay recorded)"),
                       ("resume", "resume a cancelled or failed run from its last completed step")):
        actions.add_parser(name, out=out, help=text).add_argument("workflow_id", metavar="ID")
    for parser in (listing, show, *(actions.choices[n] for n in ("cancel", "resume"))):
        parser.add_argument("--db", metavar="URL", help="DBOS system database URL (default: $ZIGAI_DURABLE_DB)")
        parser.add_argument("--json", action="store_true", help="print one JSON document")


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return int(text)


def durable_command(args: argparse.Namespace, env: Mapping[str, str], out: TextIO, err: TextIO) -> int:
    """Run one ``zigai durable`` action (see module docstring)."""
    from zigai.durable import DurableRunNotFound, DurableRuns, DurableSetupError

    action = getattr(args, "durable_command", None)
    if action is None:
        raise CliUsageError("zigai durable needs an action: list, show ID, cancel ID or resume ID")
    url = args.db or env.get("ZIGAI_DURABLE_DB")
    if not url:
        raise CliUsageError("zigai durable needs the DBOS system database: --db URL or ZIGAI_DURABLE_DB")
    try:
        opened = DurableRuns(url)
    except DurableSetupError as exc:
        raise CliUsageError(str(exc)) from None
    with opened as runs:
        try:
            return _act(runs, action, args, out)
        except DurableRunNotFound as exc:
            err.write(f"zigai: error: {exc}\n")
            return int(ExitCode.usage)


def _act(runs: Any, action: str, args: argparse.Namespace, out: TextIO) -> int:
    if action == "list":
        found = runs.list(agent=args.agent, status=args.status, limit=args.limit)
        if args.json:
            out.write(json.dumps([asdict(run) for run in found]) + "\n")
        else:
            out.write(f"{'WORKFLOW ID':<32} {'AGENT':<20} {'STATUS':<10} QUEUE\n")
            for run in found:
                out.write(f"{run.workflow_id:<32} {run.agent:<20} {run.status:<10} {run.queue or '-'}\n")
        return int(ExitCode.ok)
    if action in ("cancel", "resume"):
        getattr(runs, action)(args.workflow_id)
        if args.json:
            out.write(json.dumps({"workflow_id": args.workflow_id, "action": action}) + "\n")
        else:
            out.write(f"{action}: {args.workflow_id}\n")
        return int(ExitCode.ok)
    output: Any = None
    if args.wait is not None:
        with runs.result(args.workflow_id, timeout_s=args.wait) as result:
            output = result.output
    details = runs.inspect(args.workflow_id)
    if args.json:
        document = {**asdict(details.summary), "steps": [asdict(s) for s in details.steps],
                    "error": details.error, "output": output}
        out.write(json.dumps(document) + "\n")
        return int(ExitCode.ok)
    summary = details.summary
    out.write(f"{summary.workflow_id}  agent={summary.agent}  status={summary.status}  "
              f"queue={summary.queue or '-'}  executor={summary.executor_id or '-'}\n")
    for step in details.steps:
        out.write(f"  {step.number:>4}  {step.outcome:<8} {step.name}"
                  + (f"  ({step.error})" if step.error else "") + "\n")
    if details.error:
        out.write(f"error: {details.error}\n")
    if args.wait is not None:
        out.write(f"output: {json.dumps(output)}\n")
    return int(ExitCode.ok)
