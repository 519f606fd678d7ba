"""Where the GPU time goes: compute / busy without compute / idle, per rank or process, for the
steady state (steady_summary) and for the whole trace (temporal_breakdown), side by side."""

from __future__ import annotations

import polars as pl

from .. import charts
from ..figure import Column, Figure
from ..page import Page

NAME = "time_breakdown"
TITLE = "Where the GPU time goes"
VIEWS = ("temporal_breakdown", "steady_summary")


def rows(page: Page) -> pl.DataFrame:
    """who, window ('steady state' / 'whole trace'), category (compute, non_compute, idle), pct."""
    return page.sql("""
        WITH w AS (
            SELECT coalesce('rank ' || rank, 'pid ' || pid) AS who, pid, 'steady state' AS window, 0 AS w_order,
                   compute_pct AS compute, 100 - gpu_idle_pct - compute_pct AS non_compute, gpu_idle_pct AS idle
            FROM steady_summary WHERE trace_id = $trace
            UNION ALL
            SELECT coalesce('rank ' || rank, 'pid ' || pid), pid, 'whole trace', 1, compute_pct, non_compute_pct, idle_pct
            FROM temporal_breakdown WHERE trace_id = $trace
        )
        UNPIVOT w ON compute, non_compute, idle INTO NAME category VALUE pct
        ORDER BY pid, w_order, list_position(['compute', 'non_compute', 'idle'], category)""").drop("pid", "w_order")


def build(page: Page) -> dict | None:
    frame = rows(page)
    if frame.is_empty():
        return None
    return {"figure": Figure("time_breakdown", TITLE, charts.time_breakdown(frame), frame,
                             [Column("who", "rank / process"), Column("window", "window"),
                              Column("category", "category"), Column("pct", "share of the window", "pct")])}
