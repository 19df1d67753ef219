"""Definition ceilings of a graph: one frozen :class:`GraphLimits` value per graph.

Every bound is a largest accepted count: exactly-at-limit is accepted, one more fails
with :class:`~zigai.graph.errors.GraphLimitExceeded` (definition bounds) or the named
run error (``max_steps`` -> ``StepLimitExceeded``, ``max_fork_items`` ->
``ForkItemLimitExceeded``, ``max_visualization_bytes`` -> ``VisualizationTooLarge``).
The execution ceilings (``max_steps``, ``max_concurrency``, ``max_fork_items``) are part
of the definition digest; the size bounds of the definition itself are not (they do not
change what a run does).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from zigai.graph.errors import InvalidGraphDefinition

__all__ = ["GraphLimits"]


@dataclass(frozen=True, slots=True)
class GraphLimits:
    """Bounds of one graph definition and of every run of it.

    * ``max_nodes`` / ``max_edges`` -- nodes and routes in the definition;
    * ``max_name_bytes`` -- UTF-8 size of a node, branch or group name;
    * ``max_text_bytes`` -- UTF-8 size of one documentation string (label, description,
      source location);
    * ``max_steps`` -- completed transitions of one run (a run may only tighten it);
    * ``max_concurrency`` -- fork callbacks admitted at once (a fork may only tighten it);
    * ``max_fork_items`` -- items one map fork may emit;
    * ``max_visualization_bytes`` -- UTF-8 size of rendered visualization text.
    """

    max_nodes: int = 256
    max_edges: int = 1024
    max_name_bytes: int = 128
    max_text_bytes: int = 4096
    max_steps: int = 1000
    max_concurrency: int = 8
    max_fork_items: int = 1024
    max_visualization_bytes: int = 1024 * 1024

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if type(value) is not int or value < 1:
                raise InvalidGraphDefinition(
                    f"GraphLimits.{field.name} must be an int >= 1, got {value!r}"
                )

    def execution_ceilings(self) -> dict[str, int]:
        """The bounds that change what a run does (they enter the definition digest)."""
        return {
            "max_steps": self.max_steps,
            "max_concurrency": self.max_concurrency,
            "max_fork_items": self.max_fork_items,
        }
