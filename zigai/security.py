"""Outbound URL policy and credential redaction (a leaf: stdlib only, no zigai imports but errors).

Job
    :class:`UrlPolicy` decides, without any I/O, whether zigai may send a request to a URL.
    The redaction helpers produce the header and text views that every *diagnostic* consumer
    (error observers, telemetry, logs, cassettes) sees instead of raw values.

Invariants
    * The default policy is HTTPS-only and public-network-only.  ``allow_http`` and
      ``allow_local_network`` are separate, explicit opt-ins for local development.
    * The policy is enforced independently by the provider boundary and by
      :class:`zigai.transport.HttpTransport` (and later MCP); it is cheap and pure, so overlap is
      deliberate.
    * Where two policies govern one URL (an agent's and a provider's, an MCP transport's or a
      browser's), :func:`stricter_policy` is the one combination rule: the URL must pass both,
      so each opt-in needs both and the allowlists intersect.
    * Anything ambiguous is rejected rather than interpreted: control characters, whitespace,
      backslashes and non-ASCII text anywhere in the URL; userinfo (``user:pass@``) even when
      empty; numeric host forms that the OS resolver would read as an IPv4 address in a
      non-dotted-quad spelling (``127.1``, ``0x7f.0.0.1``, ``2130706433``); IPv6 zone ids.
      Because of that, Python's URL parser and urllib3's parser see the same host.
    * Exact sensitive values are redacted *before* any truncation, so a cut can never leave a
      partial secret behind; every JSON string spelling of a value (``\\u`` escapes, short
      escapes, in any mix) counts as an occurrence.

DNS: :meth:`UrlPolicy.check` never resolves names.  A public name whose A/AAAA record points
at a private or loopback address (including "rebinding" names and wildcard services such as
``<ip>.nip.io``) passes it.  :meth:`UrlPolicy.check_resolved_address` is the other half:
``HttpTransport(resolve_and_pin=True)`` resolves each new connection's name once, checks every
address with it and connects to a checked address, so the name cannot be re-pointed between
the check and the connect.
"""

from __future__ import annotations

import enum
import functools
import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from zigai.errors import SecurityError

__all__ = [
    "REDACTED",
    "CheckedUrl",
    "Redactor",
    "UrlPolicy",
    "UrlPolicyViolation",
    "UrlRejection",
    "is_loopback_host",
    "is_sensitive_header_name",
    "local_policy_for",
    "loopback_host",
    "redact_bytes",
    "redact_headers",
    "redact_text",
    "stricter_policy",
]


class UrlRejection(enum.Enum):
    """Stable reason codes carried by :class:`UrlPolicyViolation`."""

    malformed = "malformed"
    scheme_not_allowed = "scheme_not_allowed"
    embedded_credentials = "embedded_credentials"
    local_name = "local_name"
    single_label_host = "single_label_host"
    non_public_address = "non_public_address"
    ambiguous_address = "ambiguous_address"
    host_not_allowed = "host_not_allowed"


