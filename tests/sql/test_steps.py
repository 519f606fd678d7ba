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
    # the gemm (no launch call: placed by its start) belongs to step 1 and runs until 1_100: step 1
    # costs until then and step 2 starts there (GPU-defined); the DataLoader time counts in the host range
    assert rows(con, f"SELECT {COLUMNS}, host_start_ns, host_end_ns, step_time_basis FROM steps ORDER BY start_ns") == [
        ("ProfilerStep#1", 0, 0, 1_100, 1_100, 200, 900, 900 / 11, 200, 0, 0, 200, 0, 1_000, "host"),
        ("ProfilerStep#2", 1, 1_100, 2_000, 900, 300, 600, 200 / 3, 0, 100, 250, 0, 1_000, 2_000, "gpu"),
        (":step 3", 2, 2_000, 2_500, 500, 0, 500, 100.0, 0, 0, 0, 0, 2_000, 2_500, "host"),
    ]
    assert rows(con, "SELECT step FROM steps_matching('^forward$')") == [("forward",)]


API = ["trace_id", "pid", "tid", "start_ns", "end_ns", "correlation_id", "name"]


def test_host_running_ahead_gives_gpu_windows(con):
    # three steps whose host ranges last 100 ns each launch 1_000 ns of GPU work (step 2 as one graph
    # replay of two kernels sharing the launch's correlation id): the GPU, not the host, sets the period
    given(con, "traces", ["trace_id", "end_ns"], [("t", 5_000)])
    given(con, "annotations", ANNOTATION, [
        ("t", i + 1, 1, 11, 100 * i, 100 * i + 100, f"ProfilerStep#{i}", "user_annotation", False) for i in range(3)])
    given(con, "api_calls", API, [("t", 1, 11, 100 * i + 10, 100 * i + 20, i + 1, "cudaLaunchKernel") for i in range(2)]
          + [("t", 1, 11, 210, 220, 3, "cudaGraphLaunch")])
    given(con, "kernels", KERNEL + ["correlation_id"], [
        ("t", 1, 0, 7, 50, 1_050, "k0", 1), ("t", 1, 0, 7, 1_050, 2_050, "k1", 2),
        ("t", 1, 0, 7, 2_050, 2_550, "g0", 3), ("t", 1, 0, 7, 2_550, 3_050, "g1", 3)])
    load_sql(con, "analysis/steps.sql")
    assert rows(con, """SELECT start_ns, end_ns, wall_ns, gpu_idle_ns, host_start_ns, host_end_ns, host_wall_ns,
                               step_time_basis FROM steps ORDER BY step_index""") == [
        (0, 1_050, 1_050, 50, 0, 100, 100, "host"),
        (1_050, 2_050, 1_000, 0, 100, 200, 100, "gpu"),
        (2_050, 3_050, 1_000, 0, 200, 300, 100, "gpu"),
    ]


def test_work_of_the_previous_step_still_running_delays_the_start(con):
    # step 1 launches nothing; the GPU is busy with step 0's work until 500: step 1 starts then,
    # and step 0's window ends there
    given(con, "traces", ["trace_id", "end_ns"], [("t", 5_000)])
    given(con, "annotations", ANNOTATION, [
        ("t", 1, 1, 11, 0, 100, "ProfilerStep#0", "user_annotation", False),
        ("t", 2, 1, 11, 200, 300, "ProfilerStep#1", "user_annotation", False),
        ("t", 3, 1, 11, 800, 900, "ProfilerStep#2", "user_annotation", False)])
    given(con, "api_calls", API, [("t", 1, 11, 10, 20, 1, "cudaLaunchKernel")])
    given(con, "kernels", KERNEL + ["correlation_id"], [("t", 1, 0, 7, 30, 500, "k0", 1)])
    load_sql(con, "analysis/steps.sql")
    # step 2's host start is after the GPU drained: host-defined, and step 1 keeps its host end
    assert rows(con, "SELECT start_ns, end_ns, step_time_basis FROM steps ORDER BY step_index") == [
        (0, 500, "host"), (500, 500, "gpu"), (800, 900, "host")]
