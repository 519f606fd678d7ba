"""The operator section of a trace page: the operators by input shapes with their efficiency, a
log-log roofline chart with the GPU's roofs, and MFU per step (issue #17). Queries on the op_*
views and an Altair chart; no arithmetic beyond layout."""

from __future__ import annotations

import math

import altair as alt
import polars as pl

from ..figure import Column, Figure
from ..page import Page, frame

NAME = "operators"
TITLE = "Operators: FLOPs, bytes and the roofline"
VIEWS = ("op_efficiency_summary", "mfu", "model_coverage", "op_efficiency", "step_phases")

# One color per operator category (op_category) in the roofline chart.
OP_COLORS = {
    "gemm": "#2f6db5", "conv": "#4f8f8b", "attention": "#8e44ad", "norm": "#e07b24", "softmax": "#f2c14e",
    "elementwise": "#d35454", "reduction": "#7d8fa3",
}


def operator_rows(con, trace_id: str, limit: int = 20) -> list[dict]:
    """The modelled operators by input shapes and precision, most GPU time first."""
    return frame(con, f"""
        SELECT name, category, precision, shapes, calls, device_ns, time_pct, achieved_tflops, achieved_tbps,
               arithmetic_intensity, bound, roof_pct
        FROM op_efficiency_summary WHERE trace_id = ?
        ORDER BY device_ns DESC, name, precision, shapes, category LIMIT {limit}""",
                 [trace_id]).to_dicts()


def headline(con, trace_id: str) -> dict:
    """Median MFU over the steps, and how much GPU time the models cover."""
    row = frame(con, """
        SELECT (SELECT median(mfu_pct) FROM mfu WHERE trace_id = $1) AS mfu_pct,
               (SELECT count(*) FROM mfu WHERE trace_id = $1 AND flops > 0) AS steps,
               (SELECT sum(modelled_ns) * 100.0 / nullif(sum(gpu_ns), 0) FROM model_coverage
                WHERE trace_id = $1) AS coverage_pct,
               (SELECT sum(flops_modelled_ns) * 100.0 / nullif(sum(gpu_ns), 0) FROM model_coverage
                WHERE trace_id = $1) AS flops_coverage_pct,
               (SELECT any_value(gpu) FROM op_efficiency WHERE trace_id = $1) AS gpu""", [trace_id]).to_dicts()
    return row[0]


def mfu_rows(con, trace_id: str, limit: int = 30) -> list[dict]:
    """MFU per step; steady: whether the step is a steady one (step_phases)."""
    return frame(con, f"""SELECT m.rank, m.step, m.wall_ns, m.flops, m.achieved_tflops, m.peak_tflops, m.mfu_pct,
                                 p.phase = 'steady' AS steady
                          FROM mfu m LEFT JOIN step_phases p ON p.trace_id = m.trace_id AND p.pid = m.pid
                                                           AND p.start_ns = m.start_ns
                          WHERE m.trace_id = ? AND m.flops > 0 ORDER BY m.pid, m.start_ns LIMIT {limit}""",
                 [trace_id]).to_dicts()


def roofline_points(con, trace_id: str) -> pl.DataFrame:
    """One point per operator, shapes and precision that has FLOPs, bytes and a roof."""
    return frame(con, """
        SELECT name, category, precision, arithmetic_intensity AS ai, achieved_tflops AS tflops,
               device_ns / 1e6 AS device_ms
        FROM op_efficiency_summary
        WHERE trace_id = ? AND flops > 0 AND bytes > 0 AND achieved_tflops > 0 AND peak_tflops IS NOT NULL
        ORDER BY device_ns DESC, name, precision, shapes""",
                 [trace_id])


def roofs(con, trace_id: str) -> pl.DataFrame:
    """The roofs of the precisions in roofline_points: peak TFLOP/s and bandwidth of the GPU."""
    return frame(con, """
        SELECT DISTINCT precision, peak_tflops, peak_tbps, gpu FROM op_efficiency_summary
        WHERE trace_id = ? AND flops > 0 AND bytes > 0 AND peak_tflops IS NOT NULL AND peak_tbps IS NOT NULL
        ORDER BY precision""",
                 [trace_id])


def roofline_chart(points: pl.DataFrame, roof_rows: pl.DataFrame) -> alt.Chart:
    """Log-log roofline: x arithmetic intensity (FLOP/byte), y achieved TFLOP/s; each roof is
    min(peak, bandwidth x intensity), drawn over the intensity range of the points."""
    lo = min(points["ai"].min(), *(r["peak_tflops"] / r["peak_tbps"] for r in roof_rows.to_dicts())) / 4
    hi = max(points["ai"].max(), *(r["peak_tflops"] / r["peak_tbps"] for r in roof_rows.to_dicts())) * 4
    xs = [10 ** (math.log10(lo) + i * (math.log10(hi) - math.log10(lo)) / 60) for i in range(61)]
    lines = pl.DataFrame([{"ai": x, "tflops": min(r["peak_tflops"], r["peak_tbps"] * x),
                           "roof": f"{r['precision']} roof ({r['peak_tflops']:g} TFLOP/s, {r['peak_tbps']:g} TB/s)"}
                          for r in roof_rows.to_dicts() for x in xs])
    x = alt.X("ai:Q", title="arithmetic intensity (FLOP/byte)", scale=alt.Scale(type="log", domain=[lo, hi]))
    y = alt.Y("tflops:Q", title="achieved TFLOP/s", scale=alt.Scale(type="log"))
    roof = alt.Chart(lines).mark_line(color="#1d2733", strokeWidth=1.2).encode(
        x=x, y=y, strokeDash=alt.StrokeDash("roof:N", title=None,
                                                 legend=alt.Legend(orient="bottom", columns=1, labelLimit=0)))
    present = [c for c in OP_COLORS if c in set(points["category"].to_list())]
    dots = alt.Chart(points).mark_circle(opacity=0.75).encode(
        x=x, y=y,
        size=alt.Size("device_ms:Q", title="GPU time (ms)", scale=alt.Scale(range=[20, 600])),
        color=alt.Color("category:N", title=None, scale=alt.Scale(domain=present,
                                                                 range=[OP_COLORS[c] for c in present])),
    )
    return (roof + dots).resolve_scale(strokeDash="independent").properties(width=560, height=320)


def roofline_figure(con, trace_id: str) -> Figure | None:
    points, roof_rows = roofline_points(con, trace_id), roofs(con, trace_id)
    if points.is_empty() or roof_rows.is_empty():
        return None
    return Figure("roofline", "Roofline", roofline_chart(points, roof_rows), points,
                  [Column("name", "operator"), Column("category", "category"), Column("precision", "precision"),
                   Column("ai", "arithmetic intensity (FLOP/byte)", "num"), Column("tflops", "achieved TFLOP/s", "num"),
                   Column("device_ms", "GPU time", "ms")])


def build(page: Page) -> dict | None:
    ops = operator_rows(page.con, page.trace_id)
    if not ops:
        return None
    return {"ops": ops, "head": headline(page.con, page.trace_id), "mfu_steps": mfu_rows(page.con, page.trace_id),
            "roofline": roofline_figure(page.con, page.trace_id), "label": page.steady_label}
