"""zigai.mcp.client: the MCP client, its transports, and MCP servers as agent toolsets.

Job
    Talk to any MCP server: the :class:`~zigai.mcp.Client` over stdio, Streamable HTTP or any
    :class:`~zigai.mcp.McpTransport`; the 2025 revisions' ``initialize`` and session requests;
    the Tasks extension's client calls and durable task records; long-lived listen streams;
    and :class:`~zigai.mcp.McpToolset`, which turns a server's tools into an agent toolset.

Invariants
    * Imports :mod:`zigai.mcp.errors`, :mod:`zigai.mcp.wire`, :mod:`zigai.mcp.auth` (the HTTP
      transport's ``auth=``), its own modules and layers below MCP; never ``server``
      (tests/test_mcp_layout.py).
    * ``client`` calls down into ``legacy``, ``tasks``, ``task_watch`` and ``task_store``; the
      first three see the client through small structural protocols, so none of them imports
      ``client``.

Submodules
    ``options`` (:class:`~zigai.mcp.RequestOptions`), ``http``
    (:class:`~zigai.mcp.StreamableHttpTransport`), ``stdio`` (:class:`~zigai.mcp.StdioTransport`),
    ``task_store`` (:class:`~zigai.mcp.FileStore`, two-phase input records), ``tasks`` (get /
    update / cancel, ``wait_task``, ``resume_tasks``), ``task_watch`` (``watch_task`` over a task
    status stream), ``legacy`` (``initialize`` and answering a 2025 server's requests),
    ``client`` (:class:`~zigai.mcp.Client`), ``listen``
    (:func:`~zigai.mcp.listen_with_recovery`), ``toolset`` (:class:`~zigai.mcp.McpToolset`),
    ``connect`` (the default connector of agent specs' ``mcp_servers``).
"""
