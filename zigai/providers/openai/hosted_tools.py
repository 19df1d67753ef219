"""OpenAI Responses hosted tools: the portable managed-tool kinds as Responses tool objects,
and the items those tools produce as neutral parts.

Job
    :func:`encode_managed_tool` renders one :class:`~zigai.model.ManagedTool` from a table:

    ============== ============================================================================
    kind           Responses tool
    ============== ============================================================================
    web_search     ``{"type": "web_search"}`` (``search_context_size``, ``user_location``,
                   ``filters``)
    code_execution ``{"type": "code_interpreter", "container": {"type": "auto"}}``
                   (``container``: an id or an auto object with ``file_ids`` / ``memory_limit``)
    image_generation ``{"type": "image_generation"}`` (``background``, ``input_fidelity``,
                   ``input_image_mask``, ``model``, ``moderation``, ``output_compression``,
                   ``output_format``, ``partial_images``, ``quality``, ``size``)
    file_search    ``{"type": "file_search", "vector_store_ids": [...]}`` (required; plus
                   ``max_num_results``, ``filters``, ``ranking_options``)
    mcp_server     ``{"type": "mcp", "server_label", "server_url", "require_approval":
                   "never"}`` from the neutral ``name`` / ``url`` (plus ``allowed_tools``,
                   ``authorization``, ``headers``, ``description``, ``require_approval``)
    ============== ============================================================================

    :func:`item_call_args` / :func:`item_result` give the arguments and result content of a
    hosted tool's ``*_call`` item, :func:`image_part` turns an ``image_generation_call``
    result into a :class:`~zigai.messages.FilePart` holding the decoded image and
    :func:`output_images` the image outputs of a ``code_interpreter_call`` into file parts
    pointing at their URLs.

Invariants: unknown option keys, a missing ``vector_store_ids`` or MCP ``url`` / ``name``
raise :class:`~.errors.OpenAIEncodeError` before any I/O; the base64 image is decoded once
and kept only in the file part (the call item keeps ``"result": null``, which is how it is
replayed).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from zigai import json as zjson
from zigai.messages import BytesSource, FilePart, ProviderDetails, ProviderPart, UrlSource
from zigai.model import ManagedTool
from zigai.providers.openai.errors import OpenAIDecodeError, OpenAIEncodeError

__all__ = ["HOSTED_KINDS", "encode_managed_tool", "image_part", "item_call_args", "item_result",
           "output_images"]

_OPTIONS: Mapping[str, frozenset[str]] = {
    "web_search": frozenset({"search_context_size", "user_location", "filters"}),
    "code_execution": frozenset({"container"}),
    "image_generation": frozenset({
        "background", "input_fidelity", "input_image_mask", "model", "moderation",
        "output_compression", "output_format", "partial_images", "quality", "size"}),
    "file_search": frozenset({"vector_store_ids", "max_num_results", "filters",
                              "ranking_options"}),
    "mcp_server": frozenset({"name", "url", "allowed_tools", "authorization", "headers",
                             "description", "require_approval"}),
}
#: The managed-tool kinds the Responses API hosts.
HOSTED_KINDS = frozenset(_OPTIONS)
_IMAGE_TYPES = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}


def _mcp(config: dict[str, Any]) -> dict[str, Any]:
    name, url = config.pop("name", None), config.pop("url", None)
    if not isinstance(name, str) or not name or not isinstance(url, str) or not url:
        raise OpenAIEncodeError("mcp_server needs a 'name' (the server label) and a 'url'")
    tool: dict[str, Any] = {"type": "mcp", "server_label": name, "server_url": url,
                            "require_approval": config.pop("require_approval", "never")}
    if "description" in config:
        tool["server_description"] = config.pop("description")
    tool.update(config)
    return tool


def encode_managed_tool(managed: ManagedTool) -> dict[str, Any]:
    """One Responses tool object for ``managed`` (see the module table)."""
    allowed = _OPTIONS.get(managed.kind)
    if allowed is None:
        raise OpenAIEncodeError(f"the Responses API has no {managed.kind} tool")
    config = dict(managed.config or {})
    unknown = sorted(set(config) - allowed)
    if unknown:
        raise OpenAIEncodeError(f"unknown {managed.kind} options: {', '.join(unknown)}")
    if managed.kind == "web_search":
        return {"type": "web_search", **config}
    if managed.kind == "code_execution":
        return {"type": "code_interpreter", "container": config.get("container", {"type": "auto"})}
    if managed.kind == "image_generation":
        return {"type": "image_generation", **config}
    if managed.kind == "file_search":
        stores = config.get("vector_store_ids")
        if not (isinstance(stores, (list, tuple)) and stores
                and all(isinstance(s, str) and s for s in stores)):
            raise OpenAIEncodeError("file_search needs 'vector_store_ids': a non-empty list of ids")
        return {"type": "file_search", **config, "vector_store_ids": list(stores)}
    return _mcp(config)


_ARG_KEYS: Mapping[str, tuple[str, ...]] = {
    "code_interpreter_call": ("code", "container_id"), "file_search_call": ("queries",),
    "image_generation_call": ("revised_prompt",),
}


def item_call_args(kind: str, item: Mapping[str, Any]) -> str:
    """The JSON arguments text of a hosted tool call item (``action`` for the others)."""
    if kind == "mcp_call":
        arguments = item.get("arguments")
        return arguments if isinstance(arguments, str) and arguments.strip() else "{}"
    keys = _ARG_KEYS.get(kind)
    if keys is None:
        action = item.get("action")
        return zjson.dumps(action) if isinstance(action, dict) else "{}"
    return zjson.dumps({key: item[key] for key in keys if item.get(key) is not None})


def item_result(kind: str, item: Mapping[str, Any]) -> tuple[Any, bool]:
    """The result content of a hosted tool call item and whether the call failed."""
    status = item.get("status")
    failed = status in ("failed", "incomplete")
    content: dict[str, Any] = {} if status is None else {"status": status}
    if kind == "code_interpreter_call" and item.get("outputs") is not None:
        content["outputs"] = item["outputs"]
    elif kind == "file_search_call" and item.get("results") is not None:
        content["results"] = item["results"]
    elif kind == "mcp_call":
        content.update({key: item[key] for key in ("server_label", "name", "output", "error")
                        if item.get(key) is not None})
        failed = failed or item.get("error") is not None
    return (content or None), failed


def output_images(item: Mapping[str, Any], provider_name: str, item_id: str) -> list[FilePart]:
    """The images a ``code_interpreter_call`` produced (``outputs`` of type ``image``), as
    file parts pointing at their URLs."""
    outputs = item.get("outputs")
    files = []
    for output in outputs if isinstance(outputs, list) else ():
        if isinstance(output, dict) and output.get("type") == "image" and isinstance(
                output.get("url"), str) and output["url"]:
            files.append(FilePart(UrlSource(output["url"]), id=item_id, provider=ProviderPart(
                provider_name, id=item_id,
                details=ProviderDetails({"type": "code_interpreter_call"}))))
    return files


def image_part(item: Mapping[str, Any], path: str, provider_name: str,
               item_id: str) -> FilePart | None:
    """The generated image of an ``image_generation_call`` item (None while it has none)."""
    result = item.get("result")
    if result is None:
        return None
    if not isinstance(result, str):
        raise OpenAIDecodeError("image_generation_call result must be base64 text",
                                path=f"{path}.result")
    try:
        data = base64.b64decode(result, validate=True)
    except (binascii.Error, ValueError):
        raise OpenAIDecodeError("image_generation_call result is not base64",
                                path=f"{path}.result") from None
    output_format = item.get("output_format")
    media_type = _IMAGE_TYPES.get(output_format if isinstance(output_format, str) else "png",
                                  "image/png")
    return FilePart(BytesSource(data, media_type), id=item_id,
                    provider=ProviderPart(provider_name, id=item_id,
                                          details=ProviderDetails({"type": "image_generation_call"})))
