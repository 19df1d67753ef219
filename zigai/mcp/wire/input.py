"""Multi round-trip input (MCP 2026-07-28): the client's answers to a server's input requests.

Job
    Parse the ``inputRequests`` of an ``input_required`` result into :class:`InputRequest`
    values, let the application's :data:`InputHandler` answer each one with an
    :class:`InputResponse` built by its typed constructors, and check every answer against the
    method of the request it answers before it goes back on the wire as ``inputResponses``.

Invariants
    * An input request is one of three families (:class:`InputKind`): ``sampling/createMessage``,
      ``roots/list`` or ``elicitation/create``; anything else is refused as an invalid message.
    * An :class:`InputResponse` carries its family; answering a request with a response of
      another family raises :class:`InvalidInputResponse`, never reaches the server.
    * Elicitation content holds only primitive form values (string, number, boolean, list of
      strings) and only on ``accept``; roots are ``file://`` URIs; sampling results carry a
      role, a typed content block and a model name.
    * ``requestState`` is opaque: it is echoed verbatim, never parsed.
    * Parsed requests and built responses are deep copies; neither side shares mutable data.
"""

from __future__ import annotations

import copy
import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from zigai.mcp.errors import InvalidInputResponse, InvalidMcpMessage, InvalidMcpRequest

__all__ = [
    "InputKind",
    "InputRequest",
    "InputResponse",
    "InputHandler",
    "InputRequired",
    "parse_input_required",
    "answer_inputs",
    "MRTR_METHODS",
    "DEFAULT_MAX_INPUT_ROUNDS",
]

DEFAULT_MAX_INPUT_ROUNDS = 8
# The client requests whose result may be ``input_required`` (multi round-trip carriers).
MRTR_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
_ELICIT_ACTIONS = ("accept", "decline", "cancel")
_ROLES = ("user", "assistant")


class InputKind(enum.Enum):
    """The validated family of one input request; the value is its wire method."""

    sampling = "sampling/createMessage"
    roots = "roots/list"
    elicitation = "elicitation/create"


@dataclass(frozen=True, slots=True)
class InputRequest:
    """One server input request: its key in ``inputRequests``, family and params (a copy)."""

    key: str
    kind: InputKind
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def method(self) -> str:
        return self.kind.value

    @property
    def message(self) -> str | None:
        """The elicitation prompt text, when there is one."""
        value = self.params.get("message")
        return value if isinstance(value, str) else None

    @classmethod
    def from_json(cls, key: str, value: object) -> InputRequest:
        if not isinstance(value, dict):
            raise InvalidMcpMessage(f"input request {key!r} must be a JSON object")
        method = value.get("method")
        try:
            kind = InputKind(method)
        except ValueError:
            raise InvalidMcpMessage(f"input request {key!r} has unsupported method {method!r} "
                                    "(expected sampling/createMessage, roots/list or elicitation/create)") from None
        params = value.get("params", {})
        if not isinstance(params, dict):
            raise InvalidMcpMessage(f"input request {key!r} params must be a JSON object")
        if kind is InputKind.elicitation and not isinstance(params.get("message"), str):
            raise InvalidMcpMessage(f"elicitation request {key!r} needs a string message")
        if kind is InputKind.sampling and not isinstance(params.get("messages"), list):
            raise InvalidMcpMessage(f"sampling request {key!r} needs a messages array")
        return cls(key, kind, copy.deepcopy(params))

    def to_json(self) -> dict[str, Any]:
        return {"method": self.kind.value, "params": copy.deepcopy(dict(self.params))}


@dataclass(frozen=True, slots=True)
class InputResponse:
    """One answer to an input request; build it with the class methods, not the constructor."""

    kind: InputKind
    payload: Mapping[str, Any]

    # -- elicitation ---------------------------------------------------------------------

    @classmethod
    def accept(cls, content: Mapping[str, Any] | None = None) -> InputResponse:
        """Accept an elicitation with form values (string, number, boolean or list of strings)."""
        values: dict[str, Any] = {}
        for name, value in dict(content or {}).items():
            if not isinstance(name, str):
                raise InvalidMcpRequest("elicitation field names must be strings")
            values[name] = _form_value(name, value)
        return cls(InputKind.elicitation, {"action": "accept", "content": values})

    @classmethod
    def decline(cls) -> InputResponse:
        return cls(InputKind.elicitation, {"action": "decline"})

    @classmethod
    def cancel(cls) -> InputResponse:
        return cls(InputKind.elicitation, {"action": "cancel"})

    # -- roots ---------------------------------------------------------------------------

    @classmethod
    def roots(cls, roots: Sequence[str | tuple[str, str]]) -> InputResponse:
        """File roots: each a ``file://`` URI, or a ``(uri, name)`` pair."""
        listed = []
        for entry in roots:
            uri, name = (entry, None) if isinstance(entry, str) else entry
            if not isinstance(uri, str) or not uri.startswith("file://"):
                raise InvalidMcpRequest(f"a root must be a file:// URI, not {uri!r}")
            listed.append({"uri": uri} if name is None else {"uri": uri, "name": str(name)})
        return cls(InputKind.roots, {"roots": listed})

    # -- sampling ------------------------------------------------------------------------

    @classmethod
    def sampled(cls, text: str | Mapping[str, Any], *, model: str, role: str = "assistant",
                stop_reason: str | None = "endTurn") -> InputResponse:
        """A sampling result: ``text`` (or a content block object), the model that produced it."""
        if role not in _ROLES:
            raise InvalidMcpRequest(f"sampling role must be 'user' or 'assistant', not {role!r}")
        if not isinstance(model, str) or not model:
            raise InvalidMcpRequest("sampling results need the model name")
        if isinstance(text, str):
            content: dict[str, Any] = {"type": "text", "text": text}
        elif isinstance(text, Mapping) and isinstance(text.get("type"), str):
            content = copy.deepcopy(dict(text))
        else:
            raise InvalidMcpRequest("sampling content must be text or a content block with a 'type'")
        payload: dict[str, Any] = {"role": role, "content": content, "model": model}
        if stop_reason is not None:
            payload["stopReason"] = stop_reason
        return cls(InputKind.sampling, payload)

    def to_json(self) -> dict[str, Any]:
        return copy.deepcopy(dict(self.payload))

    def check_answers(self, request: InputRequest) -> dict[str, Any]:
        """The wire object of this response, after checking it answers ``request``'s method."""
        if not isinstance(request, InputRequest):
            raise InvalidInputResponse("check_answers needs the InputRequest being answered")
        if self.kind is not request.kind:
            raise InvalidInputResponse(f"input request {request.key!r} is {request.method}, "
                                       f"but the handler answered with a {self.kind.value} response")
        wire = self.to_json()
        _check_payload(self.kind, wire, request.key)
        return wire


