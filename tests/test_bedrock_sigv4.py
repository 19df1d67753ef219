"""Bedrock SigV4: zigai's signer equals botocore's ``SigV4Auth`` byte for byte across a table,
and Converse / ConverseStream succeed against a loopback Bedrock that verifies every signature
with botocore, with environment, profile and container credentials."""

from __future__ import annotations

import datetime
import json
import stat
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from support.loopback import LoopbackServer, Received, Reply
from support.sigv4_server import Verifier

from zigai import Agent
from zigai.errors import ProviderRequestError
from zigai.messages import RequestMessage
from zigai.model import ModelRequest
from zigai.providers import bedrock as B
from zigai.providers.bedrock import sigv4
from zigai.providers.bedrock.aws_auth import MissingAwsRegion, region_from_model, resolve_region
from zigai.providers.bedrock.credentials import AwsCredentialChain, AwsCredentials
from zigai.providers.eventstream import encode_message
from zigai.providers.http import InvalidProviderConfiguration
from zigai.security import UrlPolicy
from zigai.transport import HttpTransport

botocore = pytest.importorskip(
    "botocore", reason="the SigV4 peer tests need botocore: pip install -e '.[dev]'")
from botocore.auth import SigV4Auth  # noqa: E402
from botocore.awsrequest import AWSRequest  # noqa: E402
from botocore.credentials import Credentials  # noqa: E402

KEY_ID = "AKIDEXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
TOKEN = "IQoJb3JpZ2luX2VjEXAMPLETOKEN//////////wEaCXVzLWVhc3QtMSJHMEUCIQ=="
NOW = datetime.datetime(2026, 12, 5, 6, 7, 8)
RUNTIME = "https://bedrock-runtime.us-east-1.amazonaws.com"
CONTROL = "https://bedrock.us-east-1.amazonaws.com"
ARN = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-6"
JSON_HEADERS = (("Content-Type", "application/json"), ("Accept", "application/json"))


class _Recording(SigV4Auth):
    """botocore's signer, keeping the intermediate strings it computed."""

    def canonical_request(self, request: Any) -> str:
        self.recorded_canonical = super().canonical_request(request)
        return self.recorded_canonical

    def string_to_sign(self, request: Any, canonical_request: str) -> str:
        self.recorded_sts = super().string_to_sign(request, canonical_request)
        return self.recorded_sts


def _botocore(method: str, url: str, headers: tuple[tuple[str, str], ...], body: bytes | None,
              token: str | None, params: dict[str, str] | None, region: str) -> tuple[_Recording, Any]:
    request = AWSRequest(method=method, url=url, headers=dict(headers), data=body,
                         params=params or {})
    signer = _Recording(Credentials(KEY_ID, SECRET, token), "bedrock", region)
    with mock.patch("botocore.auth.get_current_datetime", return_value=NOW):
        signer.add_auth(request)
    return signer, request


CASES = [
    pytest.param("POST", f"{RUNTIME}/model/us.anthropic.claude-sonnet-4-6/converse", JSON_HEADERS,
                 b'{"messages":[]}', None, None, id="converse"),
    pytest.param("POST", f"{RUNTIME}/model/us.anthropic.claude-sonnet-4-6/converse", JSON_HEADERS,
                 b'{"messages":[]}', TOKEN, None, id="session-token"),
    pytest.param("POST", f"{RUNTIME}/model/us.anthropic.claude-sonnet-4-6/converse-stream",
                 (("Content-Type", "application/json"), ("Accept", "application/vnd.amazon.eventstream")),
                 b'{"messages":[{"role":"user","content":[{"text":"hi"}]}]}', TOKEN, None,
                 id="event-stream-endpoint"),
    pytest.param("POST", f"{RUNTIME}/model/{B.model_path(ARN, stream=False)[6:]}", JSON_HEADERS,
                 b"{}", None, None, id="arn-encoded-slash"),
    pytest.param("GET", f"{CONTROL}/foundation-models", (), None, None, None, id="empty-body-none"),
    pytest.param("GET", f"{CONTROL}/foundation-models", (), b"", TOKEN, None, id="empty-body-bytes"),
    pytest.param("GET", f"{CONTROL}/foundation-models", (), None, None,
                 {"byProvider": "Anthropic", "byOutputModality": "TEXT"}, id="query"),
    pytest.param("GET", f"{CONTROL}/foundation-models", (), None, None,
                 {"z": "a/b c", "a b": "é~!*", "m": ""}, id="query-needs-encoding"),
    pytest.param("GET", f"{CONTROL}/models/ünïcødé/日本", (), None, None, None, id="unicode-path"),
    pytest.param("GET", f"{CONTROL}/models/%C3%BCn%C3%AF", (), None, None, None,
                 id="percent-encoded-unicode-path"),
    pytest.param("GET", f"{CONTROL}/a/./b/../c//d/", (), None, None, None, id="dot-segments"),
    pytest.param("PUT", f"{CONTROL}", (), b"x", None, None, id="empty-path"),
    pytest.param("GET", f"{CONTROL}/../../a/..", (), None, None, None, id="dot-dot-above-root"),
    pytest.param("GET", "http://[::1]:8080/model/m/converse", (), None, TOKEN, None, id="ipv6-host"),
    pytest.param("POST", "https://bedrock-runtime.us-east-1.amazonaws.com:8443/model/m/converse",
                 (("User-Agent", "zigai"), ("X-Custom", "  a   b  "), ("Content-Type", "application/json")),
                 b"\x00\xff binary", TOKEN, None, id="port-unsigned-header-whitespace"),
    pytest.param("POST", "http://127.0.0.1:9000/model/m/converse", JSON_HEADERS, b"{}", None,
                 None, id="plain-http-loopback"),
]


