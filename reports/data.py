"""What the report sections show, as queries on the lake's views: they select, order, rename and
convert units for display, and reshape rows for a chart; joins, aggregates and layout live in
views (trace_summary, rank_summary, findings_by_rule, idle_cause_summary, gpu_gap_histogram,
callctx_icicle, run_overview, run_comparison_changes, ...)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import polars as pl


def frame(con, sql: str, params: list | None = None) -> pl.DataFrame:
    return con.sql(sql, params=params or []).pl()


@contextmanager
def frozen(con, views: list[str]) -> Iterator[None]:
    """Evaluate these views once for the queries inside the block: a temporary table of the same
    name shadows each view on this connection (DuckDB looks in the temp schema first), so views
    built on them read the table instead of evaluating them again, once per reference."""
    try:
        for view in views:
            con.execute(f"CREATE OR REPLACE TEMP TABLE {view} AS SELECT * FROM main.{view}")
        yield
    finally:
        for view in views:
            con.execute(f"DROP TABLE IF EXISTS temp.{view}")


def summary(con, trace_id: str) -> dict:
    """The trace's trace_summary row: the headline numbers and its index row."""
    return frame(con, "SELECT * FROM trace_summary WHERE trace_id = ?", [trace_id]).to_dicts()[0]


def header(con, trace_id: str, summary_row: dict) -> dict:
    row = frame(con, "SELECT * FROM traces WHERE trace_id = ?", [trace_id]).to_dicts()[0]
    row["devices"] = summary_row["gpu_names"]
    return row


def temporal(con, trace_id: str) -> pl.DataFrame:
    """temporal_breakdown of the trace: a row per rank/process."""
    return frame(con, """
        SELECT coalesce('rank ' || rank, 'pid ' || pid) AS who, compute_pct, non_compute_pct, idle_pct, memcpy_pct
        FROM temporal_breakdown WHERE trace_id = ? ORDER BY rank, pid""", [trace_id])


def headline(summary_row: dict, kernels: list[dict]) -> dict:
    """The key numbers atop a page (trace_summary) and the top row of the kernel table."""
    out = {c: summary_row[c] for c in ("idle_pct", "compute_pct", "memcpy_pct", "overlap_pct", "findings")}
    step_ns = summary_row["median_step_ns"]
    out["step_ms"] = None if step_ns is None else step_ns / 1e6
    out["top_kernel"] = kernels[0] if kernels else None
    return out


def utilization(con, trace_id: str) -> pl.DataFrame:
    return frame(con, """
        SELECT 'GPU ' || device_id || ' (pid ' || pid || ')' AS device,
               (start_ns - min(start_ns) OVER (PARTITION BY pid, device_id)) / 1e6 AS t_ms, in_use_pct
        FROM gpu_utilization_over_time WHERE trace_id = ? ORDER BY device, t_ms""", [trace_id])


def breakdown(temporal_rows: pl.DataFrame) -> pl.DataFrame:
    """Chart rows: who, category (compute / non_compute / idle), pct."""
    wide = temporal_rows.select("who", compute="compute_pct", non_compute="non_compute_pct", idle="idle_pct")
    return wide.unpivot(index="who", variable_name="category", value_name="pct")


def kernel_table(con, trace_id: str, limit: int = 25) -> list[dict]:
    return frame(con, f"""SELECT name, time_pct, total_ns, instances, avg_ns, med_ns, min_ns, max_ns
                          FROM kernel_summary WHERE trace_id = ? ORDER BY total_ns DESC, name, instances, max_ns LIMIT {limit}""",
                 [trace_id]).to_dicts()


def memcpy_table(con, trace_id: str) -> list[dict]:
    return frame(con, """SELECT copy_kind || ' ' || src_kind || ' -> ' || dst_kind AS kind, count, total_bytes,
                                total_ns, avg_bytes_per_s
                         FROM memcpy_kind_summary WHERE trace_id = ? ORDER BY total_ns DESC, kind, count""",
                 [trace_id]).to_dicts()


