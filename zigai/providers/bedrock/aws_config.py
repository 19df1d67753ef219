"""The AWS shared config and credentials files, read the way the AWS SDKs read them.

Job
    :func:`load_profiles` parses ``~/.aws/config`` (``AWS_CONFIG_FILE``) and
    ``~/.aws/credentials`` (``AWS_SHARED_CREDENTIALS_FILE``) into one mapping of profile name
    to settings, and :func:`profile_name` picks the active profile (explicit name, then
    ``AWS_PROFILE``, then ``AWS_DEFAULT_PROFILE``, then ``default``).

Invariants
    * INI rules are Python's ``configparser`` raw rules, as botocore uses them: option names
      are lowercased, ``#`` / ``;`` start comment lines only, a repeated section or option is
      an error, an indented block under an empty value is a nested mapping (``s3 =`` then
      ``  addressing_style = path``).
    * In the config file a profile is ``[profile NAME]`` (``NAME`` may be quoted) or
      ``[default]``; other sections (``[sso-session x]``, ``[services x]``) are not profiles.
      In the credentials file every section is a profile.  Credentials-file values override
      config-file values of the same profile.
    * A missing file is an empty file.  A file larger than :data:`MAX_FILE_BYTES` or one
      that does not parse raises :class:`AwsConfigError` naming the file, never its content.
"""

from __future__ import annotations

import configparser
import os
import shlex
from collections.abc import Mapping

from zigai.errors import ProviderError

__all__ = [
    "MAX_FILE_BYTES", "AwsConfigError", "ProfileValue", "Profiles", "config_paths", "load_files",
    "load_profiles", "profile_name",
]

#: Shared config and credentials files larger than this are refused.
MAX_FILE_BYTES = 1024 * 1024

ProfileValue = str | dict[str, str]


class AwsConfigError(ProviderError):
    """An AWS shared config or credentials file is too large or malformed; fix the file."""


def config_paths(env: Mapping[str, str]) -> tuple[str, str]:
    """The (config file, credentials file) paths ``env`` selects, ``~`` and ``$VAR`` expanded."""
    config = env.get("AWS_CONFIG_FILE") or "~/.aws/config"
    credentials = env.get("AWS_SHARED_CREDENTIALS_FILE") or "~/.aws/credentials"
    return (os.path.expanduser(os.path.expandvars(config)),
            os.path.expanduser(os.path.expandvars(credentials)))


def profile_name(env: Mapping[str, str], explicit: str | None = None) -> tuple[str, bool]:
    """The active profile and whether it was chosen (``False`` when it is the implicit
    ``default``, which may be absent without error)."""
    if explicit:
        return explicit, True
    for variable in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE"):
        if env.get(variable):
            return env[variable], True
    return "default", False


def _nested(value: str, path: str) -> dict[str, str]:
    parsed: dict[str, str] = {}
    for line in value.splitlines():
        line = line.strip()
        if not line:
            continue
        key, sep, inner = line.partition("=")
        if not sep:
            raise AwsConfigError(f"{path}: a nested setting line has no '='")
        parsed[key.strip()] = inner.strip()
    return parsed


def _parse(path: str) -> dict[str, dict[str, ProfileValue]]:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise AwsConfigError(f"{path}: cannot be read ({error.strerror})") from None
    if len(data) > MAX_FILE_BYTES:
        raise AwsConfigError(f"{path}: larger than {MAX_FILE_BYTES} bytes")
    parser = configparser.RawConfigParser()
    try:
        parser.read_string(data.decode("utf-8"), source=path)
    except (configparser.Error, UnicodeDecodeError) as error:
        kind = type(error).__name__
        raise AwsConfigError(f"{path}: not a valid AWS config file ({kind})") from None
    sections: dict[str, dict[str, ProfileValue]] = {}
    for section in parser.sections():
        values: dict[str, ProfileValue] = {}
        for option in parser.options(section):
            value = parser.get(section, option)
            values[option] = _nested(value, path) if value.startswith("\n") else value
        sections[section] = values
    return sections


def _config_profile(section: str) -> str | None:
    if section == "default":
        return section
    if not section.startswith("profile"):
        return None
    try:
        parts = shlex.split(section)
    except ValueError:
        return None
    return parts[1] if len(parts) == 2 else None


Profiles = dict[str, dict[str, ProfileValue]]


def load_files(config_path: str, credentials_path: str) -> tuple[Profiles, Profiles]:
    """The profiles of the config file and those of the credentials file, separately."""
    config: Profiles = {}
    for section, values in _parse(config_path).items():
        name = _config_profile(section)
        if name is not None:
            config[name] = values
    return config, _parse(credentials_path)


def load_profiles(config_path: str, credentials_path: str) -> Profiles:
    """Every profile of the two files, credentials-file values winning."""
    config, credentials = load_files(config_path, credentials_path)
    profiles = {name: dict(values) for name, values in config.items()}
    for name, values in credentials.items():
        profiles.setdefault(name, {}).update(values)
    return profiles
