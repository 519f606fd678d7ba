"""What the report sections show, as queries on the lake's views (no arithmetic beyond layout)."""

from __future__ import annotations

import polars as pl


def frame(con, sql: str, params: list | None = None) -> pl.DataFrame:
    return con.sql(sql, params=params or []).pl()


def header(con, trace_id: str) -> dict:
    row = frame(con, "SELECT * FROM traces WHERE trace_id = ?", [trace_id]).to_dicts()[0]
    row["devices"] = frame(con, "SELECT DISTINCT d.name FROM devices d JOIN kernels k USING (trace_id, device_id) "
                                "WHERE trace_id = ?", [trace_id])["name"].to_list()
    return row


def headline(con, trace_id: str) -> dict:
    out = frame(con, """
        SELECT avg(idle_pct) AS idle_pct, avg(compute_pct) AS compute_pct, avg(memcpy_pct) AS memcpy_pct,
               count(*) AS ranks
        FROM temporal_breakdown WHERE trace_id = ?""", [trace_id]).to_dicts()[0]
    top = frame(con, "SELECT name, time_pct FROM kernel_summary WHERE trace_id = ? ORDER BY total_ns DESC LIMIT 1",
                [trace_id]).to_dicts()
    out["top_kernel"] = top[0] if top else None
    out["overlap_pct"] = frame(con, "SELECT avg(communication_overlap_pct) AS v FROM overlap WHERE trace_id = ?",
                               [trace_id])["v"][0]
    out["step_ms"] = frame(con, "SELECT median(wall_ns) / 1e6 AS v FROM steps WHERE trace_id = ?", [trace_id])["v"][0]
    out["findings"] = frame(con, "SELECT count(*) AS n FROM findings WHERE trace_id = ?", [trace_id])["n"][0]
    return out


def utilization(con, trace_id: str) -> pl.DataFrame:
    return frame(con, """
        SELECT 'GPU ' || device_id || ' (pid ' || pid || ')' AS device,
               (start_ns - min(start_ns) OVER (PARTITION BY pid, device_id)) / 1e6 AS t_ms, in_use_pct
        FROM gpu_utilization_over_time WHERE trace_id = ? ORDER BY device, t_ms""", [trace_id])


def breakdown(con, trace_id: str) -> pl.DataFrame:
    wide = frame(con, """
        SELECT coalesce('rank ' || rank, 'pid ' || pid) AS who, compute_pct AS compute,
               non_compute_pct AS non_compute, idle_pct AS idle
        FROM temporal_breakdown WHERE trace_id = ?""", [trace_id])
    return wide.unpivot(index="who", variable_name="category", value_name="pct")


def kernel_table(con, trace_id: str, limit: int = 25) -> list[dict]:
    return frame(con, f"""SELECT name, time_pct, total_ns, instances, avg_ns, med_ns, min_ns, max_ns
                          FROM kernel_summary WHERE trace_id = ? ORDER BY total_ns DESC LIMIT {limit}""",
                 [trace_id]).to_dicts()


def memcpy_table(con, trace_id: str) -> list[dict]:
    return frame(con, """SELECT copy_kind || ' ' || src_kind || ' -> ' || dst_kind AS kind, count, total_bytes,
                                total_ns, avg_bytes_per_s
                         FROM memcpy_kind_summary WHERE trace_id = ? ORDER BY total_ns DESC""", [trace_id]).to_dicts()


def api_table(con, trace_id: str, limit: int = 15) -> list[dict]:
    return frame(con, f"""SELECT name, time_pct, total_ns, num_calls, avg_ns, max_ns FROM api_summary
                          WHERE trace_id = ? ORDER BY total_ns DESC LIMIT {limit}""", [trace_id]).to_dicts()


def nvtx_table(con, trace_id: str, limit: int = 15) -> list[dict]:
    return frame(con, f"""SELECT range, style, instances, total_proj_ns, total_range_ns, total_gpu_ops
                          FROM nvtx_gpu_summary WHERE trace_id = ? ORDER BY total_proj_ns DESC LIMIT {limit}""",
                 [trace_id]).to_dicts()


def idle_causes(con, trace_id: str) -> list[dict]:
    return frame(con, """SELECT cause, sum(gap_count) AS gaps, sum(idle_ns) AS idle_ns FROM idle_breakdown_by_device
                         WHERE trace_id = ? GROUP BY cause ORDER BY idle_ns DESC""", [trace_id]).to_dicts()


def steps_table(con, trace_id: str, limit: int = 30) -> list[dict]:
    return frame(con, f"""SELECT rank, pid, step, wall_ns, gpu_idle_pct, compute_ns, communication_ns, memcpy_ns,
                                 dataloader_ns
                          FROM steps WHERE trace_id = ? ORDER BY pid, step_index LIMIT {limit}""", [trace_id]).to_dicts()


def findings_table(con, trace_id: str) -> list[dict]:
    return frame(con, """
        SELECT rule, severity, count(*) AS n, CAST(sum(duration_ns) AS BIGINT) AS total_ns,
               arg_max(evidence, duration_ns) AS example, any_value(advice) AS advice
        FROM findings WHERE trace_id = ? GROUP BY rule, severity ORDER BY total_ns DESC""", [trace_id]).to_dicts()


def icicle(con, trace_id: str, min_pct: float = 0.5, max_depth: int = 14) -> pl.DataFrame:
    """Node rectangles of the 'stack' calling-context tree: children laid out inside their parent."""
    nodes = frame(con, """SELECT node_id, parent_id, depth, label, kind, inclusive_pct FROM callctx_topdown
                          WHERE trace_id = ? AND tree = 'stack' AND inclusive_pct >= ? AND depth BETWEEN 1 AND ?
                          ORDER BY depth, inclusive_pct DESC""", [trace_id, min_pct, max_depth])
    start = {0: 0.0}
    rows = []
    for node_id, parent_id, depth, label, kind, share in nodes.iter_rows():
        if parent_id not in start:
            continue
        x0 = start[parent_id]
        start[parent_id] = x0 + share
        start[node_id] = x0
        rows.append({"depth": depth, "x0": x0, "x1": x0 + share, "label": label, "kind": kind})
    return pl.DataFrame(rows, schema={"depth": pl.Int32, "x0": pl.Float64, "x1": pl.Float64, "label": pl.String,
                                      "kind": pl.String})


def index_rows(con) -> list[dict]:
    return frame(con, """
        SELECT t.trace_id, t.file_name, t.source, t.rank, t.duration_ns, t.is_truncated,
               b.idle_pct, b.compute_pct,
               (SELECT name FROM kernel_summary k WHERE k.trace_id = t.trace_id ORDER BY total_ns DESC LIMIT 1)
                   AS top_kernel,
               (SELECT count(*) FROM findings f WHERE f.trace_id = t.trace_id) AS findings
        FROM traces t
        LEFT JOIN (SELECT trace_id, avg(idle_pct) AS idle_pct, avg(compute_pct) AS compute_pct
                   FROM temporal_breakdown GROUP BY trace_id) b USING (trace_id)
        ORDER BY t.file_name""").to_dicts()
