"""A chart with its numbers: the Altair chart a section draws and the table of exactly the rows it
draws, shown beside it in a <details> (for mail clients that block images, for screen readers,
and so that a chart never shows what its table does not: tests/test_page_truth.py)."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field

import altair as alt
import polars as pl

from . import charts, theme
from .timeline_svg import TimelineChart

# How a table cell is written: the theme's formats, by the unit of the column.
FORMATS = {
    "text": lambda v: "–" if v is None else str(v),
    "ms": lambda v: theme.ms(None if v is None else v * 1e6),  # a value already in ms
    "ns": theme.ms,
    "pct": theme.pct,
    "count": theme.count,
    "gbps": lambda v: theme.gbps(None if v is None else v * 1e9),  # a value already in GB/s
    "bytes": theme.size,
    "gib": lambda v: "–" if v is None else f"{float(v):,.2f} GiB",  # a value already in GiB
    "num": lambda v: "–" if v is None else f"{float(v):,.3g}",
}


@dataclass(frozen=True)
class Column:
    field: str   # the column of Figure.rows
    header: str  # the table header, with its unit
    unit: str = "text"  # a key of FORMATS

    @property
    def numeric(self) -> bool:
        return self.unit != "text"


@dataclass
class Figure:
    """name: the chart's id on the page (<figure data-chart=NAME>); rows: exactly the rows the chart
    draws, one per mark (bar, point, area slice); columns: how the table beside it shows them.
    chart: an Altair chart (drawn by Vega), or one that draws its own SVG (to_svg: the step
    timeline, reports/timeline_svg.py)."""

    name: str
    title: str
    chart: alt.TopLevelMixin | TimelineChart
    rows: pl.DataFrame
    columns: list[Column]
    note: str | None = None
    _src: str | None = field(default=None, repr=False)

    @property
    def src(self) -> str:
        """The chart as an inline SVG data: URI (rendered once)."""
        if self._src is None:
            svg = self.chart.to_svg() if isinstance(self.chart, TimelineChart) else charts.to_svg(self.chart)
            self._src = "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()
        return self._src

    def table(self) -> dict:
        """The <table> beside the chart: headers, and per row (text, raw value, is numeric) cells."""
        body = [[(FORMATS[c.unit](row[c.field]), row[c.field], c.numeric) for c in self.columns]
                for row in self.rows.iter_rows(named=True)]
        return {"headers": [(c.header, c.numeric) for c in self.columns], "rows": body}
