"""sql/analysis/op_efficiency.sql and mfu.sql: rates, roofline placement against gpu_peaks, and
NULL roofs (never a guess) for a GPU the table does not know."""

from __future__ import annotations

import pytest

from .conftest import given, load_sql, rows
from .op_rows import BF, F32, op, trace

STEP = ("t", 1, 1, 1, 0, 1_000_000, "ProfilerStep#1", "user_annotation", False)
ANNOTATION = ["trace_id", "annotation_id", "pid", "tid", "start_ns", "end_ns", "name", "kind", "is_gpu"]


def test_compute_bound_gemm_on_an_h100(con):
    trace(con)
    given(con, "annotations", ANNOTATION, [STEP])
    # 4096^3 bf16 mm in 200 us: AI 1365 FLOP/byte > ridge 989.5 / 3.35 = 295
    op(con, 1, "aten::mm", [[4096, 4096], [4096, 4096]], [BF, BF], kernel_ns=200_000)
    load_sql(con, "analysis/op_efficiency.sql")
    flops, bytes_ = 2 * 4096**3, 3 * 4096 * 4096 * 2
    (row,) = rows(con, """SELECT step, gpu, precision, device_ns, achieved_tflops, achieved_tbps,
                                 arithmetic_intensity, peak_tflops, peak_tbps, bound, roof_ns, roof_pct
                          FROM op_efficiency""")
    assert row[:4] == ("ProfilerStep#1", "H100 SXM5 80GB", "bf16", 200_000)
    # FLOP/ns = GFLOP/s; / 1e3 = TFLOP/s
    assert row[4:9] == pytest.approx((flops / 200_000 / 1e3, bytes_ / 200_000 / 1e3, flops / bytes_, 989.5, 3.35))
    assert row[9] == "compute"
    assert row[10:] == pytest.approx((flops / 989.5e3, 100 * flops / 989.5e3 / 200_000))


def test_memory_bound_and_tf32(con):
    trace(con)
    op(con, 1, "aten::add", [[1024, 1024], [1024, 1024], []], [BF, BF, "Scalar"], kernel_ns=5_000)
    op(con, 2, "aten::mm", [[64, 64], [64, 64]], [F32, F32], kernel="sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n")
    op(con, 3, "aten::mm", [[64, 64], [64, 64]], [F32, F32], kernel="ampere_sgemm_64x64_nn")
    load_sql(con, "analysis/op_efficiency.sql")
    got = rows(con, "SELECT op_id, precision, peak_tflops, bound, roof_pct FROM op_efficiency ORDER BY op_id")
    bytes_ = 3 * 1024 * 1024 * 2
    assert got[0][:4] == (1, "bf16", 989.5, "memory") and got[0][4] == pytest.approx(100 * bytes_ / 3.35e3 / 5_000)
    assert [g[:3] for g in got[1:]] == [(2, "tf32", 494.5), (3, "fp32", 67.0)]


def test_gpu_missing_from_the_table_gives_null_roofs(con):
    trace(con, "Mystery Accelerator 9000")
    given(con, "annotations", ANNOTATION, [STEP])
    op(con, 1, "aten::mm", [[64, 64], [64, 64]], [BF, BF])
    load_sql(con, "analysis/mfu.sql")
    (row,) = rows(con, "SELECT gpu, flops, achieved_tflops, peak_tflops, peak_tbps, bound, roof_ns, roof_pct "
                       "FROM op_efficiency")
    assert row[1:3] == (2 * 64**3, 2 * 64**3 / 1000 / 1e3)
    assert row[:1] + row[3:] == (None, None, None, None, None, None)
    assert rows(con, "SELECT step, flops, mfu_pct, peak_tflops FROM mfu") == [("ProfilerStep#1", 2 * 64**3, None, None)]


def test_mfu_counts_every_call_at_the_precision_the_model_intends(con):
    """One peak per trace: the precision holding most of the modelled FLOPs (bf16 here), so that an
    fp32 GEMM taking longer lowers MFU instead of raising it through a lower peak."""
    trace(con)
    given(con, "annotations", ANNOTATION, [STEP])
    op(con, 1, "aten::mm", [[1000, 1000], [1000, 1000]], [BF, BF])   # 2e9 FLOPs in bf16
    op(con, 2, "aten::mm", [[500, 1000], [1000, 1000]], [F32, F32])  # 1e9 FLOPs in fp32
    op(con, 3, "aten::add", [[10], [10], []], [BF, BF, "Scalar"])     # no FLOPs model
    load_sql(con, "analysis/mfu.sql")
    (row,) = rows(con, """SELECT wall_ns, flops, achieved_tflops, peak_precision, peak_tflops, mfu_pct, flops_device_ns
                          FROM mfu""")
    assert row == pytest.approx((1_000_000, 3e9, 3e9 / 1e6 / 1e3, "bf16", 989.5, 100 * 3e9 / (1e6 * 989.5e3), 2000))
    (cov,) = rows(con, "SELECT gpu_ns, modelled_ns, flops_modelled_ns, coverage_pct, has_shapes FROM model_coverage")
    assert cov == (3000, 3000, 2000, 100.0, True)


def test_without_shapes_the_numbers_are_null_not_zero(con):
    trace(con)
    given(con, "annotations", ANNOTATION, [STEP])
    given(con, "cpu_ops", ["trace_id", "op_id", "start_ns", "end_ns", "duration_ns", "pid", "tid", "name", "external_id",
                           "args_json"], [("t", 1, 100, 900, 800, 1, 1, "aten::mm", 1, '{"External id": 1}')])
    given(con, "kernels", ["trace_id", "start_ns", "end_ns", "duration_ns", "device_id", "pid", "tid", "external_id",
                           "name"], [("t", 200, 700, 500, 0, 1, 1, 1, "gemm")])
    load_sql(con, "analysis/mfu.sql")
    assert rows(con, "SELECT flops, mfu_pct, flops_device_ns FROM mfu") == [(None, None, None)]
    assert rows(con, "SELECT gpu_ns, modelled_ns, coverage_pct, has_shapes FROM model_coverage") == [
        (500, None, None, False)]


def test_summary_per_shapes(con):
    trace(con)
    op(con, 1, "aten::mm", [[4096, 4096], [4096, 4096]], [BF, BF], kernel_ns=200_000)
    op(con, 2, "aten::mm", [[4096, 4096], [4096, 4096]], [BF, BF], kernel_ns=300_000)
    op(con, 3, "aten::add", [[1024, 1024], [1024, 1024], []], [BF, BF, "Scalar"], kernel_ns=5_000)
    load_sql(con, "analysis/op_efficiency_summary.sql")
    got = rows(con, """SELECT name, calls, flops, bytes, device_ns, arithmetic_intensity, bound, gpu
                       FROM op_efficiency_summary ORDER BY name""")
    flops, bytes_ = 2 * 4096**3, 3 * 4096 * 4096 * 2
    assert got[0] == ("aten::add", 1, None, 3 * 1024 * 1024 * 2, 5_000, None, "memory", "H100 SXM5 80GB")
    assert got[1][:5] == ("aten::mm", 2, flops, bytes_, 500_000) and got[1][6:] == ("compute", "H100 SXM5 80GB")
    assert got[1][5] == pytest.approx(flops / bytes_)
