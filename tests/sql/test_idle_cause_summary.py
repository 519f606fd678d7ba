"""sql/analysis/idle_cause_summary.sql: stream gaps of a trace summed per cause over its GPUs."""

from __future__ import annotations

from .conftest import given, load_sql, rows

KERNEL = ["trace_id", "pid", "device_id", "stream_id", "start_ns", "end_ns", "correlation_id", "name"]
API = ["trace_id", "pid", "tid", "start_ns", "end_ns", "correlation_id", "name", "api"]


def test_empty(con):
    load_sql(con, "analysis/idle_cause_summary.sql")
    assert rows(con, "SELECT * FROM idle_cause_summary") == []


def test_causes_over_gpus_and_streams(con):
    given(con, "kernels", KERNEL, [
        ("t", 1, 0, 7, 0, 100, 1, "a"), ("t", 1, 0, 7, 150, 200, 2, "b"),   # 50 ns, launched late: host_wait
        ("t", 1, 1, 3, 0, 100, 3, "c"), ("t", 1, 1, 3, 120, 200, 4, "d"),   # GPU 1: 20 ns, in time: kernel_wait
        ("t", 1, 1, 4, 0, 10, 5, "e"), ("t", 1, 1, 4, 40, 50, 6, "f"),      # GPU 1, other stream: 30 ns kernel_wait
        ("u", 1, 0, 7, 0, 10, 1, "a"),                                      # another trace: no gap
    ])
    given(con, "api_calls", API, [("t", 1, 11, 120, 125, 2, "cudaLaunchKernel", "runtime"),
                                  ("t", 1, 11, 5, 6, 4, "cudaLaunchKernel", "runtime"),
                                  ("t", 1, 11, 5, 6, 6, "cudaLaunchKernel", "runtime")])
    load_sql(con, "analysis/idle_cause_summary.sql")
    assert rows(con, "SELECT trace_id, cause, gaps, idle_ns FROM idle_cause_summary ORDER BY cause") == [
        ("t", "host_wait", 1, 50), ("t", "kernel_wait", 2, 50)]
