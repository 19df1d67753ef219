"""Local endpoints follow one rule whichever way they are named (issue 31, #10).

A loopback base URL given to a provider's constructor without a ``url_policy`` gets the same
loopback-only policy as the same URL in a base-URL variable; every other refusal names the
exact policy that would admit the host.  Requests go to a real HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import importlib

import pytest
from support.loopback import LoopbackServer, Reply
from test_models_local import CHAT_REPLY, MESSAGES_REPLY, RESPONSES_REPLY
from test_provider_files import TEXT, google_server

from zigai.agent import Agent
from zigai.models import infer_model
from zigai.providers import google, openai_compatible
from zigai.providers.http import InvalidProviderConfiguration
from zigai.security import UrlPolicy, UrlPolicyViolation, UrlRejection, local_policy_for


@pytest.mark.parametrize(("module", "variable", "path", "reply"), [
    ("openai", "OPENAI_BASE_URL", "/v1/responses", RESPONSES_REPLY),
    ("anthropic", "ANTHROPIC_BASE_URL", "/v1/messages", MESSAGES_REPLY),
    ("openai_compatible", "OPENAI_COMPATIBLE_BASE_URL", "/v1/chat/completions", CHAT_REPLY),
])
def test_a_loopback_base_url_works_from_the_constructor_as_from_the_variable(
    module: str, variable: str, path: str, reply: dict[str, object]
) -> None:
    mod = importlib.import_module(f"zigai.providers.{module}")
    with LoopbackServer(lambda request: Reply.of_json(reply)) as server:
        base_url = f"{server.url}/v1"
        direct = Agent(mod.Client("local-model", mod.Provider("sk-local", base_url=base_url)))
        through_env = Agent(infer_model(f"{module}:local-model", env={variable: base_url}))
        for agent in (direct, through_env):
            with agent.run("ping") as result:
                assert result.output == "pong"
    assert [r.target for r in server.requests] == [path, path]


def test_the_constructor_rule_is_loopback_only_and_never_widens_a_given_policy() -> None:
    policy = local_policy_for("http://127.0.0.1:8080/v1")
    assert policy == UrlPolicy.local_development(allowed_hosts={"127.0.0.1"})
    assert not policy.allows("http://127.0.0.2:8080/v1")
    with pytest.raises(UrlPolicyViolation) as refused:
        openai_compatible.Provider("k", base_url="http://127.0.0.1:8080/v1", url_policy=UrlPolicy())
    assert refused.value.reason is UrlRejection.scheme_not_allowed


@pytest.mark.parametrize(("url", "host", "reason"), [
    ("http://192.168.1.20:8000/v1", "192.168.1.20", UrlRejection.scheme_not_allowed),
    ("https://10.0.0.5/v1", "10.0.0.5", UrlRejection.non_public_address),
    ("https://[fd00::5]/v1", "fd00::5", UrlRejection.non_public_address),
    ("https://gpu-box/v1", "gpu-box", UrlRejection.single_label_host),
    ("https://gpu-box.local/v1", "gpu-box.local", UrlRejection.local_name),
])
def test_a_refusal_names_the_exact_policy_that_admits_the_host(
    url: str, host: str, reason: UrlRejection
) -> None:
    with pytest.raises(UrlPolicyViolation) as refused:
        openai_compatible.Provider("k", base_url=url)
    fix = f"url_policy=UrlPolicy.local_development(allowed_hosts=[{host!r}])"
    assert refused.value.reason is reason and fix in str(refused.value)
    openai_compatible.Provider("k", base_url=url, url_policy=UrlPolicy.local_development(allowed_hosts=[host]))


def test_the_named_fix_never_echoes_userinfo() -> None:
    with pytest.raises(UrlPolicyViolation) as refused:
        UrlPolicy().check("http://user:s3cret@192.168.1.20/v1")
    assert "s3cret" not in str(refused.value) and "user" not in str(refused.value)
    assert "UrlPolicy.local_development()" in str(refused.value)
    with pytest.raises(UrlPolicyViolation, match=r"UrlPolicy\.local_development\(\)"):
        UrlPolicy().check("http://192.168.1.20:99999/v1")  # no host to name in a malformed authority
    assert local_policy_for("http://[::1/v1") is None and local_policy_for(None) is None  # type: ignore[arg-type]


def test_google_uploads_to_the_host_of_a_local_base_url() -> None:
    handler = google_server(lambda root: f"{root}/upload/v1beta/files?upload_id=s1&upload_protocol=resumable")
    with LoopbackServer(handler) as server:
        handler.state["root"] = server.url  # type: ignore[attr-defined]
        # a loopback allowlist and a loopback base URL: no public upload host to refuse
        loopback_only = UrlPolicy.local_development(allowed_hosts=["127.0.0.1"])
        provider = google.Provider("g-key", base_url=f"{server.url}/v1beta", url_policy=loopback_only)
        with provider.upload_file(TEXT) as uploaded:
            assert uploaded.value.size_bytes == 29
        google.Provider("g-key", base_url=f"{server.url}/v1beta/")  # the rule alone, no policy
    assert [f"{r.method} {r.target}" for r in server.requests] == [
        "POST /upload/v1beta/files", "POST /upload/v1beta/files?upload_id=s1&upload_protocol=resumable"]
    assert google.upload_root_for(google.API_BASE) == "https://generativelanguage.googleapis.com/upload/v1beta"
    assert google.upload_root_for("http://127.0.0.1:9/v1beta/") == "http://127.0.0.1:9/upload/v1beta"


def test_a_base_url_that_is_not_a_string_keeps_the_default_upload_root() -> None:
    assert google.upload_root_for(None) == google.upload_root_for(google.API_BASE)  # type: ignore[arg-type]


def test_a_loopback_compatible_server_needs_no_key_from_the_constructor_either() -> None:
    with LoopbackServer(lambda request: Reply.of_json(CHAT_REPLY)) as server:
        provider = openai_compatible.Provider(base_url=f"{server.url}/v1")
        with Agent(openai_compatible.Client("local-model", provider)).run("ping") as result:
            assert result.output == "pong"
    assert "authorization" not in server.requests[0].headers
    with pytest.raises(InvalidProviderConfiguration, match="credential"):  # a remote root needs its key
        openai_compatible.Provider(base_url="https://gateway.example.com/v1")