def api_table(con, trace_id: str, limit: int = 15) -> list[dict]:
    return frame(con, f"""SELECT name, time_pct, total_ns, num_calls, avg_ns, max_ns FROM api_summary
                          WHERE trace_id = ? ORDER BY total_ns DESC, name, num_calls LIMIT {limit}""", [trace_id]).to_dicts()


def nvtx_table(con, trace_id: str, limit: int = 15) -> list[dict]:
    return frame(con, f"""SELECT range, style, instances, total_proj_ns, total_range_ns, total_gpu_ops
                          FROM nvtx_gpu_summary WHERE trace_id = ?
                          ORDER BY total_proj_ns DESC, range, style, instances, total_range_ns LIMIT {limit}""",
                 [trace_id]).to_dicts()


def idle_causes(con, trace_id: str) -> list[dict]:
    return frame(con, """SELECT cause, gaps, idle_ns FROM idle_cause_summary WHERE trace_id = ?
                         ORDER BY idle_ns DESC, cause""", [trace_id]).to_dicts()


def steps_table(con, trace_id: str, limit: int = 30) -> list[dict]:
    return frame(con, f"""SELECT rank, pid, step, wall_ns, gpu_idle_pct, compute_ns, communication_ns, memcpy_ns,
                                 dataloader_ns
                          FROM steps WHERE trace_id = ? ORDER BY pid, step_index LIMIT {limit}""", [trace_id]).to_dicts()


def steady_state(con, trace_id: str) -> list[dict]:
    """Per process: which step rule found the steps, and the steady window (steady_state)."""
    return frame(con, """SELECT pid, step_rule, steps, warmup_steps, median_step_ns, duration_ns FROM steady_state
                         WHERE trace_id = ? ORDER BY pid""", [trace_id]).to_dicts()


def graph_replays_table(con, trace_id: str, limit: int = 20) -> list[dict]:
    return frame(con, f"""SELECT pid, graph_id, replays, kernels_per_replay, gpu_ns_per_replay, span_ns_per_replay,
                                 launch_ns, total_gpu_ns, capture_site
                          FROM graph_replays WHERE trace_id = ? ORDER BY total_gpu_ns DESC, pid, graph_id LIMIT {limit}""",
                 [trace_id]).to_dicts()


def gpu_phases(con, trace_id: str) -> list[dict]:
    """GPU time by phase (replay, capture, warm-up, eager), only for traces with CUDA graph activity."""
    return frame(con, """SELECT phase, ops, gpu_ns FROM graph_phase_totals WHERE trace_id = ?
                         ORDER BY gpu_ns DESC, phase""", [trace_id]).to_dicts()


def findings_table(con, trace_id: str) -> list[dict]:
    return frame(con, """SELECT rule, severity, occurrences AS n, total_ns, example, advice FROM findings_by_rule
                         WHERE trace_id = ? ORDER BY total_ns DESC, rule""", [trace_id]).to_dicts()


def icicle(con, trace_id: str) -> pl.DataFrame:
    """Node rectangles of the 'stack' calling-context tree, children inside their parent (callctx_icicle)."""
    return frame(con, """SELECT depth, x0, x1, label, kind FROM callctx_icicle WHERE trace_id = ?
                         ORDER BY depth, x0""", [trace_id])


def memcpy_chart(con, trace_id: str) -> pl.DataFrame:
    """Copy and memset time by direction and memory kind, with the achieved bandwidth."""
    return frame(con, """
        SELECT copy_kind || ' ' || src_kind || ' -> ' || dst_kind AS kind, 'memcpy' AS category,
               total_ns / 1e6 AS total_ms, avg_bytes_per_s / 1e9 AS gbps
        FROM memcpy_kind_summary WHERE trace_id = ?
        UNION ALL
        SELECT 'memset ' || coalesce(mem_kind, 'unknown'), 'memset', total_ns / 1e6, avg_bytes_per_s / 1e9
        FROM memset_kind_summary WHERE trace_id = ?
        ORDER BY total_ms DESC, kind""", [trace_id, trace_id])


def gap_labels(con) -> list[str]:
    """The gap length bins' labels, shortest first (gap_length_bins)."""
    return frame(con, "SELECT bin FROM gap_length_bins ORDER BY bin_index")["bin"].to_list()


