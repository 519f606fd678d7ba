"""sql/analysis/critical_path_first_process.sql: the first process's steps and what is on their paths."""

from __future__ import annotations

from .conftest import given, load_sql, rows
from .test_critical_path import STEP, _graph


def test_empty(con):
    load_sql(con, "analysis/critical_path_first_process.sql")
    assert rows(con, "SELECT * FROM critical_path_first_steps") == []
    assert rows(con, "SELECT * FROM critical_path_first_ops") == []


def test_first_process(con):
    _graph(con)
    given(con, "cp_steps", STEP, [("t", 2, 9, "ProfilerStep#1", 0, 0, 100, True, 0, True)])  # pid 9: not shown
    load_sql(con, "analysis/critical_path_first_process.sql")
    assert rows(con, "SELECT pid, step, path_ns FROM critical_path_first_steps ORDER BY step_index") == [
        (1, "ProfilerStep#1", 110), (1, "ProfilerStep#2", 250)]
    assert rows(con, "SELECT trace_id, event_kind, name, class, path_ns, edges, pct FROM critical_path_first_ops "
                     "ORDER BY path_ns DESC") == [
        ("t", "annotation", "load", "data_loading", 250, 1, 100.0 * 250 / 360),
        ("t", "kernel", "K", "gpu_compute", 90, 1, 100.0 * 90 / 360),
        ("t", "cpu_op", "aten::A", "launch_overhead", 20, 1, 100.0 * 20 / 360)]
