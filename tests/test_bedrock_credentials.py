"""AWS credentials for Bedrock: the SDK chain order, the shared files read exactly as botocore
reads them, credential_process, container and IMDSv2 metadata over real loopback sockets, the
metadata URL-policy exception, bounds and the named errors (never carrying a secret)."""

from __future__ import annotations

import datetime
import pickle
import sys
from pathlib import Path
from typing import Any

import pytest
from support.loopback import LoopbackServer, Received, Reply

from zigai.providers import bedrock as B
from zigai.providers.bedrock import aws_config, aws_metadata, aws_process
from zigai.providers.bedrock.credentials import AwsCredentialChain, AwsCredentials
from zigai.security import UrlPolicy, UrlPolicyViolation

botocore_session = pytest.importorskip(
    "botocore.session", reason="the shared-config peer tests need botocore: pip install -e '.[dev]'")

SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
TOKEN = "FwoGZXIvYXdzEXAMPLESESSIONTOKEN"

CONFIG = """\
# a real-format ~/.aws/config
[default]
region = us-west-2
output = json

[profile dev]
region=eu-central-1
aws_access_key_id = AKIDCONFIGDEV
aws_secret_access_key = config-secret-dev
s3 =
    addressing_style = path
    max_concurrent_requests = 20

[profile "spaced name"]
region = ap-northeast-1
credential_process = {python} {script} spaced

[profile proc]
credential_process = {python} {script} proc
aws_access_key_id = AKIDSHADOWED
aws_secret_access_key = shadowed-by-process

[profile role]
role_arn = arn:aws:iam::123456789012:role/r
source_profile = default

[profile sso]
sso_session = corp
sso_account_id = 123456789012
sso_role_name = Dev

[profile legacy-sso]
sso_start_url = https://corp.awsapps.com/start
sso_region = us-east-1

[sso-session corp]
sso_start_url = https://corp.awsapps.com/start
sso_region = us-east-1

[services local]
bedrock-runtime =
  endpoint_url = http://localhost:4566

[notaprofile]
x = 1
"""

CREDENTIALS = """\
[default]
aws_access_key_id = AKIDDEFAULT
aws_secret_access_key = default-secret
; a comment line
[dev]
aws_access_key_id = AKIDCREDSDEV
aws_secret_access_key = creds-secret-dev
aws_session_token = creds-token-dev

[creds-only]
aws_access_key_id=AKIDCREDSONLY
aws_secret_access_key=creds-only-secret
"""

SCRIPT = """\
import json, sys
name = sys.argv[1]
print(json.dumps({"Version": 1, "AccessKeyId": "AKIDPROC" + name.upper(),
                  "SecretAccessKey": "proc-secret-" + name, "SessionToken": "proc-token-" + name,
                  "Expiration": "2999-01-01T00:00:00Z"}))
"""


@pytest.fixture
def aws_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    script = tmp_path / "creds.py"
    script.write_text(SCRIPT)
    (tmp_path / "config").write_text(CONFIG.format(python=sys.executable, script=script))
    (tmp_path / "credentials").write_text(CREDENTIALS)
    env = {"AWS_CONFIG_FILE": str(tmp_path / "config"),
           "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "credentials"),
           "AWS_EC2_METADATA_DISABLED": "true"}
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                 "AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ROLE_ARN",
                 "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                 "AWS_CONTAINER_CREDENTIALS_FULL_URI"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


def test_profiles_parse_exactly_as_botocore_parses_them(aws_files: dict[str, str]) -> None:
    ours = aws_config.load_profiles(*aws_config.config_paths(aws_files))
    theirs = botocore_session.Session().full_config["profiles"]
    assert ours == theirs
    assert ours["dev"]["s3"] == {"addressing_style": "path", "max_concurrent_requests": "20"}
    assert "spaced name" in ours and "notaprofile" not in ours and "corp" not in ours


@pytest.mark.parametrize("profile", ["default", "dev", "creds-only", "spaced name", "proc"])
def test_profile_credentials_and_region_agree_with_botocore(
    aws_files: dict[str, str], profile: str
) -> None:
    session = botocore_session.Session(profile=profile)
    theirs = session.get_credentials().get_frozen_credentials()
    chain = AwsCredentialChain(profile=profile, env=aws_files)
    ours = chain.get()
    assert (ours.access_key_id, ours.secret_access_key, ours.session_token) == (
        theirs.access_key, theirs.secret_key, theirs.token)
    assert chain.profile_region() == session.get_config_variable("region")


