"""Argument parsing and dispatch of the ``zigai`` command (stdlib ``argparse``).

:func:`main` never raises for an expected failure: it prints one ``zigai: error: …`` line on
stderr and returns the stable exit code from :func:`zigai.cli.errors.exit_code_for`.
Tracebacks are shown only for unexpected faults when ``ZIGAI_DEBUG=1``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from zigai.cli.args import add_agent_flags, settings_from_args
from zigai.cli.config import DEFAULT_RETRIES, MAX_RETRIES
from zigai.cli.errors import CliUsageError, ExitCode, error_line, exit_code_for

__all__ = ["build_parser", "main"]

EXIT_CODES_HELP = """\
exit codes:
  0    success: the final answer was printed
  1    other fault (run limit, timeout, model behaviour, tool exception, bug)
  2    operator input (arguments, model string, config/history/schema/tools/pause file,
       agent spec: invalid document or unknown name)
  3    credentials (or variables an agent spec needs) missing from the environment,
       or rejected by the provider
  4    provider or network failure
  5    approval handoff: the run paused and wrote a pause file (see 'zigai resume')
  130  interrupted

environment:
  ZIGAI_MODEL     model string used when --model is not given (beats the config file)
  ZIGAI_CONFIG    configuration file used when --config is not given
  provider keys   OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, GROQ_API_KEY, ...
                  (see docs/providers.md)
