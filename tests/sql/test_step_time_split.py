"""sql/analysis/step_time_split.sql: each step as compute, busy without compute, idle."""

from __future__ import annotations

from .conftest import given, load_sql, rows
from .test_steps import ANNOTATION, KERNEL


def test_empty(con):
    load_sql(con, "analysis/step_time_split.sql")
    assert rows(con, "SELECT * FROM step_time_split") == []


def test_split(con):
    given(con, "traces", ["trace_id", "end_ns"], [("t", 5_000)])
    given(con, "annotations", ANNOTATION, [
        ("t", 1, 2, 11, 0, 1_000, "ProfilerStep#1", "user_annotation", False),
        ("t", 2, 3, 11, 0, 1_000, "ProfilerStep#1", "user_annotation", False)])  # a second process
    given(con, "kernels", KERNEL, [("t", 2, 0, 7, 100, 300, "gemm"), ("t", 2, 0, 8, 200, 600, "ncclKernel_AllReduce"),
                                   ("t", 3, 0, 7, 0, 100, "gemm")])
    load_sql(con, "analysis/step_time_split.sql")
    assert rows(con, """SELECT pid, step, compute_ns, non_compute_ns, idle_ns, is_first_process FROM step_time_split
                        ORDER BY pid""") == [
        (2, "ProfilerStep#1", 200, 300, 500, True),   # busy 100-600; compute 100-300
        (3, "ProfilerStep#1", 100, 0, 900, False)]
