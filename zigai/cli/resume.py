"""``zigai resume FILE …``: continue a paused run saved by ``zigai run`` (see :mod:`zigai.cli.approvals`).

It sits above both :mod:`zigai.cli.run` (the agent it rebuilds and the answer it prints) and
:mod:`zigai.cli.approvals` (the pause file and the decisions), so neither imports the other
back.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import replace
from typing import TextIO

from zigai.cli.approvals import (
    decisions_from_args,
    progress_for,
    read_pause_file,
    save_pause,
    streamed,
    unwrap,
)
from zigai.cli.config import settings_from_json
from zigai.cli.errors import InvalidPauseFile
from zigai.cli.run import Invocation, build_agent, check_output_paths, finish

__all__ = ["resume_command"]


def resume_command(args: argparse.Namespace, env: Mapping[str, str], out: TextIO, err: TextIO) -> int:
    """``zigai resume FILE …`` (see the module docstring)."""
    document = read_pause_file(args.pause_file)
    settings = settings_from_json(document["settings"], f"pause file {args.pause_file!r}")
    decisions = decisions_from_args(args, document["calls"])
    invocation = Invocation(settings=settings, history=document["history"], json_output=args.json,
                            stream=args.stream, pause_file=args.pause_file)
    check_output_paths(invocation)
    with ExitStack() as stack:  # closes the MCP stdio servers the settings name
        agent = build_agent(settings if settings.spec else replace(settings, model=settings.model or "test"),
                            env, err, stack)
        progress = progress_for(invocation, out, err)
        from zigai.agent.deferred import (
            InvalidPausedState,
            InvalidResumeDecisions,
            stringify_resume_decisions,
        )

        try:
            if progress is not None:
                outcome = streamed(agent.resume_run_stream(document["state"], decisions), progress)
            else:
                outcome = unwrap(agent.resume_run_json(document["state"],
                                                        stringify_resume_decisions(decisions)))
        except (InvalidPausedState, InvalidResumeDecisions) as exc:
            raise InvalidPauseFile(f"pause file {args.pause_file!r}: {exc}") from None
        if outcome.paused is not None:
            return save_pause(outcome.paused, invocation, err)
        code = finish(outcome.result, agent, invocation, out, progress)
    try:
        os.unlink(args.pause_file)
    except OSError:
        pass
    return code
