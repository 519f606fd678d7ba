"""sql/analysis/op_models.sql: FLOPs (FlopCounterMode's convention) and bytes per call, one
hand-computed case per formula; which calls count (outermost; autocast's inner call)."""

from __future__ import annotations

import pytest

from .conftest import given, load_sql, rows
from .op_rows import BF, F8, F32, HALF, NVTX, W, X, conv_chain, nvtx_range, op, trace

CASES = [
    # name, dims, types, concrete, flops, bytes
    ("aten::mm", [[3, 5], [5, 7]], [BF, BF], None, 2 * 3 * 7 * 5, (15 + 35 + 21) * 2),
    ("aten::addmm", [[7], [3, 5], [5, 7], [], []], [HALF, HALF, HALF, "Scalar", "Scalar"], None,
     2 * 3 * 7 * 5, (7 + 15 + 35 + 21) * 2),  # FlopCounterMode leaves the bias add out
    ("aten::bmm", [[2, 3, 5], [2, 5, 7]], [F32, F32], None, 2 * 2 * 3 * 7 * 5, (30 + 70 + 42) * 4),
    ("aten::baddbmm", [[2, 3, 7], [2, 3, 5], [2, 5, 7], [], []], [BF, BF, BF, "Scalar", "Scalar"], None,
     2 * 2 * 3 * 7 * 5, (42 + 30 + 70 + 42) * 2),
    ("aten::_scaled_mm", [[16, 32], [32, 8], [], [], [], [], [], []], [F8, F8, F32, F32, "", "", "Scalar", "Scalar"],
     None, 2 * 16 * 8 * 32, 16 * 32 + 32 * 8 + 16 * 8 * 2),
    # groups 2, stride 2, padding 1, dilation 2: out = (9 + 2 - 2 * 2 - 1) // 2 + 1 = 4
    ("aten::convolution", [[2, 4, 9, 9], [6, 2, 3, 3], [6], [], [], [], [], [], []],
     [BF, BF, BF, "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"],
     ["", "", "", "[2, 2]", "[1, 1]", "[2, 2]", "False", "[0, 0]", "2"],
     2 * 2 * (4 * 4) * (6 * 2 * 3 * 3), (648 + 108 + 6 + 2 * 6 * 16) * 2),
    # transposed: FLOPs over input positions; out = (5 - 1) * 2 - 2 + (3 - 1) + 1 + 1 = 10
    ("aten::convolution", [[1, 4, 5, 5], [4, 3, 3, 3], [], [], [], [], [], [], []],
     [F32, F32, "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"],
     ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "True", "[1, 1]", "1"],
     2 * 1 * 25 * (4 * 3 * 3 * 3), (100 + 108 + 3 * 100) * 4),
    # backward of the grouped conv: grad_input as the forward; grad_weight 2 N C_in C_out k positions
    # (FlopCounterMode's formula ignores groups there)
    ("aten::convolution_backward", [[2, 6, 4, 4], [2, 4, 9, 9], [6, 2, 3, 3], [], [], [], [], [], [], [], []],
     [BF, BF, BF, "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar",
      "ScalarList"],
     ["", "", "", "[6]", "[2, 2]", "[1, 1]", "[2, 2]", "False", "[0, 0]", "2", "[True, True, True]"],
     2 * 2 * 16 * (6 * 2 * 9) + 2 * 2 * 4 * 6 * 9 * 16, 2 * (192 + 108 + 648) * 2),
    # only grad_input asked for
    ("aten::convolution_backward", [[2, 6, 4, 4], [2, 4, 9, 9], [6, 2, 3, 3], [], [], [], [], [], [], [], []],
     [BF, BF, BF, "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar",
      "ScalarList"],
     ["", "", "", "[6]", "[2, 2]", "[1, 1]", "[2, 2]", "False", "[0, 0]", "2", "[True, False, False]"],
     2 * 2 * 16 * (6 * 2 * 9), (192 + 108 + 648) * 2),
    # GQA (8 query heads, 2 key/value heads), causal; FLOPs with the query's heads, not halved
    ("aten::_scaled_dot_product_flash_attention", [[2, 8, 16, 32], [2, 2, 16, 32], [2, 2, 16, 32], [], [], [], []],
     [BF, BF, BF, "Scalar", "Scalar", "Scalar", ""], ["", "", "", "0.", "True", "False", ""],
     2 * 2 * 8 * 16 * 16 * (32 + 32), (8192 + 2048 + 2048 + 2 * 8 * 16 * 32) * 2),
    # backward: recompute QK^T, dP, dV, dQ, dK = 2 B H Sq Sk (3 Dqk + 2 Dv)
    ("aten::_scaled_dot_product_efficient_attention_backward",
     [[1, 2, 8, 8], [1, 2, 8, 16], [1, 2, 4, 16], [1, 2, 4, 8], [], [], [], [], [], [], [], [], []],
     [HALF, HALF, HALF, HALF, "", "", "", "", "", "Scalar", "", "Scalar", ""],
     None, 2 * 1 * 2 * 8 * 4 * (3 * 16 + 2 * 8), (2 * 128 + 2 * (256 + 128 + 64)) * 2),
    # bytes only: every tensor input once, and an output the size of the largest (not for reductions)
    ("aten::native_layer_norm", [[4, 10], [], [10], [10], []], [F32, "ScalarList", F32, F32, "Scalar"], None,
     None, (40 + 10 + 10) * 4 + 40 * 4),
    ("aten::_softmax", [[4, 10], [], []], [BF, "Scalar", "Scalar"], None, None, 80 + 80),
    ("aten::add", [[4, 10], [10], []], [BF, BF, "Scalar"], None, None, 80 + 20 + 80),
    ("aten::sum", [[4, 10], [], [], []], [F32, "ScalarList", "Scalar", ""], None, None, 160),
]


