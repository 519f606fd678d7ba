"""sql/analysis/critical_path.sql and findings_critical_path.sql on literal graph rows (cp_steps,
cp_nodes, cp_edges as analysis/critpath_build.py writes them)."""

from __future__ import annotations

from .conftest import given, load_sql, rows

STEP = ["trace_id", "step_id", "pid", "step", "step_index", "start_ns", "end_ns", "has_sync_events", "path_ns",
        "path_ok"]
NODE = ["trace_id", "node_id", "event_id", "step_id", "ts_ns", "is_start", "kind", "name", "pid", "tid"]
EDGE = ["trace_id", "edge_id", "step_id", "src_node", "dst_node", "edge_type", "weight_ns", "class", "event_id",
        "path_order"]


def _graph(con, has_sync=True):
    given(con, "traces", ["trace_id", "rank"], [("t", 0)])
    # step 0: op A (event 0) launches kernel K (event 1); step 1: a long data-loading range (event 2)
    given(con, "cp_steps", STEP, [("t", 0, 1, "ProfilerStep#1", 0, 0, 200, has_sync, 110, True),
                                  ("t", 1, 1, "ProfilerStep#2", 1, 200, 500, has_sync, 250, True)])
    given(con, "cp_nodes", NODE, [
        ("t", 0, 0, 0, 10, True, "cpu_op", "aten::A", 1, 1), ("t", 1, 0, 0, 60, False, "cpu_op", "aten::A", 1, 1),
        ("t", 2, 1, 0, 30, True, "kernel", "K", 1, None), ("t", 3, 1, 0, 120, False, "kernel", "K", 1, None),
        ("t", 4, 2, 1, 210, True, "annotation", "load", 1, 1),
        ("t", 5, 2, 1, 460, False, "annotation", "load", 1, 1),
    ])
    given(con, "cp_edges", EDGE, [
        ("t", 0, 0, 0, 2, "launch", 20, "launch_overhead", 0, 0),
        ("t", 1, 0, 2, 3, "operator", 90, "gpu_compute", 1, 1),
        ("t", 2, 0, 0, 1, "operator", 50, "cpu", 0, None),  # off the path
        ("t", 3, 1, 4, 5, "operator", 250, "data_loading", 2, 0),
    ])


def test_empty(con):
    load_sql(con, "analysis/critical_path.sql")
    assert rows(con, "SELECT * FROM critical_path_summary") == []
    assert rows(con, "SELECT * FROM critical_path_ops") == []


def test_path_in_order_with_attribution(con):
    _graph(con)
    load_sql(con, "analysis/critical_path.sql")
    assert rows(con, """SELECT step, path_order, edge_type, class, weight_ns, start_ns, end_ns, name
                        FROM critical_path ORDER BY step_index, path_order""") == [
        ("ProfilerStep#1", 0, "launch", "launch_overhead", 20, 10, 30, "aten::A"),
        ("ProfilerStep#1", 1, "operator", "gpu_compute", 90, 30, 120, "K"),
        ("ProfilerStep#2", 0, "operator", "data_loading", 250, 210, 460, "load"),
    ]


def test_summary_classes_add_up(con):
    _graph(con, has_sync=False)
    load_sql(con, "analysis/critical_path.sql")
    assert rows(con, """SELECT step, rank, step_ns, path_ns, cpu_ns, data_loading_ns, launch_overhead_ns,
                               gpu_compute_ns, bound_by, path_pct_of_step, is_lower_bound
                        FROM critical_path_summary ORDER BY step_index""") == [
        ("ProfilerStep#1", 0, 200, 110, 0, 0, 20, 90, "gpu_compute", 55.0, True),
        ("ProfilerStep#2", 0, 300, 250, 0, 250, 0, 0, "data_loading", 250 / 3, True),
    ]
    assert rows(con, """SELECT step, name, path_ns, pct_of_path, rank_in_step FROM critical_path_ops
                        ORDER BY step_index, rank_in_step""") == [
        ("ProfilerStep#1", "K", 90, 100.0 * 90 / 110, 1), ("ProfilerStep#1", "aten::A", 20, 100.0 * 20 / 110, 2),
        ("ProfilerStep#2", "load", 250, 100.0, 1),
    ]


def test_finding_names_the_dominant_class(con):
    _graph(con)
    load_sql(con, "analysis/findings_critical_path.sql")
    [(severity, evidence, advice)] = rows(con, "SELECT severity, evidence, advice FROM finding_critical_path")
    assert severity == "warning"
    assert evidence.startswith("Over 2 steady steps the critical path averages 0.00 ms")
    assert "69% of it is data loading" in evidence
    assert "load (0.0 ms)" in evidence and "DataLoader workers" in advice