"""


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting (every usage error maps to exit code 2) and
    writes ``--help`` / ``--version`` to the command's own stdout (``main(out=...)``)."""

    def __init__(self, *args: Any, out: TextIO | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.out = out

    def error(self, message: str) -> None:  # type: ignore[override]
        # main() adds the one "zigai: error:" prefix; the subcommand goes in the help pointer
        raise CliUsageError(f"{message} (see '{self.prog} --help')")

    def _print_message(self, message: str, file: Any = None) -> None:
        if self.out is not None and (file is None or file is sys.stdout):
            file = self.out
        super()._print_message(message, file)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return value


def _retry_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_RETRIES:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to {MAX_RETRIES}, got {text!r}")
    return value


def build_parser(out: TextIO | None = None) -> argparse.ArgumentParser:
    """The ``zigai`` parser; help and version text go to ``out`` (default: ``sys.stdout``)."""
    parser = _Parser(
        out=out,
        prog="zigai",
        description="Run zigai agents from the command line.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from zigai import __version__

    parser.add_argument("--version", action="version", version=f"zigai {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    run = commands.add_parser(
        "run", out=out, help="run an agent on a prompt", epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("prompt", help="the user prompt")
    run.add_argument("--spec", metavar="AGENT.yaml",
                     help="agent spec file (JSON or YAML) defining the agent; --tools is its tool registry")
    run.add_argument("--model", help="model string, e.g. openai:gpt-5-mini, anthropic:…, test")
    run.add_argument("--system", help="system instructions")
    run.add_argument("--tools", metavar="FILE.py", help="Python file whose functions become tools")
    run.add_argument("--output-schema", metavar="FILE.json", help="JSON Schema of a structured answer")
    run.add_argument("--stream", action="store_true",
                     help="print text as it arrives; tool progress on stderr")
    run.add_argument("--history", metavar="FILE",
                     help="canonical history file: loaded before, replaced atomically after")
    run.add_argument("--json", action="store_true", help="print output, usage and cost as JSON")
    run.add_argument("--events", choices=["agui"],
                     help="print the run's events as JSON lines (agui: AG-UI events)")
    run.add_argument("--max-requests", type=_positive_int, metavar="N", help="model request limit")
    run.add_argument("--timeout", type=_positive_float, metavar="SECONDS", help="run deadline")
    retries = run.add_mutually_exclusive_group()
    retries.add_argument("--retries", type=_retry_count, metavar="N",
                         help=f"retry a failed model request up to N times (429, 5xx, timeouts, "
                              f"connection failures; Retry-After honoured; default {DEFAULT_RETRIES})")
    retries.add_argument("--no-retries", action="store_const", const=0, dest="retries",
                         help="never retry a model request (same as --retries 0)")
    add_agent_flags(run)
    run.add_argument("--config", metavar="FILE", help="JSON configuration file (see docs)")
    run.add_argument("--pause-file", metavar="FILE", default="zigai-pause.json",
                     help="where a run paused for approval is saved (default: %(default)s)")

    resume = commands.add_parser(
        "resume", out=out, help="continue a run paused for approval", epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    resume.add_argument("pause_file", metavar="FILE", help="the pause file 'zigai run' wrote")
    resume.add_argument("--approve", action="append", default=[], metavar="ID",
                        help="approve the call with this id (repeatable)")
    resume.add_argument("--deny", action="append", default=[], metavar="ID",
                        help="deny the call with this id (repeatable)")
    resume.add_argument("--reason", action="append", default=[], metavar="TEXT",
                        help="reason shown to the model for the preceding --deny")
    resume.add_argument("--result", action="append", nargs=2, default=[], metavar=("ID", "JSON"),
                        help="supply the result of an externally executed call")
    resume.add_argument("--stream", action="store_true", help="as for 'run'")
    resume.add_argument("--json", action="store_true", help="as for 'run'")

    from zigai.cli.spec import add_check_parser

    add_check_parser(commands, out)
    from zigai.cli.evals import add_eval_parser

    add_eval_parser(commands, out)
    from zigai.cli.web import add_web_parser

    add_web_parser(commands, out)
    from zigai.cli.conformance import add_conformance_parser

    add_conformance_parser(commands, out)
    from zigai.cli.durable import add_durable_parser

    add_durable_parser(commands, out)
    commands.add_parser("demo", out=out, help="a streamed weather tool loop over real HTTP on 127.0.0.1")
    return parser


def _dispatch(argv: Sequence[str], env: Mapping[str, str], out: TextIO, err: TextIO) -> int:
    parser = build_parser(out)
    args = parser.parse_args(list(argv))
    if args.command == "run":
        from zigai.cli.run import Invocation, run_command

        invocation = Invocation(
            settings=settings_from_args(args, env), history=args.history, json_output=args.json,
            stream=args.stream, pause_file=args.pause_file, events=args.events,
        )
        return run_command(args.prompt, invocation, env, out, err)
    if args.command == "resume":
        from zigai.cli.resume import resume_command

        return resume_command(args, env, out, err)
    if args.command == "check":
        from zigai.cli.spec import check_command

        return check_command(args.spec_file, args.tools, args.json, env, out)
    if args.command == "eval":
        from zigai.cli.evals import eval_command

        return eval_command(args, env, out, err)
    if args.command == "web":
        from zigai.cli.web import web_command

        return web_command(args, env, err)
    if args.command == "conformance":
        from zigai.cli.conformance import conformance_command

        return conformance_command(args, out, err)
    if args.command == "durable":
        from zigai.cli.durable import durable_command

        return durable_command(args, env, out, err)
    if args.command == "demo":
        from zigai.cli.demo import demo_command

        return demo_command(out, err)
    parser.print_help(out)
    return ExitCode.usage


def main(
    argv: Sequence[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Run the ``zigai`` command; returns the exit code (see ``zigai --help``)."""
    stdout = out if out is not None else sys.stdout
    stderr = err if err is not None else sys.stderr
    environment = os.environ if env is None else env
    try:
        return int(_dispatch(sys.argv[1:] if argv is None else argv, environment, stdout, stderr))
    except SystemExit as exc:  # --help / --version
        return int(exc.code or 0) if isinstance(exc.code, int) else 0
    except BaseException as exc:
        code = exit_code_for(exc)
        if code == ExitCode.interrupted:
            stderr.write("zigai: interrupted\n")
            return int(code)
        if not isinstance(exc, Exception):
            raise
        stderr.write(error_line(exc))
        if code == ExitCode.fault and environment.get("ZIGAI_DEBUG") == "1":
            import traceback

            traceback.print_exception(exc, file=stderr)
        return int(code)