@pytest.mark.parametrize(("method", "url", "headers", "body", "token", "params"), CASES)
def test_signature_equals_botocore_byte_for_byte(
    method: str, url: str, headers: tuple[tuple[str, str], ...], body: bytes | None,
    token: str | None, params: dict[str, str] | None,
) -> None:
    expected, request = _botocore(method, url, headers, body, token, params, "us-east-1")
    target = url
    if params:
        from urllib.parse import quote

        target += "?" + "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in params.items())
    ours = sigv4.sign(method, target, headers, body, access_key_id=KEY_ID, secret_access_key=SECRET,
                      session_token=token, region="us-east-1", service="bedrock", now=NOW)
    assert ours.canonical_request == expected.recorded_canonical
    assert ours.string_to_sign == expected.recorded_sts
    assert ours.authorization == request.headers["Authorization"]
    added = dict(ours.headers)
    assert added["X-Amz-Date"] == request.headers["X-Amz-Date"] == "20261205T060708Z"
    assert added.get("X-Amz-Security-Token") == request.headers.get("X-Amz-Security-Token")


def test_aware_timestamps_sign_in_utc_and_other_regions_scope_the_key() -> None:
    aware = NOW.replace(tzinfo=datetime.UTC).astimezone(datetime.timezone(datetime.timedelta(hours=5)))
    expected, request = _botocore("POST", f"{RUNTIME}/x", JSON_HEADERS, b"{}", None, None, "eu-west-3")
    ours = sigv4.sign("post", f"{RUNTIME}/x", JSON_HEADERS, b"{}", access_key_id=KEY_ID,
                      secret_access_key=SECRET, session_token=None, region="eu-west-3",
                      service="bedrock", now=aware)
    assert ours.authorization == request.headers["Authorization"]
    assert "/eu-west-3/bedrock/aws4_request" in ours.authorization


# -- region --------------------------------------------------------------------------------


