"""Memory copies and memsets by direction and memory kind (memcpy_kind_summary,
memset_kind_summary): time, bytes and the achieved bandwidth (bytes / time)."""

from __future__ import annotations

import polars as pl

from .. import charts
from ..figure import Column, Figure
from ..page import Page

NAME = "memcpy"
TITLE = "Memory copies and memsets"
VIEWS = ("memcpy_kind_summary", "memset_kind_summary")


def rows(page: Page) -> pl.DataFrame:
    """kind, category ('memcpy'/'memset'), count, total_bytes, total_ms, gbps: one bar per row."""
    return page.sql("""
        SELECT copy_kind || ' ' || src_kind || ' -> ' || dst_kind AS kind, 'memcpy' AS category, count,
               total_bytes, total_ns / 1e6 AS total_ms, avg_bytes_per_s / 1e9 AS gbps
        FROM memcpy_kind_summary WHERE trace_id = $trace
        UNION ALL
        SELECT 'memset ' || coalesce(mem_kind, 'unknown'), 'memset', count, total_bytes, total_ns / 1e6,
               avg_bytes_per_s / 1e9
        FROM memset_kind_summary WHERE trace_id = $trace
        ORDER BY total_ms DESC, kind""")


def build(page: Page) -> dict | None:
    frame = rows(page)
    if frame.is_empty():
        return None
    return {"figure": Figure("memcpy", TITLE, charts.memcpy_kinds(frame), frame,
                             [Column("kind", "direction and memory"), Column("count", "count", "count"),
                              Column("total_bytes", "bytes", "bytes"), Column("total_ms", "time", "ms"),
                              Column("gbps", "bandwidth", "gbps")])}
