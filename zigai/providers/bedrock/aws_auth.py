"""SigV4 authentication of Bedrock requests and the region they are signed for.

Job
    :class:`SigV4Signer` holds an :class:`~.credentials.AwsCredentialChain`, the signing
    region and the signing name (``bedrock`` for the runtime and the control plane alike) and
    turns a finished :class:`~zigai.transport.TransportRequest` into the signed one.
    :func:`resolve_region` picks the region the SDKs would: the explicit argument, the region
    inside a Bedrock ARN model id (``arn:aws:bedrock:us-west-2:...``), ``AWS_REGION``,
    ``AWS_DEFAULT_REGION``, then the active profile's ``region`` in the config file.

Invariants
    * Signing happens last, after every header and the body are final, so what was signed is
      exactly what is sent; credentials are fetched (and refreshed near expiry) per request.
    * A region that resolves to nothing raises :class:`MissingAwsRegion`; every region is
      checked as one DNS label before it reaches a URL.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime

from zigai.providers.bedrock import sigv4
from zigai.providers.bedrock.credentials import AwsCredentialChain, AwsCredentials
from zigai.providers.bedrock.mantle import InvalidBedrockRegion, check_region
from zigai.transport.base import TransportRequest

__all__ = ["SIGNING_NAME", "MissingAwsRegion", "SigV4Signer", "region_from_model",
           "resolve_region"]

SIGNING_NAME = "bedrock"
_ARN = re.compile(r"^arn:aws(?:-[a-z]+)*:bedrock:([a-z0-9-]+):")


class MissingAwsRegion(InvalidBedrockRegion):
    """No region was given and none could be found in the model id, environment or profile."""


def region_from_model(model_name: str) -> str | None:
    """The region inside a Bedrock ARN model id, or None for plain model ids."""
    found = _ARN.match(model_name) if isinstance(model_name, str) else None
    return None if found is None else check_region(found.group(1))


def resolve_region(model_name: str | None = None, region: str | None = None, *,
                   env: Mapping[str, str] | None = None,
                   chain: AwsCredentialChain | None = None) -> str:
    """The signing region, in the SDK order (see the module doc)."""
    if region is not None:
        return check_region(region)
    if model_name is not None:
        found = region_from_model(model_name)
        if found is not None:
            return found
    chain = chain if chain is not None else AwsCredentialChain(env=env)
    variables = chain.env if env is None else env
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        if variables.get(name):
            return check_region(variables[name])
    profile_region = chain.profile_region()
    if profile_region is not None:
        return check_region(profile_region)
    raise MissingAwsRegion(
        "no AWS region: pass region, use an ARN model id, set AWS_REGION or AWS_DEFAULT_REGION, "
        "or put region = ... in the profile of ~/.aws/config"
    )


class SigV4Signer:
    """Signs requests for one region with the chain's current credentials."""

    __slots__ = ("chain", "region", "service")

    def __init__(self, chain: AwsCredentialChain, region: str,
                 service: str = SIGNING_NAME) -> None:
        self.chain = chain
        self.region = check_region(region)
        self.service = service

    def __repr__(self) -> str:
        return f"SigV4Signer(region={self.region!r}, service={self.service!r}, chain={self.chain!r})"

    def sign(self, request: TransportRequest,
             now: datetime | None = None) -> tuple[TransportRequest, AwsCredentials]:
        """The signed request and the credentials that signed it (for redaction)."""
        credentials = self.chain.get()
        signature = sigv4.sign(
            request.method, request.url, request.headers, request.body,
            access_key_id=credentials.access_key_id,
            secret_access_key=credentials.secret_access_key,
            session_token=credentials.session_token, region=self.region, service=self.service,
            now=now if now is not None else datetime.now(UTC),
        )
        return replace(request, headers=request.headers + signature.headers), credentials