def test_region_order_explicit_arn_env_profile(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text("[profile dev]\nregion = ap-south-1\n")
    env = {"AWS_CONFIG_FILE": str(config), "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
           "AWS_PROFILE": "dev"}
    assert resolve_region(ARN, "eu-west-1", env=env) == "eu-west-1"
    assert resolve_region(ARN, env={**env, "AWS_REGION": "eu-west-2"}) == "us-east-1"
    assert resolve_region("us.anthropic.claude-sonnet-4-6", env={**env, "AWS_REGION": "eu-west-2",
                                                             "AWS_DEFAULT_REGION": "x-y-1"}) == "eu-west-2"
    assert resolve_region(None, env={**env, "AWS_DEFAULT_REGION": "ca-central-1"}) == "ca-central-1"
    assert resolve_region(None, env=env) == "ap-south-1"
    assert region_from_model("arn:aws-us-gov:bedrock:us-gov-west-1:1:foundation-model/x") == "us-gov-west-1"
    assert region_from_model("anthropic.claude") is None
    with pytest.raises(MissingAwsRegion, match="AWS_REGION"):
        resolve_region(None, env={**env, "AWS_PROFILE": ""})
    with pytest.raises(B.InvalidBedrockRegion):
        resolve_region(None, env={"AWS_REGION": "evil.com/x"})


def test_provider_without_a_key_signs_and_needs_a_region() -> None:
    provider = B.Provider(region="eu-west-1", credentials=AwsCredentials(KEY_ID, SECRET))
    assert provider.api_root == "https://bedrock-runtime.eu-west-1.amazonaws.com/"
    assert provider.signer is not None and provider.signer.region == "eu-west-1"
    assert SECRET not in repr(provider) and SECRET not in repr(provider.signer)
    with pytest.raises(MissingAwsRegion):
        B.Provider(env={"AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent"})
    with pytest.raises(InvalidProviderConfiguration, match="not both"):
        B.Provider("key", "us-east-1", credentials=AwsCredentials(KEY_ID, SECRET))
    # the bearer-key route is unchanged
    keyed = B.Provider("key", "us-east-1")
    assert keyed.signer is None and keyed.auth.kind == "bearer"


# -- a loopback Bedrock that verifies SigV4 with botocore -----------------------------------


def _event(kind: str, payload: dict[str, Any]) -> bytes:
    headers = {":event-type": kind, ":content-type": "application/json", ":message-type": "event"}
    return encode_message(headers, json.dumps(payload).encode())


STREAM = (
    _event("messageStart", {"role": "assistant"}),
    _event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "signed "}}),
    _event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "stream"}}),
    _event("contentBlockStop", {"contentBlockIndex": 0}),
    _event("messageStop", {"stopReason": "end_turn"}),
    _event("metadata", {"usage": {"inputTokens": 3, "outputTokens": 2}}),
)


def _bedrock_reply(received: Received) -> Reply:
    if received.target.endswith("/converse-stream"):
        return Reply(200, (("Content-Type", "application/vnd.amazon.eventstream"),), pieces=STREAM)
    return Reply.of_json({"output": {"message": {"role": "assistant", "content": [{"text": "signed"}]}},
                          "stopReason": "end_turn", "usage": {"inputTokens": 3, "outputTokens": 1}})


def _files(tmp_path: Path, credentials: str = "", config: str = "") -> dict[str, str]:
    (tmp_path / "credentials").write_text(credentials)
    (tmp_path / "config").write_text(config)
    return {"AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "credentials"),
            "AWS_CONFIG_FILE": str(tmp_path / "config"), "AWS_EC2_METADATA_DISABLED": "true"}


def _run_both(base_url: str, env: dict[str, str], verifier: Verifier) -> None:
    local = UrlPolicy.local_development()
    with HttpTransport(url_policy=local, default_timeout_s=10) as transport:
        provider = B.Provider(region="us-east-1", base_url=base_url, env=env, transport=transport,
                              url_policy=local)
        agent = Agent(B.Client("us.anthropic.claude-sonnet-4-6", provider))
        with agent.run("hello é") as run:
            assert run.output == "signed"
        with agent.run_stream("hello again") as streamed:
            list(streamed)
            assert streamed.result().output == "signed stream"
    assert verifier.failures == [] and verifier.verified == 2


def _serve(token: str | None) -> tuple[LoopbackServer, Verifier]:
    verifier = Verifier("", KEY_ID, SECRET, token, _bedrock_reply)
    return LoopbackServer(verifier), verifier


def test_converse_and_stream_verify_with_environment_credentials(tmp_path: Path) -> None:
    server, verifier = _serve(TOKEN)
    with server:
        verifier.base_url = server.url
        env = {**_files(tmp_path), "AWS_ACCESS_KEY_ID": KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET,
               "AWS_SESSION_TOKEN": TOKEN}
        _run_both(server.url, env, verifier)


def test_converse_and_stream_verify_with_profile_credentials(tmp_path: Path) -> None:
    server, verifier = _serve(None)
    with server:
        verifier.base_url = server.url
        env = {**_files(tmp_path, f"[work]\naws_access_key_id = {KEY_ID}\n"
                                  f"aws_secret_access_key = {SECRET}\n",
                        "[profile work]\nregion = us-east-1\n"), "AWS_PROFILE": "work"}
        _run_both(server.url, env, verifier)