def gap_distribution(con, trace_id: str) -> pl.DataFrame:
    """GPU idle time in gaps longer than 10 µs, by gap length and cause (gpu_gap_histogram)."""
    return frame(con, """SELECT bin_index, cause, idle_ns / 1e6 AS idle_ms, gaps, bin FROM gpu_gap_histogram
                         WHERE trace_id = ? ORDER BY bin_index, cause""", [trace_id])


def largest_gaps(con, trace_id: str, limit: int = 10) -> list[dict]:
    return frame(con, f"""SELECT pid, device_id, at_ns, duration_ns, next_op, launch_api, launch_delay_ns, cause,
                                 host_activity
                          FROM largest_gpu_gaps WHERE trace_id = ? AND size_rank <= {limit}
                          ORDER BY duration_ns DESC, size_rank""", [trace_id]).to_dicts()


def step_breakdown(con, trace_id: str, limit: int = 40) -> pl.DataFrame:
    """Per step of the first rank/process: compute, busy without compute, idle (ms); they add up to the step."""
    wide = frame(con, f"""
        SELECT step_index, step, compute_ns / 1e6 AS compute, non_compute_ns / 1e6 AS non_compute, idle_ns / 1e6 AS idle
        FROM step_time_split WHERE trace_id = ? AND is_first_process ORDER BY step_index LIMIT {limit}""", [trace_id])
    return wide.unpivot(index=["step_index", "step"], variable_name="category", value_name="ms")


CRITICAL_PATH_CLASSES = ("cpu", "data_loading", "launch_overhead", "kernel_to_kernel", "sync_wait", "memcpy",
                         "communication", "gpu_compute")


def critical_path_steps(con, trace_id: str, limit: int = 40) -> pl.DataFrame:
    """Per step of the first process: its critical path (critical_path_summary), one row per step."""
    return frame(con, f"SELECT * FROM critical_path_first_steps WHERE trace_id = ? ORDER BY step_index LIMIT {limit}",
                 [trace_id])


def critical_path_chart(steps: pl.DataFrame) -> pl.DataFrame:
    """Chart rows of critical_path_steps: step_index, step, class, ms."""
    if steps.is_empty():
        return pl.DataFrame()
    wide = steps.select("step_index", "step", *[(pl.col(f"{c}_ns") / 1e6).alias(c) for c in CRITICAL_PATH_CLASSES])
    return wide.unpivot(index=["step_index", "step"], variable_name="class", value_name="ms").filter(pl.col("ms") > 0)


def critical_path_ops(con, trace_id: str, limit: int = 12) -> list[dict]:
    """What puts the most time on the critical paths of the first process, over all its steps."""
    return frame(con, f"""SELECT event_kind, name, class, path_ns, edges, pct FROM critical_path_first_ops
                          WHERE trace_id = ? ORDER BY path_ns DESC, name LIMIT {limit}""", [trace_id]).to_dicts()


def rank_rows(con, trace_id: str) -> list[dict]:
    """The ranks of this trace's run (rank_runs) side by side; empty for single-rank traces."""
    if frame(con, "SELECT 1 FROM rank_runs WHERE trace_id = ? LIMIT 1", [trace_id]).is_empty():
        return []  # not a rank of a distributed run: skip the run-wide views
    return frame(con, """SELECT * EXCLUDE (run_id) FROM rank_summary
                         WHERE run_id IN (SELECT run_id FROM rank_runs WHERE trace_id = ?) ORDER BY rank""",
                 [trace_id]).to_dicts()


def run_comparisons(con) -> list[dict]:
    """Each run next to the previous run of the same workload, with the kernels that changed most
    (3 slower, 3 faster: run_comparison_changes)."""
    return frame(con, "SELECT * FROM run_comparison_changes ORDER BY first_file, run_id").to_dicts()


SUMMARY_COLUMNS = ("trace_id", "file_name", "source", "rank", "duration_ns", "is_truncated", "idle_pct",
                   "compute_pct", "top_kernel", "findings", "finding_rules")
# run_ranks: a distributed run's ranks side by side (rank_rows), kept with the run's first rank only
INDEX_COLUMNS = (*SUMMARY_COLUMNS, "run_ranks")


