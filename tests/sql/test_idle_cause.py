"""sql/base/idle_cause.sql: the one idle-cause vocabulary, and gpu_gap_causes speaking it."""

from __future__ import annotations

import pytest

from .conftest import given, load_sql, rows


@pytest.mark.parametrize("launch_start_ns, idle_ns, expected", [
    (101, 50_000, "host_wait"),     # launched after the idle time began
    (100, 29_999, "kernel_wait"),   # launched in time (at the very start), gap under 30 us
    (100, 30_000, "other"),
    (99, 30_001, "other"),
    (None, 10, "kernel_wait"),      # no launch call recorded: short gaps are still launch overhead
    (None, 30_000, "other"),
])
def test_default_threshold(con, launch_start_ns, idle_ns, expected):
    load_sql(con, "base/idle_cause.sql")
    assert rows(con, "SELECT idle_cause(?, 100, ?)", [launch_start_ns, idle_ns]) == [(expected,)]


def test_threshold_argument(con):
    load_sql(con, "base/idle_cause.sql")
    assert rows(con, "SELECT idle_cause(0, 100, 49, 50), idle_cause(0, 100, 50, 50), idle_cause(0, 100, 51, 50)") == [
        ("kernel_wait", "other", "other")]


def test_gpu_gap_causes(con):
    given(con, "kernels", ["trace_id", "pid", "device_id", "stream_id", "start_ns", "end_ns", "correlation_id", "name"], [
        ("t", 1, 0, 7, 1_000, 2_000, 1, "a"),
        ("t", 1, 0, 7, 2_020, 3_000, 2, "b"),    # queued, 20 ns gap
        ("t", 1, 0, 7, 50_000, 51_000, 3, "c"),  # queued, 47 us gap
        ("t", 1, 0, 7, 90_000, 91_000, 4, "d"),  # launched late
        ("t", 1, 0, 7, 200_000, 201_000, 5, "e"),  # no launch call
    ])
    given(con, "api_calls", ["trace_id", "pid", "tid", "start_ns", "end_ns", "correlation_id", "name", "api"], [
        ("t", 1, 11, 500, 510, 2, "cudaLaunchKernel", "runtime"),
        ("t", 1, 11, 600, 610, 3, "cudaLaunchKernel", "runtime"),
        ("t", 1, 11, 60_000, 60_010, 4, "cudaLaunchKernel", "runtime"),
    ])
    load_sql(con, "analysis/gpu_gap_causes.sql")
    assert rows(con, "SELECT next_op, duration_ns, cause FROM gpu_gap_causes_over(0) ORDER BY start_ns") == [
        ("b", 20, "kernel_wait"), ("c", 47_000, "other"), ("d", 39_000, "host_wait"), ("e", 109_000, "other")]
