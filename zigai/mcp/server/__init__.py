"""zigai.mcp.server: serve zigai tools, resources and prompts to any MCP client.

Job
    The transport-neutral :class:`~zigai.mcp.Server` dispatcher and what it needs: the request
    a handler sees, multi round-trip input, handler values as results, sessions for clients of
    the 2025 revisions, the Tasks extension's background tools, and the loops that serve it
    over stdio, HTTP and in process.

Invariants
    * Imports :mod:`zigai.mcp.errors`, :mod:`zigai.mcp.wire`, :mod:`zigai.mcp.auth` (the HTTP
      entry's Bearer policy), its own modules and layers below MCP; never ``client``
      (tests/test_mcp_layout.py).
    * ``server`` imports ``sessions``; sessions see the server through a structural protocol,
      and both build :class:`~zigai.mcp.ServerRequest` from ``request``; ``outbound`` imports
      only ``wire`` and ``errors``.

Submodules
    ``input`` (``ServerRequest.ask``, sealed ``requestState``), ``request``
    (:class:`~zigai.mcp.ServerRequest`, :func:`~zigai.mcp.current_request`), ``values``
    (handler values as results, cursors), ``sessions`` (2025 clients: ``initialize``, the
    bounded session table), ``outbound`` (a session's requests to its client and the
    notifications pushed to it), ``server`` (:class:`~zigai.mcp.Server`), ``tasks``
    (:class:`~zigai.mcp.TaskServer`), ``stdio`` (:func:`~zigai.mcp.serve_stdio`), ``http``
    (deployment policy, WSGI and ``http.server`` entries), ``memory``
    (:class:`~zigai.mcp.InProcessTransport`).
"""