def test_converse_and_stream_verify_with_credential_process(tmp_path: Path) -> None:
    script = tmp_path / "creds.py"
    document = {"Version": 1, "AccessKeyId": KEY_ID, "SecretAccessKey": SECRET, "SessionToken": TOKEN}
    script.write_text(f"import json\nprint(json.dumps({document!r}))\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    import sys

    server, verifier = _serve(TOKEN)
    with server:
        verifier.base_url = server.url
        env = _files(tmp_path, config=f"[default]\ncredential_process = {sys.executable} {script}\n")
        _run_both(server.url, env, verifier)


def test_converse_and_stream_verify_with_container_credentials(tmp_path: Path) -> None:
    def container(received: Received) -> Reply:
        if received.headers.get("authorization") != "container-auth-token":
            return Reply.of_json({"message": "no"}, 401)
        return Reply.of_json({"AccessKeyId": KEY_ID, "SecretAccessKey": SECRET, "Token": TOKEN,
                              "Expiration": "2999-01-01T00:00:00Z"})

    token_file = tmp_path / "token"
    token_file.write_text("container-auth-token\n")
    server, verifier = _serve(TOKEN)
    with server, LoopbackServer(container) as metadata:
        verifier.base_url = server.url
        env = {**_files(tmp_path), "AWS_CONTAINER_CREDENTIALS_FULL_URI": metadata.url + "/v2/creds",
               "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": str(token_file)}
        _run_both(server.url, env, verifier)
        assert [r.target for r in metadata.requests] == ["/v2/creds"]  # cached across requests


def test_a_wrong_secret_is_refused_by_the_verifier(tmp_path: Path) -> None:
    server, verifier = _serve(None)
    local = UrlPolicy.local_development()
    with server, HttpTransport(url_policy=local, default_timeout_s=10) as transport:
        verifier.base_url = server.url
        provider = B.Provider(region="us-east-1", base_url=server.url, transport=transport,
                              url_policy=local, credentials=AwsCredentials(KEY_ID, SECRET + "x"))
        with pytest.raises(ProviderRequestError) as failed:
            B.Client("us.anthropic.claude-sonnet-4-6", provider).request(
                ModelRequest(messages=(RequestMessage.user("x"),)))
    assert failed.value.status == 403 and verifier.failures == ["signature mismatch"]


def test_credentials_are_fetched_again_before_they_expire(tmp_path: Path) -> None:
    issued: list[str] = []
    clock = [datetime.datetime(2026, 12, 5, 6, 0, tzinfo=datetime.UTC)]
    expires = clock[0] + datetime.timedelta(minutes=11)  # every issue expires then

    def container(received: Received) -> Reply:
        issued.append(f"{KEY_ID}{len(issued)}")
        return Reply.of_json({"AccessKeyId": issued[-1], "SecretAccessKey": SECRET, "Token": TOKEN,
                              "Expiration": expires.isoformat()})

    with LoopbackServer(container) as metadata:
        chain = AwsCredentialChain(env={**_files(tmp_path),
                                        "AWS_CONTAINER_CREDENTIALS_FULL_URI": metadata.url + "/c"},
                                   clock=lambda: clock[0])
        first = chain.get()
        clock[0] += datetime.timedelta(seconds=60)  # exactly 10 min left: still fresh
        assert chain.get() is first
        clock[0] += datetime.timedelta(seconds=1)  # 9 min 59 s left: inside the refresh window
        second = chain.get()
    assert (first.access_key_id, second.access_key_id) == (f"{KEY_ID}0", f"{KEY_ID}1")
    assert second.expiry is not None and second.source == "container credentials"


SUMMARIES = {"modelSummaries": [
    {"modelArn": "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-sonnet-4-6",
     "modelId": "anthropic.claude-sonnet-4-6", "modelName": "Claude Sonnet 4.6",
     "providerName": "Anthropic"},
    {"modelId": "amazon.nova-pro-v1:0", "providerName": "Amazon"},
]}


def test_model_listing_is_signed_on_the_control_plane(tmp_path: Path) -> None:
    verifier = Verifier("", KEY_ID, SECRET, TOKEN, lambda received: Reply.of_json(SUMMARIES))
    local = UrlPolicy.local_development()
    with LoopbackServer(verifier) as server, HttpTransport(url_policy=local, default_timeout_s=10) as transport:
        verifier.base_url = server.url
        env = {**_files(tmp_path), "AWS_ACCESS_KEY_ID": KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET,
               "AWS_SESSION_TOKEN": TOKEN, "AWS_REGION": "us-east-1"}
        provider = B.Provider(base_url=server.url + "/runtime", discovery_base_url=server.url,
                              env=env, transport=transport, url_policy=local)
        with provider.list_models(by_provider="Anthropic", by_output_modality="TEXT") as models:
            listed = [(m.id, m.display_name) for m in models]
        assert B.Provider(base_url=server.url, env=env, url_policy=local).signer is not None
    assert listed == [("anthropic.claude-sonnet-4-6", "Claude Sonnet 4.6"), ("amazon.nova-pro-v1:0", None)]
    assert server.requests[0].target == "/foundation-models?byProvider=Anthropic&byOutputModality=TEXT"
    assert verifier.verified == 1 and verifier.failures == []


def test_model_listing_roots_and_shapes() -> None:
    from support.mock_transport import MockResponse, MockTransport

    from zigai.provider import UnsupportedProviderOperation
    from zigai.provider.discovery import InvalidModelListing

    bodies = [SUMMARIES, {"models": []}, {"modelSummaries": [{"modelName": "no id"}]}]
    transport = MockTransport(lambda request: MockResponse.of_json(bodies.pop(0)))
    keyed = B.Provider("bedrock-key", "eu-west-1", transport)
    with keyed.list_models() as models:
        assert len(list(models)) == 2
    sent = transport.requests[0]
    assert sent.url == "https://bedrock.eu-west-1.amazonaws.com/foundation-models"
    assert dict(sent.headers)["Authorization"] == "Bearer bedrock-key"
    for _ in range(2):
        with pytest.raises(InvalidModelListing):
            keyed.list_models()
    with pytest.raises(UnsupportedProviderOperation, match="discovery_base_url"):
        B.Provider("k", base_url="https://vpce.example.com").list_models()
    signed = B.Provider(region="us-west-2", credentials=AwsCredentials(KEY_ID, SECRET), transport=MockTransport(
        lambda request: MockResponse.of_json(SUMMARIES)))
    with signed.list_models() as models:
        assert len(list(models)) == 2
    request = signed.transport.requests[0]  # type: ignore[attr-defined]
    assert request.url == "https://bedrock.us-west-2.amazonaws.com/foundation-models"
    assert "/us-west-2/bedrock/aws4_request" in dict(request.headers)["Authorization"]


def test_model_strings_sign_without_a_bedrock_key(tmp_path: Path) -> None:
    from zigai.models import MissingCredentials, credential_variables, infer_model

    files = _files(tmp_path)
    keys = {"AWS_ACCESS_KEY_ID": KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET}
    signed = infer_model("bedrock_converse:us.anthropic.claude-sonnet-4-6",
                         env={**files, **keys, "AWS_REGION": "eu-west-1"})
    assert signed.provider.signer is not None and signed.provider.region == "eu-west-1"
    from_arn = infer_model(f"bedrock_converse:{ARN.replace('us-east-1', 'ap-south-1')}", env={**files, **keys})
    assert from_arn.provider.api_root == "https://bedrock-runtime.ap-south-1.amazonaws.com/"
    keyed = infer_model("bedrock_converse:us.anthropic.claude-sonnet-4-6",
                        env={"AWS_BEARER_TOKEN_BEDROCK": "bedrock-key", "AWS_DEFAULT_REGION": "us-west-2"})
    assert keyed.provider.signer is None and keyed.provider.region == "us-west-2"
    with pytest.raises(MissingCredentials, match="AWS_REGION"):
        infer_model("bedrock_converse:us.anthropic.claude-sonnet-4-6", env={**files, **keys})
    assert credential_variables("bedrock_converse") == ()


def test_agent_specs_pass_the_aws_chain_variables_to_the_builder(tmp_path: Path) -> None:
    from zigai.agent_spec.document import ModelRef
    from zigai.agent_spec.model_strings import model_string_catalog, model_string_factory

    entry = model_string_catalog()["bedrock_converse"]
    ref = ModelRef("bedrock_converse", "us.anthropic.claude-sonnet-4-6")
    readable = entry.readable(ref)
    assert {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE",
            "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_BEARER_TOKEN_BEDROCK"} <= readable
    assert entry.credentials == ()  # no key needed: SigV4 is the default
    env = {**_files(tmp_path), "AWS_ACCESS_KEY_ID": KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET,
           "AWS_REGION": "us-east-1", "UNRELATED_SECRET": "x"}
    model = model_string_factory(ref, {k: v for k, v in env.items() if k in readable})
    assert model.provider.signer.chain.get().access_key_id == KEY_ID
