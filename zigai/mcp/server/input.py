"""Server-side multi round-trip input (SEP-2322): ask the client, seal the state, read the answers.

Job
    Let a tool, prompt or resource handler ask the client for input without a server-to-client
    request: :meth:`ServerRequest.ask <zigai.mcp.ServerRequest.ask>` returns the answers when
    the retried request carries them, and otherwise raises :class:`InputStillNeeded`, which
    the server turns into an ``input_required`` result.  The server seals the ``requestState``
    it hands out (HMAC-SHA256 under its state key) and opens it again on the retry.

Invariants
    * Only ``tools/call``, ``prompts/get`` and ``resources/read`` answer ``input_required``;
      an ask on any other method is a server bug (answered -32603).
    * A ``requestState`` is bound to the method and its target (tool name, prompt name or
      resource URI), carries its issue time and is accepted only while younger than the
      server's ``request_state_max_age_s``; a state that fails any check is refused with
      :class:`InvalidRequestState` (-32602) and the handler does not run.
    * The state is signed, not encrypted: the client can read it (it holds only what the
      client itself answered plus the handler's own state string).
    * Answers already given travel inside the sealed state, so a handler asks in plain
      straight-line order and a later round never re-asks an answered key; an answer is
      checked against the family of the request it answers (wrong shape -> -32602), extra
      keys the handler never asked for are ignored, and a missing key is asked again.
    * An ask for input the client did not declare (sampling, roots, elicitation) is refused
      with -32021 naming the capability, before anything goes on the wire; an elicitation
      without a ``requestedSchema`` (or a URL-mode ``url``) is a handler bug and never sent.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from zigai.mcp.errors import (
    InvalidInputResponse,
    InvalidMcpRequest,
    InvalidParams,
    InvalidRequestState,
    MissingRequiredClientCapability,
)
from zigai.mcp.wire.input import MRTR_METHODS, InputKind, InputRequest, InputRequired, InputResponse
from zigai.mcp.wire.primitives import ClientCapabilities

__all__ = ["InputStillNeeded", "RoundInput", "open_round", "seal_round", "take_answers", "DEFAULT_STATE_MAX_AGE_S"]

DEFAULT_STATE_MAX_AGE_S = 3600
_VERSION = "zs1"
_CAPABILITY = {InputKind.sampling: "sampling", InputKind.roots: "roots", InputKind.elicitation: "elicitation"}
_TARGET_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


class InputStillNeeded(Exception):  # noqa: N818 - control flow, not an error: the server answers input_required
    """Raised by ``ServerRequest.ask`` while answers are missing; let it propagate out of the handler."""

    def __init__(self, needed: InputRequired) -> None:
        super().__init__(f"the client must answer {sorted(r.key for r in needed.requests)} first")
        self.needed = needed


class RoundInput:
    """The input a retried request carries: its answers by key and the handler's own state."""

    __slots__ = ("responses", "state", "answered")

    def __init__(self, responses: Mapping[str, Any], state: str | None, answered: Mapping[str, Any]) -> None:
        self.responses = dict(responses)  # the wire inputResponses (objects only, not yet checked)
        self.state = state
        self.answered = dict(answered)  # checked answers carried in the sealed state


def open_round(method: str, params: Mapping[str, Any], key: bytes, max_age_s: float) -> RoundInput:
    """Read ``inputResponses`` and open ``requestState`` of one request (InvalidParams when bad)."""
    if method not in MRTR_METHODS:
        return RoundInput({}, None, {})
    responses = params.get("inputResponses", {})
    if not isinstance(responses, dict):
        raise InvalidParams("inputResponses must be an object mapping input request keys to responses")
    wire = params.get("requestState")
    if wire is None:
        return RoundInput(responses, None, {})
    if not isinstance(wire, str):
        raise InvalidRequestState("requestState must be the string the server returned")
    payload = _verify(wire, key)
    if payload.get("m") != method or payload.get("t") != _target(method, params):
        raise InvalidRequestState(f"requestState was issued for another request, not this {method}; "
                                  "retry without requestState to start over")
    issued = payload.get("iat")
    age = time.time() - issued if isinstance(issued, (int, float)) else None
    if age is None or age > max_age_s or age < -60:
        raise InvalidRequestState("requestState has expired; retry the request without requestState to start over")
    state, answered = payload.get("s"), payload.get("a")
    if (state is not None and not isinstance(state, str)) or not isinstance(answered, dict):
        raise InvalidRequestState("requestState is malformed; retry without requestState to start over")
    return RoundInput(responses, state, answered)