def test_active_profile_comes_from_aws_profile_then_aws_default_profile(aws_files: dict[str, str]) -> None:
    assert AwsCredentialChain(env={**aws_files, "AWS_PROFILE": "dev",
                                   "AWS_DEFAULT_PROFILE": "creds-only"}).get().access_key_id == "AKIDCREDSDEV"
    assert AwsCredentialChain(env={**aws_files, "AWS_DEFAULT_PROFILE": "creds-only"}
                              ).get().access_key_id == "AKIDCREDSONLY"
    assert AwsCredentialChain(env=aws_files).get().access_key_id == "AKIDDEFAULT"


def test_environment_wins_over_profiles_and_explicit_wins_over_all(aws_files: dict[str, str]) -> None:
    env = {**aws_files, "AWS_PROFILE": "dev", "AWS_ACCESS_KEY_ID": "AKIDENV",
           "AWS_SECRET_ACCESS_KEY": "env-secret", "AWS_SESSION_TOKEN": "env-token"}
    found = AwsCredentialChain(env=env).get()
    assert (found.access_key_id, found.session_token, found.source) == ("AKIDENV", "env-token", "environment")
    explicit = AwsCredentials("AKIDEXPLICIT", "s")
    assert AwsCredentialChain(explicit, env=env).get() is explicit


@pytest.mark.parametrize(("extra", "error", "words"), [
    ({"AWS_ACCESS_KEY_ID": "AKIDONLY"}, B.IncompleteAwsCredentials, "secret access key is missing"),
    ({"AWS_SECRET_ACCESS_KEY": "lonely-secret"}, B.IncompleteAwsCredentials, "access key id is missing"),
    ({"AWS_PROFILE": "nope"}, B.AwsProfileNotFound, "'nope'"),
    ({"AWS_PROFILE": "role"}, B.UnsupportedAwsCredentialSource, "role_arn"),
    ({"AWS_PROFILE": "sso"}, B.UnsupportedAwsCredentialSource, "SSO"),
    ({"AWS_PROFILE": "legacy-sso"}, B.UnsupportedAwsCredentialSource, "SSO"),
    ({"AWS_ROLE_ARN": "arn:aws:iam::1:role/r", "AWS_WEB_IDENTITY_TOKEN_FILE": "/t"},
     B.UnsupportedAwsCredentialSource, "web identity"),
])
def test_unusable_sources_raise_named_errors_without_secrets(
    aws_files: dict[str, str], extra: dict[str, str], error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words) as raised:
        AwsCredentialChain(env={**aws_files, **extra}).get()
    assert isinstance(raised.value, B.AwsCredentialsError)
    assert "lonely-secret" not in str(raised.value) and "secret-dev" not in str(raised.value)


def test_nothing_anywhere_is_no_credentials(tmp_path: Path) -> None:
    env = {"AWS_CONFIG_FILE": str(tmp_path / "absent"), "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "a2"),
           "AWS_EC2_METADATA_DISABLED": "true"}
    with pytest.raises(B.NoAwsCredentials, match="AWS_ACCESS_KEY_ID"):
        AwsCredentialChain(env=env).get()


def test_file_size_bound_is_exact(tmp_path: Path) -> None:
    path = tmp_path / "credentials"
    head = "[default]\naws_access_key_id = A\naws_secret_access_key = S\n# "
    path.write_text(head + "x" * (aws_config.MAX_FILE_BYTES - len(head) - 1) + "\n")
    assert path.stat().st_size == aws_config.MAX_FILE_BYTES
    assert aws_config.load_profiles(str(tmp_path / "none"), str(path))["default"]["aws_access_key_id"] == "A"
    path.write_text(head + "x" * (aws_config.MAX_FILE_BYTES - len(head)) + "\n")
    with pytest.raises(B.AwsConfigError, match="larger than"):
        aws_config.load_profiles(str(tmp_path / "none"), str(path))


