"""GPU utilization over the steady state: the share of each 1/100 of the window in which each GPU
ran kernels, copies or memsets (steady_utilization). Start-up and warm-up are named, not drawn;
a trace without steps shows its whole active range (gpu_utilization_over_time)."""

from __future__ import annotations

import polars as pl

from .. import charts
from ..figure import Column, Figure
from ..page import Page

NAME = "utilization"
TITLE = "GPU utilization over time"
VIEWS = ("steady_utilization", "gpu_utilization_over_time")


def rows(page: Page) -> pl.DataFrame:
    """device, t_ms (chunk start, ms since the trace's start), in_use_pct: the steady window of the
    page's process when it has one, else every process's active range."""
    view = "steady_utilization" if page.steady else "gpu_utilization_over_time"
    only = "AND pid = $pid" if page.steady else ""
    return page.sql(f"""
        SELECT 'GPU ' || device_id || ' (pid ' || pid || ')' AS device, (start_ns - $origin) / 1e6 AS t_ms,
               duration_ns / 1e6 AS chunk_ms, in_use_pct
        FROM {view} WHERE trace_id = $trace {only} ORDER BY device, t_ms""",
                    {"origin": page.origin_ns} | ({"pid": page.steady["pid"]} if page.steady else {}))


def figure(page: Page) -> Figure | None:
    frame = rows(page)
    if frame.is_empty():
        return None
    return Figure("utilization", TITLE, charts.utilization_over_time(frame), frame,
                  [Column("device", "GPU"), Column("t_ms", "slice start (since trace start)", "ms"),
                   Column("chunk_ms", "slice length", "ms"), Column("in_use_pct", "GPU in use", "pct")])


def build(page: Page) -> dict | None:
    fig = figure(page)
    return None if fig is None else {"figure": fig, "steady": page.steady, "label": page.steady_label}
