"""``zigai conformance serve`` and ``zigai conformance run`` (see docs/conformance.md).

``serve`` plays the provider side of every recording under ``--cassettes`` (default: the
recordings shipped in the package) until interrupted, printing its base URL first; ``run``
starts the same server in-process and drives zigai itself through it over real HTTP.  Both
write ``--report FILE.json`` and ``--junit FILE.xml`` (``serve`` after every request, so the
files are current while it runs).  Exit codes: 0 when nothing failed, 1 when a scenario failed
or was left incomplete (or, for ``serve``, a request was unrouted), 2 for invalid input (a missing folder, an invalid cassette or scenario file).
"""

from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path
from typing import Any, TextIO

from zigai.cli.errors import CliUsageError

__all__ = ["add_conformance_parser", "conformance_command"]


def add_conformance_parser(commands: Any, out: TextIO | None) -> None:
    group = commands.add_parser("conformance", out=out, help="check an implementation against the recordings")
    actions = group.add_subparsers(dest="conformance_command", metavar="ACTION", parser_class=type(group))
    serve = actions.add_parser("serve", out=out, help="serve the provider side of every recording on loopback")
    run = actions.add_parser("run", out=out, help="drive zigai itself through a conformance server over HTTP")
    for parser in (serve, run):
        parser.add_argument("--cassettes", nargs="+", type=Path, metavar="DIR",
                            help="cassette folders or files (default: the recordings shipped with zigai)")
        parser.add_argument("--scenarios", type=Path, action="append", default=[], metavar="FILE",
                            help="scenario file whose entries take precedence (repeatable)")
        parser.add_argument("--report", type=Path, metavar="FILE.json", help="write the verdicts as JSON")
        parser.add_argument("--junit", type=Path, metavar="FILE.xml", help="write the verdicts as JUnit XML")
        parser.add_argument("--rechunk", action="store_true",
                            help="cut every streamed event into small pieces at seeded random points")
        parser.add_argument("--seed", type=int, default=0, help="seed of --rechunk (default: %(default)s)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: %(default)s)")
    serve.add_argument("--port", type=int, default=0, help="port to bind (default: a free one)")
    serve.add_argument("--allow-remote", action="store_true",
                       help="allow a --host that is not a loopback address")
    run.add_argument("--only", metavar="GLOB", action="append",
                     help="run only cassettes whose relative path matches (repeatable)")
    run.add_argument("--server", metavar="URL",
                     help="use a running 'zigai conformance serve' at URL (same --cassettes) instead of "
                          "starting one; its report files are that server's")


def _catalog(args: argparse.Namespace) -> list[Any]:
    from zigai.conformance.catalog import (
        build_catalog,
        load_all_scenarios,
        packaged_cassettes,
        packaged_scenarios,
    )

    roots = args.cassettes or [packaged_cassettes()]
    missing = [str(p) for p in [*roots, *args.scenarios] if not p.exists()]
    if missing:
        raise CliUsageError(f"zigai conformance: not found: {', '.join(missing)}")
    return build_catalog(roots, load_all_scenarios([*args.scenarios, *packaged_scenarios()]))


class _Reports:
    def __init__(self, args: argparse.Namespace) -> None:
        self.json_path: Path | None = args.report
        self.junit_path: Path | None = args.junit
        self._lock = threading.Lock()

    def write(self, server: Any) -> None:
        from zigai.conformance.report import write_json, write_junit

        if self.json_path is None and self.junit_path is None:
            return
        with self._lock:
            status = server.status()
            if self.json_path is not None:
                write_json(self.json_path, status)
            if self.junit_path is not None:
                write_junit(self.junit_path, status)


def conformance_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from zigai.conformance.server import ConformanceServer, loopback

    if args.conformance_command not in ("serve", "run"):
        raise CliUsageError("zigai conformance: choose an action: serve or run")
    entries = _catalog(args)
    reports = _Reports(args)
    if args.conformance_command == "run":
        import fnmatch

        from zigai.conformance.driver import run_entries

        chosen = [e for e in entries
                  if args.only is None or any(fnmatch.fnmatchcase(e.relative, glob) for glob in args.only)]
        if args.server is not None:
            _, failed, _ = run_entries(chosen, args.server, out)
            return 1 if failed else 0
        with ConformanceServer(entries, rechunk=args.rechunk, seed=args.seed) as server:
            _, failed, _ = run_entries(chosen, server, out)
            reports.write(server)
        return 1 if failed else 0
    if not loopback(args.host) and not args.allow_remote:
        raise CliUsageError(f"zigai conformance serve: {args.host!r} is not a loopback address; "
                            "pass --allow-remote to bind it anyway")
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        with ConformanceServer(entries, args.host, args.port, rechunk=args.rechunk, seed=args.seed,
                               on_change=reports.write) as server:
            reports.write(server)
            out.write(f"zigai conformance: serving {len(entries)} scenarios on {server.base_url}\n")
            out.flush()
            try:
                while not stop.wait(0.2):
                    pass
            except KeyboardInterrupt:
                pass
            reports.write(server)
            final = server.status()
    finally:
        signal.signal(signal.SIGTERM, previous)
    summary = final["summary"]
    err.write("zigai conformance: " + ", ".join(f"{n} {v}" for v, n in summary.items())
              + f", {len(final['unrouted'])} unrouted\n")
    return 1 if summary["fail"] or summary["incomplete"] or final["unrouted"] else 0