@pytest.mark.parametrize("text", ["[default]\naws_secret_access_key = s3cr3t\n[default]\nx = 1\n",
                                  "no section header\n", "[p]\nk =\n  nested-without-equals\n"])
def test_malformed_files_raise_a_named_error_without_their_content(tmp_path: Path, text: str) -> None:
    path = tmp_path / "credentials"
    path.write_text(text)
    with pytest.raises(B.AwsConfigError) as raised:
        aws_config.load_profiles(str(tmp_path / "none"), str(path))
    assert str(path) in str(raised.value) and "s3cr3t" not in str(raised.value)


# -- credential_process ----------------------------------------------------------------------


def _process(tmp_path: Path, body: str, timeout_s: float = 30.0) -> AwsCredentials:
    script = tmp_path / "p.py"
    script.write_text(body)
    return aws_process.run(f"{sys.executable} {script}", "profile 'p'", timeout_s)


@pytest.mark.parametrize(("body", "words"), [
    ("import sys\nprint('{\"Version\": 1, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"leak\"}')\n"
     "sys.stderr.write('denied')\nsys.exit(3)\n", "status 3: denied"),
    ("print('not json leak')\n", "no JSON object"),
    ("print('{\"Version\": 2, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"leak\"}')\n", "Version 2"),
    ("print('{\"Version\": 1, \"AccessKeyId\": \"A\"}')\n", "no AccessKeyId"),
    ("print('{\"Version\": 1, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"leak\", "
     "\"Expiration\": \"soon\"}')\n", "not ISO 8601"),
    ("import sys\nsys.stdout.write('x' * (64 * 1024 + 1))\n", "more than 65536 bytes"),
])
def test_credential_process_failures_are_named_and_never_echo_stdout(
    tmp_path: Path, body: str, words: str
) -> None:
    with pytest.raises(B.AwsCredentialsError, match=words) as raised:
        _process(tmp_path, body)
    assert "leak" not in str(raised.value)


def test_credential_process_bounds_time_and_reports_bad_commands(tmp_path: Path) -> None:
    with pytest.raises(B.CredentialProcessFailed, match="longer than 0.5 s"):
        _process(tmp_path, "import time\ntime.sleep(30)\n", timeout_s=0.5)
    with pytest.raises(B.CredentialProcessFailed, match="cannot start"):
        aws_process.run(str(tmp_path / "missing-program"), "profile 'p'", 5)
    with pytest.raises(B.CredentialProcessFailed, match="unbalanced"):
        aws_process.run("prog 'open", "profile 'p'", 5)
    with pytest.raises(B.CredentialProcessFailed, match="empty"):
        aws_process.run("   ", "profile 'p'", 5)
    exactly = _process(tmp_path, "import json, sys\ndoc = json.dumps({'Version': 1, 'AccessKeyId': 'A', "
                       "'SecretAccessKey': 'S'})\nsys.stdout.write(doc + ' ' * (64 * 1024 - len(doc)))\n")
    assert (exactly.access_key_id, exactly.session_token, exactly.expiry) == ("A", None, None)


# -- container and instance metadata ----------------------------------------------------------


def _creds_json(**extra: Any) -> Reply:
    return Reply.of_json({"AccessKeyId": "AKIDMETA", "SecretAccessKey": SECRET, "Token": TOKEN,
                          "Expiration": "2999-01-01T00:00:00Z", **extra})


def test_container_credentials_send_the_token_from_the_variable(tmp_path: Path) -> None:
    seen: list[Received] = []

    def handler(received: Received) -> Reply:
        seen.append(received)
        return _creds_json()

    with LoopbackServer(handler) as server:
        env = {"AWS_CONTAINER_CREDENTIALS_FULL_URI": server.url + "/creds?id=1",
               "AWS_CONTAINER_AUTHORIZATION_TOKEN": "plain-token"}
        found = aws_metadata.container_credentials(env, 5)
    assert found is not None and found.session_token == TOKEN
    assert found.expiry == datetime.datetime(2999, 1, 1, tzinfo=datetime.UTC)
    assert seen[0].headers["authorization"] == "plain-token" and seen[0].target == "/creds?id=1"


