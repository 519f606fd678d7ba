"""sql/analysis/kernel_launches.sql: each kernel with its launch call; launch overhead per process and GPU."""

from __future__ import annotations

from .conftest import given, load_sql, rows

KERNEL = ["trace_id", "pid", "device_id", "stream_id", "start_ns", "end_ns", "duration_ns", "correlation_id", "name"]
API = ["trace_id", "pid", "tid", "start_ns", "end_ns", "duration_ns", "correlation_id", "name", "api"]


def test_empty(con):
    load_sql(con, "analysis/kernel_launches.sql")
    assert rows(con, "SELECT * FROM kernel_launches") == []


def test_launches(con):
    given(con, "api_calls", API, [
        ("t", 1, 11, 0, 10, 10, 1, "cudaLaunchKernel_v7000", "runtime"),
        ("t", 1, 11, 20, 30, 10, 2, "cudaLaunchKernel_v7000", "runtime"),
        ("t", 1, 11, 40, 45, 5, 3, "cuLaunchKernelEx", "driver"),
        ("t", 1, 11, 40, 45, 5, 3, "cuLaunchKernelEx", "backtrace"),  # --cudabacktrace twin: left out
    ])
    given(con, "kernels", KERNEL, [
        ("t", 1, 0, 7, 50, 60, 10, 1, "a"),
        ("t", 1, 0, 7, 60, 100, 40, 2, "b"),
        ("t", 1, 0, 7, 44, 45, 1, 3, "c"),    # starts before its call returns
        ("t", 1, 0, 7, 200, 210, 10, 99, "d"),  # no launch call recorded: left out
    ])
    load_sql(con, "analysis/kernel_launches.sql")
    assert rows(con, """SELECT name, api_name, launch_start_ns, launch_ns, launch_latency_ns, queue_delay_ns, queue_depth
                        FROM kernel_launches ORDER BY launch_start_ns""") == [
        ("a", "cudaLaunchKernel", 0, 10, 50, 40, 0),
        ("b", "cudaLaunchKernel", 20, 10, 40, 30, 1),  # a launched before it and not started yet
        ("c", "cuLaunchKernelEx", 40, 5, 4, None, 2),
    ]
    assert rows(con, """SELECT kernels, avg_launch_ns, avg_launch_latency_ns, p50_kernel_ns, round(short_kernel_pct, 3),
                               round(short_kernel_time_pct, 3), avg_queue_depth FROM kernel_launch_summary""") == [
        (3, 25 / 3, 94 / 3, 10.0, 33.333, 1.961, 1.0)]
