"""sql/analysis/idle_breakdown.sql: gaps per stream, classified with idle_cause (HTA's vocabulary)."""

from __future__ import annotations

import pytest

from .conftest import given, load_sql, rows

KERNEL = ["trace_id", "pid", "device_id", "stream_id", "start_ns", "end_ns", "correlation_id", "name"]
API = ["trace_id", "pid", "tid", "start_ns", "end_ns", "correlation_id", "name", "api"]


@pytest.fixture
def idle(con):
    given(con, "kernels", KERNEL, [
        ("t", 1, 0, 7, 0, 100, 1, "a"),
        ("t", 1, 0, 7, 150, 200, 2, "b"),   # launched at 120, after the stream went idle
        ("t", 1, 0, 7, 210, 300, 3, "c"),   # launched in time, 10 ns gap
        ("t", 1, 0, 7, 400, 500, 4, "d"),   # launched in time, 100 ns gap
        ("t", 1, 0, 7, 400, 450, 9, "d2"),  # starts with d and ends first: it ends the gap
        ("t", 1, 0, 7, 500, 600, 5, "e"),   # touching: no gap
        ("t", 1, 0, None, 0, 10, 6, "x"),   # NULL stream: a stream of its own
        ("t", 1, 0, None, 1000, 1010, 7, "y"),  # no launch call recorded
    ])
    given(con, "api_calls", API, [
        ("t", 1, 11, 0, 5, 1, "cudaLaunchKernel_v7000", "runtime"),
        ("t", 1, 11, 120, 125, 2, "cudaLaunchKernel_v7000", "runtime"),
        ("t", 1, 11, 130, 135, 3, "cudaLaunchKernel_v7000", "runtime"),
        ("t", 1, 11, 140, 145, 4, "cudaLaunchKernel_v7000", "runtime"),
        ("t", 1, 11, 141, 146, 9, "cudaLaunchKernel_v7000", "runtime"),
    ])
    load_sql(con, "analysis/idle_breakdown.sql")
    return con


def test_empty(con):
    load_sql(con, "analysis/idle_breakdown.sql")
    assert rows(con, "SELECT * FROM idle_breakdown") == []


def test_gaps_and_causes(idle):
    assert rows(idle, """SELECT stream_id, start_ns, end_ns, duration_ns, cause, next_op, launch_start_ns
                         FROM idle_breakdown ORDER BY stream_id NULLS LAST, start_ns""") == [
        (7, 100, 150, 50, "host_wait", "b", 120),
        (7, 200, 210, 10, "kernel_wait", "c", 130),
        (7, 300, 400, 100, "kernel_wait", "d2", 141),
        (None, 10, 1000, 990, "kernel_wait", "y", None),
    ]


@pytest.mark.parametrize("kernel_wait_max_ns, cause", [(99, "other"), (100, "other"), (101, "kernel_wait")])
def test_threshold(idle, kernel_wait_max_ns, cause):
    assert rows(idle, "SELECT cause FROM idle_breakdown_over(?) WHERE duration_ns = 100",
                [kernel_wait_max_ns]) == [(cause,)]


def test_by_stream_and_device(idle):
    assert rows(idle, """SELECT stream_id, cause, gap_count, idle_ns, round(idle_pct, 3) FROM idle_breakdown_by_stream
                         ORDER BY stream_id NULLS LAST, cause""") == [
        (7, "host_wait", 1, 50, 31.25), (7, "kernel_wait", 2, 110, 68.75), (None, "kernel_wait", 1, 990, 100.0)]
    assert rows(idle, "SELECT device_id, cause, gap_count, idle_ns FROM idle_breakdown_by_device ORDER BY cause") == [
        (0, "host_wait", 1, 50), (0, "kernel_wait", 3, 1100)]
