"""The reviewed JSON limit profiles of zigai's own boundaries (api.txt, "JSON limits").

Every zigai decoder of untrusted JSON applies one of these before it builds any
value.  ``provider_extra_body`` is zigai's own addition to the specification's table: it
bounds the raw provider fields of a ``ProviderExtraBody`` (an escape hatch that often carries
configuration from outside the program).  Applications may pass a custom :class:`zigai.json.Limits` for their own
entry points.  The numbers are part of the specification; tests pin them.
"""

from __future__ import annotations

from zigai.json._limits import Limits

__all__ = [
    "history",
    "paused_state",
    "resume_decisions",
    "provider_response",
    "tool_payload",
    "mcp_message",
    "json_schema",
    "cli_manifest",
    "provider_extra_body",
]

_KIB = 1024
_MIB = 1024 * _KIB

history = Limits(16 * _MIB, 1 * _MIB, 64, 65_536)
paused_state = Limits(32 * _MIB, 16 * _MIB, 64, 65_536)
resume_decisions = Limits(4 * _MIB, 1 * _MIB, 32, 16_384)
provider_response = Limits(16 * _MIB, 4 * _MIB, 128, 65_536)
tool_payload = Limits(1 * _MIB, 1 * _MIB, 64, 4_096)
mcp_message = Limits(4 * _MIB, 1 * _MIB, 64, 16_384)
json_schema = Limits(2 * _MIB, 512 * _KIB, 64, 16_384)
cli_manifest = Limits(1 * _MIB, 256 * _KIB, 32, 4_096)
provider_extra_body = Limits(1 * _MIB, 256 * _KIB, 32, 4_096)