InputHandler = Callable[[InputRequest], InputResponse]
"""Answers one input request; called on the requesting thread, once per request key."""


@dataclass(frozen=True, slots=True)
class InputRequired:
    """A validated ``input_required`` result: its requests (by key) and the opaque state."""

    requests: tuple[InputRequest, ...] = ()
    request_state: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "requests", tuple(self.requests))
        if not all(isinstance(request, InputRequest) for request in self.requests):
            raise InvalidMcpRequest("InputRequired.requests must be InputRequest values")
        if len({request.key for request in self.requests}) != len(self.requests):
            raise InvalidMcpRequest("InputRequired request keys must be unique")
        if self.request_state is not None and not isinstance(self.request_state, str):
            raise InvalidMcpRequest("requestState must be a string")
        if not self.requests and self.request_state is None:
            raise InvalidMcpRequest("an input_required result needs input requests or a request state")

    def to_json(self) -> dict[str, Any]:
        """The ``input_required`` result a server returns (a tool handler may return this value)."""
        result: dict[str, Any] = {"resultType": "input_required"}
        if self.requests:
            result["inputRequests"] = {request.key: request.to_json() for request in self.requests}
        if self.request_state is not None:
            result["requestState"] = self.request_state
        return result


def parse_input_required(result: Mapping[str, Any], what: str) -> InputRequired:
    """Validate the ``inputRequests`` / ``requestState`` of an ``input_required`` result."""
    raw = result.get("inputRequests")
    state = result.get("requestState")
    if raw is not None and not isinstance(raw, dict):
        raise InvalidMcpMessage(f"{what}: inputRequests must be a JSON object")
    if state is not None and not isinstance(state, str):
        raise InvalidMcpMessage(f"{what}: requestState must be a string")
    if not raw and state is None:
        raise InvalidMcpMessage(f"{what}: an input_required result needs inputRequests or requestState")
    requests = tuple(InputRequest.from_json(key, value) for key, value in (raw or {}).items())
    return InputRequired(requests, state)


def answer_inputs(handler: InputHandler, requests: Sequence[InputRequest]) -> dict[str, Any]:
    """Ask ``handler`` for every request; the checked ``inputResponses`` object."""
    answers: dict[str, Any] = {}
    for request in requests:
        response = handler(request)
        if not isinstance(response, InputResponse):
            raise InvalidInputResponse(f"the input handler must return an InputResponse for {request.key!r}, "
                                       f"not {type(response).__name__}")
        answers[request.key] = response.check_answers(request)
    return answers


def _form_value(name: str, value: object) -> Any:
    if isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        return list(value)
    raise InvalidMcpRequest(f"elicitation field {name!r} must be a string, number, boolean or list of strings")


def _check_payload(kind: InputKind, wire: dict[str, Any], key: str) -> None:
    """Re-check a response object (it may have been built by hand) against its family."""
    problem: str | None = None
    if kind is InputKind.elicitation:
        action = wire.get("action")
        if action not in _ELICIT_ACTIONS:
            problem = f"elicitation action must be one of {_ELICIT_ACTIONS}"
        elif action != "accept" and "content" in wire:
            problem = "only an accepted elicitation carries content"
        elif "content" in wire and not isinstance(wire["content"], dict):
            problem = "elicitation content must be an object"
    elif kind is InputKind.roots:
        roots = wire.get("roots")
        if not isinstance(roots, list) or not all(
                isinstance(root, dict) and str(root.get("uri", "")).startswith("file://") for root in roots):
            problem = "roots must be a list of file:// roots"
    else:
        content = wire.get("content")
        if wire.get("role") not in _ROLES or not isinstance(wire.get("model"), str) or not (
                isinstance(content, dict) and isinstance(content.get("type"), str)):
            problem = "a sampling result needs a role, a model and a typed content block"
    if problem is not None:
        raise InvalidInputResponse(f"input response {key!r}: {problem}")
