"""sql/base/gap_length_bins.sql and sql/analysis/gpu_gap_histogram.sql: GPU idle gaps over 10 us
counted by length bin and cause."""

from __future__ import annotations

from .conftest import given, load_sql, rows

KERNEL = ["trace_id", "pid", "device_id", "stream_id", "start_ns", "end_ns", "correlation_id", "name"]
US, S = 1_000, 1_000_000_000


def test_bins(con):
    load_sql(con, "base/gap_length_bins.sql")
    bins = rows(con, "SELECT bin_index, bin, min_ns, max_ns FROM gap_length_bins ORDER BY bin_index")
    assert bins[0] == (0, "10-30 µs", 10 * US, 30 * US) and bins[-1] == (9, "> 1 s", S, None) and len(bins) == 10
    assert all(a[3] == b[2] for a, b in zip(bins, bins[1:]))  # bins touch


def test_empty(con):
    load_sql(con, "analysis/gpu_gap_histogram.sql")
    assert rows(con, "SELECT * FROM gpu_gap_histogram") == []


def test_histogram(con):
    given(con, "kernels", KERNEL, [
        ("t", 1, 0, 7, 0, 100, 1, "a"),
        ("t", 1, 0, 7, 100 + 10 * US, 200 * US, 2, "b"),          # exactly 10 us: not over 10 us, left out
        ("t", 1, 0, 7, 215 * US, 300 * US, 3, "c"),               # 15 us
        ("t", 1, 0, 7, 320 * US, 400 * US, 4, "d"),               # 20 us
        ("t", 1, 0, 7, 430 * US, 500 * US, 5, "e"),               # 30 us: the next bin
        ("t", 1, 0, 7, 500 * US + 2 * S, 600 * US + 2 * S, 6, "f"),  # 2 s
    ])
    load_sql(con, "analysis/gpu_gap_histogram.sql")
    assert rows(con, "SELECT trace_id, bin_index, bin, cause, gaps, idle_ns FROM gpu_gap_histogram ORDER BY bin_index") == [
        ("t", 0, "10-30 µs", "kernel_wait", 2, 35 * US),  # no launch call recorded, under 30 us (idle_cause)
        ("t", 1, "30-100 µs", "other", 1, 30 * US),
        ("t", 9, "> 1 s", "other", 1, 2 * S)]
