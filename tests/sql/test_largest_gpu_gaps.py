"""sql/analysis/largest_gpu_gaps.sql: gaps over 10 us ranked by length, placed from the first one."""

from __future__ import annotations

from .conftest import given, load_sql, rows

KERNEL = ["trace_id", "pid", "device_id", "stream_id", "start_ns", "end_ns", "correlation_id", "name"]
US = 1_000


def test_empty(con):
    load_sql(con, "analysis/largest_gpu_gaps.sql")
    assert rows(con, "SELECT * FROM largest_gpu_gaps") == []


def test_ranked(con):
    given(con, "kernels", KERNEL, [
        ("t", 1, 0, 7, 10, 100 * US, 1, "a"), ("t", 1, 0, 7, 115 * US, 200 * US, 2, "b"),  # 15 us at 100 us
        ("t", 1, 0, 7, 250 * US, 300 * US, 3, "c"),                                       # 50 us at 200 us
        ("t", 1, 0, 7, 305 * US, 400 * US, 4, "d"),                                       # 5 us: not listed
        ("u", 1, 0, 7, 10, 10 * US, 1, "a"), ("u", 1, 0, 7, 30 * US, 40 * US, 2, "b"),     # another trace
    ])
    load_sql(con, "analysis/largest_gpu_gaps.sql")
    assert rows(con, """SELECT trace_id, start_ns, duration_ns, next_op, at_ns, size_rank FROM largest_gpu_gaps
                        ORDER BY trace_id, size_rank""") == [
        ("t", 200 * US, 50 * US, "c", 100 * US, 1), ("t", 100 * US, 15 * US, "b", 0, 2),
        ("u", 10 * US, 20 * US, "b", 0, 1)]


def test_equal_lengths_rank_the_earlier_first(con):
    given(con, "kernels", KERNEL, [
        ("t", 1, 0, 7, 10, 100 * US, 1, "a"), ("t", 1, 0, 7, 120 * US, 200 * US, 2, "b"),  # 20 us at 100 us
        ("t", 1, 0, 7, 220 * US, 300 * US, 3, "c"),                                       # 20 us at 200 us
    ])
    load_sql(con, "analysis/largest_gpu_gaps.sql")
    assert rows(con, "SELECT size_rank, next_op FROM largest_gpu_gaps ORDER BY size_rank") == [(1, "b"), (2, "c")]
