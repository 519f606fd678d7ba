"""What fusion would save (issue #34): the chains of memory-bound kernels (fusion_candidates), the
GPU time fusing each would save per step, where they are in the Python code and how to fuse them;
and the predicted saving of all of them per steady step (fusion_summary)."""

from __future__ import annotations

import altair as alt
import polars as pl

from ..figure import Column, Figure
from ..page import Page
from ..theme import CATEGORY_COLORS, short

NAME = "fusion"
TITLE = "Fusion: memory-bound kernel chains"
VIEWS = ("fusion_candidates", "fusion_summary")
CHART_CHAINS, TABLE_CHAINS = 10, 15
# The what-if scenario that runs the steps with the chains fused (analysis/critpath_scenarios.py;
# reports imports no analysis module: tests/test_fusion.py checks the label is the same)
WHATIF_SCENARIO = "memory-bound chains fused"


def candidates(page: Page, limit: int = TABLE_CHAINS) -> pl.DataFrame:
    return page.sql(f"""
        SELECT rank, operators, kernels, per_step, instances, device_ns, fused_ns, saved_ns,
               saved_ns_per_step / 1e6 AS saved_ms_per_step, bytes_now, bytes_fused, python_location, advice
        FROM fusion_candidates WHERE trace_id = $trace AND saved_ns > 0
        ORDER BY rank LIMIT {limit}""")


def headline(page: Page) -> dict | None:
    """The mean over the steady steps (all steps when the page has no steady window)."""
    s = page.steady
    window = "" if s is None else f"AND pid = {int(s['pid'])} AND start_ns >= {int(s['start_ns'])} " \
                                  f"AND start_ns < {int(s['end_ns'])}"
    rows = page.sql(f"""
        SELECT count(*) AS steps, avg(chains) AS chains, avg(kernels) AS kernels, avg(device_ns) AS device_ns,
               avg(saved_ns) AS saved_ns, avg(saved_pct) AS saved_pct, avg(launches_saved) AS launches_saved
        FROM fusion_summary WHERE trace_id = $trace {window}""").to_dicts()
    return rows[0] if rows and rows[0]["steps"] else None


def chart(frame: pl.DataFrame) -> alt.Chart:
    """frame: rank, operators, saved_ms_per_step: one bar per chain, labelled with its rank (two
    chains of the same operators stay two bars)."""
    frame = frame.with_columns(pl.struct("rank", "operators").map_elements(
        lambda r: f"{r['rank']}. {short(r['operators'].replace('aten::', ''), 40)}", return_dtype=pl.String)
        .alias("chain"))
    return alt.Chart(frame).mark_bar(color=CATEGORY_COLORS["compute"]).encode(
        y=alt.Y("chain:N", sort=alt.SortField("rank"), title=None, axis=alt.Axis(labelLimit=0)),
        x=alt.X("saved_ms_per_step:Q", title="GPU time fusion would save per step (ms)"),
    ).properties(width=360, height=alt.Step(18))


def build(page: Page) -> dict | None:
    table = candidates(page)
    if table.is_empty():
        return None
    drawn = table.head(CHART_CHAINS).select("rank", "operators", "per_step", "saved_ms_per_step", "python_location")
    figure = Figure("fusion", "GPU time fusing each chain would save per step", chart(drawn), drawn,
                    [Column("rank", "#", "count"), Column("operators", "chain (operators)"),
                     Column("per_step", "times per step", "num"), Column("saved_ms_per_step", "saved per step", "ms"),
                     Column("python_location", "Python location")])
    whatif = next((r for r in page.whatif if r["scenario"] == WHATIF_SCENARIO), None)
    step = None if whatif is None or not whatif["steps"] else \
        {"saved_ns": (whatif["baseline_ns"] - whatif["whatif_ns"]) / whatif["steps"], "saved_pct": whatif["saved_pct"],
         "steps": whatif["steps"]}
    rows = table.to_dicts()
    advice = {r["advice"] for r in rows}  # said once above the table when every chain gets the same
    return {"figure": figure, "rows": rows, "headline": headline(page), "window": page.steady_label,
            "step": step, "advice": advice.pop() if len(advice) == 1 else None}
