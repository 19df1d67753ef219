"""zigai.realtime: voice and text sessions over realtime model APIs (layer 6).

Job
    Two boundaries.  A :class:`RealtimeConnection` moves raw frames (WebSocket in
    :mod:`zigai.realtime.websocket`, or anything else: WebRTC data channels, test doubles) and
    classifies how it ended.  A codec translates frames to and from the closed vocabulary in
    :mod:`zigai.realtime.events`: :class:`OpenAIRealtimeCodec` for the OpenAI Realtime wire
    with explicit dialect profiles (:data:`OPENAI`, :data:`AZURE_OPENAI`,
    :data:`AZURE_OPENAI_PREVIEW`, :data:`XAI`), :class:`GeminiLiveCodec` for Gemini Live.
    :class:`RealtimeSession` owns turn state, tools, usage, reconnect policy and canonical
    history on top of both.

Invariants
    * Frames are decoded as bounded JSON and strict bounded base64; a frame outside the
      codec's documented set raises :class:`UnknownRealtimeFrame` — nothing disappears.
    * A response terminal is the turn boundary; audio chunks and tool results never end a turn.
    * Finalized text and speech transcripts, tool calls and tool returns become ordinary
      :mod:`zigai.messages` values; audio stays in live events.
    * Reconnects happen only for ends the connection classifies as reconnectable, and report
      whether server state survived; nothing the user said is resent by guess.
    * The observer sees metadata only (kinds, ids, sizes, usage), never text or audio, and
      fails open.
    * Importing this package imports no third-party module (``websockets`` is imported only
      by :mod:`zigai.realtime.websocket`).

Submodules: ``events`` (vocabulary, codec errors), ``openai`` and ``gemini`` (codecs),
``connection`` (frame interface), ``websocket`` (WebSocket connection, optional extra),
``session`` (RealtimeSession), ``observer`` (metadata observer).
"""

from __future__ import annotations

from zigai.realtime._wire import FrameLimits
from zigai.realtime.connection import (
    RealtimeConnection,
    RealtimeConnectionError,
    RealtimeConnectionLost,
    RealtimeSendTimedOut,
)
from zigai.realtime.events import (
    ConfigureSession,
    RealtimeCodecError,
    RealtimeFrameTooLarge,
    RealtimeTool,
    UnknownRealtimeFrame,
)
from zigai.realtime.gemini import GeminiLiveCodec
from zigai.realtime.observer import RealtimeEventInfo, RealtimeObserver
from zigai.realtime.openai import (
    AZURE_OPENAI,
    AZURE_OPENAI_PREVIEW,
    OPENAI,
    XAI,
    OpenAIRealtimeCodec,
    RealtimeDialect,
)
from zigai.realtime.session import (
    RealtimeCodec,
    RealtimeSession,
    RealtimeSessionClosed,
    RealtimeSessionError,
    RealtimeTurn,
    RealtimeTurnTooLarge,
    Reconnected,
    ReconnectPolicy,
)

__all__ = [
    "RealtimeSession", "RealtimeTurn", "Reconnected", "ReconnectPolicy", "RealtimeCodec",
    "ConfigureSession", "RealtimeTool", "FrameLimits",
    "OpenAIRealtimeCodec", "RealtimeDialect", "OPENAI", "AZURE_OPENAI", "AZURE_OPENAI_PREVIEW", "XAI",
    "GeminiLiveCodec",
    "RealtimeConnection", "RealtimeObserver", "RealtimeEventInfo",
    "RealtimeCodecError", "RealtimeFrameTooLarge", "UnknownRealtimeFrame",
    "RealtimeConnectionError", "RealtimeConnectionLost", "RealtimeSendTimedOut",
    "RealtimeSessionError", "RealtimeSessionClosed", "RealtimeTurnTooLarge",
]
