"""``Selector``: one Model whose concrete model is chosen by application code per request.

Job
    :class:`Selector` implements :class:`zigai.model.Model`.  For every ``request``/``stream``
    it calls the application's ``choose(request)`` and delegates to the model it returns.  The
    agent sees one model, so per-request routing adds no branch to the agent loop.

Invariants
    * ``profile`` is what the application declares its routing policy guarantees; every
      request is checked against it before ``choose`` runs, so an unsupported feature fails
      before any application code or I/O.
    * The chosen value must be a Model whose own profile supports the request, and it must be
      owned by the declared ``provider_name`` when the request carries provider-uploaded files;
      otherwise :class:`InvalidSelection` is raised before the chosen model is called (a broken
      routing promise never reaches a provider).
    * ``choose`` runs synchronously on the caller's thread; whatever it raises propagates.
    * ``provider_name`` defaults to ``"selector"``, which owns no uploaded file: declare the
      provider only when every route goes to it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from zigai.errors import ModelError, ZigAIError
from zigai.messages import (
    Message,
    RequestMessage,
    ResponseMessage,
    UploadedFile,
    UploadedFileContent,
    UserPromptPart,
)
from zigai.model import ModelProfile, ModelRequest, StreamedResponse, check_request_supported
from zigai.models.fallback import _is_model, _name

__all__ = ["InvalidSelection", "Selector"]


class InvalidSelection(ModelError):
    """The selector's ``choose`` returned something that cannot serve the request.

    ``reason`` is ``"not_a_model"``, ``"unsupported"`` (the chosen profile lacks a requested
    feature) or ``"foreign_file"`` (an uploaded file belongs to another provider).
    """

    def __init__(self, message: str, *, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason


def _uploaded_owners(messages: Iterable[Message]) -> set[str]:
    owners: set[str] = set()
    for message in messages:
        if not isinstance(message, RequestMessage):
            continue
        for part in message.parts:
            if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
                for item in part.content:
                    source = item.file if isinstance(item, UploadedFileContent) else getattr(
                        item, "source", None)
                    if isinstance(source, UploadedFile):
                        owners.add(source.provider_name)
    return owners


class Selector:
    """Ask ``choose(request)`` for the concrete model of each request.

    ``profile`` is the common profile the application's policy guarantees (every model
    ``choose`` may return must support at least that).  ``provider_name`` and ``model_name``
    are the identity the agent sees.
    """

    __slots__ = ("choose", "_profile", "_provider_name", "_model_name")

    def __init__(
        self,
        choose: Callable[[ModelRequest], Any],
        *,
        profile: ModelProfile,
        provider_name: str = "selector",
        model_name: str = "selector",
    ) -> None:
        if not callable(choose):
            raise TypeError("Selector needs a callable choose(request) -> Model")
        if not isinstance(profile, ModelProfile):
            raise TypeError("Selector needs the ModelProfile its routing policy guarantees")
        for label, value in (("provider_name", provider_name), ("model_name", model_name)):
            if not isinstance(value, str) or not value:
                raise TypeError(f"Selector {label} must be a non-empty string")
        self.choose = choose
        self._profile = profile
        self._provider_name = provider_name
        self._model_name = model_name

    @property
    def profile(self) -> ModelProfile:
        return self._profile

    @property
    def provider_name(self) -> str:
        return self._provider_name

    @property
    def model_name(self) -> str:
        return self._model_name

    def model(self) -> Selector:
        return self

    def __repr__(self) -> str:
        return f"Selector(model_name={self._model_name!r}, provider_name={self._provider_name!r})"

    def select(self, request: ModelRequest) -> Any:
        """The model ``choose`` picks for ``request``, checked against the request."""
        check_request_supported(request, self._profile)
        chosen = self.choose(request)
        if not _is_model(chosen):
            raise InvalidSelection(
                f"Selector.choose returned {type(chosen).__name__}, not a Model",
                reason="not_a_model",
            )
        try:
            check_request_supported(request, chosen.profile)
        except ZigAIError as exc:
            raise InvalidSelection(
                f"the selected model {_name(chosen, 'model_name')!r} cannot serve this request "
                f"although the selector's profile promised it: {exc}",
                reason="unsupported",
            ) from exc
        foreign = sorted(
            owner for owner in _uploaded_owners(request.messages)
            if owner != _name(chosen, "provider_name")
        )
        if foreign:
            raise InvalidSelection(
                f"the selected model's provider {_name(chosen, 'provider_name')!r} does not own "
                f"files uploaded to {', '.join(map(repr, foreign))}",
                reason="foreign_file",
            )
        return chosen

    def request(self, request: ModelRequest) -> ResponseMessage:
        response: ResponseMessage = self.select(request).request(request)
        return response

    def stream(self, request: ModelRequest) -> StreamedResponse:
        stream: StreamedResponse = self.select(request).stream(request)
        return stream