def index_row(summary_row: dict, run_ranks: list[dict]) -> dict:
    return {c: summary_row[c] for c in SUMMARY_COLUMNS} | {"run_ranks": run_ranks}


def run_ranks_of(trace_id: str, ranks: list[dict]) -> list[dict]:
    """The ranks of a distributed run (rank_rows) when this trace is its first rank's, else none:
    the index shows each run once, its ranks side by side."""
    return ranks if len(ranks) > 1 and ranks[0]["trace_id"] == trace_id else []


def index_rows(con, trace_ids: list[str] | None = None) -> list[dict]:
    """A row per trace (all, or these) for the index page (trace_summary, and run_ranks)."""
    rows = frame(con, f"""SELECT {', '.join(SUMMARY_COLUMNS)} FROM trace_summary
                          WHERE ? IS NULL OR list_contains(?, trace_id) ORDER BY file_name""",
                 [trace_ids, trace_ids]).to_dicts()
    # the first rank of each distributed run (rank_runs evaluated once, not once per trace)
    firsts = set(frame(con, "SELECT trace_id FROM run_first_rank")["trace_id"].to_list())
    for row in rows:
        row["run_ranks"] = run_ranks_of(row["trace_id"], rank_rows(con, row["trace_id"])) \
            if row["trace_id"] in firsts else []
    return rows


def collective_bandwidth_rows(con, trace_id: str) -> pl.DataFrame:
    """collective_bandwidth of this trace's run (or of the trace alone), by operation and size."""
    return frame(con, """
        SELECT b.operation, b.bytes, b.dtype, b.group_size, b.count, b.median_transfer_ns, b.algbw_gb_per_s,
               b.busbw_gb_per_s, b.p50_wait_ns, b.p90_wait_ns, b.is_bound
        FROM collective_bandwidth b
        WHERE b.run_id IN (SELECT run_id FROM collectives WHERE trace_id = ?)
        ORDER BY b.operation, b.bytes, b.dtype""", [trace_id])


# A run's step time (else kernel time) changed by more than this since the previous run of its
# workload: listed among the runs that got slower or faster.
CHANGE_PCT = 5.0


def run_rows(con, trace_rows: list[dict]) -> list[dict]:
    """The index's runs, oldest first: a row per run of `runs` whose traces are among trace_rows,
    with those rows (rank files grouped), its findings summed, and the change since the previous
    run of the same workload (run_comparison: step time when both record steps, else kernel time)."""
    by_trace = {r["trace_id"]: r for r in trace_rows}
    runs = frame(con, """
        SELECT run_id, trace_ids, first_file, start_epoch_ns, ranks, steps_per_rank, median_step_ns,
               kernel_ns_per_rank, idle_pct, previous_run_id, previous_file, compared_per, change_pct
        FROM run_overview ORDER BY start_epoch_ns NULLS LAST, first_file""").to_dicts()
    out = []
    for run in runs:
        members = [by_trace[t] for t in run["trace_ids"] if t in by_trace]
        if not members:
            continue
        run["traces"] = sorted(members, key=lambda r: (r["rank"] is None, r["rank"], r["file_name"]))
        run["findings"] = sum(r["findings"] or 0 for r in members)
        run["finding_rules"] = list(dict.fromkeys(rule for r in members for rule in r.get("finding_rules") or []))[:3]
        run["busy_pct"] = None if run["idle_pct"] is None else 100.0 - run["idle_pct"]
        run["is_truncated"] = any(r["is_truncated"] for r in members)
        out.append(run)
    return out


def run_history(con) -> pl.DataFrame:
    """A row per run with a wall-clock start: run (its first file), started (UTC), step_ms (median
    step; NULL without steps), idle_pct, workload (run_overview)."""
    return frame(con, """SELECT first_file AS run, make_timestamp(CAST(start_epoch_ns // 1000 AS BIGINT)) AS started,
                                median_step_ns / 1e6 AS step_ms, idle_pct, workload
                         FROM run_overview WHERE start_epoch_ns IS NOT NULL ORDER BY started, first_file""")
