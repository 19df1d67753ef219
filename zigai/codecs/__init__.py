"""External persistence formats, kept outside zigai's own message contract.

Each codec validates and round-trips one foreign format as an owned JSON value
graph and never coerces it into narrower zigai runtime fields; conversion to zigai
messages is a separate, explicit call that refuses what it cannot carry.  Codecs are
imported explicitly (``from zigai.codecs import pydantic_ai``); this package
imports none of them, so ``import zigai.codecs`` stays free.

* ``zigai.codecs.pydantic_ai`` -- PydanticAI 2.31.0 stable-v2 message JSON, kept as is
  (``parse``/``stringify``) or converted to and from zigai messages where that is
  lossless (``to_zigai``/``from_zigai``; private ``_pydantic_ai_convert`` and
  ``_pydantic_ai_media``).
"""

from __future__ import annotations

__all__: list[str] = []
