"""zigai.mcp.auth: OAuth 2.1 authorization for MCP over HTTP, both the client and the server side.

Job
    Find a protected server's authorization server, get and refresh its tokens (client side,
    the HTTP transport's ``auth=``), and check Bearer tokens before a request reaches a
    :class:`~zigai.mcp.Server` (server side).  A loopback authorization server lets both be
    tried without any outside service.

Invariants
    * Imports only :mod:`zigai.mcp.errors`, :mod:`zigai.mcp.wire`, its own modules and layers
      below MCP; never ``client`` or ``server``, which import it (tests/test_mcp_layout.py).
    * The names are imported from their modules (``from zigai.mcp.auth.flow import
      OAuthProvider``); this ``__init__`` re-exports nothing, so importing one piece does not
      load the others.

Submodules
    ``discovery`` (Bearer challenges, RFC 9728 / RFC 8414 metadata, scopes, PKCE, RFC 9207,
    the :class:`~zigai.mcp.auth.discovery.McpAuthError` tree), ``tokens`` (OAuth clients, token
    sets, the issuer-keyed credential store, token and registration requests), ``flow``
    (:class:`~zigai.mcp.auth.flow.OAuthProvider`), ``server`` (the server's Bearer policy and
    RFC 9728 metadata), ``testing`` (a loopback authorization server).
"""
