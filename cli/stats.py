"""`tracelake stats FILE...`: the terminal summary of `nsys stats`, for both trace sources.

A report is the rows of one view for one trace. The named reports below pick and order the
columns; any other view with a trace_id column is a report too (all its columns). NVIDIA's
report names are accepted as aliases of the views that compute the same thing (tests/nsys_oracle.py
checks those views against NVIDIA's output).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Report:
    title: str
    sql: str  # rows of one trace: one ? parameter, the trace id


REPORTS = {
    "summary": Report("Headline numbers", """
        SELECT t.source, t.rank, t.duration_ns AS span_ns, b.busy_pct AS gpu_busy_pct, b.idle_pct AS gpu_idle_pct,
               b.compute_pct, (SELECT sum(duration_ns) FROM kernels k WHERE k.trace_id = t.trace_id) AS kernel_ns,
               (SELECT count(*) FROM kernels k WHERE k.trace_id = t.trace_id) AS kernels,
               (SELECT sum(duration_ns) FROM memcpy m WHERE m.trace_id = t.trace_id) AS memcpy_ns,
               (SELECT median(wall_ns) FROM steps s WHERE s.trace_id = t.trace_id) AS median_step_ns,
               (SELECT count(*) FROM findings f WHERE f.trace_id = t.trace_id) AS findings
        FROM traces t
        LEFT JOIN (SELECT trace_id, 100 - avg(idle_pct) AS busy_pct, avg(idle_pct) AS idle_pct,
                          avg(compute_pct) AS compute_pct FROM temporal_breakdown GROUP BY trace_id) b USING (trace_id)
        WHERE t.trace_id = ?"""),
    "kernel_summary": Report("GPU kernels", """
        SELECT time_pct, total_ns, instances, avg_ns, med_ns, min_ns, max_ns, stddev_ns, name
        FROM kernel_summary WHERE trace_id = ? ORDER BY total_ns DESC, name"""),
    "memcpy_kind_summary": Report("Memory copies by direction and memory kind", """
        SELECT copy_kind, src_kind, dst_kind, count, total_bytes, total_ns, avg_bytes_per_s / 1e9 AS avg_gb_per_s
        FROM memcpy_kind_summary WHERE trace_id = ? ORDER BY total_ns DESC, copy_kind, src_kind, dst_kind"""),
    "idle_breakdown": Report("GPU idle by cause (gaps on each stream)", """
        SELECT cause, sum(gap_count) AS gaps, sum(idle_ns) AS idle_ns,
               100.0 * sum(idle_ns) / sum(sum(idle_ns)) OVER () AS idle_pct
        FROM idle_breakdown_by_device WHERE trace_id = ? GROUP BY cause ORDER BY idle_ns DESC, cause"""),
    "findings": Report("Findings", """
        SELECT rule, severity, occurrences AS n, total_ns, example, advice
        FROM findings_by_rule WHERE trace_id = ? ORDER BY total_ns DESC, rule"""),
    "memcpy_time_summary": Report("Memory operations by time", """
        SELECT time_pct, total_ns, count, avg_ns, med_ns, min_ns, max_ns, stddev_ns, operation
        FROM memcpy_time_summary WHERE trace_id = ? ORDER BY total_ns DESC, operation"""),
    "memcpy_size_summary": Report("Memory operations by size", """
        SELECT total_bytes, count, avg_bytes, med_bytes, min_bytes, max_bytes, stddev_bytes, operation
        FROM memcpy_size_summary WHERE trace_id = ? ORDER BY total_bytes DESC, operation"""),
    "gpu_summary": Report("GPU kernels and memory operations", """
        SELECT time_pct, total_ns, instances, avg_ns, med_ns, min_ns, max_ns, stddev_ns, category, name
        FROM gpu_summary WHERE trace_id = ? ORDER BY total_ns DESC, category, name"""),
    "api_summary_nsys": Report("CUDA API calls", """
        SELECT time_pct, total_ns, num_calls, avg_ns, med_ns, min_ns, max_ns, stddev_ns, name
        FROM api_summary_nsys WHERE trace_id = ? ORDER BY total_ns DESC, name"""),
    "nvtx_summary": Report("NVTX ranges", """
        SELECT time_pct, total_ns, instances, avg_ns, med_ns, min_ns, max_ns, stddev_ns, style, range
        FROM nvtx_summary WHERE trace_id = ? ORDER BY total_ns DESC, range, style"""),
}
DEFAULT = ("summary", "kernel_summary", "memcpy_kind_summary", "idle_breakdown", "findings")

# NVIDIA's `nsys stats` / `nsys analyze` report names -> the view computing the same.
ALIASES = {
    "cuda_gpu_kern_sum": "kernel_summary",
    "cuda_gpu_mem_time_sum": "memcpy_time_summary",
    "cuda_gpu_mem_size_sum": "memcpy_size_summary",
    "cuda_gpu_sum": "gpu_summary",
    "cuda_api_sum": "api_summary_nsys",
    "nvtx_sum": "nvtx_summary",
    "nvtx_gpu_proj_sum": "nvtx_gpu_summary",
    "osrt_sum": "osrt_summary",
    "gpu_gaps": "gpu_gaps",
    "gpu_time_util": "gpu_utilization",
    "cuda_memcpy_async": "nsys_analyze_cuda_memcpy_async",
    "cuda_memcpy_sync": "nsys_analyze_cuda_memcpy_sync",
    "cuda_memset_sync": "nsys_analyze_cuda_memset_sync",
    "cuda_api_sync": "nsys_analyze_cuda_api_sync",
}


def resolve(names: list[str], views: set[str]) -> list[str]:
    """The report names (aliases resolved, duplicates dropped); ValueError naming an unknown one."""
    out = []
    for name in names:
        view = ALIASES.get(name, name)
        if view not in REPORTS and view not in views:
            known = sorted(set(REPORTS) | set(ALIASES))
            raise ValueError(f"--report {name}: no such report; known: {', '.join(known)} (or any view with a "
                             "trace_id column: tracelake sql --lake DIR \"SHOW TABLES\")")
        if view not in out:
            out.append(view)
    return out


def reads(reports: list[str], names: set[str]) -> set[str]:
    """The views and tables of `names` that the reports (resolved) name: a view's report reads the
    view, a named report what its SQL names."""
    from ..lake.catalog import names_in

    out = set()
    for report in reports:
        out |= names_in(REPORTS[report].sql, names) if report in REPORTS else {report}
    return out


def trace_views(con, among: list[str]) -> set[str]:
    """Those of `among` that are views or tables with a trace_id column: each is a report of all
    its columns (asked of each, not of information_schema, which binds every view)."""
    import duckdb

    out = set()
    for name in among:
        try:
            columns = con.table(name).columns
        except duckdb.Error:  # a macro, or no such name
            continue
        if "trace_id" in columns:
            out.add(name)
    return out


def query(con, report: str, trace_id: str):
    """The report's rows for one trace, as a DuckDB relation."""
    if report in REPORTS:
        return con.sql(REPORTS[report].sql, params=[trace_id])
    # a view's rows have no order of their own: all columns, left to right, make one
    return con.sql(f'SELECT * EXCLUDE (trace_id) FROM "{report}" WHERE trace_id = ? ORDER BY ALL', params=[trace_id])


def title(report: str) -> str:
    alias = next((a for a, v in ALIASES.items() if v == report and a != report), None)
    name = REPORTS[report].title if report in REPORTS else report
    return f"{name} ({report}{', ' + alias if alias else ''})"
