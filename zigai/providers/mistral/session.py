"""A stored Mistral conversation: ``Session`` (append, history, delete) and its owned history.

Job
    :class:`Session` wraps one conversation created by
    :meth:`~.conversations.ConversationsClient.start`.  :meth:`Session.append` sends only new
    entries and completion settings (``POST conversations/{id}``, ``store: true``) and decodes
    the answer like the stateless route; :meth:`Session.history` reads
    ``GET conversations/{id}/history`` into an owned :class:`ConversationHistory`;
    :meth:`Session.delete` removes the conversation (``DELETE conversations/{id}``).

Invariants
    * The conversation id is validated (:data:`CONVERSATION_ID`) when the session is built,
      before it is ever placed in a path; a bad id raises :class:`InvalidConversationId`.
    * The session borrows its provider: keep the provider alive while the session is used.
    * A history owns copies of every entry: each :class:`ConversationEntry` has a typed
      :class:`EntryFamily` (``unknown`` for entry types zigai does not know, such as new beta
      kinds) and the complete entry as immutable provider details.  Using a closed history
      raises :class:`ConversationHistoryClosed`.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Any

from zigai._owner import Owner
from zigai.control import RunControl
from zigai.errors import ProviderError
from zigai.messages import ProviderDetails, ResponseMessage
from zigai.model import ModelRequest
from zigai.provider import ProviderHttpRequest, ProviderHttpResponse, ProviderResponseDecodeError
from zigai.providers._wire import JsonReader, effective_request, media_urls
from zigai.providers.mistral._decode import decode_response
from zigai.providers.mistral._encode import encode_append
from zigai.providers.mistral._errors import InvalidConversationId, MistralDecodeError
from zigai.providers.mistral.conversations import CONVERSATIONS_PATH
from zigai.settings import ModelSettings

__all__ = [
    "CONVERSATION_ID",
    "ConversationEntry",
    "ConversationHistory",
    "ConversationHistoryClosed",
    "EntryFamily",
    "Session",
    "check_conversation_id",
]

#: What a conversation id may look like before it is placed in a URL path.
CONVERSATION_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_R = JsonReader(MistralDecodeError)


class ConversationHistoryClosed(ProviderError):
    """A :class:`ConversationHistory` was used after ``close()``."""


def check_conversation_id(value: Any) -> str:
    if not isinstance(value, str) or not CONVERSATION_ID.match(value):
        raise InvalidConversationId(
            "conversation ids are 1-128 letters, digits, '_' or '-'"
        )
    return value


class EntryFamily(enum.Enum):
    """The kind of one stored conversation entry."""

    message_input = "message.input"
    message_output = "message.output"
    function_call = "function.call"
    function_result = "function.result"
    tool_execution = "tool.execution"
    agent_handoff = "agent.handoff"
    unknown = "unknown"


_FAMILIES = {family.value: family for family in EntryFamily if family is not EntryFamily.unknown}


@dataclass(frozen=True, slots=True)
class ConversationEntry:
    """One stored entry: its family, raw type, id, role and the complete entry as details."""

    family: EntryFamily
    type: str
    id: str | None
    role: str | None
    details: ProviderDetails


class ConversationHistory(Owner):
    """The owned entry list of one stored conversation (a context manager; ``close()``)."""

    __slots__ = ("_conversation_id", "_entries")

    _closed_error = ConversationHistoryClosed

    def __init__(self, conversation_id: str, entries: tuple[ConversationEntry, ...]) -> None:
        super().__init__()
        self._conversation_id = conversation_id
        self._entries = entries

    def _release(self) -> None:
        self._entries = ()

    @property
    def conversation_id(self) -> str:
        self._check()
        return self._conversation_id

    @property
    def entries(self) -> tuple[ConversationEntry, ...]:
        self._check()
        return self._entries

    def __len__(self) -> int:
        return len(self.entries)


def decode_history(value: Any, expected_id: str) -> ConversationHistory:
    """A ``conversation.history`` object as an owned :class:`ConversationHistory`."""
    root = _R.obj(value, "$")
    conversation_id = _R.opt_str(root, "conversation_id", "$") or expected_id
    if conversation_id != expected_id:
        raise _R.fail("$.conversation_id", f"history of {conversation_id!r}, not "
                                           f"{expected_id!r}")
    entries = []
    for index, item in enumerate(_R.arr(root.get("entries"), "$.entries")):
        where = f"$.entries[{index}]"
        entry = _R.obj(item, where)
        kind = _R.str_(entry, "type", where)
        entries.append(ConversationEntry(
            family=_FAMILIES.get(kind, EntryFamily.unknown), type=kind,
            id=_R.opt_str(entry, "id", where), role=_R.opt_str(entry, "role", where),
            details=ProviderDetails.from_value(entry),
        ))
    return ConversationHistory(conversation_id, tuple(entries))


class Session:
    """One stored Mistral conversation, reached through a borrowed provider."""

    __slots__ = ("provider", "conversation_id", "model_name", "settings")

    def __init__(self, provider: Any, conversation_id: str, *, model_name: str | None = None,
                 settings: ModelSettings | None = None) -> None:
        self.provider = provider
        self.conversation_id = check_conversation_id(conversation_id)
        self.model_name = model_name
        self.settings = settings

    def __repr__(self) -> str:
        return f"Session(conversation_id={self.conversation_id!r})"

    @property
    def _path(self) -> str:
        return f"{CONVERSATIONS_PATH}/{self.conversation_id}"

    def _error(self, exc: Exception, response: ProviderHttpResponse) -> MistralDecodeError:
        if isinstance(exc, MistralDecodeError):
            exc.status, exc.request_id = response.status, response.request_id
            return exc
        return MistralDecodeError(str(exc), status=response.status,
                                  request_id=response.request_id)

    def append(self, request: ModelRequest) -> ResponseMessage:
        """Append the request's messages (new entries only) and return the answer."""
        request = effective_request(request, self.settings)
        body = encode_append(request)
        http = ProviderHttpRequest(
            path=self._path, json_body=body,
            headers=tuple(request.settings.extra_headers or ()),
            deadline=request.effective_deadline, control=request.control,
            error_observer=request.error_observer,
            capture_error_body=request.capture_error_body,
            max_error_body_bytes=request.max_error_body_bytes,
            media_urls=media_urls(request),
            url_policy=request.url_policy,
        )
        response = self.provider.send(http)
        try:
            return decode_response(response.json(), model_name=self.model_name,
                                   provider_name=self.provider.name)
        except ProviderResponseDecodeError as exc:
            raise self._error(exc, response) from None

    def history(self, *, control: RunControl | None = None,
                deadline: float | None = None) -> ConversationHistory:
        """Every stored entry, owned by the returned :class:`ConversationHistory`."""
        response = self.provider.send(ProviderHttpRequest(
            path=f"{self._path}/history", method="GET", control=control, deadline=deadline,
        ))
        try:
            return decode_history(response.json(), self.conversation_id)
        except ProviderResponseDecodeError as exc:
            raise self._error(exc, response) from None

    def delete(self, *, control: RunControl | None = None, deadline: float | None = None) -> None:
        """Delete the stored conversation; returns once the provider answered 2xx."""
        self.provider.send(ProviderHttpRequest(path=self._path, method="DELETE",
                                               control=control, deadline=deadline))
