"""sql/analysis/run_comparison.sql: runs of one workload side by side, per rank and per step in their own columns."""

from __future__ import annotations

import pytest

from .conftest import given, load_sql, rows

TRACE = ["trace_id", "source", "path", "file_name", "start_ns", "end_ns", "clock_offset_ns"]
KERNEL = ["trace_id", "pid", "device_id", "stream_id", "start_ns", "end_ns", "duration_ns", "name"]
STEP = ["trace_id", "annotation_id", "pid", "tid", "start_ns", "end_ns", "name", "kind", "is_gpu"]


def step(trace, i, start, end):
    return (trace, i, 1, 1, start, end, f"ProfilerStep#{i}", "user_annotation", False)


@pytest.fixture
def runs(con):
    given(con, "traces", TRACE, [("a", "pytorch", "/r/a.json", "a.json", 0, 1_000, 10_000),
                                 ("b", "pytorch", "/r/b.json", "b.json", 0, 1_000, 20_000),
                                 ("c", "pytorch", "/r/c.json", "c.json", 0, 1_000, 30_000)])
    given(con, "annotations", STEP, [step("a", 1, 0, 500), step("a", 2, 500, 1_000), step("b", 1, 0, 1_000)])
    given(con, "kernels", KERNEL, [
        ("a", 1, 0, 7, 0, 200, 200, "k1"), ("a", 1, 0, 7, 500, 600, 100, "k2"),  # 2 steps
        ("b", 1, 0, 7, 0, 300, 300, "k1"), ("b", 1, 0, 7, 500, 600, 100, "k2"),  # 1 step
        ("c", 1, 0, 7, 0, 100, 100, "k1"), ("c", 1, 0, 7, 500, 600, 100, "k2"),  # no steps
    ])
    load_sql(con, "analysis/run_comparison.sql")
    return con


def test_empty(con):
    load_sql(con, "analysis/run_comparison.sql")
    assert rows(con, "SELECT * FROM run_comparison") == []


def test_kernel_time_per_rank_and_per_step(runs):
    assert rows(runs, "SELECT run_id, name, kernel_ns_per_rank, kernel_ns_per_rank_step FROM run_kernel_time ORDER BY ALL") == [
        ("a", "k1", 200.0, 100.0), ("a", "k2", 100.0, 50.0), ("b", "k1", 300.0, 300.0), ("b", "k2", 100.0, 100.0),
        ("c", "k1", 100.0, None), ("c", "k2", 100.0, None)]


def test_comparison(runs):
    assert rows(runs, """SELECT run_id, previous_run_id, similarity, compared_per, kernel_ns_per_rank,
                                previous_kernel_ns_per_rank, kernel_ns_per_rank_step, previous_kernel_ns_per_rank_step,
                                round(kernel_change_pct, 3)
                         FROM run_comparison ORDER BY run_id""") == [
        ("b", "a", 1.0, "step", 400.0, 300.0, 400.0, 150.0, 166.667),
        ("c", "b", 1.0, "run", 200.0, 400.0, None, None, -50.0)]  # c records no steps: per run


def test_kernel_changes(runs):
    assert rows(runs, """SELECT run_id, name, compared_per, kernel_ns_per_rank, previous_kernel_ns_per_rank,
                                delta_ns_per_rank, kernel_ns_per_rank_step, previous_kernel_ns_per_rank_step,
                                delta_ns_per_rank_step, round(change_pct, 3)
                         FROM run_kernel_changes ORDER BY run_id, name""") == [
        ("b", "k1", "step", 300.0, 200.0, 100.0, 300.0, 100.0, 200.0, 200.0),
        ("b", "k2", "step", 100.0, 100.0, 0.0, 100.0, 50.0, 50.0, 100.0),
        ("c", "k1", "run", 100.0, 300.0, -200.0, None, None, None, -66.667),
        ("c", "k2", "run", 100.0, 100.0, 0.0, None, None, None, 0.0)]
