"""Bedrock model listing: ``ListFoundationModels`` on the control-plane endpoint.

Job
    :func:`control_api_base` builds ``https://bedrock.{region}.amazonaws.com`` (the runtime
    lives on ``bedrock-runtime``); :class:`FoundationModelListing` reads ``GET
    foundation-models`` (``{"modelSummaries": [{"modelId", "modelName", ...}]}``, one page,
    optional ``byProvider`` / ``byOutputModality`` filters) for the shared bounded page loop.

Invariants: the listing is signed exactly like runtime calls (same credentials, region and
signing name ``bedrock``) or carries the same bearer key; shape errors are ``ValueError`` for
:mod:`zigai.provider.discovery` to turn into its named error.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from zigai.provider.discovery import ModelPage, check_model_id
from zigai.providers._discovery import opt_display_name
from zigai.providers.bedrock.mantle import check_region

__all__ = ["FoundationModelListing", "control_api_base"]


def control_api_base(region: str) -> str:
    """The Bedrock control-plane root of ``region``."""
    return f"https://bedrock.{check_region(region)}.amazonaws.com"


class FoundationModelListing:
    """``GET foundation-models`` with optional filters; Bedrock answers in one page."""

    def __init__(self, by_provider: str | None = None, by_output_modality: str | None = None) -> None:
        self._query = "&".join(
            f"{name}={quote(value, safe='')}"
            for name, value in (("byProvider", by_provider), ("byOutputModality", by_output_modality))
            if value is not None
        )

    def path(self, cursor: str | None) -> str:
        return "foundation-models" + (f"?{self._query}" if self._query else "")

    def headers(self) -> tuple[tuple[str, str], ...]:
        return (("Accept", "application/json"),)

    def page(self, value: Any) -> ModelPage:
        if not isinstance(value, dict) or not isinstance(value.get("modelSummaries"), list):
            raise ValueError("expected a JSON object with a 'modelSummaries' array")
        return ModelPage(value["modelSummaries"], None)

    def entry(self, value: dict[str, Any]) -> tuple[str, str, str | None]:
        model_id = check_model_id(value.get("modelId"), "'modelId'")
        return model_id, model_id, opt_display_name(value, "modelName")
