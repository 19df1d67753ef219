"""``credential_process``: AWS credentials from a command the profile names.

Job
    :func:`run` splits the profile's ``credential_process`` line like a POSIX shell would
    (no shell runs), starts the program, and reads its standard output as the documented JSON
    document ``{"Version": 1, "AccessKeyId", "SecretAccessKey", "SessionToken",
    "Expiration"}``.

Invariants
    * The child is bounded: ``timeout_s`` of wall time (then killed) and
      :data:`MAX_OUTPUT_BYTES` of output; stdin is closed.
    * Errors (:class:`CredentialProcessFailed`) name the profile, the program and the exit
      status; they carry at most a short, secret-free tail of stderr and never stdout, which
      holds the secret.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import tempfile
from typing import IO

from zigai.providers.bedrock.aws_values import AwsCredentials, AwsCredentialsError, parse_expiry

__all__ = ["MAX_OUTPUT_BYTES", "CredentialProcessFailed", "run"]

MAX_OUTPUT_BYTES = 64 * 1024
_STDERR_CHARS = 200


class CredentialProcessFailed(AwsCredentialsError):
    """The profile's ``credential_process`` failed, timed out or printed no valid JSON."""


def run(command: str, source: str, timeout_s: float) -> AwsCredentials:
    """Run ``command`` and return the credentials it prints."""
    try:
        argv = shlex.split(command)
    except ValueError:
        raise CredentialProcessFailed(f"{source}: credential_process is not a valid command "
                                      "line (unbalanced quotes)") from None
    if not argv:
        raise CredentialProcessFailed(f"{source}: credential_process is empty")
    program = argv[0]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        returncode = _run(argv, out, err, source, program, timeout_s)
        out.seek(0)
        stdout = out.read(MAX_OUTPUT_BYTES + 1)
        err.seek(max(0, err.seek(0, 2) - _STDERR_CHARS))
        stderr = err.read(_STDERR_CHARS)
    if returncode != 0:
        tail = stderr.decode("utf-8", "replace").strip()
        raise CredentialProcessFailed(
            f"{source}: credential_process {program!r} exited with status {returncode}"
            + (f": {tail}" if tail else ""))
    if len(stdout) > MAX_OUTPUT_BYTES:
        raise CredentialProcessFailed(
            f"{source}: credential_process {program!r} printed more than {MAX_OUTPUT_BYTES} bytes")
    return _parse(stdout, source, program)


def _run(argv: list[str], out: IO[bytes], err: IO[bytes], source: str, program: str,
         timeout_s: float) -> int:
    # output goes to unnamed files, so a chatty program cannot grow our memory
    try:
        return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                              timeout=timeout_s, check=False).returncode
    except subprocess.TimeoutExpired:
        raise CredentialProcessFailed(
            f"{source}: credential_process {program!r} ran longer than {timeout_s} s") from None
    except OSError as error:
        raise CredentialProcessFailed(
            f"{source}: credential_process {program!r} cannot start ({error.strerror})"
        ) from None


def _parse(stdout: bytes, source: str, program: str) -> AwsCredentials:
    try:
        value = json.loads(stdout.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        value = None
    if not isinstance(value, dict):
        raise CredentialProcessFailed(
            f"{source}: credential_process {program!r} printed no JSON object")
    if value.get("Version") != 1:
        raise CredentialProcessFailed(
            f"{source}: credential_process {program!r} printed Version "
            f"{value.get('Version')!r}; only Version 1 is defined")
    key_id, secret = value.get("AccessKeyId"), value.get("SecretAccessKey")
    token = value.get("SessionToken")
    if not (isinstance(key_id, str) and key_id and isinstance(secret, str) and secret) or (
        token is not None and not isinstance(token, str)
    ):
        raise CredentialProcessFailed(
            f"{source}: credential_process {program!r} printed no AccessKeyId / SecretAccessKey")
    expiry = value.get("Expiration")
    return AwsCredentials(key_id, secret, token or None,
                          None if expiry is None else parse_expiry(expiry, source), source)
