"""Altair charts for the reports, rendered offline to SVG with vl-convert (no JavaScript, no CDN).

The pages inline SVG (about 2.3x faster to render than PNG at print resolution, and sharp at any
zoom); e-mail, whose clients block SVG, gets PNGs made from the same SVG (reports/email.py).
"""

from __future__ import annotations

import logging
from typing import cast

import altair as alt
import polars as pl
import vl_convert as vlc
from altair.utils.schemapi import debug_mode

from .theme import CATEGORY_COLORS, CAUSE_COLORS, CODE_COLORS, CRITICAL_PATH_COLORS, gbps, short

# The charts carry their rows inline; no spec may load data or images from anywhere (a page
# is made offline, and a mail must not differ from the page it came from).
vlc.configure(allowed_base_urls=[])
# vl-convert 2 passes Vega-Lite's compile warnings to this logger: a warning about a spec is
# a bug that tests/test_reports.py fails on; one about a trace's rows (an empty extent) is no
# line for the user's terminal.
logging.getLogger("vl_convert").setLevel(logging.ERROR)

_WIDTH = 640
# Labels are shortened before charting; Vega's own truncation to labelLimit measures each label
# again and again (8x slower to render a top-kernels chart), so it is turned off.
_FULL_LABELS = alt.Axis(labelLimit=0)


def to_svg(chart: alt.Chart) -> str:
    # Altair's JSON-schema validation of each spec cost more than a third of the rendering time;
    # the specs are fixed code, checked by the tests (which validate them: see tests/test_reports.py).
    # Legends show their labels whole (class names like kernel_to_kernel were cut at Vega's 160 px).
    # The padding leaves room for text that a reader's font draws wider than the font vl-convert
    # measured it with (Chromium on Debian drew axis and legend labels past the image's edges).
    with debug_mode(False):  # no schema check of each object as it is made (render.built_sections)
        spec = chart.configure_legend(labelLimit=0).to_dict(validate=False)
    spec["padding"] = {"left": 28, "right": 48, "top": 5, "bottom": 5}
    return vlc.vegalite_to_svg(spec)


def utilization_over_time(frame: pl.DataFrame) -> alt.Chart:
    """frame: device, t_ms, in_use_pct."""
    return alt.Chart(frame).mark_area(opacity=0.85, color=CATEGORY_COLORS["compute"]).encode(
        x=alt.X("t_ms:Q", title="time since the trace's start (ms)", scale=alt.Scale(zero=False, nice=False)),
        y=alt.Y("in_use_pct:Q", title="GPU in use (%)", scale=alt.Scale(domain=[0, 100], clamp=True)),
        row=alt.Row("device:N", title=None),
    ).properties(width=_WIDTH, height=90)


def time_breakdown(frame: pl.DataFrame) -> alt.Chart:
    """frame: who (rank/process), window ('steady state' / 'whole trace'), category, pct: a bar per
    process and window."""
    frame = frame.with_columns((pl.col("who") + ", " + pl.col("window")).alias("bar"))
    return alt.Chart(frame).mark_bar().encode(
        y=alt.Y("bar:N", title=None, sort=None, axis=_FULL_LABELS),
        x=alt.X("pct:Q", title="share of the window (%)", stack="zero", scale=alt.Scale(domain=[0, 100])),
        color=alt.Color("category:N", title=None,
                        scale=_scale({c: CATEGORY_COLORS[c] for c in ("compute", "non_compute", "idle")})),
    ).properties(width=_WIDTH - 120, height=alt.Step(26))


def top_kernels(frame: pl.DataFrame) -> alt.Chart:
    """frame: rank (1 = most time), name, total_ms: one bar per row. Each label starts with the
    kernel's rank, so two kernels whose shortened names are equal stay two bars (Vega-Lite would
    sum equal labels into one)."""
    frame = frame.with_columns(pl.struct("rank", "name").map_elements(
        lambda r: f"{r['rank']}. {short(r['name'], 56)}", return_dtype=pl.String).alias("kernel"))
    return alt.Chart(frame).mark_bar(color=CATEGORY_COLORS["compute"]).encode(
        y=alt.Y("kernel:N", sort=alt.SortField("rank"), title=None, axis=_FULL_LABELS),
        x=alt.X("total_ms:Q", title="total time (ms)"),
    ).properties(width=420, height=alt.Step(18))


def _scale(colors: dict[str, str]) -> alt.Scale:
    return alt.Scale(domain=list(colors), range=list(colors.values()))


