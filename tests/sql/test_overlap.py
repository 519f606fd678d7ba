"""sql/analysis/overlap.sql: communication and copies hidden behind compute; time with 2+ busy streams."""

from __future__ import annotations

from .conftest import given, load_sql, rows

KERNEL = ["trace_id", "pid", "device_id", "stream_id", "start_ns", "end_ns", "name"]
COLUMNS = """communication_ns, communication_overlap_ns, communication_overlap_pct, memcpy_ns, memcpy_overlap_ns,
             memcpy_overlap_pct, multi_stream_ns, multi_stream_pct"""


def test_empty(con):
    load_sql(con, "analysis/overlap.sql")
    assert rows(con, "SELECT * FROM overlap") == []


def test_overlap(con):
    given(con, "traces", ["trace_id", "rank"], [("t", 3)])
    given(con, "kernels", KERNEL, [
        ("t", 1, 0, 1, 0, 100, "gemm"),
        ("t", 1, 0, 1, 20, 30, "gemm"),  # nested on the same stream: one busy stream
        ("t", 1, 0, 2, 50, 150, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"),
        ("t", 1, 0, 4, 200, 250, "gemm"),  # touches the copy: not concurrent
    ])
    given(con, "memcpy", ["trace_id", "pid", "device_id", "stream_id", "start_ns", "end_ns", "operation"], [
        ("t", 1, 0, 3, 140, 200, "Host-to-Device")])
    load_sql(con, "analysis/overlap.sql")
    assert rows(con, f"SELECT trace_id, rank, pid, {COLUMNS} FROM overlap") == [
        ("t", 3, 1, 100, 50, 50.0, 60, 0, 0.0, 60, 24.0)]  # 2+ streams: 50..100 and 140..150, of 250 busy


def test_no_communication(con):
    given(con, "traces", ["trace_id"], [("t",)])
    given(con, "kernels", KERNEL, [("t", 1, 0, 1, 0, 100, "gemm")])
    load_sql(con, "analysis/overlap.sql")
    assert rows(con, f"SELECT {COLUMNS} FROM overlap") == [(0, 0, None, 0, 0, None, 0, 0.0)]
