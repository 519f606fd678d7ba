"""Altair charts for the reports, rendered offline to PNG with vl-convert (no JavaScript, no CDN)."""

from __future__ import annotations

import altair as alt
import polars as pl
import vl_convert as vlc

from .theme import CATEGORY_COLORS, short

_WIDTH = 640


def to_png(chart: alt.Chart) -> bytes:
    return vlc.vegalite_to_png(chart.to_json(), scale=2)


def utilization_over_time(frame: pl.DataFrame) -> alt.Chart:
    """frame: device, t_ms, in_use_pct."""
    return alt.Chart(frame).mark_area(opacity=0.85, color=CATEGORY_COLORS["compute"]).encode(
        x=alt.X("t_ms:Q", title="time since first GPU operation (ms)"),
        y=alt.Y("in_use_pct:Q", title="GPU in use (%)", scale=alt.Scale(domain=[0, 100], clamp=True)),
        row=alt.Row("device:N", title=None),
    ).properties(width=_WIDTH, height=90)


def time_breakdown(frame: pl.DataFrame) -> alt.Chart:
    """frame: who (rank/process), category, pct."""
    return alt.Chart(frame).mark_bar().encode(
        y=alt.Y("who:N", title=None),
        x=alt.X("pct:Q", title="share of the GPU's active time (%)", stack="zero", scale=alt.Scale(domain=[0, 100])),
        color=alt.Color("category:N", title=None, scale=alt.Scale(domain=list(CATEGORY_COLORS),
                                                                  range=list(CATEGORY_COLORS.values()))),
        order=alt.Order("category:N"),
    ).properties(width=_WIDTH, height=alt.Step(26))


def top_kernels(frame: pl.DataFrame) -> alt.Chart:
    """frame: name, total_ms."""
    frame = frame.with_columns(pl.col("name").map_elements(lambda n: short(n, 60), return_dtype=pl.String)
                               .alias("kernel"))
    return alt.Chart(frame).mark_bar(color=CATEGORY_COLORS["compute"]).encode(
        y=alt.Y("kernel:N", sort="-x", title=None),
        x=alt.X("total_ms:Q", title="total time (ms)"),
    ).properties(width=420, height=alt.Step(18))


def memcpy_kinds(frame: pl.DataFrame) -> alt.Chart:
    """frame: kind, total_ms, gbps."""
    return alt.Chart(frame).mark_bar(color=CATEGORY_COLORS["memcpy"]).encode(
        y=alt.Y("kind:N", sort="-x", title=None),
        x=alt.X("total_ms:Q", title="copy time (ms)"),
        tooltip=["gbps:Q"],
    ).properties(width=420, height=alt.Step(22))


def icicle(frame: pl.DataFrame) -> alt.Chart:
    """frame: depth, x0, x1, label, kind (x0/x1 in % of the root)."""
    frame = frame.with_columns(
        pl.col("label").map_elements(lambda n: short(n, 28), return_dtype=pl.String).alias("text"),
        (pl.col("depth") + 1).alias("depth1"),
    )
    base = alt.Chart(frame).encode(x=alt.X("x0:Q", title="share of GPU time (%)", scale=alt.Scale(domain=[0, 100])),
                                   x2="x1:Q", y=alt.Y("depth:O", title=None, axis=None))
    bars = base.mark_bar(stroke="white", strokeWidth=0.5).encode(
        color=alt.Color("kind:N", title=None, scale=alt.Scale(scheme="tableau10")))
    text = base.mark_text(align="left", dx=3, fontSize=9, color="white").encode(
        text=alt.condition("datum.x1 - datum.x0 > 8", "text:N", alt.value("")))
    return (bars + text).properties(width=_WIDTH + 160, height=alt.Step(20))
