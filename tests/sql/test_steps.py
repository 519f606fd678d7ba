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


PYTHON_FRAME = ["trace_id", "frame_id", "pid", "tid", "start_ns", "end_ns", "name", "function"]
SCHEDULER = "/usr/lib/python3/site-packages/sglang/srt/managers/scheduler.py(1201): "


def _layers(n: int, period_ns: int = 16_000) -> list[tuple]:
    """Kernels of one decode iteration: n layers of the same two kernels, one layer per period."""
    return [k for i in range(n) for k in (("t", 1, 0, 7, 1_000 + i * period_ns, 6_000 + i * period_ns, "attn"),
                                          ("t", 1, 0, 7, 7_000 + i * period_ns, 15_000 + i * period_ns, "mlp"))]


def _one_range(con, name: str) -> list[tuple]:
    given(con, "traces", ["trace_id", "end_ns"], [("t", 500_000)])
    given(con, "annotations", ANNOTATION, [("t", 1, 1, 11, 0, 474_000, name, "user_annotation", False)])
    given(con, "kernels", KERNEL, _layers(28))
    load_sql(con, "analysis/steps.sql")
    return rows(con, "SELECT step, step_rule, start_ns, end_ns FROM steps ORDER BY start_ns")


def test_one_serving_iteration_is_one_step_not_its_layers(con):
    assert _one_range(con, "step[DECODE bs=32]") == [("step[DECODE bs=32]", "sglang", 0, 474_000)]


def test_one_profiler_step_of_layers_still_gives_the_periods(con):
    """The control of the test above: the same kernels in one ProfilerStep are cut into periods."""
    got = _one_range(con, "ProfilerStep#1")
    assert len(got) >= 3 and {r[1] for r in got} == {"periodicity"}


def test_serving_engine_range_names(con):
    """An SGLang trace ('s') and a vLLM one ('v'), each with its engine's names of two iterations."""
    given(con, "traces", ["trace_id", "end_ns"], [("s", 10_000), ("v", 10_000)])
    names = {1: "step[EXTEND bs=2 toks=107]", 2: "step[DECODE bs=2]",
             3: "execute_1_context_3(sq128sk256sqsq1sqsk1)_generation_2(sq1sk300sqsq1sqsk1)",
             4: "execute_2_context_0()_generation_2(sq1sk301sqsq1sqsk1)"}
    given(con, "annotations", ANNOTATION, [("s" if i < 3 else "v", i, 1, 11, i * 1_000, i * 1_000 + 500, name,
                                            "user_annotation", False) for i, name in names.items()])
    load_sql(con, "analysis/steps.sql")
    assert rows(con, "SELECT trace_id, step, step_rule FROM steps ORDER BY start_ns") == [
        ("s", names[1], "sglang"), ("s", names[2], "sglang"), ("v", names[3], "vllm"), ("v", names[4], "vllm")]


def test_sglang_scheduler_frames_outermost_only(con):
    given(con, "traces", ["trace_id", "end_ns"], [("t", 10_000)])
    given(con, "python_frames", PYTHON_FRAME, [
        ("t", 1, 1, 11, 0, 900, SCHEDULER + "_run_batch_inner", "_run_batch_inner"),  # a build without run_batch
        ("t", 2, 1, 11, 1_000, 1_900, SCHEDULER + "_run_batch_inner", "_run_batch_inner"),
        ("t", 3, 2, 21, 0, 900, SCHEDULER + "run_batch", "run_batch"),                # run_batch encloses the inner
        ("t", 4, 2, 21, 10, 800, SCHEDULER + "_run_batch_inner", "_run_batch_inner"),
        ("t", 5, 2, 21, 1_000, 1_900, SCHEDULER + "run_batch", "run_batch"),
    ])
    load_sql(con, "analysis/steps.sql")
    assert rows(con, "SELECT pid, start_ns, end_ns, step_rule FROM steps ORDER BY pid, start_ns") == [
        (1, 0, 900, "sglang"), (1, 1_000, 1_900, "sglang"), (2, 0, 900, "sglang"), (2, 1_000, 1_900, "sglang")]


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
