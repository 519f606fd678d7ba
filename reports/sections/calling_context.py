"""Which code launched the GPU time: the calling-context icicle, top down (callctx_icicle: Python
frames > operators > kernels), each bar's width its share of all GPU time."""

from __future__ import annotations

import polars as pl

from .. import charts
from ..figure import Column, Figure
from ..page import Page

NAME = "calling_context"
TITLE = "Which code launched the GPU time"
VIEWS = ("callctx_icicle",)


def rows(page: Page) -> pl.DataFrame:
    """Node rectangles of the 'stack' tree, children inside their parent: depth, x0, x1 (% of the
    root), label, kind."""
    return page.sql("""SELECT depth, x0, x1, label, kind FROM callctx_icicle WHERE trace_id = $trace
                       ORDER BY depth, x0, label, kind""")


def figure(page: Page) -> Figure | None:
    frame = rows(page)
    if frame.is_empty():
        return None
    return Figure("calling_context", TITLE, charts.icicle(frame), frame,
                  [Column("depth", "depth", "count"), Column("label", "frame"), Column("kind", "kind"),
                   Column("x0", "from (% of GPU time)", "num"), Column("x1", "to (% of GPU time)", "num")])


def build(page: Page) -> dict | None:
    fig = figure(page)
    return None if fig is None else {"figure": fig}
