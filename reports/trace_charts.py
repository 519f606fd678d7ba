"""The report's charts as functions of a lake connection and a trace: each returns an Altair chart
(None when the trace has no data for it). The HTML report draws its charts with these; in a
notebook they render inline (`tracelake.charts`, docs/python.md).

`con` is any connection with tracelake's views: tracelake.open(lake), or a scoped database.
"""

from __future__ import annotations

import altair as alt
import polars as pl

from . import charts, data


def utilization(con, trace_id: str) -> alt.Chart | None:
    """GPU in use (%) over the trace, per device, in 100 slices of its active range."""
    frame = data.utilization(con, trace_id)
    return charts.utilization_over_time(frame) if frame.height else None


def time_breakdown(con, trace_id: str, temporal: pl.DataFrame | None = None) -> alt.Chart | None:
    """Compute / busy without compute / idle share of the GPU's active time, per rank or process.
    temporal: data.temporal(con, trace_id), when the caller has it already."""
    frame = data.breakdown(data.temporal(con, trace_id) if temporal is None else temporal)
    return charts.time_breakdown(frame) if frame.height else None


def top_kernels(con, trace_id: str, n: int = 12, kernels: list[dict] | None = None) -> alt.Chart | None:
    """The n kernels with the most total time. kernels: data.kernel_table rows, when fetched already."""
    rows = (data.kernel_table(con, trace_id, limit=n) if kernels is None else kernels)[:n]
    if not rows:
        return None
    return charts.top_kernels(pl.DataFrame(rows).select("name", (pl.col("total_ns") / 1e6).alias("total_ms")))


def memcpy(con, trace_id: str) -> alt.Chart | None:
    """Copy and memset time by direction and memory kind, labelled with the achieved bandwidth."""
    frame = data.memcpy_chart(con, trace_id)
    return charts.memcpy_kinds(frame) if frame.height else None


def idle_gaps(con, trace_id: str) -> alt.Chart | None:
    """GPU idle time in gaps over 10 µs, by gap length and cause (host_wait / kernel_wait / other)."""
    frame = data.gap_distribution(con, trace_id)
    return charts.gap_distribution(frame, data.gap_labels(con)) if frame.height else None


def step_time(con, trace_id: str) -> alt.Chart | None:
    """Each step of the first process: compute, GPU busy without compute, GPU idle (ms)."""
    frame = data.step_breakdown(con, trace_id)
    return charts.step_breakdown(frame) if frame.height else None


def critical_path(con, trace_id: str, steps: pl.DataFrame | None = None) -> alt.Chart | None:
    """Each step's critical path split by class. steps: data.critical_path_steps, when fetched already."""
    frame = data.critical_path_chart(data.critical_path_steps(con, trace_id) if steps is None else steps)
    return charts.critical_path(frame) if frame.height else None


def calling_context(con, trace_id: str) -> alt.Chart | None:
    """Icicle of the calling context: Python frames > operators > kernels, width = share of GPU time."""
    frame = data.icicle(con, trace_id)
    return charts.icicle(frame) if frame.height else None


def run_history(con) -> alt.Chart | None:
    """Median step time and GPU idle of every run, by the trace's own start time, one line per
    workload (runs of the same workload: run_comparison's kernel-name similarity)."""
    frame = data.run_history(con)
    return charts.run_history(frame) if frame.height else None


def collective_bandwidth(con, trace_id: str, rows: pl.DataFrame | None = None) -> alt.Chart | None:
    """Bus bandwidth of the collectives of the trace's run by message size, a panel per operation.
    rows: data.collective_bandwidth_rows, when fetched already."""
    rows = data.collective_bandwidth_rows(con, trace_id) if rows is None else rows
    sized = rows.filter(pl.col("bytes").is_not_null() & pl.col("busbw_gb_per_s").is_not_null())
    return charts.collective_bandwidth(sized) if sized.height else None