@pytest.mark.parametrize(("reply", "words"), [
    (Reply.of_json({"message": SECRET}, 500), "HTTP 500"),
    (Reply(200, body=b"not json " + SECRET.encode()), "no JSON object"),
    (Reply.of_json({"AccessKeyId": "A"}), "no AccessKeyId"),
    (Reply.of_json({"AccessKeyId": "A", "SecretAccessKey": SECRET, "Token": 5}), "non-string Token"),
    (Reply.of_json(["list"]), "no JSON object"),
    (Reply(200, body=b"x" * (aws_metadata.MAX_METADATA_BYTES + 1)), "failed: ResponseTooLarge"),
])
def test_container_failures_name_host_and_status_only(reply: Reply, words: str) -> None:
    with LoopbackServer(lambda received: reply) as server:
        with pytest.raises(B.MetadataCredentialsError, match=words) as raised:
            aws_metadata.container_credentials({"AWS_CONTAINER_CREDENTIALS_FULL_URI": server.url}, 5)
    assert SECRET not in str(raised.value) and "127.0.0.1" in str(raised.value)


def test_container_token_file_must_be_readable(tmp_path: Path) -> None:
    env = {"AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://127.0.0.1:9/c",
           "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": str(tmp_path / "missing")}
    with pytest.raises(B.MetadataCredentialsError, match="cannot be read"):
        aws_metadata.container_credentials(env, 1)


def test_metadata_policy_is_the_one_exception() -> None:
    for url in ("http://169.254.169.254/latest/api/token", "http://169.254.170.2/v2/creds",
                "http://169.254.170.23/v1/credentials", "http://127.0.0.1:8080/c", "http://localhost/c"):
        aws_metadata.metadata_policy(url).check(url)
    assert aws_metadata.metadata_policy("https://creds.example.com/c") == UrlPolicy()
    for url in ("http://169.254.169.253/latest", "http://10.0.0.1/c", "http://example.com/c",
                "ftp://169.254.169.254/"):
        with pytest.raises(UrlPolicyViolation):
            aws_metadata.metadata_policy(url)
    # the policy of one call admits that host only, and the provider's own policy is untouched
    with pytest.raises(UrlPolicyViolation):
        aws_metadata.metadata_policy("http://169.254.170.2/").check("http://169.254.169.254/")
    with pytest.raises(UrlPolicyViolation):
        B.Provider(region="us-east-1", base_url="http://169.254.169.254/",
                   credentials=AwsCredentials("A", "S"))
    with pytest.raises(UrlPolicyViolation):
        aws_metadata.container_credentials(
            {"AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://192.168.1.5/creds"}, 1)


class _Imds:
    """IMDSv2 on loopback: PUT token, then the role list and the role's credentials."""

    def __init__(self, role_status: int = 200, token_status: int = 200) -> None:
        self.role_status, self.token_status = role_status, token_status
        self.seen: list[Received] = []

    def __call__(self, received: Received) -> Reply:
        self.seen.append(received)
        if received.target == "/latest/api/token":
            assert received.method == "PUT"
            assert received.headers["x-aws-ec2-metadata-token-ttl-seconds"] == "21600"
            return Reply(self.token_status, body=b"imds-session-token")
        if received.headers.get("x-aws-ec2-metadata-token") != "imds-session-token":
            return Reply(401)
        if received.target == "/latest/meta-data/iam/security-credentials/":
            return Reply(self.role_status, body=b"web-role\n")
        if received.target == "/latest/meta-data/iam/security-credentials/web-role":
            return _creds_json(Code="Success", Type="AWS-HMAC")
        return Reply(404)


def test_instance_metadata_speaks_imdsv2_with_its_token() -> None:
    imds = _Imds()
    with LoopbackServer(imds) as server:
        env = {"AWS_EC2_METADATA_SERVICE_ENDPOINT": server.url + "/",
               "AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent"}
        found = AwsCredentialChain(env=env).get()
    assert (found.access_key_id, found.session_token, found.source) == ("AKIDMETA", TOKEN, "instance metadata")
    assert [r.method for r in imds.seen] == ["PUT", "GET", "GET"]


