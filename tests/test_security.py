"""UrlPolicy accepts public HTTPS URLs only (by default) and redaction hides credentials."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from zigai.errors import SecurityError
from zigai.security import (
    REDACTED,
    Redactor,
    UrlPolicy,
    UrlPolicyViolation,
    UrlRejection,
    is_sensitive_header_name,
    redact_headers,
    redact_text,
)

R = UrlRejection
ACCEPT = None

DEFAULT_POLICY_TABLE: list[tuple[str, UrlRejection | None]] = [
    # accepted: public names and public literals over https
    ("https://api.openai.com/v1/responses", ACCEPT),
    ("https://api.anthropic.com/v1/messages?beta=true", ACCEPT),
    ("https://generativelanguage.googleapis.com/v1beta/models/x:generateContent", ACCEPT),
    ("HTTPS://API.EXAMPLE.COM/Path", ACCEPT),
    ("https://example.com./trailing-dot", ACCEPT),
    ("https://example.com:8443/custom-port", ACCEPT),
    ("https://xn--bcher-kva.example.org/", ACCEPT),
    ("https://8.8.8.8/", ACCEPT),
    ("https://1.1.1.1:443/dns", ACCEPT),
    ("https://[2606:4700:4700::1111]/", ACCEPT),
    ("https://[::ffff:8.8.8.8]/", ACCEPT),
    ("https://[2002:808:808::1]/", ACCEPT),
    ("https://under_score.example.net/", ACCEPT),
    ("https://example.com#fragment", ACCEPT),
    # scheme
    ("http://api.openai.com/v1", R.scheme_not_allowed),
    ("ftp://example.com/file", R.scheme_not_allowed),
    ("file:///etc/passwd", R.scheme_not_allowed),
    ("ws://example.com/socket", R.scheme_not_allowed),
    # malformed or ambiguous spelling
    ("example.com/no-scheme", R.malformed),
    ("https:///no-host", R.malformed),
    ("https://exa mple.com/", R.malformed),
    ("https://example.com/\u00e9", R.malformed),
    ("https://evil.com\\@good.com/", R.malformed),
    ("https://example.com:/", R.malformed),
    ("https://example.com:0/", R.malformed),
    ("https://example.com:65536/", R.malformed),
    ("https://example.com:80a/", R.malformed),
    ("https://-leading-hyphen.com/", R.malformed),
    ("https://[fe80::1%25eth0]/", R.malformed),
    ("https://[not-v6]/", R.malformed),
    ("https://example..com/", R.malformed),
    # credentials
    ("https://user:pass@example.com/", R.embedded_credentials),
    ("https://user@example.com/", R.embedded_credentials),
    ("https://:@example.com/", R.embedded_credentials),
    # local and reserved names
    ("https://localhost/", R.local_name),
    ("https://LOCALHOST./", R.local_name),
    ("https://api.localhost/", R.local_name),
    ("https://printer.local/", R.local_name),
    ("https://metadata.google.internal/computeMetadata/v1/", R.local_name),
    ("https://router.home.arpa/", R.local_name),
    ("https://1.0.0.127.in-addr.arpa/", R.local_name),
    ("https://service.test/", R.local_name),
    ("https://db.corp/", R.local_name),
    ("https://fileserver/", R.single_label_host),
    ("https://metadata/", R.single_label_host),
    # numeric hosts the OS would read as IPv4
    ("https://127.1/", R.ambiguous_address),
    ("https://2130706433/", R.ambiguous_address),
    ("https://0x7f.0.0.1/", R.ambiguous_address),
    ("https://0177.0.0.1/", R.ambiguous_address),
    ("https://1.2.3.4.5/", R.ambiguous_address),
    # non-public IPv4 literals
    ("https://127.0.0.1/", R.non_public_address),
    ("https://0.0.0.0/", R.non_public_address),
    ("https://10.1.2.3/", R.non_public_address),
    ("https://172.16.0.1/", R.non_public_address),
    ("https://172.31.255.255/", R.non_public_address),
    ("https://192.168.1.1/", R.non_public_address),
    ("https://169.254.169.254/latest/meta-data/", R.non_public_address),
    ("https://100.64.0.1/", R.non_public_address),
    ("https://192.0.2.10/", R.non_public_address),
    ("https://198.51.100.7/", R.non_public_address),
    ("https://203.0.113.9/", R.non_public_address),
    ("https://198.18.0.1/", R.non_public_address),
    ("https://224.0.0.251/", R.non_public_address),
    ("https://240.0.0.1/", R.non_public_address),
    ("https://255.255.255.255/", R.non_public_address),
    # non-public IPv6 literals
    ("https://[::1]/", R.non_public_address),
    ("https://[::]/", R.non_public_address),
    ("https://[::ffff:127.0.0.1]/", R.non_public_address),
    ("https://[::ffff:169.254.169.254]/", R.non_public_address),
    ("https://[64:ff9b::a00:1]/", R.non_public_address),
    ("https://[2002:7f00:1::]/", R.non_public_address),
    ("https://[fe80::1]/", R.non_public_address),
    ("https://[fc00::1]/", R.non_public_address),
    ("https://[fd12:3456::1]/", R.non_public_address),
    ("https://[ff02::1]/", R.non_public_address),
    ("https://[2001:db8::1]/", R.non_public_address),
    ("https://[2001::1]/", R.non_public_address),
    ("https://[::127.0.0.1]/", R.non_public_address),
]


@pytest.mark.parametrize(("url", "expected"), DEFAULT_POLICY_TABLE)
def test_default_policy_table(url: str, expected: UrlRejection | None) -> None:
    policy = UrlPolicy()
    if expected is None:
        assert policy.allows(url)
        policy.check(url)
    else:
        with pytest.raises(UrlPolicyViolation) as caught:
            policy.check(url)
        assert caught.value.reason is expected
        assert not policy.allows(url)


def test_table_is_large_enough() -> None:
    assert len(DEFAULT_POLICY_TABLE) >= 40
    assert sum(1 for _, r in DEFAULT_POLICY_TABLE if r is None) >= 10


def test_check_returns_normalized_parts() -> None:
    checked = UrlPolicy().check("HTTPS://API.Example.COM.:8443/v1?q=1")
    assert (checked.scheme, checked.host, checked.port, checked.is_ip_literal) == (
        "https",
        "api.example.com",
        8443,
        False,
    )
    v6 = UrlPolicy().check("https://[2606:4700:4700:0:0:0:0:1111]/")
    assert (v6.host, v6.port, v6.is_ip_literal) == ("2606:4700:4700::1111", 443, True)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/v1",
        "http://localhost:11434/v1",
        "http://[::1]:8080/",
        "https://printer.local/",
        "http://intranet/",
        "http://192.168.1.20/",
    ],
)
def test_local_development_allows_http_and_local_hosts(url: str) -> None:
    assert UrlPolicy.local_development().allows(url)


def test_local_network_without_http_still_requires_https() -> None:
    policy = UrlPolicy(allow_local_network=True)
    assert policy.allows("https://127.0.0.1/")
    with pytest.raises(UrlPolicyViolation) as caught:
        policy.check("http://127.0.0.1/")
    assert caught.value.reason is R.scheme_not_allowed


def test_http_without_local_network_still_requires_a_public_host() -> None:
    policy = UrlPolicy(allow_http=True)
    assert policy.allows("http://example.com/")
    with pytest.raises(UrlPolicyViolation) as caught:
        policy.check("http://localhost/")
    assert caught.value.reason is R.local_name


def test_local_development_never_allows_credentials_or_ambiguity() -> None:
    policy = UrlPolicy.local_development()
    for url, reason in [
        ("http://user:pw@localhost/", R.embedded_credentials),
        ("http://127.1/", R.ambiguous_address),
        ("gopher://localhost/", R.scheme_not_allowed),
    ]:
        with pytest.raises(UrlPolicyViolation) as caught:
            policy.check(url)
        assert caught.value.reason is reason


def test_allowlist_is_exact_and_narrows_only() -> None:
    policy = UrlPolicy(allowed_hosts=frozenset({"API.openai.com.", "[2606:4700::1]"}))
    assert policy.allows("https://api.openai.com/v1")
    assert policy.allows("https://[2606:4700:0::1]/")
    for url in ("https://openai.com/", "https://evil.api.openai.com/", "https://api.openai.com.evil.io/"):
        with pytest.raises(UrlPolicyViolation) as caught:
            policy.check(url)
        assert caught.value.reason is R.host_not_allowed
    local = UrlPolicy(allowed_hosts=frozenset({"localhost"}))
    with pytest.raises(UrlPolicyViolation) as caught:
        local.check("https://localhost/")
    assert caught.value.reason is R.local_name
    assert UrlPolicy.local_development(["localhost"]).allows("http://localhost:1/")


def test_violation_is_a_security_error_that_pickles_without_the_query() -> None:
    with pytest.raises(UrlPolicyViolation) as caught:
        UrlPolicy().check("https://user:s3cret@example.com/?key=s3cret")
    error = caught.value
    assert isinstance(error, SecurityError)
    assert "s3cret" not in str(error)
    clone = pickle.loads(pickle.dumps(error))
    assert (type(clone), str(clone), clone.reason, clone.host) == (
        UrlPolicyViolation,
        str(error),
        R.embedded_credentials,
        "",
    )


# ------------------------------------------------------------------------------ redaction


@pytest.mark.parametrize(
    "name",
    [
        "Authorization", "proxy-authorization", "X-API-Key", "api-key", "x-goog-api-key",
        "Cookie", "set-cookie", "x-amz-security-token", "X-Auth-Token", "x-csrftoken",
        "client_secret", "x-session-id", "openai-api-key", "x-apikey", "x-password",
        "www-authenticate", "ocp-apim-subscription-key", "x-goog-upload-url",
    ],
)
def test_conventional_secret_header_names_are_sensitive(name: str) -> None:
    assert is_sensitive_header_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "content-type", "x-request-id", "request-id", "retry-after", "date",
        "x-ratelimit-remaining-tokens", "anthropic-ratelimit-tokens-limit",
        "x-ratelimit-remaining-requests", "openai-processing-ms", "keep-alive", "cf-ray",
    ],
)
def test_diagnostic_header_names_stay_visible(name: str) -> None:
    assert not is_sensitive_header_name(name)


def test_extra_sensitive_names_are_exact_and_case_insensitive() -> None:
    assert is_sensitive_header_name("X-Org-Tenant", extra=["x-org-tenant"])
    assert not is_sensitive_header_name("x-org-tenant-id", extra=["x-org-tenant"])


def test_redacted_header_view() -> None:
    headers = [
        ("Authorization", "Bearer sk-live-123"),
        ("x-request-id", "req_1"),
        ("x-echo", "caller sent sk-live-123 back"),
        ("X-Tenant", "acme"),
    ]
    view = redact_headers(headers, secrets=["sk-live-123"], extra_sensitive_names=["x-tenant"])
    assert view == (
        ("Authorization", REDACTED),
        ("x-request-id", "req_1"),
        ("x-echo", f"caller sent {REDACTED} back"),
        ("X-Tenant", REDACTED),
    )


def test_secrets_are_redacted_before_truncation() -> None:
    secret = "sk-abcdefghijklmnop"
    text = f"error: key {secret} rejected"
    # truncating first would leave "sk-abcdefgh" visible
    assert redact_text(text, [secret], max_chars=21) == f"error: key {REDACTED}"
    assert "sk-" not in redact_text(text, [secret], max_chars=14)
    assert redact_text(text, [secret], max_chars=len(text)) == f"error: key {REDACTED} rejected"


def test_longer_secrets_win_and_empty_secrets_are_ignored() -> None:
    assert redact_text("token=abc123", ["abc", "abc123", ""]) == f"token={REDACTED}"
    assert redact_text("nothing here", [""]) == "nothing here"


def test_redactor_bundles_the_configuration() -> None:
    redactor = Redactor(secrets=("k-1",), extra_sensitive_names=frozenset({"x-tenant"}))
    assert redactor.is_sensitive("X-Tenant")
    assert redactor.headers([("x-note", "k-1 k-1"), ("x-tenant", "a")], max_value_chars=12) == (
        ("x-note", f"{REDACTED} {REDACTED}"[:12]),
        ("x-tenant", REDACTED),
    )
    assert redactor.text("use k-1", max_chars=100) == f"use {REDACTED}"


# ------------------------------------------------------------------ JSON spellings of secrets


def _unicode_escaped(text: str, upper: bool = False) -> str:
    units = text.encode("utf-16-be")
    codes = (int.from_bytes(units[i:i + 2], "big") for i in range(0, len(units), 2))
    return "".join((f"\\u{code:04X}" if upper else f"\\u{code:04x}") for code in codes)


def test_redaction_catches_every_json_spelling_of_a_secret() -> None:
    import json

    from zigai.security import redact_bytes, redact_text

    key = 'sk-"live"/\\Ω😀\n'
    spellings = [
        json.dumps(key), json.dumps(key, ensure_ascii=False),
        '"' + _unicode_escaped(key) + '"', '"' + _unicode_escaped(key, upper=True) + '"',
        '"sk-\\"li\\u0076e\\"\\/\\\\\\u03a9\\ud83d\\ude00\\n"',  # a mix of escapes
    ]
    for spelled in spellings:
        assert json.loads(spelled) == key  # each really is a JSON spelling of the key
        body = '{"error":{"message":"bad key ' + spelled[1:-1] + '"}}'
        assert redact_text(body, [key]) == '{"error":{"message":"bad key [REDACTED]"}}'
        assert redact_bytes(body.encode(), [key]) == b'{"error":{"message":"bad key [REDACTED]"}}'
    # one character short is not the secret; text without backslashes takes the fast path
    near = json.dumps(key[:-1], ensure_ascii=True)
    assert redact_text(near, [key]) == near
    assert redact_text("plain sk-x", ["sk-x"]) == "plain [REDACTED]"


def test_provider_error_bodies_and_messages_redact_escaped_echoes() -> None:
    from zigai.errors import ProviderRequestError
    from zigai.provider import raise_provider_error

    key = "sk-CANARY-1234"
    body = ('{"error":{"message":"invalid key ' + _unicode_escaped(key) + '","code":"bad"}}').encode()
    views: list[Any] = []
    with pytest.raises(ProviderRequestError) as caught:
        raise_provider_error(provider_name="p", status=401, body=body, request_id=None,
                             retry_after_s=None, secrets=[key], observer=views.append,
                             capture_body=True)
    assert "CANARY" not in str(caught.value) and "CANARY" not in (caught.value.message or "")
    assert views and b"\\u0043" not in views[0].body and b"[REDACTED]" in views[0].body


def _reachable_text(error: BaseException) -> str:
    """Everything an error keeps through its cause/context chain (attributes and args)."""
    seen: list[str] = []
    current: BaseException | None = error
    while current is not None:
        seen.append(repr(current.args))
        seen.append(repr(getattr(current, "__dict__", {})))
        for name in ("doc", "object"):  # JSONDecodeError.doc, UnicodeDecodeError.object
            seen.append(repr(getattr(current, name, "")))
        current = current.__cause__ or current.__context__
    return "\n".join(seen)


@pytest.mark.parametrize(
    "body",
    [b'{"echo": "sk-CANARY-77" ,,}', b'{"echo": "sk-CANARY-77\xff"}', b'{"echo": "sk-CANARY-77"'],
    ids=["malformed", "not utf-8", "truncated"],
)
def test_a_decode_error_keeps_no_raw_body_in_its_chain(body: bytes) -> None:
    from zigai import json as zjson
    from zigai.provider import ProviderResponseDecodeError, parse_provider_json

    with pytest.raises(ProviderResponseDecodeError) as caught:
        parse_provider_json(body)
    assert "CANARY" not in _reachable_text(caught.value)
    for call in (lambda: zjson.parse(body, zjson.defaults.provider_response),
                 lambda: zjson.validate(body, zjson.defaults.provider_response),
                 lambda: zjson.parse(body, zjson.defaults.provider_response, ValueError)):
        with pytest.raises((zjson.JsonError, ValueError)) as failed:
            call()
        assert "CANARY" not in _reachable_text(failed.value)
