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
    load_sql(con, "analysis/findings_critical_path.sql", tables_below=True)
    [(severity, evidence, advice)] = rows(con, "SELECT severity, evidence, advice FROM finding_critical_path")
    assert severity == "warning"
    assert evidence.startswith("Over 2 steady steps the critical path averages 0.00 ms")
    assert "69% of it is data loading" in evidence
    assert "load (0.0 ms a step)" in evidence and "DataLoader workers" in advice


def test_finding_gives_an_operators_time_a_step_as_its_path(con):
    """The evidence averages the path over the steps, so the operators it names are given a step's
    mean too: 'load' puts 3 ms and 1 ms on the two steps' paths, 2.00 ms a step (not 4.00)."""
    given(con, "traces", ["trace_id", "rank"], [("t", 0)])
    given(con, "cp_steps", STEP, [("t", 0, 1, "ProfilerStep#1", 0, 0, 4_000_000, True, 3_000_000, True),
                                  ("t", 1, 1, "ProfilerStep#2", 1, 4_000_000, 6_000_000, True, 1_000_000, True)])
    given(con, "cp_nodes", NODE, [
        ("t", 0, 0, 0, 0, True, "annotation", "load", 1, 1), ("t", 1, 0, 0, 3_000_000, False, "annotation", "load", 1, 1),
        ("t", 2, 1, 1, 4_000_000, True, "annotation", "load", 1, 1),
        ("t", 3, 1, 1, 5_000_000, False, "annotation", "load", 1, 1),
    ])
    given(con, "cp_edges", EDGE, [("t", 0, 0, 0, 1, "operator", 3_000_000, "data_loading", 0, 0),
                                  ("t", 1, 1, 2, 3, "operator", 1_000_000, "data_loading", 1, 0)])
    load_sql(con, "analysis/findings_critical_path.sql", tables_below=True)
    [(evidence,)] = rows(con, "SELECT evidence FROM finding_critical_path")
    assert evidence.startswith("Over 2 steady steps the critical path averages 2.00 ms (67% of the 3.00 ms steps)")
    assert "most of it from load (2.0 ms a step)" in evidence


def test_a_trace_path_is_cut_at_the_steps(con):
    """A '(trace)' graph (no ProfilerStep ranges) in a trace whose steps are record_function
    ranges: each step gets the part of the path inside its window, an edge across a boundary split
    in proportion to its time on each side, and the path after the last step counts for none."""
    given(con, "traces", ["trace_id", "rank", "start_ns", "end_ns"], [("t", 0, 0, 1_000)])
    given(con, "annotations", ["trace_id", "annotation_id", "pid", "tid", "start_ns", "end_ns", "name", "kind",
                               "is_gpu"],
          [("t", 1, 1, 1, 0, 100, "iteration 0", "user_annotation", False),
           ("t", 2, 1, 1, 100, 300, "iteration 1", "user_annotation", False)])
    given(con, "cp_steps", STEP, [("t", 0, None, "(trace)", 0, 0, 1_000, True, 350, True)])
    given(con, "cp_nodes", NODE, [
        ("t", 0, 0, 0, 50, True, "cpu_op", "aten::A", 1, 1), ("t", 1, 0, 0, 150, False, "cpu_op", "aten::A", 1, 1),
        ("t", 2, 1, 0, 150, True, "kernel", "K", 1, None), ("t", 3, 1, 0, 400, False, "kernel", "K", 1, None),
    ])
    given(con, "cp_edges", EDGE, [("t", 0, 0, 0, 1, "operator", 100, "cpu", 0, 0),
                                  ("t", 1, 0, 2, 3, "operator", 250, "gpu_compute", 1, 1)])
    load_sql(con, "analysis/critical_path.sql")
    assert rows(con, "SELECT step, step_index, step_id, is_cut FROM critical_path_steps ORDER BY step_index") == [
        ("iteration 0", 0, None, True), ("iteration 1", 1, None, True)]
    # aten::A (50 -> 150) is half in each step; K (150 -> 400) has 150 of its 250 in iteration 1
    assert rows(con, """SELECT step, path_order, class, weight_ns, start_ns, end_ns, name FROM critical_path
                        ORDER BY step_index, path_order""") == [
        ("iteration 0", 0, "cpu", 50, 50, 100, "aten::A"),
        ("iteration 1", 0, "cpu", 50, 100, 150, "aten::A"),
        ("iteration 1", 1, "gpu_compute", 150, 150, 300, "K"),
    ]
    assert rows(con, """SELECT pid, step, step_index, step_ns, path_ns, cpu_ns, gpu_compute_ns, bound_by
                        FROM critical_path_summary ORDER BY step_index""") == [
        (1, "iteration 0", 0, 100, 50, 50, 0, "cpu"), (1, "iteration 1", 1, 200, 200, 50, 150, "gpu_compute")]
    assert rows(con, "SELECT step, name, path_ns FROM critical_path_ops ORDER BY step_index, rank_in_step") == [
        ("iteration 0", "aten::A", 50), ("iteration 1", "K", 150), ("iteration 1", "aten::A", 50)]


def test_the_cut_parts_of_an_edge_add_up_to_it(con):
    """Three steps cut an edge of 10 ns over 7 ns of time (2, 3 and 2 ns in them): its weight up
    to each boundary is rounded down, so the parts are 2 + 5 + 3 = 10; an edge of no duration goes
    whole to the step that holds its time."""
    given(con, "traces", ["trace_id", "rank", "start_ns", "end_ns"], [("t", 0, 0, 100)])
    given(con, "annotations", ["trace_id", "annotation_id", "pid", "tid", "start_ns", "end_ns", "name", "kind",
                               "is_gpu"],
          [("t", i, 1, 1, 10 + 3 * i, 13 + 3 * i, f"iteration {i}", "user_annotation", False) for i in range(3)])
    given(con, "cp_steps", STEP, [("t", 0, None, "(trace)", 0, 0, 100, True, 15, True)])
    load_sql(con, "analysis/critical_path.sql")
    con.execute("""CREATE TEMP TABLE edges AS SELECT * FROM (VALUES ('t', NULL::BIGINT, 11, 18, 10, 'long'),
                                                                    ('t', NULL::BIGINT, 16, 16, 5, 'point'))
                   AS e(trace_id, graph_pid, lo_ns, hi_ns, weight_ns, name)""")
    assert rows(con, """SELECT name, step_index, weight_ns, start_ns, end_ns FROM critical_path_cut(edges)
                        ORDER BY name, step_index""") == [
        ("long", 0, 2, 11, 13), ("long", 1, 5, 13, 16), ("long", 2, 3, 16, 18), ("point", 2, 5, 16, 16)]
