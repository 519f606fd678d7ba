"""The GPU memory section of a trace page: memory over time with the step boundaries, the peak of
each step, and what held the memory at the highest peak, by calling context."""

from __future__ import annotations

import altair as alt
import polars as pl

from ..figure import Column, Figure
from ..page import Page, frame
from ..theme import CATEGORY_COLORS

NAME = "memory"
TITLE = "GPU memory"
VIEWS = ("memory_sources", "memory_summary", "memory_peaks", "memory_peak_breakdown", "memory_timeline_bucketed")
_SERIES = {"allocated": CATEGORY_COLORS["compute"], "reserved": CATEGORY_COLORS["memcpy"]}
CONTEXT_FRAMES = 4  # the innermost frames of a call stack shown in the table (all of it on hover)


def build(page: Page) -> dict | None:
    """None when the trace has no allocator events and no note on them; else the section's data."""
    con, trace_id = page.con, page.trace_id
    sources = frame(con, "SELECT source, events, note FROM memory_sources WHERE trace_id = ?", [trace_id]).to_dicts()
    source = sources[0] if sources else None
    devices = frame(con, """SELECT pid, device_id, peak_allocated_bytes, peak_reserved_bytes, allocated_at_end_bytes,
                                   reserved_at_end_bytes
                            FROM memory_summary WHERE trace_id = ? AND device_type = 'cuda'
                            ORDER BY pid, device_id""", [trace_id]).to_dicts()
    if not devices:
        note = source["note"] if source else None
        return {"note": note, "devices": [], "peaks": [], "live": [], "figure": None} if note else None
    return {"note": source["note"], "devices": devices, "peaks": peak_rows(con, trace_id),
            "live": live_at_peak(con, trace_id), "figure": figure(con, trace_id)}


def peak_rows(con, trace_id: str, limit: int = 40) -> list[dict]:
    return frame(con, f"""
        SELECT step, device_id, pid, peak_allocated_bytes, peak_reserved_bytes, peak_at_ns - step_start_ns AS at_ns,
               allocated_at_start_bytes, allocated_at_end_bytes,
               peak_reserved_bytes / nullif(peak_allocated_bytes, 0) AS reserved_ratio
        FROM memory_peaks WHERE trace_id = ? AND device_type = 'cuda'
        ORDER BY pid, device_id, step_index LIMIT {limit}""", [trace_id]).to_dicts()


def live_at_peak(con, trace_id: str, limit: int = 12) -> list[dict]:
    """The largest calling contexts alive at the step with the highest peak (per process and device;
    the first such step when several reach it)."""
    rows = frame(con, f"""
        WITH top AS (
            SELECT pid, device_id, arg_max(step_index, {{'peak': peak_allocated_bytes, 'first': -step_index}}) AS step_index
            FROM memory_peaks WHERE trace_id = ? AND device_type = 'cuda' GROUP BY ALL
        )
        SELECT b.step, b.device_id, b.key AS call_stack, b.live_bytes, b.blocks, b.peak_pct
        FROM memory_peak_breakdown b JOIN top USING (pid, device_id, step_index)
        WHERE b.trace_id = ? AND b.device_type = 'cuda' AND b.grouping = 'call_stack'
        ORDER BY b.pid, b.device_id, b.live_bytes DESC, b.key LIMIT {limit}""", [trace_id, trace_id]).to_dicts()
    for r in rows:
        frames = r["call_stack"].split(" > ")
        r["context"] = ("… > " if len(frames) > CONTEXT_FRAMES else "") + " > ".join(frames[-CONTEXT_FRAMES:])
    return rows


def series(con, trace_id: str) -> pl.DataFrame:
    """The chart's rows: device, t_ms (ms since the trace's start), allocated and reserved (GiB: the
    highest level in each 1/400 of the trace), step (a step start: device and levels NULL)."""
    return frame(con, """
        WITH t AS (SELECT start_ns FROM traces WHERE trace_id = $1)
        SELECT 'GPU ' || device_id || ' (pid ' || pid || ')' AS device,
               (bucket_start_ns - (SELECT start_ns FROM t)) / 1e6 AS t_ms,
               max_allocated_bytes / 2^30 AS allocated, max_reserved_bytes / 2^30 AS reserved, NULL AS step
        FROM memory_timeline_bucketed WHERE trace_id = $1 AND device_type = 'cuda'
        UNION ALL
        SELECT DISTINCT NULL, (step_start_ns - (SELECT start_ns FROM t)) / 1e6, NULL, NULL, step
        FROM memory_peaks WHERE trace_id = $1 AND device_type = 'cuda'
        ORDER BY step IS NOT NULL, device, t_ms, step""", [trace_id])


def figure(con, trace_id: str) -> Figure | None:
    rows = series(con, trace_id)
    if rows.filter(pl.col("device").is_not_null()).is_empty():
        return None
    return Figure("memory", "GPU memory over time", chart(rows), rows,
                  [Column("device", "GPU"), Column("t_ms", "time (since trace start)", "ms"),
                   Column("allocated", "allocated", "gib"), Column("reserved", "reserved", "gib"),
                   Column("step", "step starts")])


def chart(rows: pl.DataFrame) -> alt.Chart:
    """rows: device, t_ms, allocated, reserved, step (figure's rows): a line per series and device,
    a dashed rule at each step start."""
    present = [k for k in _SERIES if rows[k].drop_nulls().len()]
    base = alt.Chart(rows)
    lines = base.transform_filter("isValid(datum.device)").transform_fold(present, as_=["memory", "gib"]).transform_filter(
        "isValid(datum.gib)").mark_line(interpolate="step-after", strokeWidth=1.5).encode(
        x=alt.X("t_ms:Q", title="time since the trace's start (ms)", scale=alt.Scale(zero=False)),
        y=alt.Y("gib:Q", title="GPU memory (GiB)"),
        color=alt.Color("memory:N", title=None, scale=alt.Scale(domain=present, range=[_SERIES[k] for k in present])),
        detail="device:N",
    )
    layers = [lines]
    if rows["step"].drop_nulls().len():
        layers.append(base.transform_filter("isValid(datum.step)").mark_rule(color="#9aa5b1", strokeDash=[3, 3])
                      .encode(x="t_ms:Q"))
    return alt.layer(*layers).properties(width=640, height=220)