@pytest.mark.parametrize("name,dims,types,concrete,flops,bytes_", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_formula_by_hand(con, name, dims, types, concrete, flops, bytes_):
    trace(con)
    op(con, 1, name, dims, types, concrete)
    load_sql(con, "analysis/op_models.sql")
    assert rows(con, "SELECT flops, bytes FROM op_models") == [(flops, bytes_)]


def test_causal_flag_and_precision(con):
    trace(con)
    op(con, 1, "aten::_scaled_dot_product_cudnn_attention", [[1, 2, 8, 16]] * 3 + [[]] * 6,
       [BF] * 3 + [""] * 6, ["", "", "", "", "True", "0.", "True", "False", ""])
    op(con, 2, "aten::_scaled_mm", [[16, 32], [32, 8]], [F8, F8])
    load_sql(con, "analysis/op_models.sql")
    assert rows(con, "SELECT op_id, precision, is_causal FROM op_models ORDER BY op_id") == [
        (1, "bf16", True), (2, "fp8", None)]


def test_outermost_call_counts_and_autocast_wrapper_gives_way(con):
    trace(con)
    # aten::convolution > aten::_convolution > aten::cudnn_convolution: the outer one counts
    conv = ([[1, 2, 8, 8], [4, 2, 3, 3], [], [], [], [], [], [], []],
            [BF, BF, "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"],
            ["", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"])
    op(con, 1, "aten::convolution", *conv, start=0, end=1000, kernel_ns=0)
    op(con, 2, "aten::_convolution", *conv, start=100, end=900, parent=1, kernel_ns=0)
    # autocast: aten::addmm with fp32 inputs holds the casts and aten::addmm with bf16 inputs,
    # which counts (FlopCounterMode sees that one)
    op(con, 4, "aten::addmm", [[8], [4, 16], [16, 8], [], []], [F32, F32, F32, "Scalar", "Scalar"],
       start=2000, end=3000, kernel_ns=0)
    op(con, 5, "aten::addmm", [[8], [4, 16], [16, 8], [], []], [BF, BF, BF, "Scalar", "Scalar"],
       start=2500, end=2900, parent=4, kernel_ns=0)
    # composites have no model of their own
    op(con, 6, "aten::linear", [[4, 16], [8, 16], []], [BF, BF, ""], start=4000, end=4100, kernel_ns=0)
    load_sql(con, "analysis/op_models.sql")
    assert rows(con, "SELECT op_id, name, dtype, flops FROM op_models ORDER BY op_id") == [
        (1, "aten::convolution", BF, 2 * 1 * 36 * 72), (5, "aten::addmm", BF, 2 * 4 * 8 * 16)]


def test_nvtx_ranges_have_shapes_but_no_dtypes(con):
    # and no kernels here to read a dtype from
    given_ranges = [
        ("t", 1, 1, 5, 0, 100, "aten::mm, seq = 3, op_id = 17, sizes = [[4, 6], [6, 5]], input_op_ids = [(1,0), (2,0)]",
         "push_pop", False),
        ("t", 2, 1, 5, 200, 300, "aten::convolution, op_id = 18, sizes = [[1, 2, 8, 8], [4, 2, 3, 3], [], [], [], "
         "[], [], [], []], input_op_ids = [(1,0)]", "push_pop", False),
    ]
    given(con, "annotations", ["trace_id", "annotation_id", "pid", "tid", "start_ns", "end_ns", "name", "kind",
                               "is_gpu"], given_ranges)
    load_sql(con, "analysis/op_models.sql")
    # conv needs stride and padding, which the ranges lack, or its output's shape, which no call
    # consumed here: NULL, not a guess
    assert rows(con, "SELECT source, name, sequence_number, flops, bytes, dtype FROM op_models ORDER BY op_id") == [
        ("nvtx", "aten::mm", 3, 2 * 4 * 5 * 6, None, None), ("nvtx", "aten::convolution", None, None, None, None)]


API = ["trace_id", "pid", "tid", "correlation_id", "start_ns", "end_ns", "duration_ns", "name", "api"]


def launch(con, correlation_id: int, at_ns: int, kernel: str, kernel_ns: int) -> None:
    """A cudaLaunchKernel on thread 1 at at_ns and the kernel it started (no External id: Nsight)."""
    given(con, "api_calls", API, [("t", 1, 1, correlation_id, at_ns, at_ns + 10, 10, "cudaLaunchKernel", "runtime")])
    given(con, "kernels", ["trace_id", "start_ns", "end_ns", "duration_ns", "device_id", "stream_id", "pid",
                           "correlation_id", "name"],
          [("t", 50_000 + at_ns, 50_000 + at_ns + kernel_ns, kernel_ns, 0, 7, 1, correlation_id, kernel)])


def test_nvtx_calls_take_the_dtype_their_kernels_name(con):
    add_bf16 = "void at::native::vectorized_elementwise_kernel<(int)8, at::native::CUDAFunctor_add<c10::BFloat16>>(int)"
    given(con, "annotations", NVTX, [
        nvtx_range(1, 11, "aten::mm", [[4, 6], [6, 5]], [(0, -1)] * 2, 0, 100),
        # batch norm: the statistics kernels run in fp32 on the bf16 input; the most kernel time names the input's
        nvtx_range(2, 12, "aten::native_batch_norm", [[2, 6, 4, 4], [6], [6], [6], [6], [], [], []],
                   [(0, -1)] * 8, 200, 300),
        # autocast's mixed add: the kernel casts (two dtypes), so no dtype and no bytes
        nvtx_range(3, 13, "aten::add", [[8, 8], [8, 8], []], [(0, -1)] * 3, 400, 500),
        # the kernel launched by an operator inside the modelled one is the modelled one's
        nvtx_range(4, 14, "aten::relu", [[3, 3]], [(0, -1)], 600, 700),
        nvtx_range(5, 15, "aten::clamp_min", [[3, 3], []], [(0, -1)] * 2, 610, 690, parent=4),
        # no kernel: nothing to read
        nvtx_range(6, 16, "aten::mul", [[5], [5]], [(0, -1)] * 2, 800, 900),
    ])
    launch(con, 1, 10, "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT", 1000)
    launch(con, 2, 210, "void at::native::batch_norm_collect_statistics_channels_last_kernel<at::native::Var, "
                        "c10::BFloat16, float, (int)4>(const T2 *, T3 *)", 700)
    launch(con, 3, 220, "void at::native::batch_norm_update_stats_and_invert(const at::Tensor &, double)::"
                        "[lambda(float, float) (instance 1)]>(int, T2, T3)", 300)
    launch(con, 4, 410, "void at::native::unrolled_elementwise_kernel<at::native::CUDAFunctor_add<float>, "
                        "at::native::memory::LoadWithCast<(int)2>>(int, T1)", 100)
    launch(con, 5, 620, add_bf16.replace("CUDAFunctor_add", "clamp_min"), 100)
    load_sql(con, "analysis/op_models.sql")
    assert rows(con, "SELECT name, dtype, precision, bytes FROM op_models ORDER BY op_id") == [
        ("aten::mm", BF, "bf16", (4 * 6 + 6 * 5 + 4 * 5) * 2),
        # input, weight, bias, running mean and variance read (each as bf16), an output the input's size
        ("aten::native_batch_norm", BF, "bf16", (2 * 6 * 4 * 4 + 4 * 6) * 2 + 2 * 6 * 4 * 4 * 2),
        ("aten::add", None, None, None),
        ("aten::relu", BF, "bf16", 2 * 9 * 2),
        ("aten::mul", None, None, None)]


def test_nvtx_convolution_flops_from_the_data_flow(con):
    # the grouped convolution of CASES (groups 2, stride 2, padding 1, dilation 2) and its backward,
    # as emit_nvtx ranges: the output shape, transposed and output_mask from nvtx_conv_args
    given(con, "annotations", NVTX, [
        *conv_chain(10, 600, 0, seq=7),
        nvtx_range(20, 650, "aten::batch_norm", [[2, 6, 4, 4], [6], [6]], [(600, 0), (92, 0), (93, 0)], 2000, 2100),
        nvtx_range(100, 1000, "ConvolutionBackward0", [[2, 6, 4, 4]], [(99, 0)], 10_000, 11_000, seq=7, tid=2),
        nvtx_range(101, 1001, "aten::convolution_backward", [[2, 6, 4, 4], X, W] + [[]] * 8,
                   [(99, 0), (90, 0), (91, 0)] + [(0, -1)] * 8, 10_100, 10_900, parent=100, tid=2),
        nvtx_range(102, 1002, "torch::autograd::AccumulateGrad", [W], [(1001, 1)], 11_100, 11_200, tid=2),
    ])
    load_sql(con, "analysis/op_models.sql")
    # only grad_weight was consumed: FlopCounterMode's grad_weight term alone
    assert rows(con, "SELECT op_id, name, model, flops, bytes FROM op_models WHERE category = 'conv' ORDER BY op_id") == [
        (12, "aten::convolution", "conv_fwd", 2 * 2 * 16 * (6 * 2 * 9), None),
        (101, "aten::convolution_backward", "conv_bwd", 2 * 2 * 4 * 6 * 9 * 16, None)]
