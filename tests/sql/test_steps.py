"""sql/analysis/steps.sql: per training step, what the GPU did inside the step's time window."""

from __future__ import annotations

from .conftest import given, load_sql, rows

ANNOTATION = ["trace_id", "annotation_id", "pid", "tid", "start_ns", "end_ns", "name", "kind", "is_gpu"]
KERNEL = ["trace_id", "pid", "device_id", "stream_id", "start_ns", "end_ns", "name"]
COLUMNS = """step, step_index, start_ns, end_ns, wall_ns, gpu_busy_ns, gpu_idle_ns, gpu_idle_pct, compute_ns,
             communication_ns, memcpy_ns, dataloader_ns"""


def test_empty(con):
    load_sql(con, "analysis/steps.sql")
    assert rows(con, "SELECT * FROM steps") == []


def test_steps(con):
    given(con, "traces", ["trace_id", "end_ns"], [("t", 5_000)])
    given(con, "annotations", ANNOTATION, [
        (("t", 1, 1, 11, 0, 1_000, "ProfilerStep#1", "user_annotation", False)),
        (("t", 2, 1, 11, 1_000, 2_000, "ProfilerStep#2", "user_annotation", False)),
        (("t", 3, 1, 11, 100, 200, "forward", "user_annotation", False)),  # not a step
        (("t", 4, 1, 11, 2_000, 2_500, "step 3", "push_pop", False)),     # NVTX ':step 3'
    ])
    given(con, "kernels", KERNEL, [
        ("t", 1, 0, 7, 900, 1_100, "gemm"),                  # split over steps 1 and 2
        ("t", 1, 0, 8, 1_200, 1_300, "ncclKernel_AllReduce"),
        ("t", 2, 0, 7, 1_300, 1_400, "gemm"),                # another process
    ])
    given(con, "memcpy", ["trace_id", "pid", "device_id", "stream_id", "start_ns", "end_ns"], [
        ("t", 1, 0, 9, 1_250, 1_500)])
    given(con, "cpu_ops", ["trace_id", "op_id", "pid", "tid", "start_ns", "end_ns", "name"], [
        ("t", 1, 1, 11, 0, 200, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__")])
    load_sql(con, "analysis/steps.sql")
    assert rows(con, f"SELECT {COLUMNS} FROM steps ORDER BY start_ns") == [
        ("ProfilerStep#1", 0, 0, 1_000, 1_000, 100, 900, 90.0, 100, 0, 0, 200),
        ("ProfilerStep#2", 1, 1_000, 2_000, 1_000, 400, 600, 60.0, 100, 100, 250, 0),
        (":step 3", 2, 2_000, 2_500, 500, 0, 500, 100.0, 0, 0, 0, 0),
    ]
    assert rows(con, "SELECT step FROM steps_matching('^forward$')") == [("forward",)]
