"""CLI errors and the stable process exit codes they map to.

Exit codes are part of the command-line contract (documented in ``zigai --help`` and
``docs/errors.md``); they never change meaning:

====  ==============  ===========================================================
code  name            meaning
====  ==============  ===========================================================
0     ok              the run finished and printed its final answer
1     fault           any other failure: run limits, timeouts, model behaviour,
                      tool exceptions, unexpected errors
2     usage           operator input: bad arguments, model string, config, history,
                      schema, tools, agent spec or pause file
3     credentials     a credential (or a variable an agent spec needs) is missing from the
                      environment, or the provider rejected it (HTTP 401/403)
4     provider        the provider or the network failed (status, transport, decoding)
5     approval        the run paused for tool approval; a pause file was written
130   interrupted     Ctrl-C
====  ==============  ===========================================================

Invariant: :func:`exit_code_for` is the only place exceptions become exit codes.  Files the
operator names (config, history, schema, tools, pause) are read at the CLI boundary, where
their failures are re-raised as :class:`CliUsageError` subclasses, so a history or schema
error raised *during* a run is still a fault, not operator input.
"""

from __future__ import annotations

import enum

from zigai.errors import (
    CapabilityError,
    CliError,
    ConformanceError,
    ProviderError,
    ProviderRequestError,
    SecurityError,
    TransportError,
)

__all__ = [
    "ExitCode",
    "CliUsageError",
    "InvalidCliConfig",
    "InvalidPauseFile",
    "OutputFileNotWritten",
    "CassetteReplayError",
    "error_line",
    "exit_code_for",
]


class ExitCode(enum.IntEnum):
    """Stable exit statuses of the ``zigai`` command (see the module table)."""

    ok = 0
    fault = 1
    usage = 2
    credentials = 3
    provider = 4
    approval = 5
    interrupted = 130


class CliUsageError(CliError):
    """The operator's input is unusable (arguments, files, model string); exit code 2."""


class InvalidCliConfig(CliUsageError):
    """The configuration file is malformed, too large, or holds something it must not."""


class InvalidPauseFile(CliUsageError):
    """A pause file is malformed, tampered, of another version, or the decisions do not fit it."""


class OutputFileNotWritten(CliError):
    """A history or pause file could not be written after the run (disk full, I/O error);
    the path was checked before the run, so this is a fault (exit 1), not operator input."""


class CassetteReplayError(CliError):
    """The demo's replay server received a request its cassette did not expect."""


def error_line(error: BaseException) -> str:
    """The one stderr line for a failure: ``zigai: error: Name: message`` (newlines folded)."""
    message = " ".join(str(error).split())
    return f"zigai: error: {type(error).__name__}: {message}\n"


def exit_code_for(error: BaseException) -> ExitCode:
    """The exit code for an exception that ended a command."""
    from zigai.agent_spec.errors import AgentSpecError, MissingEnvironment
    from zigai.model import InvalidProfileOverride
    from zigai.models import InvalidModelString, MissingCredentials

    if isinstance(error, KeyboardInterrupt):
        return ExitCode.interrupted
    if isinstance(error, (MissingCredentials, MissingEnvironment)):
        return ExitCode.credentials
    if isinstance(error, (AgentSpecError, CapabilityError)):
        return ExitCode.usage
    if isinstance(error, ProviderRequestError):
        from zigai.provider import ProviderAuthError

        return ExitCode.credentials if isinstance(error, ProviderAuthError) else ExitCode.provider
    if isinstance(error, (ProviderError, TransportError, SecurityError)):
        return ExitCode.provider
    if isinstance(error, (CliUsageError, InvalidModelString, InvalidProfileOverride, ConformanceError)):
        return ExitCode.usage
    return ExitCode.fault
