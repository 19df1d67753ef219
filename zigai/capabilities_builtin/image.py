"""The ``image`` capability: generate images and describe images through an :class:`ImageBackend`.

Invariants: a URL to describe is checked by the capability's :class:`~zigai.security.UrlPolicy`
and the running agent's ``url_policy`` (both must pass) before the backend sees it; a generated image larger than ``max_image_bytes`` is refused with
a model-visible retry; descriptions are cut at ``max_description_chars``.  The model receives
the image's metadata and where it is stored, never its bytes (the backend keeps those).
"""

from __future__ import annotations

import re
from typing import Any

from zigai.capabilities_builtin.backends import ImageBackend
from zigai.capabilities_builtin.bounds import BuiltinLimits, bounded_text
from zigai.capability import Capability
from zigai.errors import SecurityError
from zigai.reflect import tool
from zigai.security import UrlPolicy, stricter_policy
from zigai.tool import ModelRetry, ToolRunContext

__all__ = ["image_capability"]

_SIZE = re.compile(r"[1-9][0-9]{1,4}x[1-9][0-9]{1,4}")


def image_capability(backend: ImageBackend, policy: UrlPolicy, limits: BuiltinLimits) -> Capability:
    """The ``image`` bundle over ``backend`` (borrowed)."""

    def image_generate(prompt: str, size: str = "1024x1024") -> dict[str, Any]:
        """Generate an image from a description; size is WIDTHxHEIGHT in pixels."""
        if not prompt.strip():
            raise ModelRetry("describe the image to generate")
        if not _SIZE.fullmatch(size):
            raise ModelRetry(f"size must look like 1024x1024, got {size!r}")
        image = backend.generate(prompt, size=size)
        if len(image.data) > limits.max_image_bytes:
            raise ModelRetry(f"the generated image has {len(image.data)} bytes, over the limit of "
                             f"{limits.max_image_bytes}; ask for a smaller size")
        return {"media_type": image.media_type, "url": image.url, "bytes": len(image.data),
                "description": bounded_text(image.description, limits.max_description_chars)}

    def image_describe(ctx: ToolRunContext[Any], url: str, question: str = "") -> str:
        """Describe the image at a URL, or answer a question about it."""
        try:  # the agent's url_policy governs here too: the URL must pass both
            (stricter_policy(policy, ctx.url_policy) or policy).check(url)
        except SecurityError as exc:
            raise ModelRetry(f"that URL is not allowed: {exc}") from None
        return bounded_text(backend.describe(url, question=question), limits.max_description_chars)

    return Capability(
        id="image",
        description="Generate images from descriptions and describe images given by URL.",
        tools=(tool("image_generate", None, image_generate), tool("image_describe", None, image_describe, takes_context=True)),
    )
