"""A section per kind of cause that took step time (kernels and operators, precision, host syncs
and GPU idle, memory copies, communication): each of its causes' time per steady step on both
sides, as bars (the Figure's table: exactly those bars, a row per cause and side) and as a table
with the evidence. The sections share a template (diff_sections/kind.html.j2); a section whose
kinds have no cause is left out."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ..charts import DIFF_SIDE_COLORS, diff_sides
from ..diff_page import DiffPage
from ..figure import Column, Figure
from ..theme import short

CHART_CAUSES = 12


@dataclass(frozen=True)
class KindSection:
    NAME: str
    TITLE: str
    KINDS: tuple[str, ...]
    NOTE: str
    VIEWS: tuple[str, ...] = ()
    TEMPLATE: str = "diff_sections/kind.html.j2"

    def build(self, page: DiffPage) -> dict | None:
        causes = [c for c in page.causes(self.KINDS) if c["change_ns"]]
        if not causes:
            return None
        return {"figure": figure(self.NAME, self.TITLE, causes[:CHART_CAUSES]), "causes": causes,
                "charted": min(len(causes), CHART_CAUSES), "note": self.NOTE}


def figure(name: str, title: str, causes: list[dict]) -> Figure:
    rows = [{"order": c["order"], "cause": f"{c['order']}. {short(c['name'], 48)}", "kind": c["kind"],
             "name": c["name"], "side": side, "ms_per_step": c["evidence"][f"{side}_ns_per_step"] / 1e6}
            for c in causes for side in DIFF_SIDE_COLORS]
    frame = pl.DataFrame(rows, schema={"order": pl.Int64, "cause": pl.String, "kind": pl.String, "name": pl.String,
                                       "side": pl.String, "ms_per_step": pl.Float64})
    return Figure(f"diff_{name}", f"{title}: time per steady step, base and new", diff_sides(frame), frame,
                  [Column("order", "#", "count"), Column("kind", "kind"), Column("name", "name"),
                   Column("side", "side"), Column("ms_per_step", "per step", "ms")])


SECTIONS = [
    KindSection("kernels", "Kernels and operators", ("kernel", "operator"),
                "Kernels by name; operators: the GPU work of calls whose shapes exist on one side only (the "
                "evidence lists the calls)."),
    KindSection("precision", "Precision", ("precision",),
                "The same operator at another dtype, or a GEMM on CUDA cores in fp32 (by its kernel name)."),
    KindSection("syncs_idle", "Host syncs and GPU idle",
                ("data_loading", "sync", "host_sleep", "host_blocking", "host_idle", "idle"),
                "GPU idle time by what the launching thread did meanwhile: a data-loading range, a "
                "synchronizing call (and the launches it delayed), an OS-runtime sleep or blocking call, no "
                "operator at all (host_idle), else launches and operators (idle, by why the GPU waited)."),
    KindSection("memcpy", "Memory copies", ("memcpy",),
                "Copies by direction and memsets; the evidence splits the time by memory kind (pageable, pinned)."),
    KindSection("communication", "Communication", ("communication",),
                "Collectives: the transfer once every rank had joined, by operation, and the time ranks waited "
                "for the last to arrive, by that rank."),
]
