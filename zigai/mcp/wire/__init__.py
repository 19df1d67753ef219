"""zigai.mcp.wire: what both ends of MCP share — framing, values, revisions, the transport contract.

Job
    The bottom of the MCP package.  Everything a message is made of, independent of which end
    sends it: JSON-RPC framing under the bounded ``mcp_message`` JSON profile, the header and
    event-stream codecs, the protocol revisions, the values that travel (capabilities,
    notifications, results, input requests, the Tasks extension's states) and the contract a
    client transport implements.

Invariants
    * Imports only :mod:`zigai.mcp.errors`, its own modules and layers below MCP; never
      ``client``, ``server`` or ``auth`` (tests/test_mcp_layout.py).
    * Importing it starts nothing and opens nothing: these are values and pure functions.

Submodules
    ``jsonrpc`` (constants, ids, bounded framing), ``headers`` (header value encoding,
    ``x-mcp-header``), ``sse`` (event-stream parser), ``revisions`` (the revisions, era
    detection, per-era methods), ``transport`` (the transport contract), ``input`` (multi
    round-trip :class:`~zigai.mcp.InputHandler` values), ``tasks`` (the Tasks extension's tagged
    task states and request params), ``primitives`` (capabilities, filters, notifications,
    prompt/completion requests), ``results`` (typed results and content blocks).
"""
