"""A loopback Bedrock runtime that checks AWS SigV4 with botocore's own signer.

``Verifier(base_url, access_key_id, secret, token, reply)`` is a LoopbackServer handler: it
rebuilds the received request (method, URL, the headers named in ``SignedHeaders``, body) as a
botocore ``AWSRequest``, signs it with ``SigV4Auth`` at the received ``X-Amz-Date`` and answers
403 unless the received ``Authorization`` equals botocore's byte for byte (and the session
token arrived when one is expected); otherwise it answers ``reply(received)``.  ``verified``
counts the requests that passed, ``failures`` says why the others did not.  Set ``base_url``
once the server knows its port.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass, field
from unittest import mock

from support.loopback import Received, Reply


@dataclass
class Verifier:
    base_url: str
    access_key_id: str
    secret_access_key: str
    session_token: str | None
    reply: Callable[[Received], Reply]
    region: str = "us-east-1"
    verified: int = 0
    failures: list[str] = field(default_factory=list)

    def expected(self, received: Received) -> str:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        authorization = received.headers.get("authorization", "")
        signed_names = authorization.partition("SignedHeaders=")[2].partition(",")[0].split(";")
        headers = {name: received.headers[name] for name in signed_names
                   if name in received.headers and name not in ("x-amz-date",
                                                                "x-amz-security-token")}
        request = AWSRequest(method=received.method, url=self.base_url + received.target,
                             headers=headers, data=received.body)
        stamp = datetime.datetime.strptime(received.headers.get("x-amz-date", ""),
                                           "%Y%m%dT%H%M%SZ")
        signer = SigV4Auth(Credentials(self.access_key_id, self.secret_access_key,
                                       self.session_token), "bedrock", self.region)
        with mock.patch("botocore.auth.get_current_datetime", return_value=stamp):
            signer.add_auth(request)
        return str(request.headers["Authorization"])

    def __call__(self, received: Received) -> Reply:
        try:
            expected = self.expected(received)
        except (KeyError, ValueError) as error:
            self.failures.append(f"unsigned: {error}")
            return Reply.of_json({"message": "missing authentication"}, 403)
        if received.headers.get("authorization") != expected:
            self.failures.append("signature mismatch")
            return Reply.of_json({"message": "The request signature we calculated does not "
                                  "match the signature you provided."}, 403)
        if received.headers.get("x-amz-security-token") != self.session_token:
            self.failures.append("session token")
            return Reply.of_json({"message": "The security token included is invalid."}, 403)
        self.verified += 1
        return self.reply(received)
