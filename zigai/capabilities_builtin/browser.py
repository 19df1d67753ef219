"""The ``browser`` capability and :class:`HttpBrowser`, its default backend over zigai's transport.

Invariants:

* the capability checks every URL with its :class:`~zigai.security.UrlPolicy` before the
  backend sees it, and the page's final URL again afterwards; a refused URL is a
  model-visible retry, never a request;
* the policy is the capability's combined with the running agent's ``url_policy``
  (:func:`~zigai.security.stricter_policy`: a URL must pass both);
* :class:`HttpBrowser` follows at most ``max_redirects`` redirects itself, checking each
  target with the same policy (its :class:`~zigai.transport.HttpTransport` never follows one
  and checks the policy again, pinning resolved addresses); the body is bounded by the
  transport's limit before decoding; the call's deadline and cancellation token reach every
  request;
* the text returned to the model is cut at ``max_page_chars`` (title at 512 characters).
"""

from __future__ import annotations

import html.parser
import re
import threading
import urllib.parse
from typing import Any

from zigai.capabilities_builtin.backends import BrowserBackend, FetchedPage
from zigai.capabilities_builtin.bounds import BuiltinLimits, bounded_text
from zigai.capability import Capability
from zigai.control import CancellationToken
from zigai.errors import SecurityError, TransportError
from zigai.reflect import tool
from zigai.security import UrlPolicy, stricter_policy
from zigai.tool import ModelRetry, ToolRunContext
from zigai.transport import TransportTimedOut

__all__ = ["HttpBrowser", "browser_capability", "html_to_text"]

_MAX_TITLE_CHARS = 512
_MAX_POOLED_POLICIES = 8  # connection pools kept per distinct effective policy (an agent's and ours)
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_SKIPPED_ELEMENTS = frozenset({"script", "style", "noscript", "template", "svg", "head"})
_BLOCK_ELEMENTS = frozenset({
    "p", "div", "br", "li", "ul", "ol", "tr", "table", "section", "article", "header", "footer",
    "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "hr", "main", "nav", "aside",
})


