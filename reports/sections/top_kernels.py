"""The kernels with the most GPU time (kernel_summary, equal to NVIDIA's cuda_gpu_kern_sum): a bar
per kernel (distinct names stay distinct bars: each label carries its rank) and the table."""

from __future__ import annotations

import polars as pl

from .. import charts
from ..figure import Column, Figure
from ..page import Page

NAME = "top_kernels"
TITLE = "Top kernels"
VIEWS = ("kernel_summary",)
CHART_KERNELS, TABLE_KERNELS = 12, 25


def table(page: Page, limit: int = TABLE_KERNELS) -> list[dict]:
    return page.sql(f"""SELECT name, time_pct, total_ns, instances, avg_ns, med_ns, min_ns, max_ns
                        FROM kernel_summary WHERE trace_id = $trace
                        ORDER BY total_ns DESC, name, instances, max_ns LIMIT {limit}""").to_dicts()


def figure(rows: list[dict]) -> Figure | None:
    if not rows:
        return None
    frame = pl.DataFrame(rows[:CHART_KERNELS]).select(
        pl.int_range(1, pl.len() + 1).alias("rank"), "name", (pl.col("total_ns") / 1e6).alias("total_ms"), "time_pct")
    return Figure("top_kernels", TITLE, charts.top_kernels(frame), frame,
                  [Column("rank", "#", "count"), Column("name", "kernel"), Column("total_ms", "total time", "ms"),
                   Column("time_pct", "of kernel time", "pct")])


def build(page: Page) -> dict | None:
    rows = table(page)
    return {"figure": figure(rows), "rows": rows} if rows else None
