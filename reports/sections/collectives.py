"""Collectives of the trace's run (collective_bandwidth): the numbers nccl-tests prints, per
operation, size and type, and the bus bandwidth by message size."""

from __future__ import annotations

import polars as pl

from .. import charts
from ..figure import Column, Figure
from ..page import Page

NAME = "collectives"
TITLE = "Collectives"
VIEWS = ("collective_bandwidth", "collectives")


def rows(page: Page) -> pl.DataFrame:
    """collective_bandwidth of this trace's run (or of the trace alone), by operation and size."""
    return page.sql("""
        SELECT b.operation, b.bytes, b.dtype, b.group_size, b.count, b.median_transfer_ns, b.algbw_gb_per_s,
               b.busbw_gb_per_s, b.p50_wait_ns, b.p90_wait_ns, b.is_bound
        FROM collective_bandwidth b
        WHERE b.run_id IN (SELECT run_id FROM collectives WHERE trace_id = $trace)
        ORDER BY b.operation, b.bytes, b.dtype""")


def figure(frame: pl.DataFrame) -> Figure | None:
    sized = frame.filter(pl.col("bytes").is_not_null() & (pl.col("bytes") > 0)
                         & pl.col("busbw_gb_per_s").is_not_null()).with_columns(pl.col("dtype").fill_null("?"))
    if sized.is_empty():
        return None
    sized = sized.select("operation", "bytes", "dtype", "busbw_gb_per_s")
    return Figure("collective_bandwidth", "Collective bandwidth by message size", charts.collective_bandwidth(sized),
                  sized, [Column("operation", "operation"), Column("bytes", "size per rank", "bytes"),
                          Column("dtype", "type"), Column("busbw_gb_per_s", "bus bandwidth", "gbps")])


def build(page: Page) -> dict | None:
    frame = rows(page)
    if frame.is_empty():
        return None
    return {"rows": frame.to_dicts(), "figure": figure(frame), "is_bound": bool(frame["is_bound"].any())}
