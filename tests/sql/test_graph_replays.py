"""sql/analysis/graph_replays.sql (and base/graph_ops.sql): graph replays, one launch call each."""

from __future__ import annotations

from .conftest import given, load_sql, rows

API = ["trace_id", "pid", "tid", "correlation_id", "start_ns", "end_ns", "duration_ns", "name"]
KERNEL = ["trace_id", "pid", "device_id", "stream_id", "correlation_id", "start_ns", "end_ns", "duration_ns", "name"]


def _two_replays_and_a_direct_kernel(con):
    given(con, "api_calls", API, [
        ("t", 1, 11, 1, 0, 10, 10, "cudaStreamBeginCapture"),
        ("t", 1, 11, 2, 20, 25, 5, "cudaLaunchKernel"),        # recorded into the graph: runs nothing
        ("t", 1, 11, 3, 30, 40, 10, "cudaStreamEndCapture_v10000"),
        ("t", 1, 11, 4, 100, 130, 30, "cudaGraphLaunch"),
        ("t", 1, 11, 5, 500, 520, 20, "cudaGraphLaunch_v10000"),
        ("t", 1, 11, 6, 900, 908, 8, "cudaLaunchKernel"),
    ])
    given(con, "kernels", KERNEL, [
        ("t", 1, 0, 7, 4, 150, 160, 10, "a"), ("t", 1, 0, 7, 4, 165, 170, 5, "b"), ("t", 1, 0, 7, 4, 170, 200, 30, "c"),
        ("t", 1, 0, 7, 5, 530, 540, 10, "a"), ("t", 1, 0, 7, 5, 550, 555, 5, "b"), ("t", 1, 0, 7, 5, 555, 585, 30, "c"),
        ("t", 1, 0, 7, 6, 910, 915, 5, "direct"),
    ])
    given(con, "annotations", ["trace_id", "annotation_id", "pid", "tid", "start_ns", "end_ns", "name", "kind",
                               "is_gpu"], [("t", 1, 1, 11, 0, 50, "graph_capture", "user_annotation", False)])


def test_empty(con):
    load_sql(con, "analysis/graph_replays.sql")
    assert rows(con, "SELECT * FROM graph_replays") == []


def test_replays(con):
    _two_replays_and_a_direct_kernel(con)
    load_sql(con, "analysis/graph_replays.sql")
    assert rows(con, """SELECT replays, kernels_per_replay, gpu_ns_per_replay, span_ns_per_replay, launch_ns,
                               launch_latency_ns, total_gpu_ns, capture_site FROM graph_replays""") == [
        (2, 3.0, 45.0, 52.5, 25.0, 40.0, 90, "graph_capture")]
    assert rows(con, "SELECT capture_index, launches FROM graph_captures") == [(0, 1)]
    assert rows(con, "SELECT correlation_id, node_index, name FROM graph_ops ORDER BY start_ns") == [
        (4, 0, "a"), (4, 1, "b"), (4, 2, "c"), (5, 0, "a"), (5, 1, "b"), (5, 2, "c")]


def test_gaps_inside_a_replay(con):
    _two_replays_and_a_direct_kernel(con)
    load_sql(con, "analysis/idle_breakdown.sql")
    assert rows(con, "SELECT start_ns, end_ns, cause FROM idle_breakdown ORDER BY start_ns") == [
        (160, 165, "in_graph"),    # a -> b inside replay 4
        (200, 530, "host_wait"),   # replay 5 launched at 500, after the GPU went idle at 200
        (540, 550, "in_graph"),
        (585, 910, "host_wait"),
    ]


def test_phases_and_launch_summary(con):
    _two_replays_and_a_direct_kernel(con)
    load_sql(con, "analysis/kernel_launches.sql")
    assert rows(con, "SELECT phase, count(*) FROM gpu_op_phases GROUP BY ALL ORDER BY 1") == [
        ("eager", 1), ("replay", 6)]
    # one launch per replay; only the eager kernel counts for the short-kernel share
    assert rows(con, """SELECT kernels, launches, graphed_kernels, eager_kernels, short_kernel_pct
                        FROM kernel_launch_summary""") == [(7, 3, 6, 1, 100.0)]
    assert rows(con, "SELECT DISTINCT replay_kernels FROM kernel_launches WHERE is_graph") == [(3,)]


def test_graph_level_replays(con):
    # nsys --cuda-graph-trace=graph: a replay is one graph_executions row, its kernels are unknown
    given(con, "api_calls", API, [("t", 1, 11, 4, 100, 130, 30, "cudaGraphLaunch_v10000")])
    given(con, "graph_executions", ["trace_id", "pid", "device_id", "stream_id", "correlation_id", "start_ns",
                                    "end_ns", "duration_ns", "graph_id", "graph_exec_id"],
          [("t", 1, 0, 7, 4, 150, 200, 50, 1, 2)])
    load_sql(con, "analysis/graph_replays.sql")
    assert rows(con, """SELECT graph_id, graph_exec_id, replays, kernels_per_replay, ops_per_replay, total_gpu_ns
                        FROM graph_replays""") == [(1, 2, 1, None, 1.0, 50)]
    assert rows(con, "SELECT category, name FROM gpu_ops") == [("graph", "[CUDA graph 2]")]
