"""The GPU memory section of a trace page: memory over time with the step boundaries, the peak of
each step, and what held the memory at the highest peak, by calling context."""

from __future__ import annotations

import altair as alt
import polars as pl

from .data import frame
from .theme import CATEGORY_COLORS

GIB = 2**30
_SERIES = {"allocated": CATEGORY_COLORS["compute"], "reserved": CATEGORY_COLORS["memcpy"]}
CONTEXT_FRAMES = 4  # the innermost frames of a call stack shown in the table (all of it on hover)


def section(con, trace_id: str) -> dict | None:
    """None when the trace has no allocator events on a GPU; otherwise the section's data."""
    sources = frame(con, "SELECT source, events, note FROM memory_sources WHERE trace_id = ?", [trace_id]).to_dicts()
    source = sources[0] if sources else None
    devices = frame(con, """SELECT pid, device_id, peak_allocated_bytes, peak_reserved_bytes, allocated_at_end_bytes,
                                   reserved_at_end_bytes
                            FROM memory_summary WHERE trace_id = ? AND device_type = 'cuda'
                            ORDER BY pid, device_id""", [trace_id]).to_dicts()
    if not devices:
        return {"note": source["note"] if source else None, "devices": [], "peaks": [], "live": [], "chart": None}
    return {"note": source["note"], "devices": devices, "peaks": peak_rows(con, trace_id),
            "live": live_at_peak(con, trace_id), "chart": over_time(con, trace_id)}


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


def over_time(con, trace_id: str) -> alt.Chart | None:
    series = frame(con, """
        WITH t AS (SELECT start_ns FROM traces WHERE trace_id = ?)
        SELECT 'GPU ' || device_id || ' (pid ' || pid || ')' AS device,
               (bucket_start_ns - (SELECT start_ns FROM t)) / 1e6 AS t_ms,
               max_allocated_bytes / 2^30 AS allocated, max_reserved_bytes / 2^30 AS reserved
        FROM memory_timeline_bucketed WHERE trace_id = ? AND device_type = 'cuda'
        ORDER BY device, t_ms""", [trace_id, trace_id])
    if series.height == 0:
        return None
    long = series.unpivot(["allocated", "reserved"], index=["device", "t_ms"], variable_name="memory",
                          value_name="gib").drop_nulls("gib")
    steps = frame(con, """
        SELECT DISTINCT step, (step_start_ns - (SELECT start_ns FROM traces WHERE trace_id = ?)) / 1e6 AS t_ms
        FROM memory_peaks WHERE trace_id = ? AND device_type = 'cuda' ORDER BY t_ms, step""", [trace_id, trace_id])
    return chart(long, steps)


def chart(long: pl.DataFrame, steps: pl.DataFrame) -> alt.Chart:
    """long: device, t_ms, memory ('allocated'/'reserved'), gib (the highest level in each slice);
    steps: step, t_ms (its start)."""
    colors = {k: v for k, v in _SERIES.items() if k in set(long["memory"].to_list())}
    lines = alt.Chart(long).mark_line(interpolate="step-after", strokeWidth=1.5).encode(
        x=alt.X("t_ms:Q", title="time since the trace's start (ms)"),
        y=alt.Y("gib:Q", title="GPU memory (GiB)"),
        color=alt.Color("memory:N", title=None, scale=alt.Scale(domain=list(colors), range=list(colors.values()))),
        detail="device:N",
    )
    layers = [lines]
    if steps.height:
        layers.append(alt.Chart(steps).mark_rule(color="#9aa5b1", strokeDash=[3, 3]).encode(x="t_ms:Q"))
    return alt.layer(*layers).properties(width=640, height=220)
