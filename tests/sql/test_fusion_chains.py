"""sql/analysis/fusion_*.sql: chains of fusable kernels between barriers, their bytes now and fused,
the trace's own bandwidth and launch cost, and identical chains grouped per step."""

from __future__ import annotations

import pytest

from .conftest import given, load_sql, rows
from .op_rows import F32, KERNEL, op, trace

ANNOTATION = ["trace_id", "annotation_id", "pid", "tid", "start_ns", "end_ns", "name", "kind", "is_gpu"]
API = ["trace_id", "pid", "tid", "correlation_id", "start_ns", "end_ns", "duration_ns", "name", "api"]
M = [[1000, 1000], [1000, 1000]]
X = [1000, 1000]


def call(con, op_id, name, dims, types, kernel_ns, stream=7, concrete=None):
    """An operator call with one kernel on `stream`, launched by a cudaLaunchKernel inside the call."""
    op(con, op_id, name, dims, types, concrete=concrete, kernel_ns=0)
    start = op_id * 10_000
    given(con, "kernels", KERNEL, [("t", start + 100, start + 100 + kernel_ns, kernel_ns, 0, stream, 1, 1,
                                    op_id, op_id, name + "_kernel")])
    given(con, "api_calls", API, [("t", 1, 1, op_id, start + 10, start + 20, 10, "cudaLaunchKernel", "runtime")])


def steps(con, *bounds):
    given(con, "annotations", ANNOTATION, [("t", i, 1, 1, a, b, f"ProfilerStep#{i}", "user_annotation", False)
                                           for i, (a, b) in enumerate(bounds, 1)])


def layer(con, first_id):
    """mm | add(x, y) > relu | mm: the add reads 12 MB in 6 us and the relu 8 MB in 4 us (2 TB/s)."""
    call(con, first_id, "aten::mm", M, [F32, F32], 1_000)
    call(con, first_id + 1, "aten::add", [X, X, []], [F32, F32, "Scalar"], 6_000)
    call(con, first_id + 2, "aten::relu", [X], [F32], 4_000)


def test_chains_between_barriers_grouped_per_step(con):
    trace(con)
    steps(con, (5_000, 61_000), (75_000, 131_000))  # the launches of calls 1-6 and 8-13
    layer(con, 1)
    layer(con, 4)
    call(con, 7, "aten::mm", M, [F32, F32], 1_000)
    layer(con, 8)
    layer(con, 11)
    load_sql(con, "analysis/fusion_candidates.sql")
    load_sql(con, "analysis/findings_fusion.sql")
    assert rows(con, "SELECT stream_tbps, streaming_calls, launch_ns FROM fusion_rates") == [(2.0, 8, 1000)]
    got = rows(con, """SELECT step, operators, kernels, device_ns, bytes_now, bytes_fused, fused_ns, saved_ns,
                              launches_saved FROM fusion_chains ORDER BY start_ns""")
    # fused: x and y read once (8 MB), the relu's output written (4 MB); the add's output is the
    # relu's input (same shape and dtype): an intermediate. 12 MB at 2 TB/s + one launch of 1 us.
    one = ("aten::add > aten::relu", 2, 10_000, 12_000_000 + 8_000_000, 12_000_000, 7_000, 3_000, 1)
    assert got == [("ProfilerStep#1", *one)] * 2 + [("ProfilerStep#2", *one)] * 2
    assert rows(con, """SELECT rank, operators, instances, steps, per_step, saved_ns, saved_ns_per_step,
                               launches_saved_per_step FROM fusion_candidates""") == [
        (1, "aten::add > aten::relu", 4, 2, 2.0, 3_000, 6_000, 2.0)]
    assert rows(con, "SELECT step, step_ns, chains, kernels, saved_ns, saved_pct FROM fusion_summary ORDER BY step") == [
        ("ProfilerStep#1", 56_000, 2, 4, 6_000, pytest.approx(100 * 6 / 56)),
        ("ProfilerStep#2", 56_000, 2, 4, 6_000, pytest.approx(100 * 6 / 56))]
    (finding,) = rows(con, "SELECT rule, severity, duration_ns, evidence FROM finding_fusion")
    assert finding[:3] == ("fusion", "info", 6_000)
    assert "10.7 % of the step" in finding[3] and "2 times per step" in finding[3]


def test_no_chain_across_a_stream_a_barrier_or_a_random_number_operator(con):
    trace(con)
    steps(con, (0, 100_000))
    call(con, 1, "aten::add", [X, X, []], [F32, F32, "Scalar"], 6_000)
    call(con, 2, "aten::relu", [X], [F32], 4_000, stream=8)                 # another stream
    call(con, 3, "aten::mm", M, [F32, F32], 1_000)                          # a GEMM
    call(con, 4, "aten::relu", [X], [F32], 4_000)
    call(con, 5, "aten::native_dropout", [X, [], []], [F32, "Scalar", "Scalar"], 4_000)  # random numbers
    call(con, 6, "aten::relu", [X], [F32], 4_000)
    load_sql(con, "analysis/fusion_chains.sql")
    assert rows(con, "SELECT kind, count(*) FROM fusion_kernels GROUP BY ALL ORDER BY 1") == [
        ("barrier", 2), ("memory", 4)]
    assert rows(con, "SELECT count(*) FROM fusion_chains") == [(0,)]


def test_batch_statistics_read_their_inputs_twice(con):
    trace(con)
    steps(con, (0, 100_000))
    x, c = [8, 4, 100, 100], [4]
    call(con, 1, "aten::batch_norm", [x, c, c, c, c, [], [], [], []], [F32] * 5 + ["", "Scalar", "Scalar", ""],
         5_000, concrete=["", "", "", "", "", "True", "0.1", "1e-05", "True"])
    call(con, 2, "aten::relu", [x], [F32], 1_280)  # 2.56 MB in 1.28 us: 2 TB/s
    load_sql(con, "analysis/fusion_chains.sql")
    x_bytes = 8 * 4 * 100 * 100 * 4
    # now: the norm reads x and 4 vectors and writes x; the relu reads and writes x.
    # fused: x and the vectors read twice (statistics, then normalize), the relu's output written once.
    (got,) = rows(con, "SELECT bytes_now, bytes_fused, fused_ns, saved_ns FROM fusion_chains")
    assert got[:2] == (2 * x_bytes + 64 + 2 * x_bytes, 2 * (x_bytes + 64) + x_bytes)
    assert got[2:] == pytest.approx((got[1] / 2e3 + 1_280, 6_280 - got[1] / 2e3 - 1_280), abs=1)


def test_a_chain_without_dtypes_has_no_prediction(con):
    trace(con)
    steps(con, (0, 100_000))
    call(con, 1, "aten::add", [X, X, []], [], 6_000)
    call(con, 2, "aten::relu", [X], [], 4_000)
    load_sql(con, "analysis/fusion_chains.sql")
    assert rows(con, "SELECT operators, device_ns, bytes_now, bytes_fused, fused_ns, saved_ns FROM fusion_chains") == [
        ("aten::add > aten::relu", 10_000, None, None, None, None)]