def memcpy_kinds(frame: pl.DataFrame) -> alt.Chart:
    """frame: kind, category ('memcpy'/'memset'), total_ms, gbps."""
    frame = frame.with_columns(
        pl.col("gbps").map_elements(lambda v: gbps(v * 1e9), return_dtype=pl.String).fill_null("").alias("label"))
    # the longest first, as in the table; a layer's shared axis sorts by max, not by "-x" (a sum)
    by_time = alt.EncodingSortField("total_ms", op="max", order="descending")
    base = alt.Chart(frame).encode(y=alt.Y("kind:N", sort=by_time, title=None, axis=_FULL_LABELS),
                                   x=alt.X("total_ms:Q", title="time (ms)"))
    bars = base.mark_bar().encode(color=alt.Color("category:N", title=None, scale=_scale(CATEGORY_COLORS),
                                                  legend=None))
    text = base.mark_text(align="left", dx=4, fontSize=11, color="#1d2733").encode(text="label:N")
    return (bars + text).properties(width=420, height=alt.Step(24))


def gap_distribution(frame: pl.DataFrame, bins: list[str]) -> alt.Chart:
    """frame: bin (label), cause, idle_ms, gaps."""
    return alt.Chart(frame).mark_bar().encode(
        x=alt.X("bin:N", sort=bins, title="length of the idle gap", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("idle_ms:Q", title="GPU idle time (ms)", stack="zero"),
        color=alt.Color("cause:N", title="cause", scale=_scale(CAUSE_COLORS)),
    ).properties(width=_WIDTH, height=200)


def _with_step_labels(frame: pl.DataFrame) -> pl.DataFrame:
    """frame with step_label: the step's name, followed by ' #' and its step_index where several
    steps share the name (record_function 'iteration' ranges, periodicity steps): one bar per step,
    not one per name."""
    names = frame.select("step_index", "step").unique()
    shared = names.height != names["step"].n_unique()
    label = (pl.col("step") + " #" + pl.col("step_index").cast(pl.String)) if shared else pl.col("step")
    return frame.with_columns(label.alias("step_label"))


def _step_axis() -> alt.X:
    return alt.X("step_label:N", sort=alt.SortField("step_index"), title=None, axis=alt.Axis(labelAngle=-40))


def step_breakdown(frame: pl.DataFrame) -> alt.Chart:
    """frame: step_index, step, category (compute/non_compute/idle), ms."""
    order = ["compute", "non_compute", "idle"]
    return alt.Chart(_with_step_labels(frame)).mark_bar().encode(
        x=_step_axis(),
        y=alt.Y("ms:Q", title="step time (ms)", stack="zero"),
        color=alt.Color("category:N", title=None, scale=alt.Scale(domain=order,
                                                                  range=[CATEGORY_COLORS[c] for c in order])),
        order=alt.Order("category_order:Q"),
    ).transform_calculate(
        category_order="indexof(['compute', 'non_compute', 'idle'], datum.category)"
    ).properties(width=_WIDTH, height=220)


def critical_path(frame: pl.DataFrame) -> alt.Chart:
    """frame: step_index, step, class, ms (one bar per step: its critical path split by class)."""
    order = list(CRITICAL_PATH_COLORS)
    return alt.Chart(_with_step_labels(frame)).mark_bar().encode(
        x=_step_axis(),
        y=alt.Y("ms:Q", title="critical path (ms)", stack="zero"),
        color=alt.Color("class:N", title=None, scale=_scale(CRITICAL_PATH_COLORS)),
        order=alt.Order("class_order:Q"),
    ).transform_calculate(
        class_order=f"indexof({order}, datum['class'])"
    ).properties(width=_WIDTH, height=220)


def icicle(frame: pl.DataFrame) -> alt.Chart:
    """frame: depth, x0, x1, label, kind (x0/x1 in % of the root)."""
    frame = frame.with_columns(
        pl.col("label").map_elements(lambda n: short(n, 28), return_dtype=pl.String).alias("text"),
        (pl.col("depth") + 1).alias("depth1"),
    )
    base = alt.Chart(frame).encode(x=alt.X("x0:Q", title="share of GPU time (%)", scale=alt.Scale(domain=[0, 100])),
                                   y=alt.Y("depth:O", title=None, axis=None))
    colors = {**CODE_COLORS, **{k: v for k, v in CATEGORY_COLORS.items() if k not in ("idle", "non_compute")}}
    present = set(frame["kind"].unique().to_list())
    colors = {k: v for k, v in colors.items() if k in present}
    bars = base.mark_bar(stroke="white", strokeWidth=0.5).encode(
        x2="x1:Q", color=alt.Color("kind:N", title=None, scale=_scale(colors)))
    text = base.mark_text(align="left", dx=3, fontSize=9, color="white").encode(
        text=alt.condition("datum.x1 - datum.x0 > 8", "text:N", alt.value("")))
    return (bars + text).properties(width=_WIDTH + 160, height=alt.Step(20))


def run_history(frame: pl.DataFrame) -> alt.VConcatChart:
    """frame: workload, run, started (timestamp), step_ms, idle_pct: step time and GPU idle of each
    run by its start, a line per workload."""
    frame = frame.with_columns(pl.col("workload").map_elements(lambda n: short(n, 48), return_dtype=pl.String),
                               pl.col("started").dt.epoch("ms"))  # epoch ms on a UTC scale: no local time zone
    color = alt.Color("workload:N", title="workload (its first run)", legend=alt.Legend(orient="bottom", columns=1,
                                                                                      labelLimit=0))
    x = alt.X("started:T", title="run started (UTC)", scale=alt.Scale(type="utc"),
              axis=alt.Axis(format=_time_format(frame["started"]), labelAngle=-30))
    base = alt.Chart(frame).encode(x=x, color=color)
    step = base.transform_filter("isValid(datum.step_ms)").mark_line(point=True).encode(
        y=alt.Y("step_ms:Q", title="median step (ms)"))
    idle = base.mark_line(point=True).encode(
        y=alt.Y("idle_pct:Q", title="GPU idle (%)", scale=alt.Scale(domain=[0, 100])))
    return alt.vconcat(step.properties(width=_WIDTH, height=160), idle.properties(width=_WIDTH, height=120))


def _time_format(epoch_ms: pl.Series) -> str:
    """Axis labels as precise as the ticks Vega puts over this span (a minute's label on ticks 30 s
    apart read as the same time twice)."""
    span_s = (cast(float, epoch_ms.max() or 0) - cast(float, epoch_ms.min() or 0)) / 1000  # numbers: ms
    if span_s < 3600:
        return "%Y-%m-%d %H:%M:%S"
    return "%Y-%m-%d %H:%M" if span_s < 15 * 86400 else "%Y-%m-%d"


def collective_bandwidth(frame: pl.DataFrame) -> alt.Chart:
    """frame: operation, bytes, dtype, busbw_gb_per_s: bus bandwidth by message size, a panel per operation."""
    frame = frame.filter(pl.col("bytes") > 0).with_columns(pl.col("dtype").fill_null("?"))
    return alt.Chart(frame).mark_line(point=True).encode(
        x=alt.X("bytes:Q", title="message size (bytes, per rank)", scale=alt.Scale(type="log")),
        y=alt.Y("busbw_gb_per_s:Q", title="bus bandwidth (GB/s)"),
        color=alt.Color("dtype:N", title="type"),
    ).properties(width=240, height=160).facet(facet=alt.Facet("operation:N", title=None), columns=3)


def gpu_metrics_over_time(frame: pl.DataFrame) -> alt.Chart:
    """frame: t_ms, metric, pct: a line per metric through one step."""
    return alt.Chart(frame).mark_line(interpolate="step-after").encode(
        x=alt.X("t_ms:Q", title="time since the trace's start (ms)", scale=alt.Scale(zero=False, nice=False)),
        y=alt.Y("pct:Q", title="% of peak", scale=alt.Scale(domain=[0, 100], clamp=True)),
        color=alt.Color("metric:N", title=None, sort=None),
    ).properties(width=_WIDTH, height=180)


def diff_causes(frame: pl.DataFrame) -> alt.Chart:
    """frame: order (1 = largest), kind, name, change_ms: a bar per cause of a step-time change,
    right of zero when it made the step slower. Each label starts with its order, so two causes
    whose shortened names are equal stay two bars."""
    frame = frame.with_columns(
        pl.struct("order", "kind", "name").map_elements(
            lambda r: f"{r['order']}. {r['kind']}: {short(r['name'], 48)}", return_dtype=pl.String).alias("cause"),
        pl.when(pl.col("change_ms") > 0).then(pl.lit("slower")).otherwise(pl.lit("faster")).alias("effect"))
    return alt.Chart(frame).mark_bar().encode(
        y=alt.Y("cause:N", sort=alt.SortField("order"), title=None, axis=_FULL_LABELS),
        x=alt.X("change_ms:Q", title="change per steady step (ms)"),
        color=alt.Color("effect:N", title=None, scale=_scale({"slower": CAUSE_COLORS["host_wait"],
                                                              "faster": CAUSE_COLORS["in_graph"]})),
    ).properties(width=360, height=alt.Step(18))


DIFF_SIDE_COLORS = {"base": "#9aa5b1", "new": "#2f6db5"}


def diff_sides(frame: pl.DataFrame) -> alt.Chart:
    """frame: order, cause (its label), side, ms_per_step: a pair of bars per cause, base and new."""
    return alt.Chart(frame).mark_bar().encode(
        y=alt.Y("cause:N", sort=alt.SortField("order"), title=None, axis=_FULL_LABELS),
        yOffset=alt.YOffset("side:N", sort=list(DIFF_SIDE_COLORS)),
        x=alt.X("ms_per_step:Q", title="time per steady step (ms)"),
        color=alt.Color("side:N", title=None, scale=_scale(DIFF_SIDE_COLORS)),
    ).properties(width=360, height=alt.Step(10))
