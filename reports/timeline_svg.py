"""The step timeline drawn straight to SVG: a rectangle per row of sql/analysis/timeline.sql, no
Vega. Vega-Lite and vl-convert cost 40-90 ms a page for this one chart (most of the timeline
section's time), a direct drawing under 5 ms; the chart is a few rectangles per lane, an axis and
a legend, which need no layout engine. It looks like the report's Vega charts (same fonts, colors
and sizes), renders inline in a notebook (_repr_svg_), and records the rows it drew (drawn), which
tests/test_page_truth.py compares with the table beside it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

import polars as pl

from .theme import CATEGORY_COLORS, CAUSE_COLORS, HOST_COLORS

COLORS = {**{c: CATEGORY_COLORS[c] for c in ("compute", "communication", "memcpy", "memset")}, **HOST_COLORS,
          **CAUSE_COLORS}
PATH_COLOR = "#111111"
BAND = 26  # pixels per lane
BOX = 18  # height of a mark in its lane (0.7 of the band)
FONT = "font-family:sans-serif"
TEXT = "#1d2733"
LEGEND_COLUMNS = 6
LEGEND_STEP = 100  # pixels per legend column


def _num(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _ticks(window_ms: float, width: int) -> list[float]:
    """Round times (1, 2 or 5 x 10^k ms) about every 70 pixels, from 0 to the window's end."""
    raw = window_ms / max(1, width // 70)
    power = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return [i * step for i in range(int(window_ms / step + 1e-9) + 1)]


@dataclass
class TimelineChart:
    """frame: lane, layer ('operation', 'span', 'gap', 'path'), category, start_ms, end_ms, ms,
    busy_ms, label (times since the step's start): a row of marks per lane (lanes, top to bottom),
    operations, spans and gaps in their category's or cause's color, each as dark as it is full
    (busy_ms / ms), a mark at least a pixel wide; the critical path a dark bar along the top of
    its lanes; labels over the marks that have one. width: the plot's pixels for window_ms."""

    frame: pl.DataFrame
    lanes: list[str]
    width: int
    window_ms: float
    _drawn: list[dict] = field(default_factory=list, repr=False)
    _svg: str | None = field(default=None, repr=False)

    def drawn(self) -> list[dict]:
        """The rows drawn, one per rectangle, in drawing order."""
        self.to_svg()
        return self._drawn

    def _repr_svg_(self) -> str:
        return self.to_svg()

    def to_svg(self) -> str:
        if self._svg is None:
            self._svg = self._draw()
        return self._svg

    def _draw(self) -> str:
        label_w = 8 + 6 * max((len(lane) for lane in self.lanes), default=4)
        x0, top = label_w + 6, 14
        scale = self.width / self.window_ms if self.window_ms > 0 else 0.0
        lane_y = {lane: top + i * BAND for i, lane in enumerate(self.lanes)}
        plot_h = BAND * len(self.lanes)
        out: list[str] = []
        # frame, time grid, lane names
        ticks = _ticks(self.window_ms, self.width)
        grid = "".join(f"M{_num(x0 + t * scale)} {top}v{plot_h}" for t in ticks)
        out.append(f'<path d="{grid}" stroke="#e6e6e6" fill="none"/>')
        out.append(f'<rect x="{x0}" y="{top}" width="{self.width}" height="{plot_h}" fill="none" stroke="#dddddd"/>')
        out.append(f'<g style="{FONT};font-size:10px" fill="{TEXT}" text-anchor="end">')
        out.extend(f'<text x="{x0 - 6}" y="{lane_y[lane] + BAND / 2 + 3.5:g}">{escape(lane)}</text>'
                   for lane in self.lanes)
        out.append("</g>")
        # marks: boxes by color, then the critical path, then labels
        self._drawn = []
        boxes: dict[str, list[str]] = {}
        path: list[str] = []
        labels: list[tuple[str, float, float]] = []
        min_w = 1.0
        for row in self.frame.iter_rows(named=True):
            x = x0 + row["start_ms"] * scale
            w = max(min_w, (row["end_ms"] - row["start_ms"]) * scale)
            mid = lane_y[row["lane"]] + BAND / 2
            if row["layer"] == "path":
                path.append(f'<rect x="{_num(x)}" y="{_num(mid - 9.5)}" width="{_num(w)}" height="3"/>')
            else:
                full = min(1.0, row["busy_ms"] / row["ms"]) if row["ms"] > 0 else 1.0
                opacity = "" if full >= 0.995 else f' fill-opacity="{0.3 + 0.7 * full:.2f}"'
                boxes.setdefault(COLORS.get(row["category"], "#999999"), []).append(
                    f'<rect x="{_num(x)}" y="{_num(mid - BOX / 2)}" width="{_num(w)}" height="{BOX}"{opacity}/>')
            if row["label"] is not None:
                labels.append((row["label"], x, mid))
            self._drawn.append(row)
        for color, rects in boxes.items():
            out.append(f'<g fill="{color}">{"".join(rects)}</g>')
        out.append(f'<g fill="{PATH_COLOR}">{"".join(path)}</g>')
        out.append(f'<g style="{FONT};font-size:10px" fill="{TEXT}">')
        ends: dict[float, float] = {}  # a lane's last label's right edge: labels never overlap
        for text, x, mid in sorted(labels, key=lambda t: (t[2], t[1])):
            x = max(x + 1, ends.get(mid, -1e9) + 3)
            ends[mid] = x + 6.5 * len(text)
            out.append(f'<text x="{_num(x)}" y="{_num(mid - 10)}">{escape(text)}</text>')
        out.append("</g>")
        # the time axis
        axis_y = top + plot_h
        marks = "".join(f"M{_num(x0 + t * scale)} {axis_y}v5" for t in ticks)
        out.append(f'<path d="M{x0} {axis_y}h{self.width}{marks}" stroke="#888888" fill="none"/>')
        out.append(f'<g style="{FONT};font-size:10px" fill="{TEXT}" text-anchor="middle">')
        out.extend(f'<text x="{_num(x0 + t * scale)}" y="{axis_y + 16}">{t:g}</text>' for t in ticks)
        out.append(f'<text x="{_num(x0 + self.width / 2)}" y="{axis_y + 32}" style="font-weight:bold;font-size:11px">'
                   "time since the step's start (ms)</text></g>")
        # the legend: the categories drawn, then the path and the shading
        drawn = set(self.frame["category"].to_list())
        items = [(COLORS[c], c) for c in COLORS if c in drawn]
        if "path" in drawn:
            items.append((PATH_COLOR, "critical path"))
        legend_y = axis_y + 48
        out.append(f'<g style="{FONT};font-size:10px" fill="{TEXT}">')
        for i, (color, name) in enumerate(items):
            x, y = x0 + (i % LEGEND_COLUMNS) * LEGEND_STEP, legend_y + (i // LEGEND_COLUMNS) * 16
            out.append(f'<rect x="{x}" y="{y - 9}" width="10" height="10" fill="{color}"/>'
                       f'<text x="{x + 14}" y="{y}">{escape(name)}</text>')
        rows = -(-len(items) // LEGEND_COLUMNS) + 1
        y = legend_y + (rows - 1) * 16
        out.append(f'<rect x="{x0}" y="{y - 9}" width="10" height="10" fill="{COLORS["compute"]}" fill-opacity="0.4"/>'
                   f'<text x="{x0 + 14}" y="{y}">lighter: a span of operations (or gaps) mostly empty</text>')
        out.append("</g>")
        width = x0 + self.width + 24
        height = legend_y + rows * 16
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
                f'viewBox="0 0 {width} {height}"><rect width="{width}" height="{height}" fill="white"/>'
                + "".join(out) + "</svg>")
