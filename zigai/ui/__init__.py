"""zigai.ui: browser adapters over the agent's own stream — AG-UI and Vercel UI streams (layer 6).

Job
    :class:`UiBridge` turns the events of ``Agent.run_until_pause_stream`` /
    ``Agent.resume_run_stream`` into a neutral vocabulary (:mod:`zigai.ui.events`) that keeps
    run, message, part, call, interrupt and custom identities; :class:`AguiEncoder` and
    :class:`VercelEncoder` own only the wire names and JSON shapes.  :func:`ui_app` serves
    an agent over SSE as a WSGI application; ``zigai run --events agui`` prints the same
    AG-UI events as JSON lines.

Invariants
    * No second execution path: tools run in the agent's scheduler; approval replies become
      ``ResumeDecision`` values built from the *stored* deferred calls
      (:class:`PauseStore`) and go through ``Agent.resume_run_stream``; a pause is answered
      at most once.
    * Client messages cross :mod:`zigai.ui.trust`: browser ids discarded, roles allowlisted
      (user, assistant), system/developer/tool refused, content bounded before any run.
    * Reconnects replay encoded frames from a bounded :class:`ReplayLog`, independent of
      agent state; an evicted range raises :class:`ReplayGap` instead of a silent hole.
    * Importing this package imports no third-party module.

Submodules: ``events`` (neutral values), ``bridge`` (stream translation, start/resume),
``pauses`` (interrupt ids and decisions), ``trust`` (client-message boundary), ``replay``
(bounded log), ``agui`` and ``vercel`` (wire shapes), ``wsgi`` (the app), ``page`` (the
built-in chat page, ``ui_page``), ``state`` (AG-UI frontend tools, shared state and context), ``files`` (files attached to
user messages), ``serve`` (loopback wsgiref server), ``sqlite`` (``SqliteUiStore``, the
stores worker processes share; imported on use).
"""

from __future__ import annotations

from zigai.ui.agui import AguiEncoder, AguiRunInput, parse_run_input
from zigai.ui.bridge import CustomEvents, UiBridge, resume_run, start_run
from zigai.ui.events import Interrupt, UiEvent
from zigai.ui.files import FileLimits
from zigai.ui.pauses import ApprovalReply, InvalidApprovalReply, PauseStore, UnknownInterrupt
from zigai.ui.replay import ReplayGap, ReplayLog, ReplayTimedOut
from zigai.ui.serve import LocalServer
from zigai.ui.state import (
    ClientStateLimits,
    ContextEntry,
    FrontendTool,
    InvalidClientState,
    SharedState,
    StateTooLarge,
)
from zigai.ui.trust import (
    ClientMessage,
    ClientMessageLimits,
    ClientMessagesTooLarge,
    InvalidClientMessages,
    to_history,
)
from zigai.ui.vercel import VercelChatRequest, VercelEncoder, parse_chat_request
from zigai.ui.wsgi import HistoryStore, RunRequest, UiApp, ui_app, ui_page

__all__ = [
    "UiBridge",
    "CustomEvents",
    "start_run",
    "resume_run",
    "UiEvent",
    "Interrupt",
    "AguiEncoder",
    "AguiRunInput",
    "parse_run_input",
    "VercelEncoder",
    "VercelChatRequest",
    "parse_chat_request",
    "PauseStore",
    "ApprovalReply",
    "ReplayLog",
    "ClientMessage",
    "ClientMessageLimits",
    "to_history",
    "HistoryStore",
    "RunRequest",
    "UiApp",
    "ui_app",
    "ui_page",
    "LocalServer",
    "InvalidClientMessages",
    "ClientMessagesTooLarge",
    "UnknownInterrupt",
    "InvalidApprovalReply",
    "ReplayGap",
    "ReplayTimedOut",
    "SharedState",
    "FileLimits",
    "ClientStateLimits",
    "FrontendTool",
    "ContextEntry",
    "InvalidClientState",
    "StateTooLarge",
]
