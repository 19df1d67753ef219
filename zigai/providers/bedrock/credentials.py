"""AWS credentials for SigV4: the values, the SDK resolution chain and refresh before expiry.

Job
    :class:`AwsCredentialChain` finds credentials in the order the AWS SDKs document and
    keeps them fresh:

    1. explicit :class:`AwsCredentials` passed by the application;
    2. ``AWS_ACCESS_KEY_ID`` + ``AWS_SECRET_ACCESS_KEY`` (+ ``AWS_SESSION_TOKEN``);
    3. the active profile (:func:`~.aws_config.profile_name`) of the shared files: a profile
       that assumes a role (``role_arn``), uses web identity (``web_identity_token_file`` or
       the ``AWS_ROLE_ARN`` + ``AWS_WEB_IDENTITY_TOKEN_FILE`` variables) or IAM Identity
       Center (``sso_session`` / ``sso_start_url``) raises
       :class:`UnsupportedAwsCredentialSource`; otherwise static keys from the credentials
       file, then ``credential_process`` (:mod:`.aws_process`), then static keys from the
       config file.  A profile that was chosen by name but exists in neither file raises
       :class:`AwsProfileNotFound`;
    4. container credentials (``AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`` /
       ``AWS_CONTAINER_CREDENTIALS_FULL_URI``) and EC2 instance metadata (IMDSv2), see
       :mod:`.aws_metadata`.

    Nothing found raises :class:`NoAwsCredentials`.

Invariants
    * Credentials with an expiry are fetched again once less than :data:`REFRESH_WINDOW_S`
      remain, under a lock, so concurrent requests never sign with expired keys.
    * The secret access key and session token never appear in ``repr``, in error messages or
      in log records; credentials refuse to be pickled.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from zigai.providers.bedrock import aws_config, aws_metadata, aws_process
from zigai.providers.bedrock.aws_values import (
    AwsCredentials,
    AwsCredentialsError,
    AwsProfileNotFound,
    IncompleteAwsCredentials,
    NoAwsCredentials,
    UnsupportedAwsCredentialSource,
    parse_expiry,
)

__all__ = [
    "REFRESH_WINDOW_S", "AwsCredentialChain", "AwsCredentials", "AwsCredentialsError",
    "AwsProfileNotFound", "IncompleteAwsCredentials", "NoAwsCredentials",
    "UnsupportedAwsCredentialSource", "parse_expiry",
]

#: Credentials closer than this to their expiry are fetched again before the next request.
REFRESH_WINDOW_S = 10 * 60


def _pair(key_id: Any, secret: Any, token: Any, source: str,
          expiry: datetime | None = None) -> AwsCredentials | None:
    if not key_id and not secret:
        return None
    if not key_id or not secret:
        missing = "the secret access key" if key_id else "the access key id"
        raise IncompleteAwsCredentials(f"{source} has an incomplete key pair: {missing} is missing")
    if not isinstance(key_id, str) or not isinstance(secret, str) or (
        token is not None and not isinstance(token, str)
    ):
        raise IncompleteAwsCredentials(f"{source}: credential values must be strings")
    return AwsCredentials(key_id, secret, token or None, expiry, source)


def _from_env(env: Mapping[str, str]) -> AwsCredentials | None:
    return _pair(env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY"),
                 env.get("AWS_SESSION_TOKEN") or env.get("AWS_SECURITY_TOKEN"), "environment")


class AwsCredentialChain:
    """Resolves and caches AWS credentials; :meth:`get` is what a signer calls per request.

    ``env`` defaults to ``os.environ`` (read at every resolution), ``profile`` overrides
    ``AWS_PROFILE``, ``metadata_timeout_s`` bounds each container / instance metadata call and
    ``process_timeout_s`` a ``credential_process``.  ``clock`` returns the current UTC time.
    """

    def __init__(
        self,
        credentials: AwsCredentials | None = None,
        *,
        profile: str | None = None,
        env: Mapping[str, str] | None = None,
        metadata_timeout_s: float = 2.0,
        process_timeout_s: float = 60.0,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        if credentials is not None and not isinstance(credentials, AwsCredentials):
            raise TypeError("credentials must be AwsCredentials")
        self._explicit = credentials
        self._profile = profile
        self._env = env
        self._metadata_timeout_s = metadata_timeout_s
        self._process_timeout_s = process_timeout_s
        self._clock = clock or (lambda: datetime.now(UTC))
        self._lock = threading.Lock()
        self._current: AwsCredentials | None = None

    def __repr__(self) -> str:
        source = None if self._current is None else self._current.source
        return f"AwsCredentialChain(profile={self._profile!r}, source={source!r})"

    def __reduce__(self) -> Any:
        raise TypeError("an AwsCredentialChain holds secrets and cannot be pickled")

    @property
    def env(self) -> Mapping[str, str]:
        return os.environ if self._env is None else self._env

    def profile_region(self) -> str | None:
        """The ``region`` of the active profile in the config file, if any."""
        name, _ = aws_config.profile_name(self.env, self._profile)
        region = aws_config.load_profiles(*aws_config.config_paths(self.env)).get(name, {}).get(
            "region")
        return region if isinstance(region, str) and region else None

    def _stale(self, credentials: AwsCredentials) -> bool:
        if credentials.expiry is None:
            return False
        left = (credentials.expiry - self._clock()).total_seconds()
        return left < REFRESH_WINDOW_S

    def get(self) -> AwsCredentials:
        """Current credentials, resolved on first use and fetched again near expiry."""
        with self._lock:
            current = self._current
            if current is None or self._stale(current):
                current = self.resolve()
                self._current = current
            return current

    def resolve(self) -> AwsCredentials:
        """Walk the chain once (no cache); raises the named errors of this module."""
        if self._explicit is not None:
            return self._explicit
        env = self.env
        found = _from_env(env)
        if found is not None:
            return found
        found = self._from_profile(env)
        if found is not None:
            return found
        found = aws_metadata.container_credentials(env, self._metadata_timeout_s)
        if found is None:
            found = aws_metadata.instance_credentials(env, self._metadata_timeout_s)
        if found is None:
            raise NoAwsCredentials(
                "no AWS credentials found: pass credentials, set AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY, configure a profile in ~/.aws/credentials or "
                "~/.aws/config, or run where container or instance credentials exist"
            )
        return found

    def _from_profile(self, env: Mapping[str, str]) -> AwsCredentials | None:
        name, chosen = aws_config.profile_name(env, self._profile)
        config, shared = aws_config.load_files(*aws_config.config_paths(env))
        in_config, in_shared = config.get(name, {}), shared.get(name, {})
        profile = {**in_config, **in_shared} if name in config or name in shared else None
        if profile is None:
            if chosen:
                raise AwsProfileNotFound(
                    f"AWS profile {name!r} is in neither the shared config nor the credentials "
                    "file; check AWS_PROFILE, AWS_CONFIG_FILE and AWS_SHARED_CREDENTIALS_FILE"
                )
            profile = {}
        source = f"profile {name!r}"
        if profile.get("role_arn"):
            raise UnsupportedAwsCredentialSource(
                f"{source} assumes a role (role_arn); zigai does not call STS: export the "
                "role's temporary keys as AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / "
                "AWS_SESSION_TOKEN or use credential_process"
            )
        if profile.get("web_identity_token_file") or (
            env.get("AWS_ROLE_ARN") and env.get("AWS_WEB_IDENTITY_TOKEN_FILE")
        ):
            raise UnsupportedAwsCredentialSource(
                "web identity federation (AWS_WEB_IDENTITY_TOKEN_FILE) needs STS, which zigai "
                "does not call: use container credentials (EKS Pod Identity) or "
                "credential_process"
            )
        if profile.get("sso_session") or profile.get("sso_start_url"):
            raise UnsupportedAwsCredentialSource(
                f"{source} uses IAM Identity Center (SSO), which zigai does not implement: run "
                "'aws configure export-credentials --format env' or use credential_process"
            )
        static = _static(in_shared, source)
        if static is not None:
            return static
        command = profile.get("credential_process")
        if command:
            if not isinstance(command, str):
                raise AwsCredentialsError(f"{source}: credential_process must be one line")
            return aws_process.run(command, source, self._process_timeout_s)
        return _static(in_config, source)


def _static(profile: Mapping[str, Any], source: str) -> AwsCredentials | None:
    return _pair(profile.get("aws_access_key_id"), profile.get("aws_secret_access_key"),
                 profile.get("aws_session_token") or profile.get("aws_security_token"), source)
