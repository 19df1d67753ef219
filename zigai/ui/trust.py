"""The client-message trust boundary: what a browser may put into a run, and nothing more.

Protocol parsers (``zigai.ui.agui``, ``zigai.ui.vercel``) reduce a request to
:class:`ClientMessage` values — a role, plain text and, for a user message, files already
checked by :mod:`zigai.ui.files` — and :func:`to_history` turns them into canonical zigai
messages:

* browser ids are discarded: message ids, tool call ids and part ids from the client are
  never used (the server mints its own; interrupts are answered by server-minted ids);
* roles are allowlisted: ``user`` and ``assistant`` text only; ``system``, ``developer``,
  ``tool`` and every unknown role are refused (:class:`InvalidClientMessages`), because
  instructions and tool results must come from the server;
* content is bounded (:class:`ClientMessageLimits`): the request body by a JSON limit
  profile, each message and all messages together by UTF-8 bytes, and the message count;
  exactly at a limit passes, one byte more raises :class:`ClientMessagesTooLarge`;
* the last message must be the user's turn; it becomes the run's prompt (its text, or the
  text and files as a tuple of ``UserContent``).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from zigai import json as zjson
from zigai.errors import JsonError, UiError
from zigai.json import Limits
from zigai.messages import (
    Message,
    RequestMessage,
    ResponseMessage,
    TextContent,
    TextPart,
    UserPromptPart,
)

__all__ = [
    "ClientMessage",
    "ClientMessageLimits",
    "InvalidClientMessages",
    "ClientMessagesTooLarge",
    "ALLOWED_ROLES",
    "parse_body",
    "to_history",
    "client_id",
]

ALLOWED_ROLES = ("user", "assistant")
_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


class InvalidClientMessages(UiError):
    """A browser request is malformed, uses a refused role, or has no user turn to answer."""


class ClientMessagesTooLarge(InvalidClientMessages):
    """A browser request exceeds the client-message limits (body, message, total, count)."""


@dataclass(frozen=True, slots=True)
class ClientMessageLimits:
    """Bounds of one browser request (defaults suit a chat UI; tighten them freely)."""

    max_messages: int = 256
    max_message_bytes: int = 64 * 1024
    max_total_bytes: int = 1024 * 1024
    body: Limits = Limits(4 * 1024 * 1024, 1024 * 1024, 32, 4_096)

    def __post_init__(self) -> None:
        for name in ("max_messages", "max_message_bytes", "max_total_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"ClientMessageLimits.{name} must be a positive int")


@dataclass(frozen=True, slots=True)
class ClientMessage:
    role: str
    text: str
    files: tuple[Any, ...] = ()  # checked ImageContent / DocumentContent (zigai.ui.files)


def parse_body(body: bytes, limits: ClientMessageLimits) -> dict[str, Any]:
    """The request body as a JSON object, within ``limits.body``."""
    try:
        document = zjson.parse(body, limits.body)
    except zjson.JsonLimitExceeded as exc:
        raise ClientMessagesTooLarge(f"the request body exceeds the client limits: {exc}") from None
    except JsonError as exc:
        raise InvalidClientMessages(f"the request body is not one JSON document ({exc})") from None
    if not isinstance(document, dict):
        raise InvalidClientMessages("the request body must be a JSON object")
    return document


def client_id(value: object) -> str:
    """A client-proposed correlation id if it is short and plain, else a fresh one."""
    if isinstance(value, str) and _ID.match(value):
        return value
    return secrets.token_hex(12)


def _user_part(message: ClientMessage) -> UserPromptPart:
    if not message.files:
        return UserPromptPart(message.text)
    text = (TextContent(message.text),) if message.text else ()
    return UserPromptPart((*text, *message.files))


def to_history(
    messages: Sequence[ClientMessage], limits: ClientMessageLimits
) -> tuple[tuple[Message, ...], str | tuple[Any, ...]]:
    """``(history, prompt)`` from client messages (see module docs for the rules)."""
    if not messages:
        raise InvalidClientMessages("the request has no messages; send the user's turn")
    if len(messages) > limits.max_messages:
        raise ClientMessagesTooLarge(
            f"{len(messages)} messages exceed the limit of {limits.max_messages}"
        )
    total = 0
    for index, message in enumerate(messages):
        if message.role not in ALLOWED_ROLES:
            raise InvalidClientMessages(
                f"message {index} has role {message.role!r}; a browser may send only "
                "user and assistant messages (instructions and tool results come from the server)"
            )
        size = len(message.text.encode("utf-8"))
        if size > limits.max_message_bytes:
            raise ClientMessagesTooLarge(
                f"message {index} is {size} UTF-8 bytes; the limit is {limits.max_message_bytes}"
            )
        total += size
    if total > limits.max_total_bytes:
        raise ClientMessagesTooLarge(
            f"the messages total {total} UTF-8 bytes; the limit is {limits.max_total_bytes}"
        )
    last = messages[-1]
    if last.role != "user" or not (last.text.strip() or last.files):
        raise InvalidClientMessages("the last message must be a non-empty user message")
    history: list[Message] = []
    for message in messages[:-1]:
        if not message.text and not message.files:
            continue
        if message.role == "user":
            history.append(RequestMessage(parts=(_user_part(message),)))
        else:
            history.append(ResponseMessage(parts=(TextPart(message.text),)))
    prompt = _user_part(last).content
    return tuple(history), prompt


def text_of(content: object, where: str) -> str:
    """Plain text from a string or a list of ``{"type": "text", "text": ...}`` parts."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, list):
        pieces = []
        for index, item in enumerate(content):
            if not isinstance(item, dict) or item.get("type") != "text" or not isinstance(item.get("text"), str):
                raise InvalidClientMessages(
                    f"{where} part {index} is not a text part; this server accepts text, and image and "
                    "document parts in user messages"
                )
            pieces.append(item["text"])
        return "".join(pieces)
    raise InvalidClientMessages(f"{where} content must be a string or a list of text parts")
