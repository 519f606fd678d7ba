"""The steady steps' peak allocated GPU memory of both sides (the 'memory' cause: it takes no step
time), when both recorded allocator events and the peak moved by 1 MiB or more."""

from __future__ import annotations

from ..diff_page import DiffPage

NAME = "memory"
TITLE = "Memory peak"
VIEWS = ()


def build(page: DiffPage) -> dict | None:
    causes = page.causes(("memory",))
    return {"causes": causes} if causes else None