def test_instance_metadata_edges() -> None:
    for imds, expected in ((_Imds(role_status=404), None),):
        with LoopbackServer(imds) as server:
            assert aws_metadata.instance_credentials(
                {"AWS_EC2_METADATA_SERVICE_ENDPOINT": server.url}, 5) is expected
    with LoopbackServer(_Imds(token_status=403)) as server:
        with pytest.raises(B.MetadataCredentialsError, match="IMDSv1"):
            aws_metadata.instance_credentials({"AWS_EC2_METADATA_SERVICE_ENDPOINT": server.url}, 5)
    with LoopbackServer(_Imds(role_status=500)) as server:
        with pytest.raises(B.MetadataCredentialsError, match="HTTP 500"):
            aws_metadata.instance_credentials({"AWS_EC2_METADATA_SERVICE_ENDPOINT": server.url}, 5)
    assert aws_metadata.instance_credentials({"AWS_EC2_METADATA_DISABLED": "TRUE"}, 5) is None
    # nothing listening: not on EC2, the chain ends with NoAwsCredentials
    with LoopbackServer(lambda r: Reply()) as server:
        closed = server.url
    env = {"AWS_EC2_METADATA_SERVICE_ENDPOINT": closed, "AWS_CONFIG_FILE": "/nonexistent",
           "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent"}
    with pytest.raises(B.NoAwsCredentials):
        AwsCredentialChain(env=env, metadata_timeout_s=2).get()
    assert aws_metadata._imds_root({"AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE": "IPv6"}) == "http://[fd00:ec2::254]"


# -- values ------------------------------------------------------------------------------------


def test_credentials_hide_their_secrets() -> None:
    creds = AwsCredentials("AKIDX", SECRET, TOKEN)
    chain = AwsCredentialChain(creds)
    for text in (repr(creds), str(creds), repr(chain)):
        assert SECRET not in text and TOKEN not in text
    for value in (creds, chain):
        with pytest.raises(TypeError, match="cannot be pickled"):
            pickle.dumps(value)
    assert creds.secrets() == (SECRET, TOKEN)
    with pytest.raises(B.IncompleteAwsCredentials):
        AwsCredentials("AKID", "")
    with pytest.raises(B.IncompleteAwsCredentials):
        AwsCredentials("AKID", "s", "tökén")
    with pytest.raises(ValueError, match="timezone-aware"):
        AwsCredentials("AKID", "s", expiry=datetime.datetime(2030, 1, 1))
    with pytest.raises(TypeError):
        AwsCredentialChain(("AKID", "s"))  # type: ignore[arg-type]


