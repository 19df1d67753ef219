"""A throwaway self-signed certificate for TLS tests on 127.0.0.1 (needs ``cryptography``)."""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

import pytest


def self_signed(directory: Path, host: str, why: str) -> tuple[Path, Path]:
    """``(cert.pem, key.pem)`` in ``directory``: a one-day CA certificate for ``host`` (an IP
    address or a DNS name, put in the subject alternative name).  Skips with ``why`` when
    ``cryptography`` is not installed."""
    pytest.importorskip(
        "cryptography", reason=f"{why} makes a certificate with 'cryptography' "
        "(installed with the dev extra: pip install -e '.[dev]')"
    )
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    try:
        alternative: x509.GeneralName = x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        alternative = x509.DNSName(host)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([alternative]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return cert_path, key_path
