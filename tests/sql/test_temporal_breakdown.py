"""sql/analysis/temporal_breakdown.sql: idle / compute / non-compute time over a rank's GPU span."""

from __future__ import annotations

from .conftest import given, load_sql, rows

KERNEL = ["trace_id", "pid", "device_id", "stream_id", "start_ns", "end_ns", "name", "correlation_id"]
COLUMNS = "span_ns, busy_ns, idle_ns, compute_ns, non_compute_ns, communication_ns, memcpy_ns"


def ops(con):
    given(con, "traces", ["trace_id", "rank"], [("t", 0)])
    given(con, "kernels", KERNEL, [
        ("t", 1, 0, 1, 0, 100, "gemm", 1),
        ("t", 1, 0, 2, 50, 150, "ncclKernel_AllReduce", 2),
        ("t", 1, 1, 1, 300, 400, "gemm", 3),  # another GPU; 150 ns idle before it on the rank
    ])
    given(con, "memset", ["trace_id", "pid", "device_id", "stream_id", "start_ns", "end_ns"], [("t", 1, 0, 3, 140, 150)])


def test_empty(con):
    load_sql(con, "analysis/temporal_breakdown.sql")
    assert rows(con, "SELECT * FROM temporal_breakdown") == []


def test_per_rank(con):
    ops(con)
    load_sql(con, "analysis/temporal_breakdown.sql")
    assert rows(con, f"SELECT trace_id, rank, pid, {COLUMNS}, idle_pct, compute_pct FROM temporal_breakdown") == [
        ("t", 0, 1, 400, 250, 150, 200, 50, 100, 10, 37.5, 50.0)]


def test_per_device(con):
    ops(con)
    load_sql(con, "analysis/temporal_breakdown.sql")
    assert rows(con, f"SELECT device_id, {COLUMNS} FROM temporal_breakdown_by_device ORDER BY device_id") == [
        (0, 150, 150, 0, 100, 50, 100, 10), (1, 100, 100, 0, 100, 0, 0, 0)]


def test_hta_rounds_to_whole_microseconds(con):
    given(con, "traces", ["trace_id"], [("t",)])
    given(con, "kernels", KERNEL, [
        ("t", 1, 0, 1, 1_500, 3_500, "gemm", 1),   # [2 us, 3 us)
        ("t", 1, 0, 1, 5_100, 5_900, "gemm", 2),   # shorter than a whole us: nothing left
        ("t", 1, 0, 1, 7_000, 8_000, "gemm", 3),
    ])
    load_sql(con, "analysis/temporal_breakdown.sql")
    assert rows(con, f"SELECT {COLUMNS} FROM temporal_breakdown_hta") == [(6_000, 2_000, 4_000, 2_000, 0, 0, 0)]
    assert rows(con, f"SELECT {COLUMNS} FROM temporal_breakdown") == [(6_500, 3_800, 2_700, 3_800, 0, 0, 0)]