def test_container_url_and_imds_root_follow_the_variables() -> None:
    assert aws_metadata.container_url({"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/credentials/x",
                                       "AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://127.0.0.1/c"}
                                      ) == "http://169.254.170.2/v2/credentials/x"
    assert aws_metadata.container_url({"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "v2/c"}) == "http://169.254.170.2/v2/c"
    assert aws_metadata.container_url({"AWS_CONTAINER_CREDENTIALS_FULL_URI": ""}) is None
    assert aws_metadata._imds_root({}) == "http://169.254.169.254"
    assert aws_metadata._imds_root({"AWS_EC2_METADATA_SERVICE_ENDPOINT": "http://127.0.0.1:5/"}) == "http://127.0.0.1:5"


class _BrokenImds(_Imds):
    def __init__(self, roles: bytes = b"web-role", creds: Reply | None = None) -> None:
        super().__init__()
        self.roles, self.creds = roles, creds

    def __call__(self, received: Received) -> Reply:
        if received.target == "/latest/meta-data/iam/security-credentials/":
            return Reply(200, body=self.roles)
        if received.target.endswith("/web-role") and self.creds is not None:
            return self.creds
        return super().__call__(received)


@pytest.mark.parametrize(("imds", "words"), [
    (_BrokenImds(creds=Reply(500)), "HTTP 500"),
    (_BrokenImds(creds=Reply.of_json({"Code": "AssumeRoleUnauthorizedAccess", "SecretAccessKey": SECRET})),
     "Code 'AssumeRoleUnauthorizedAccess'"),
    (_BrokenImds(creds=Reply.of_json({"AccessKeyId": "A", "SecretAccessKey": SECRET, "Expiration": 5})),
     "ISO 8601 string"),
    (_BrokenImds(creds=Reply(200, pieces=(b"{",), abort_after=0)), "failed: "),
])
def test_instance_role_failures_are_named(imds: _Imds, words: str) -> None:
    with LoopbackServer(imds) as server:
        with pytest.raises(B.AwsCredentialsError, match=words) as raised:
            aws_metadata.instance_credentials({"AWS_EC2_METADATA_SERVICE_ENDPOINT": server.url}, 5)
    assert SECRET not in str(raised.value)


def test_instance_without_a_role_and_naive_expiry() -> None:
    with LoopbackServer(_BrokenImds(roles=b"  \n")) as server:
        assert aws_metadata.instance_credentials({"AWS_EC2_METADATA_SERVICE_ENDPOINT": server.url}, 5) is None
    naive = _BrokenImds(creds=Reply.of_json({"AccessKeyId": "A", "SecretAccessKey": "S",
                                             "Expiration": "2999-01-01T00:00:00"}))
    with LoopbackServer(naive) as server:
        found = aws_metadata.instance_credentials({"AWS_EC2_METADATA_SERVICE_ENDPOINT": server.url}, 5)
    assert found is not None and found.expiry == datetime.datetime(2999, 1, 1, tzinfo=datetime.UTC)


def test_profile_values_must_be_plain_strings(tmp_path: Path) -> None:
    (tmp_path / "config").write_text(
        "[profile nested-key]\naws_access_key_id =\n  a = b\naws_secret_access_key = s\n"
        "[profile nested-process]\ncredential_process =\n  a = b\n"
        '[profile "unbalanced]\nregion = x\n')
    env = {"AWS_CONFIG_FILE": str(tmp_path / "config"), "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path)}
    with pytest.raises(B.AwsConfigError, match="cannot be read"):
        AwsCredentialChain(env=env).get()  # the credentials path is a directory
    env["AWS_SHARED_CREDENTIALS_FILE"] = str(tmp_path / "none")
    with pytest.raises(B.IncompleteAwsCredentials, match="must be strings"):
        AwsCredentialChain(profile="nested-key", env=env).get()
    with pytest.raises(B.AwsCredentialsError, match="one line"):
        AwsCredentialChain(profile="nested-process", env=env).get()
    assert set(aws_config.load_profiles(*aws_config.config_paths(env))) == {"nested-key", "nested-process"}


PARITY_FILES = {
    "crlf-and-tabs": ("[default]\r\nregion\t=\tus-east-2\r\n[profile ci]\r\naws_access_key_id = AKIDCI\r\n"
                      "aws_secret_access_key = ci/secret+key\r\n", ""),
    "inline-hash-is-value": ("[profile p]\nregion = eu-west-1 # not a comment\n", ""),
    "profile-default-and-default": ("[profile default]\nregion = a-1\n[default]\nregion = b-2\n", ""),
    "uppercase-keys-and-continuation": ("[profile up]\nRegion = sa-east-1\nnote = first\n  second\n", ""),
    "credentials-override-config": ("[profile both]\nregion = us-east-1\naws_access_key_id = CONFIG\n",
                                    "[both]\naws_access_key_id = CREDS\naws_secret_access_key = s\n"),
    "empty-files": ("", ""),
    "quoted-and-odd-sections": ('[profile "a b"]\nregion = x-1\n[profile]\nk = v\n[profile a b c]\nk = v\n'
                                "[profiles-x y]\nk = v\n", ""),
}


@pytest.mark.parametrize("name", sorted(PARITY_FILES))
def test_more_real_format_files_parse_as_botocore_parses_them(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, credentials = PARITY_FILES[name]
    (tmp_path / "config").write_bytes(config.encode())
    (tmp_path / "credentials").write_bytes(credentials.encode())
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    ours = aws_config.load_profiles(str(tmp_path / "config"), str(tmp_path / "credentials"))
    assert ours == botocore_session.Session().full_config["profiles"]


@pytest.mark.parametrize("text", ["\ufeff[default]\nregion = x\n", "[default]\nregion = x\n[default]\n",
                                  "region = x\n"])
def test_files_botocore_refuses_are_refused_too(text: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from botocore.exceptions import ConfigParseError

    (tmp_path / "config").write_bytes(text.encode())
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    with pytest.raises(ConfigParseError):
        botocore_session.Session().full_config  # noqa: B018
    with pytest.raises(B.AwsConfigError):
        aws_config.load_profiles(str(tmp_path / "config"), str(tmp_path / "none"))