class UrlPolicyViolation(SecurityError):
    """A URL was refused by a :class:`UrlPolicy`; ``reason`` says which rule fired.

    The message never contains the URL's query, fragment or userinfo.
    """

    def __init__(
        self, message: str, *, reason: UrlRejection = UrlRejection.malformed, host: str = ""
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.host = host


# Names that never denote a public internet host.  Each entry matches the name itself and every
# subdomain of it.  "local" (mDNS), "localhost", "internal" (cloud metadata and ICANN-reserved
# private use), "home.arpa" (RFC 8375), reserved test TLDs (RFC 2606/6761) and common private
# intranet suffixes; "arpa" covers reverse-DNS names such as 1.0.0.127.in-addr.arpa.
_LOCAL_SUFFIXES: frozenset[str] = frozenset(
    {
        "localhost", "localdomain", "local", "internal", "intranet", "private", "lan", "home",
        "corp", "home.arpa", "arpa", "test", "example", "invalid", "onion", "alt",
    }
)

# IPv4 ranges that are not publicly routable unicast destinations.
_V4_BLOCKED: tuple[tuple[ipaddress.IPv4Network, str], ...] = tuple(
    (ipaddress.IPv4Network(net), label)
    for net, label in (
        ("0.0.0.0/8", "this-network/unspecified"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "carrier-grade NAT"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "IETF protocol assignments"),
        ("192.0.2.0/24", "documentation"),
        ("192.88.99.0/24", "6to4 relay anycast"),
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "benchmarking"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved/broadcast"),
    )
)

# Only 2000::/3 is global unicast; inside it these ranges are still not public destinations.
_V6_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
_V6_BLOCKED_IN_GLOBAL: tuple[tuple[ipaddress.IPv6Network, str], ...] = tuple(
    (ipaddress.IPv6Network(net), label)
    for net, label in (
        ("2001::/23", "IETF protocol assignments (incl. Teredo)"),
        ("2001:db8::/32", "documentation"),
        ("3fff::/20", "documentation"),
    )
)
_V6_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
_V6_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_V6_6TO4 = ipaddress.IPv6Network("2002::/16")

_FORBIDDEN_URL_CHARS = re.compile(r"[^\x21-\x7e]|\\")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_LABEL = re.compile(r"^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$")
_NUMERIC_LABEL = re.compile(r"^(?:0x[0-9a-f]*|[0-9]+)$")
_STRICT_V4 = re.compile(r"^(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?:\.(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}$")  # noqa: E501


def _blocked_v4(address: ipaddress.IPv4Address) -> str | None:
    for network, label in _V4_BLOCKED:
        if address in network:
            return label
    return None


def _blocked_v6(address: ipaddress.IPv6Address) -> str | None:
    if address in _V6_MAPPED or address in _V6_NAT64:
        embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        inner = _blocked_v4(embedded)
        return None if inner is None else f"embedded IPv4 {inner}"
    if address in _V6_6TO4:
        embedded = ipaddress.IPv4Address((int(address) >> 80) & 0xFFFFFFFF)
        inner = _blocked_v4(embedded)
        return None if inner is None else f"6to4 embedded IPv4 {inner}"
    if address not in _V6_GLOBAL_UNICAST:
        return "not global unicast (loopback, unspecified, unique-local, link-local, multicast or reserved)"  # noqa: E501
    for network, label in _V6_BLOCKED_IN_GLOBAL:
        if address in network:
            return label
    return None


@dataclass(frozen=True, slots=True)
class CheckedUrl:
    """The parts of an accepted URL that transports act on (host is lowercase, no brackets)."""

    scheme: str
    host: str
    port: int
    is_ip_literal: bool


def _split_authority(url: str) -> tuple[str, str]:
    if _FORBIDDEN_URL_CHARS.search(url):
        raise UrlPolicyViolation(
            "URL contains whitespace, control, backslash or non-ASCII characters",
            reason=UrlRejection.malformed,
        )
    match = _SCHEME.match(url)
    if match is None:
        raise UrlPolicyViolation("URL has no scheme://authority", reason=UrlRejection.malformed)
    scheme = match.group(1).lower()
    rest = url[match.end():]
    end = len(rest)
    for delimiter in "/?#":
        position = rest.find(delimiter)
        if position != -1:
            end = min(end, position)
    return scheme, rest[:end]


@dataclass(frozen=True, slots=True)
class UrlPolicy:
    """Which outbound URLs zigai may contact.  Pure, allocation-light, never resolves DNS.

    ``allowed_hosts`` (when given) is an exact host allowlist, compared after lowercasing and
    dropping one trailing dot; it narrows the policy and never widens it (a local host on the
    allowlist still needs ``allow_local_network``).
    """

    allow_http: bool = False
    allow_local_network: bool = False
    allowed_hosts: frozenset[str] | None = field(default=None)

    def __post_init__(self) -> None:
        if self.allowed_hosts is not None:
            normalized = frozenset(_normalize_host(h) for h in self.allowed_hosts)
            object.__setattr__(self, "allowed_hosts", normalized)

    @classmethod
    def local_development(cls, allowed_hosts: Iterable[str] | None = None) -> UrlPolicy:
        """HTTP and local/private destinations allowed: for a server on this machine or LAN."""
        hosts = None if allowed_hosts is None else frozenset(allowed_hosts)
        return cls(allow_http=True, allow_local_network=True, allowed_hosts=hosts)

    def allows(self, url: str) -> bool:
        """True when :meth:`check` would accept ``url``."""
        try:
            self.check(url)
        except UrlPolicyViolation:
            return False
        return True

    def check(self, url: str) -> CheckedUrl:
        """Return the checked parts of ``url`` or raise :class:`UrlPolicyViolation`."""
        scheme, authority = _split_authority(url)
        if scheme == "https":
            default_port = 443
        elif scheme == "http":
            if not self.allow_http:
                raise UrlPolicyViolation(
                    "plain http is not allowed by this policy; " + _local_fix(_host_or_none(authority)),
                    reason=UrlRejection.scheme_not_allowed,
                )
            default_port = 80
        else:
            raise UrlPolicyViolation(
                f"scheme {scheme!r} is not allowed", reason=UrlRejection.scheme_not_allowed
            )
        if "@" in authority:
            raise UrlPolicyViolation(
                "URL embeds credentials (userinfo); send credentials in headers instead",
                reason=UrlRejection.embedded_credentials,
            )
        host_text, port = _split_host_port(authority, default_port)
        checked = self._check_host(scheme, host_text, port)
        if self.allowed_hosts is not None and checked.host not in self.allowed_hosts:
            raise UrlPolicyViolation(
                f"host {checked.host!r} is not on the allowlist",
                reason=UrlRejection.host_not_allowed,
                host=checked.host,
            )
        return checked

    def check_resolved_address(self, host: str, address: str) -> None:
        """Refuse ``address`` (an IP that ``host`` resolved to) unless this policy allows it.

        The DNS-time half of the policy, used by transports that resolve and pin
        (``HttpTransport(resolve_and_pin=True)``): a public-looking name whose record points
        at a loopback, private, link-local or otherwise non-public address is refused with
        :attr:`UrlRejection.non_public_address` unless ``allow_local_network`` is set.
        """
        if self.allow_local_network:
            return
        text = address.split("%", 1)[0]  # an IPv6 scope id only narrows a non-public address
        try:
            parsed = ipaddress.ip_address(text)
        except ValueError:
            raise UrlPolicyViolation(
                f"host {host!r} resolved to something that is not an IP address",
                reason=UrlRejection.malformed,
                host=host,
            ) from None
        if isinstance(parsed, ipaddress.IPv4Address):
            label = _blocked_v4(parsed)
        else:
            label = _blocked_v6(parsed)
        if label is not None:
            raise UrlPolicyViolation(
                f"host {host!r} resolves to {parsed}, which is not public ({label}); use a "
                "policy with allow_local_network for local servers",
                reason=UrlRejection.non_public_address,
                host=host,
            )

    def _check_host(self, scheme: str, host_text: str, port: int) -> CheckedUrl:
        if host_text.startswith("["):
            address = _parse_v6_literal(host_text)
            host = str(address)
            if not self.allow_local_network:
                label = _blocked_v6(address)
                if label is not None:
                    raise UrlPolicyViolation(
                        f"address {host} is not public ({label}); {_local_fix(host)}",
                        reason=UrlRejection.non_public_address,
                        host=host,
                    )
            return CheckedUrl(scheme, host, port, True)
        host = _normalize_host(host_text)
        labels = host.split(".")
        if not host or not all(_LABEL.match(label) for label in labels) or len(host) > 253:
            raise UrlPolicyViolation(
                "host is empty or not a valid DNS name", reason=UrlRejection.malformed, host=host
            )
        if _NUMERIC_LABEL.match(labels[-1]):
            if not _STRICT_V4.match(host):
                raise UrlPolicyViolation(
                    f"host {host!r} is a non-canonical numeric address; use a dotted quad",
                    reason=UrlRejection.ambiguous_address,
                    host=host,
                )
            if not self.allow_local_network:
                label = _blocked_v4(ipaddress.IPv4Address(host))
                if label is not None:
                    raise UrlPolicyViolation(
                        f"address {host} is not public ({label}); {_local_fix(host)}",
                        reason=UrlRejection.non_public_address,
                        host=host,
                    )
            return CheckedUrl(scheme, host, port, True)
        if not self.allow_local_network:
            for index in range(len(labels)):
                if ".".join(labels[index:]) in _LOCAL_SUFFIXES:
                    raise UrlPolicyViolation(
                        f"host {host!r} is a local or reserved name; {_local_fix(host)}",
                        reason=UrlRejection.local_name,
                        host=host,
                    )
            if len(labels) == 1:
                raise UrlPolicyViolation(
                    f"single-label host {host!r} is resolved by local search domains; "
                    f"{_local_fix(host)}",
                    reason=UrlRejection.single_label_host,
                    host=host,
                )
        return CheckedUrl(scheme, host, port, False)


def _local_fix(host: str | None) -> str:
    """The exact policy that admits ``host`` as a development server, for refusal messages."""
    hosts = "" if host is None else f"allowed_hosts=[{host!r}]"
    return (f"for a server on this machine or your network pass "
            f"url_policy=UrlPolicy.local_development({hosts})")


def _host_or_none(authority: str) -> str | None:
    if "@" in authority:
        return None  # never echo userinfo
    try:
        host = _split_host_port(authority, 80)[0]
    except UrlPolicyViolation:
        return None
    return host.strip("[]").lower() or None


def local_policy_for(url: str) -> UrlPolicy | None:
    """The loopback-only policy for a ``url`` on this machine, else ``None``.

    The one rule for local endpoints: a base URL whose host is ``localhost`` or a loopback
    address (``127.0.0.0/8``, ``::1``) gets ``UrlPolicy.local_development(allowed_hosts=[host])``
    (plain HTTP and local addresses, to exactly that host) when the caller named no policy;
    every other URL keeps the caller's policy or the public-HTTPS default.
    """
    host = loopback_host(url)
    return None if host is None else UrlPolicy.local_development(allowed_hosts=(host,))


def loopback_host(url: str) -> str | None:
    """The host of ``url`` when it is ``localhost`` or a loopback address, else ``None``."""
    try:
        host = urlsplit(url).hostname
    except (ValueError, TypeError, AttributeError):
        return None
    return host if host and is_loopback_host(host) else None


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (``127.0.0.0/8``, ``::1``, no brackets)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def stricter_policy(*policies: UrlPolicy | None) -> UrlPolicy | None:
    """The policy that accepts exactly the URLs every given policy accepts (None entries add nothing).

    ``allow_http`` and ``allow_local_network`` hold only when every policy sets them, and the
    host allowlists intersect (``None``, no allowlist, narrows nothing).  Returns None when
    every entry is None.  A URL passes the result exactly when it passes each policy, and a
    resolved address likewise, so transports that pin addresses can be given the result.
    """
    present = [policy for policy in policies if policy is not None]
    for policy in present:
        if not isinstance(policy, UrlPolicy):
            raise TypeError(f"expected a zigai.security.UrlPolicy or None, got {type(policy).__name__}")
    if len(present) < 2:
        return present[0] if present else None
    if all(policy == present[0] for policy in present[1:]):
        return present[0]
    hosts: frozenset[str] | None = None
    for policy in present:
        if policy.allowed_hosts is not None:
            hosts = policy.allowed_hosts if hosts is None else hosts & policy.allowed_hosts
    return UrlPolicy(allow_http=all(policy.allow_http for policy in present),
                     allow_local_network=all(policy.allow_local_network for policy in present),
                     allowed_hosts=hosts)


def _normalize_host(host: str) -> str:
    text = host.strip().lower()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    if ":" in text:
        try:
            return str(ipaddress.IPv6Address(text))
        except ValueError:
            return text
    return text[:-1] if text.endswith(".") else text


def _split_host_port(authority: str, default_port: int) -> tuple[str, int]:
    if authority.startswith("["):
        close = authority.find("]")
        if close == -1:
            raise UrlPolicyViolation("unterminated IPv6 literal", reason=UrlRejection.malformed)
        host, rest = authority[: close + 1], authority[close + 1:]
    else:
        host, colon, port_text = authority.partition(":")
        rest = f":{port_text}" if colon else ""
    if not rest:
        return host, default_port
    if not rest.startswith(":"):
        raise UrlPolicyViolation("invalid authority", reason=UrlRejection.malformed)
    port_text = rest[1:]
    if not port_text or not port_text.isdigit() or len(port_text) > 5:
        raise UrlPolicyViolation("invalid port", reason=UrlRejection.malformed)
    port = int(port_text)
    if not 1 <= port <= 65535:
        raise UrlPolicyViolation("port out of range", reason=UrlRejection.malformed)
    return host, port


def _parse_v6_literal(host_text: str) -> ipaddress.IPv6Address:
    inner = host_text[1:-1]
    if "%" in inner:
        raise UrlPolicyViolation("IPv6 zone ids are not allowed", reason=UrlRejection.malformed)
    try:
        return ipaddress.IPv6Address(inner)
    except ValueError:
        raise UrlPolicyViolation("invalid IPv6 literal", reason=UrlRejection.malformed) from None


# --------------------------------------------------------------------------------------------
# Redaction

REDACTED = "[REDACTED]"

# Exact names that always carry credentials or session state.
_SENSITIVE_NAMES: frozenset[str] = frozenset(
    {
        "authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key",
        "cookie", "set-cookie", "x-amz-security-token", "x-auth-token", "x-csrf-token",
        "x-xsrf-token", "x-upload-url", "x-goog-upload-url", "ocp-apim-subscription-key",
    }
)
# A name segment (split on "-" and "_") equal to one of these marks the header sensitive.
# Plural "tokens" is deliberately absent: rate-limit headers such as
# "x-ratelimit-remaining-tokens" are counts that diagnostics need.
_SENSITIVE_SEGMENTS: frozenset[str] = frozenset(
    {
        "token", "secret", "key", "apikey", "password", "passwd", "credential", "credentials",
        "cookie", "session", "signature", "auth", "bearer", "jwt",
    }
)
_SENSITIVE_SEGMENT_PREFIXES = ("auth",)  # authorization, authentication, authtoken ...
_SENSITIVE_SEGMENT_SUFFIXES = ("token", "secret", "apikey", "password")


def is_sensitive_header_name(name: str, extra: Iterable[str] = ()) -> bool:
    """True when a header of this name must never reach a diagnostic consumer verbatim.

    Recognizes conventional secret names without any flag: an exact list (``authorization``,
    ``x-api-key``, ``cookie`` ...) plus any name with a segment such as ``token``, ``secret``,
    ``key``, ``auth*``, ``*token``.  ``extra`` adds exact names (case-insensitive).
    """
    lowered = name.strip().lower()
    if lowered in _SENSITIVE_NAMES or lowered in {e.lower() for e in extra}:
        return True
    for segment in re.split(r"[-_.]", lowered):
        if segment in _SENSITIVE_SEGMENTS:
            return True
        if segment.startswith(_SENSITIVE_SEGMENT_PREFIXES):
            return True
        if segment.endswith(_SENSITIVE_SEGMENT_SUFFIXES):
            return True
    return False


_JSON_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f",
                       "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _hex_escape(code: int) -> str:
    """A pattern for ``\\uXXXX`` of one UTF-16 code unit, hex digits in either case."""
    return "\\\\u" + "".join(
        f"[{digit}{digit.upper()}]" if digit.isalpha() else digit for digit in f"{code:04x}"
    )


@functools.lru_cache(maxsize=256)
def _json_spellings(secret: str) -> re.Pattern[str]:
    """Every way a JSON string can spell ``secret``: each character as itself (when JSON
    allows it unescaped), as its short escape (``\\/``, ``\\n`` ...) or as ``\\uXXXX``
    (a surrogate pair above the BMP), in any mix."""
    units = []
    for char in secret:
        code = ord(char)
        choices = []
        if code >= 0x20 and char not in '"\\':
            choices.append(re.escape(char))
        if char in _JSON_SHORT_ESCAPES:
            choices.append(re.escape(_JSON_SHORT_ESCAPES[char]))
        if code > 0xFFFF:
            high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
            choices.append(_hex_escape(high) + _hex_escape(low))
        else:
            choices.append(_hex_escape(code))
        units.append("(?:" + "|".join(choices) + ")")
    return re.compile("".join(units))


def redact_text(text: str, secrets: Iterable[str] = (), max_chars: int | None = None) -> str:
    """Replace every occurrence of each secret, then truncate to ``max_chars``.

    An occurrence is the exact value or any JSON string spelling of it (characters written
    as ``\\uXXXX`` or short escapes, in any mix), since provider bodies echo keys inside
    JSON.  Redaction runs first so truncation cannot expose a prefix of a secret.  Empty
    secrets are ignored; longer secrets are replaced before shorter ones they may contain.
    """
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
        if "\\" in text:
            text = _json_spellings(secret).sub(REDACTED, text)
    if max_chars is not None and len(text) > max_chars:
        text = text[:max_chars]
    return text


@functools.lru_cache(maxsize=256)
def _json_spellings_bytes(secret: str) -> re.Pattern[bytes]:
    return re.compile(_json_spellings(secret).pattern.encode("utf-8"))


def redact_bytes(data: bytes, secrets: Iterable[str] = ()) -> bytes:
    """:func:`redact_text` for raw bodies: every secret, as UTF-8 or in any JSON spelling,
    becomes ``[REDACTED]``; bytes that are not UTF-8 are left as they are."""
    marker = REDACTED.encode()
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        data = data.replace(secret.encode("utf-8", "surrogatepass"), marker)
        if b"\\" in data:
            data = _json_spellings_bytes(secret).sub(marker, data)
    return data


def redact_headers(
    headers: Iterable[tuple[str, str]],
    secrets: Iterable[str] = (),
    extra_sensitive_names: Iterable[str] = (),
    max_value_chars: int | None = None,
) -> tuple[tuple[str, str], ...]:
    """The redacted header view: sensitive names get ``[REDACTED]``; other values have exact
    secrets replaced before truncation."""
    secret_list = tuple(secrets)
    extra = tuple(extra_sensitive_names)
    view = []
    for name, value in headers:
        if is_sensitive_header_name(name, extra):
            view.append((name, REDACTED))
        else:
            view.append((name, redact_text(value, secret_list, max_value_chars)))
    return tuple(view)


@dataclass(frozen=True, slots=True)
class Redactor:
    """A reusable redaction configuration: known secret values plus extra sensitive names."""

    secrets: tuple[str, ...] = ()
    extra_sensitive_names: frozenset[str] = frozenset()

    def is_sensitive(self, name: str) -> bool:
        return is_sensitive_header_name(name, self.extra_sensitive_names)

    def headers(
        self, headers: Iterable[tuple[str, str]], max_value_chars: int | None = None
    ) -> tuple[tuple[str, str], ...]:
        return redact_headers(headers, self.secrets, self.extra_sensitive_names, max_value_chars)

    def text(self, text: str, max_chars: int | None = None) -> str:
        return redact_text(text, self.secrets, max_chars)
