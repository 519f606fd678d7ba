"""gpu_gap_causes (sql/analysis/largest_gpu_gaps.sql): what the launching thread was doing when a GPU gap began."""

from __future__ import annotations

from .conftest import given, load_sql, rows

KERNEL = ["trace_id", "pid", "device_id", "stream_id", "start_ns", "end_ns", "correlation_id", "name"]
API = ["trace_id", "pid", "tid", "start_ns", "end_ns", "correlation_id", "name", "api"]
US = 1_000


def _gap(con):
    # a 150 us gap from 100 us; the kernel that ends it was launched at 240 us by thread 11
    given(con, "kernels", KERNEL, [("t", 1, 0, 7, 1 * US, 100 * US, 1, "a"), ("t", 1, 0, 7, 250 * US, 260 * US, 2, "b")])
    given(con, "api_calls", API, [("t", 1, 11, 240 * US, 245 * US, 2, "cudaLaunchKernel", "runtime")])


def test_the_innermost_range_still_running_at_the_gap_start(con):
    _gap(con)
    # the last operator to start before the gap had ended by then; the ranges around it still ran
    given(con, "cpu_ops", ["trace_id", "op_id", "pid", "tid", "start_ns", "end_ns", "name", "parent_op_id"], [
        ("t", 1, 1, 11, 20 * US, 90 * US, "aten::_foreach_add_", None),
        ("t", 2, 1, 11, 300 * US, 310 * US, "aten::zero_", None)])  # later: not running then
    given(con, "annotations", ["trace_id", "annotation_id", "pid", "tid", "start_ns", "end_ns", "name", "is_gpu",
                               "parent_id"], [
        ("t", 1, 1, 11, 0, 400 * US, "ProfilerStep#2", False, None),
        ("t", 2, 1, 11, 10 * US, 150 * US, "Optimizer.step#SGD.step", False, 1),
        ("t", 3, 1, 11, 12 * US, 60 * US, "inner", False, 2),  # ended: the walk goes out past it
        ("t", 4, 1, 11, 15 * US, 500 * US, "Optimizer.step#SGD.step", True, None)])  # a GPU range: not the host
    load_sql(con, "analysis/largest_gpu_gaps.sql")
    assert rows(con, "SELECT start_ns, cause, host_activity FROM gpu_gap_causes") == [
        (100 * US, "host_wait", "Optimizer.step#SGD.step")]


def test_nothing_running_gives_null(con):
    _gap(con)
    given(con, "cpu_ops", ["trace_id", "op_id", "pid", "tid", "start_ns", "end_ns", "name", "parent_op_id"], [
        ("t", 1, 1, 11, 20 * US, 90 * US, "aten::add", None)])
    load_sql(con, "analysis/largest_gpu_gaps.sql")
    assert rows(con, "SELECT host_activity FROM gpu_gap_causes") == [(None,)]


def _two_gaps(con):
    # the same 150 us gap on GPUs 0 and 1, ended by kernels that threads 11 and 12 launched at 240 us
    given(con, "kernels", KERNEL, [
        ("t", 1, 0, 7, 1 * US, 100 * US, 1, "a"), ("t", 1, 0, 7, 250 * US, 260 * US, 2, "b"),
        ("t", 1, 1, 7, 1 * US, 100 * US, 3, "a"), ("t", 1, 1, 7, 250 * US, 260 * US, 4, "b")])
    given(con, "api_calls", API, [("t", 1, 11, 240 * US, 245 * US, 2, "cudaLaunchKernel", "runtime"),
                                  ("t", 1, 12, 240 * US, 245 * US, 4, "cudaLaunchKernel", "runtime")])


def test_of_operators_starting_together_the_innermost(con):
    # aten::linear calls aten::t in the same ns (microsecond clocks): both still run at the gap start.
    # Stored parent first on thread 11 and child first on thread 12: a join on the start alone
    # took the first or the last stored, wrong on one of the two.
    _two_gaps(con)
    op = ["trace_id", "op_id", "pid", "tid", "start_ns", "end_ns", "name", "parent_op_id", "depth"]
    given(con, "cpu_ops", op, [("t", 1, 1, 11, 50 * US, 200 * US, "aten::linear", None, 0),
                               ("t", 2, 1, 11, 50 * US, 150 * US, "aten::t", 1, 1),
                               ("t", 4, 1, 12, 50 * US, 150 * US, "aten::t", 3, 1),
                               ("t", 3, 1, 12, 50 * US, 200 * US, "aten::linear", None, 0)])
    load_sql(con, "analysis/largest_gpu_gaps.sql")
    assert rows(con, "SELECT device_id, host_activity FROM gpu_gap_causes ORDER BY device_id") == [
        (0, "aten::t"), (1, "aten::t")]


def test_of_api_calls_starting_together_the_one_still_running(con):
    # a zero-length call and a synchronize start in the same ns; only the synchronize runs at the gap start
    _two_gaps(con)
    given(con, "api_calls", API, [("t", 1, 11, 50 * US, 200 * US, 10, "cudaStreamSynchronize", "runtime"),
                                  ("t", 1, 11, 50 * US, 50 * US, 11, "cudaPeekAtLastError", "runtime"),
                                  ("t", 1, 12, 50 * US, 50 * US, 13, "cudaPeekAtLastError", "runtime"),
                                  ("t", 1, 12, 50 * US, 200 * US, 12, "cudaStreamSynchronize", "runtime")])
    load_sql(con, "analysis/largest_gpu_gaps.sql")
    assert rows(con, "SELECT device_id, host_activity FROM gpu_gap_causes ORDER BY device_id") == [
        (0, "cudaStreamSynchronize"), (1, "cudaStreamSynchronize")]
