"""HttpTransport(resolve_and_pin=True): names are resolved once, every address is checked
against the UrlPolicy, and the connection goes to a checked address with the URL's Host/SNI.

A custom ``resolver`` stands in for DNS records (a public-looking name whose record points at
127.0.0.1 is exactly the rebinding setup); the servers are real 127.0.0.1 sockets.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.raw_server import RawServer
from support.tls_certs import self_signed

from zigai.security import UrlPolicy, UrlPolicyViolation, UrlRejection
from zigai.transport import HttpTransport, TransportConnectionFailed, TransportRequest
from zigai.transport._connect import resolve
from zigai.transport._guard import IoGuard

PUBLIC_HTTP = UrlPolicy(allow_http=True)  # public addresses only, plain http allowed
NAME = "api.rebind-example.com"


def _ok(conn: socket.socket, stop: threading.Event) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")


def _records(*addresses: str) -> tuple[list[str], object]:
    asked: list[str] = []

    def resolver(host: str) -> list[str]:
        asked.append(host)
        return list(addresses)

    return asked, resolver


@pytest.mark.parametrize(
    "addresses",
    [("127.0.0.1",), ("10.1.2.3",), ("169.254.169.254",), ("::1",), ("93.184.215.14", "127.0.0.1")],
    ids=["loopback", "private", "metadata", "v6 loopback", "public plus loopback"],
)
def test_a_name_that_resolves_to_a_non_public_address_is_refused_before_connecting(
    addresses: tuple[str, ...],
) -> None:
    asked, resolver = _records(*addresses)
    with RawServer(_ok) as server:
        with HttpTransport(url_policy=PUBLIC_HTTP, resolve_and_pin=True, resolver=resolver) as http:
            with pytest.raises(UrlPolicyViolation) as caught:
                http.send(TransportRequest("GET", f"http://{NAME}:{server.port}/"))
        assert caught.value.reason is UrlRejection.non_public_address
        assert NAME in str(caught.value)
        assert asked == [NAME]
        assert server.connections == 0


def test_without_pinning_the_same_name_reaches_loopback() -> None:
    # the default transport checks names only: this is the gap resolve_and_pin closes
    _, resolver = _records("127.0.0.1")
    with RawServer(_ok) as server:
        with HttpTransport(url_policy=PUBLIC_HTTP, resolver=resolver) as http:
            assert http.send(TransportRequest("GET", f"http://{NAME}:{server.port}/")).body == b"ok"
        assert server.connections == 1


def test_a_pinned_connection_keeps_the_urls_host_header() -> None:
    asked, resolver = _records("127.0.0.1")
    local = UrlPolicy.local_development()
    with RawServer(_ok) as server:
        with HttpTransport(url_policy=local, resolve_and_pin=True, resolver=resolver) as http:
            url = f"http://{NAME}:{server.port}/path"
            assert http.send(TransportRequest("GET", url)).body == b"ok"
            assert http.send(TransportRequest("GET", url)).body == b"ok"
        assert asked == [NAME, NAME]  # once per new connection
        assert all(f"Host: {NAME}:{server.port}".encode() in head for head in server.requests)


def test_a_resolver_answer_that_is_not_an_address_is_a_connection_failure() -> None:
    _, resolver = _records("not-an-ip")
    with HttpTransport(url_policy=PUBLIC_HTTP, resolve_and_pin=True, resolver=resolver) as http:
        with pytest.raises(TransportConnectionFailed):
            http.send(TransportRequest("GET", f"http://{NAME}:9/"))
    _, empty = _records()
    with HttpTransport(url_policy=PUBLIC_HTTP, resolve_and_pin=True, resolver=empty) as http:
        with pytest.raises(TransportConnectionFailed):
            http.send(TransportRequest("GET", f"http://{NAME}:9/"))


def test_check_resolved_address_table() -> None:
    policy = UrlPolicy()
    policy.check_resolved_address(NAME, "93.184.215.14")
    policy.check_resolved_address(NAME, "2606:2800:220:1:248:1893:25c8:1946")
    for address in ("127.0.0.1", "10.0.0.1", "fe80::1%eth0", "::ffff:127.0.0.1", "0.0.0.0"):
        with pytest.raises(UrlPolicyViolation) as caught:
            policy.check_resolved_address(NAME, address)
        assert caught.value.reason is UrlRejection.non_public_address
    with pytest.raises(UrlPolicyViolation) as caught:
        policy.check_resolved_address(NAME, "example.com")
    assert caught.value.reason is UrlRejection.malformed
    UrlPolicy(allow_local_network=True).check_resolved_address(NAME, "127.0.0.1")


def test_the_system_resolver_is_used_without_a_custom_one() -> None:
    addresses = resolve("localhost", 80, IoGuard(None, None, "t"))
    assert addresses and all(family in (socket.AF_INET, socket.AF_INET6) for family, _ in addresses)
    guard = IoGuard(time.monotonic() + 5, None, "t")  # a watched lookup runs on its own thread
    try:
        assert resolve("localhost", 80, guard) == addresses
    finally:
        guard.close()
    assert resolve("127.0.0.1", 80, IoGuard(None, None, "t")) == [(socket.AF_INET, ("127.0.0.1", 80))]


def test_resolver_must_be_callable() -> None:
    with pytest.raises(TypeError, match="resolver"):
        HttpTransport(resolver="8.8.8.8")  # type: ignore[arg-type]


# ------------------------------------------------------------------ TLS keeps the name


@pytest.fixture
def tls_files(tmp_path: Path) -> Iterator[tuple[Path, Path, Path]]:
    cert_path, key_path = self_signed(tmp_path, NAME, "the TLS pinning test")
    yield cert_path, key_path, cert_path


def test_pinned_tls_verifies_the_certificate_for_the_urls_name(
    tls_files: tuple[Path, Path, Path],
) -> None:
    cert, key, ca = tls_files
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    seen_sni: list[str | None] = []
    context.sni_callback = lambda sock, server_name, ctx: seen_sni.append(server_name)
    _, resolver = _records("127.0.0.1")
    local = UrlPolicy(allow_local_network=True)
    with RawServer(_ok, tls=context) as server:
        with HttpTransport(
            url_policy=local, resolve_and_pin=True, resolver=resolver, ca_certs=str(ca)
        ) as http:
            response = http.send(TransportRequest("GET", f"https://{NAME}:{server.port}/"))
        assert response.body == b"ok"
        assert seen_sni == [NAME]
