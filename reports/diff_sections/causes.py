"""The causes of the step-time change, largest first: the bar chart of the largest that took time
(with the table of exactly those bars), their sum against the change of the mean step, and the
table of every cause with its evidence (analysis/diff_causes.py)."""

from __future__ import annotations

import polars as pl

from .. import charts
from ..diff_page import DiffPage
from ..figure import Column, Figure

NAME = "causes"
TITLE = "Causes, largest first"
VIEWS = ()
CHART_CAUSES = 15  # bars in the chart (the table lists all causes, up to TABLE_CAUSES)
TABLE_CAUSES = 100


def figure(causes: list[dict]) -> Figure | None:
    """The bar chart of the causes that took step time (the largest CHART_CAUSES), with its table."""
    timed = [c for c in causes if c["change_ns"]]
    shown = timed[:CHART_CAUSES]
    if not shown:
        return None
    frame = pl.DataFrame({"order": [c["order"] for c in shown], "kind": [c["kind"] for c in shown],
                          "name": [c["name"] for c in shown], "change_ms": [c["change_ns"] / 1e6 for c in shown]},
                         schema={"order": pl.Int64, "kind": pl.String, "name": pl.String, "change_ms": pl.Float64})
    note = None if len(shown) == len(timed) else f"The {len(shown)} largest causes; the table below lists them all."
    return Figure("diff_causes", "change of the step time by cause", charts.diff_causes(frame), frame,
                  [Column("order", "#", "count"), Column("kind", "kind"), Column("name", "name"),
                   Column("change_ms", "change per step", "ms")], note)


def build(page: DiffPage) -> dict:
    r, causes = page.result, page.causes()
    steps = r["steps"]
    return {"figure": figure(causes), "causes": causes[:TABLE_CAUSES], "more": max(0, len(causes) - TABLE_CAUSES),
            "explained_ns": r["explained_ns"], "unexplained_ns": r["unexplained_ns"],
            "mean_change_ns": steps["new"]["mean_ns"] - steps["base"]["mean_ns"]}