class _TextExtractor(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self._skipping = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in _SKIPPED_ELEMENTS:
            self._skipping += 1
        elif tag in _BLOCK_ELEMENTS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in _SKIPPED_ELEMENTS:
            self._skipping = max(0, self._skipping - 1)
        elif tag in _BLOCK_ELEMENTS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
        elif not self._skipping:
            self.parts.append(data)


def html_to_text(document: str) -> tuple[str, str]:
    """``(title, readable text)`` of an HTML document: scripts and styles dropped, blocks on lines."""
    extractor = _TextExtractor()
    extractor.feed(document)
    extractor.close()
    lines = (re.sub(r"[ \t\r\f\v]+", " ", line).strip() for line in "".join(extractor.parts).split("\n"))
    text = "\n".join(line for line in lines if line)
    return " ".join("".join(extractor.title).split()), text


class HttpBrowser:
    """Fetches pages with zigai's :class:`~zigai.transport.HttpTransport` (see the module).

    ``transport`` defaults to one built with ``url_policy``, ``resolve_and_pin=True`` and
    redirects returned rather than followed; call :meth:`close` (or use ``with``) to release
    a transport it built.
    """

    def __init__(self, url_policy: UrlPolicy | None = None, *, transport: Any = None,
                 max_redirects: int = 5, user_agent: str = "zigai-browser") -> None:
        self.url_policy = url_policy or UrlPolicy()
        self.max_redirects = max_redirects
        self.user_agent = user_agent
        self._owned = transport is None
        self._transport = transport
        self._transports: dict[UrlPolicy, Any] = {}  # one per effective policy (few: the agents')
        self._lock = threading.Lock()

    def _transport_for(self, max_bytes: int, policy: UrlPolicy) -> tuple[Any, bool]:
        """The transport for ``policy`` and whether the caller must close it after one fetch
        (past :data:`_MAX_POOLED_POLICIES` distinct policies nothing more is kept)."""
        if not self._owned:
            return self._transport, False
        from zigai.transport import HttpTransport, Limits, RedirectPolicy

        with self._lock:
            transport = self._transports.get(policy)
            if transport is not None:
                return transport, False
            transport = HttpTransport(
                limits=Limits(max_response_body_bytes=max_bytes), url_policy=policy,
                redirect_policy=RedirectPolicy.return_response, resolve_and_pin=True)
            if len(self._transports) >= _MAX_POOLED_POLICIES:
                return transport, True
            self._transports[policy] = transport
            return transport, False

    def fetch(self, url: str, *, max_bytes: int, deadline: float | None,
              cancellation: CancellationToken, url_policy: UrlPolicy | None = None) -> FetchedPage:
        """Load ``url``; with ``url_policy`` (a caller's, such as the agent's) every hop must
        pass it as well as this browser's policy, and resolved addresses are pinned under both."""
        from zigai.transport import TransportRequest

        policy = stricter_policy(self.url_policy, url_policy) or self.url_policy
        transport, one_off = self._transport_for(max_bytes, policy)
        try:
            current = url
            for _ in range(self.max_redirects + 1):
                policy.check(current)
                response = transport.send(TransportRequest(
                    "GET", current, headers=(("user-agent", self.user_agent),
                                             ("accept", "text/html, text/plain;q=0.9, */*;q=0.1")),
                    deadline=deadline, cancellation=cancellation))
                location = response.headers.get("location")
                if response.status in _REDIRECTS and location:
                    current = urllib.parse.urljoin(current, location)
                    continue
                if len(response.body) > max_bytes:
                    raise TransportError(f"the page is larger than {max_bytes} bytes")
                return _page(current, response)
            raise TransportError(f"more than {self.max_redirects} redirects")
        finally:
            if one_off:
                transport.close()

    def close(self) -> None:
        with self._lock:
            transports, self._transports = list(self._transports.values()), {}
        for transport in transports:
            transport.close()

    def __enter__(self) -> HttpBrowser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _page(url: str, response: Any) -> FetchedPage:
    content_type = (response.headers.get("content-type") or "").lower()
    charset = re.search(r"charset=([A-Za-z0-9._-]+)", content_type)
    try:
        body = response.body.decode(charset.group(1) if charset else "utf-8", errors="replace")
    except LookupError:
        body = response.body.decode("utf-8", errors="replace")
    if "html" in content_type or (not content_type and body.lstrip()[:1] == "<"):
        title, text = html_to_text(body)
    elif content_type.startswith("text/") or "json" in content_type or "xml" in content_type \
            or not content_type:
        title, text = "", body
    else:
        title, text = "", f"[{content_type} content of {len(response.body)} bytes; not shown]"
    return FetchedPage(url, text, title, response.status)


def browser_capability(backend: BrowserBackend, policy: UrlPolicy, limits: BuiltinLimits) -> Capability:
    """The ``browser`` bundle over ``backend`` (borrowed), every URL checked by ``policy``."""

    def browser_open(ctx: ToolRunContext[Any], url: str) -> dict[str, Any]:
        """Open a web page (http or https URL) and return its title and readable text."""
        # The agent's url_policy governs the browser too: a URL must pass both.
        effective = stricter_policy(policy, ctx.url_policy) or policy
        try:
            effective.check(url)
        except SecurityError as exc:
            raise ModelRetry(f"that URL is not allowed: {exc}") from None
        try:
            if isinstance(backend, HttpBrowser):  # it follows redirects itself: every hop is checked
                page = backend.fetch(url, max_bytes=limits.max_page_bytes, deadline=ctx.deadline,
                                     cancellation=ctx.call_token, url_policy=ctx.url_policy)
            else:
                page = backend.fetch(url, max_bytes=limits.max_page_bytes, deadline=ctx.deadline,
                                     cancellation=ctx.call_token)
        except SecurityError as exc:
            raise ModelRetry(f"the page led to a URL that is not allowed: {exc}") from None
        except TransportTimedOut:
            raise
        except TransportError as exc:
            raise ModelRetry(f"could not load {url}: {exc}") from None
        try:
            effective.check(page.url)
        except SecurityError as exc:
            raise ModelRetry(f"the page redirected to a URL that is not allowed: {exc}") from None
        return {"url": page.url, "status": page.status, "title": bounded_text(page.title, _MAX_TITLE_CHARS),
                "text": bounded_text(page.text, limits.max_page_chars)}

    return Capability(
        id="browser",
        description="Open web pages (only URLs the application's policy allows).",
        tools=(tool("browser_open", None, browser_open, takes_context=True),),
        instructions="Use browser_open to read a web page when you need its content.",
    )
