"""The built-in chat page: a self-contained HTML/CSS/JS client for a :class:`~zigai.ui.UiApp`.

Job
    Serve the three files in ``zigai/ui/static/`` (package data, read with
    :mod:`importlib.resources`) for ``ui_app(agent, "agui", page=True)``: ``GET {path}`` is the
    page, ``GET {path}static/page.js`` and ``static/page.css`` its script and style.  The
    page posts AG-UI ``RunAgentInput`` bodies to ``{path}`` and reads the SSE answer, exactly
    like any other AG-UI client, so the app's own request handling applies to it.

Invariants
    * No CDN, no build step: everything the browser loads comes from this package.
    * A strict ``Content-Security-Policy`` (scripts, styles and fetches from the same origin
      only, no inline script, no framing) and ``nosniff`` on every file; the script renders
      server and model text with ``textContent``, never as HTML.
    * The only value put into the HTML is the app's mount path, HTML-escaped.
"""

from __future__ import annotations

import html
from functools import lru_cache
from importlib import resources

__all__ = ["PAGE_ASSETS", "SECURITY_HEADERS", "page_asset"]

# route below the mount path -> (file in zigai/ui/static, content type)
PAGE_ASSETS = {
    "": ("index.html", "text/html; charset=utf-8"),
    "static/page.js": ("page.js", "text/javascript; charset=utf-8"),
    "static/page.css": ("page.css", "text/css; charset=utf-8"),
}

SECURITY_HEADERS = (
    ("Content-Security-Policy",
     "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
     "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("Cache-Control", "no-cache"),
)


@lru_cache(maxsize=8)
def _read(name: str) -> bytes:
    return (resources.files("zigai.ui") / "static" / name).read_bytes()


def page_asset(route: str, mount_path: str) -> tuple[bytes, str] | None:
    """The body and content type served at ``{mount_path}{route}``, or None for no such file."""
    entry = PAGE_ASSETS.get(route)
    if entry is None:
        return None
    name, content_type = entry
    body = _read(name)
    if name == "index.html":
        body = body.replace(b"{{PATH}}", html.escape(mount_path, quote=True).encode())
    return body, content_type
