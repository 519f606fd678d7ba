"""sql/analysis/gpu_gaps.sql: idle stretches of the union of a process's GPU work, NVIDIA's gap rule."""

from __future__ import annotations

import pytest

from .conftest import given, load_sql, rows

KERNEL = ["trace_id", "pid", "device_id", "context_id", "stream_id", "start_ns", "end_ns"]


@pytest.fixture
def gaps(con):
    given(con, "kernels", KERNEL, [
        ("t", 1, 0, 5, 7, 100, 200),
        ("t", 1, 0, 5, 8, 250, 300),    # 50 ns gap
        ("t", 1, 0, 5, 7, 300, 400),    # touching: no gap
        ("t", 1, 0, 5, 8, 350, 380),    # nested
        ("t", 1, 0, 5, 7, 1000, 1100),  # 600 ns gap
        ("t", 1, 1, 6, 7, 0, 5000),     # another GPU: its own active range; start 0 is left out
        ("t", 1, 1, 6, 7, 10, 20),
    ])
    load_sql(con, "analysis/gpu_gaps.sql")
    return con


def test_empty(con):
    load_sql(con, "analysis/gpu_gaps.sql")
    assert rows(con, "SELECT * FROM gpu_gaps_over(0)") == []


@pytest.mark.parametrize("min_ns, expected", [
    (49, [(200, 250, 50), (400, 1000, 600)]),
    (50, [(400, 1000, 600)]),  # longer than min_ns, strictly
    (51, [(400, 1000, 600)]),
])
def test_threshold(gaps, min_ns, expected):
    assert rows(gaps, "SELECT start_ns, end_ns, duration_ns FROM gpu_gaps_over(?) ORDER BY start_ns",
                [min_ns]) == expected


def test_columns_and_default(gaps):
    assert rows(gaps, "SELECT trace_id, pid, device_id, context_id FROM gpu_gaps_over(100)") == [("t", 1, 0, 5)]
    assert rows(gaps, "SELECT * FROM gpu_gaps") == []  # NVIDIA's default: 500 ms


def test_profiler_overhead_inside_the_active_range_counts_as_busy(gaps):
    given(gaps, "profiler_overhead", ["trace_id", "pid", "start_ns", "end_ns", "name"], [
        ("t", 1, 500, 900, "CUDA profiling overhead"),
        ("t", 1, 1050, 2000, "CUDA profiling overhead"),  # ends after the last operation: left out
        ("t", 1, 210, 240, "something else"),
    ])
    assert rows(gaps, "SELECT start_ns, end_ns FROM gpu_gaps_over(0) WHERE device_id = 0 ORDER BY start_ns") == [
        (200, 250), (400, 500), (900, 1000)]
