"""External persistence formats, kept outside zigai's own message contract.

Each codec validates and round-trips one foreign format as an owned JSON value
graph and never coerces it into narrower zigai runtime fields.  Codecs are
imported explicitly (``from zigai.codecs import pydantic_ai``); this package
imports none of them, so ``import zigai.codecs`` stays free.

* ``zigai.codecs.pydantic_ai`` -- PydanticAI 2.31.0 stable-v2 message JSON.
"""

from __future__ import annotations

__all__: list[str] = []