def take_answers(round_input: RoundInput, capabilities: ClientCapabilities, requests: Sequence[InputRequest],
                 state: str | None) -> dict[str, dict[str, Any]]:
    """The checked answers to ``requests`` by key; raise :class:`InputStillNeeded` for missing ones."""
    if not all(isinstance(request, InputRequest) for request in requests):
        raise TypeError("ask needs InputRequest values")
    _require_declared(requests, capabilities)
    missing = []
    for request in requests:
        if request.key in round_input.answered:
            continue
        payload = round_input.responses.get(request.key)
        if payload is None:
            missing.append(request)
            continue
        if not isinstance(payload, dict):
            raise InvalidParams(f"input response {request.key!r} must be an object")
        try:
            round_input.answered[request.key] = InputResponse(request.kind, payload).check_answers(request)
        except InvalidInputResponse as exc:
            raise InvalidParams(str(exc)) from None
    if missing:
        raise InputStillNeeded(InputRequired(tuple(missing), state))  # checks the keys are distinct
    return {request.key: copy.deepcopy(round_input.answered[request.key]) for request in requests}


def seal_round(method: str, params: Mapping[str, Any], needed: InputRequired, round_input: RoundInput,
               capabilities: ClientCapabilities, key: bytes) -> dict[str, Any]:
    """The ``input_required`` result for ``needed``, its state sealed for the retry of this request."""
    _require_declared(needed.requests, capabilities)
    payload = {"m": method, "t": _target(method, params), "iat": int(time.time()), "s": needed.request_state,
               "a": round_input.answered}
    body = _b64(json.dumps(payload, separators=(",", ":"), sort_keys=True).encode())
    sealed = f"{_VERSION}.{body}.{_b64(_mac(key, body))}"
    return InputRequired(needed.requests, sealed).to_json()


def _require_declared(requests: Sequence[InputRequest], capabilities: ClientCapabilities) -> None:
    for request in requests:
        params = request.params
        if request.kind is InputKind.elicitation and not isinstance(params.get("requestedSchema"), dict) and not (
                params.get("mode") == "url" and isinstance(params.get("url"), str)):
            raise InvalidMcpRequest(f"elicitation request {request.key!r} needs a requestedSchema object (form mode) "
                                    "or mode 'url' with a url")  # a handler bug: clients refuse such a request
        capability = _CAPABILITY[request.kind]
        if getattr(capabilities, capability) is None:
            raise MissingRequiredClientCapability(
                f"input request {request.key!r} needs the client's {capability} capability, which this request "
                "did not declare", data={"requiredCapabilities": {capability: {}}})


def _target(method: str, params: Mapping[str, Any]) -> str:
    value = params.get(_TARGET_PARAM[method])
    return value if isinstance(value, str) else ""


def _mac(key: bytes, body: str) -> bytes:
    return hmac.new(key, f"{_VERSION}.{body}".encode(), hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _verify(wire: str, key: bytes) -> dict[str, Any]:
    version, _, rest = wire.partition(".")
    body, _, mac = rest.partition(".")
    try:
        expected = _b64(_mac(key, body))
        valid = version == _VERSION and hmac.compare_digest(mac.encode(), expected.encode())
        payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))) if valid else None
    except (ValueError, UnicodeError):
        payload = None
    if not isinstance(payload, dict):
        raise InvalidRequestState("requestState failed its integrity check (it was changed or issued by another "
                                  "server); retry the request without requestState to start over")
    return payload
