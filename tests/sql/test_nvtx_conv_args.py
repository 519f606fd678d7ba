"""sql/base/nvtx_conv_args.sql: a convolution's output shape, transposed flag and output_mask from
the operator tree and the data flow of emit_nvtx ranges (which record none of them)."""

from __future__ import annotations

from .conftest import given, load_sql, rows
from .op_rows import NVTX, W, X, conv_chain, nvtx_range


def test_forward_output_shape_from_the_consumer_of_the_outermost_call(con):
    given(con, "annotations", NVTX, [
        *conv_chain(10, 600, 0, seq=7),
        # consumers name the outer aten::conv2d, which returned the tensor last
        nvtx_range(20, 650, "aten::batch_norm", [[2, 6, 4, 4], [6], [6]], [(600, 0), (92, 0), (93, 0)], 2000, 2100),
        # transposed: w [C_in 4, C_out / groups 3, 3, 3], output channels 3
        *conv_chain(30, 700, 3000, seq=8, outer="aten::conv_transpose2d",
                    backend="aten::cudnn_convolution_transpose", w=[4, 3, 3, 3]),
        nvtx_range(40, 750, "aten::relu", [[2, 3, 19, 19]], [(700, 0)], 5000, 5100),
        # a consumer whose shape does not fit the inputs (batch 5): a stale address, not the output
        *conv_chain(50, 800, 6000, seq=9),
        nvtx_range(60, 850, "aten::relu", [[5, 6, 4, 4]], [(800, 0)], 8000, 8100),
        # output consumed by no recorded call
        *conv_chain(70, 900, 9000, seq=10),
    ])
    load_sql(con, "base/nvtx_conv_args.sql")
    assert rows(con, "SELECT op_id, name, transposed, output_shape, output_mask FROM nvtx_conv_args ORDER BY op_id") == [
        (12, "aten::convolution", False, [2, 6, 4, 4], None), (13, "aten::_convolution", False, [2, 6, 4, 4], None),
        (32, "aten::convolution", True, [2, 3, 19, 19], None), (33, "aten::_convolution", True, [2, 3, 19, 19], None),
        (52, "aten::convolution", False, None, None), (53, "aten::_convolution", False, None, None),
        (72, "aten::convolution", False, None, None), (73, "aten::_convolution", False, None, None)]


def test_backward_output_mask_from_the_consumed_gradients(con):
    grads = [[2, 6, 4, 4], X, W] + [[]] * 8
    given(con, "annotations", NVTX, [
        *conv_chain(10, 600, 0, seq=7),
        *conv_chain(30, 700, 2000, seq=8, outer="aten::conv_transpose2d",
                    backend="aten::cudnn_convolution_transpose", w=[4, 3, 3, 3]),
        # backward of seq 7: grad_input and grad_weight consumed (by the next node, AccumulateGrad)
        nvtx_range(100, 1000, "ConvolutionBackward0", [[2, 6, 4, 4]], [(99, 0)], 10_000, 11_000, seq=7, tid=2),
        nvtx_range(101, 1001, "aten::convolution_backward", grads, [(99, 0), (90, 0), (91, 0)] + [(0, -1)] * 8,
                   10_100, 10_900, parent=100, tid=2),
        nvtx_range(102, 1002, "ReluBackward0", [X], [(1001, 0)], 11_100, 11_200, seq=3, tid=2),
        nvtx_range(103, 1003, "torch::autograd::AccumulateGrad", [W], [(1001, 1)], 11_300, 11_400, tid=2),
        # backward of seq 8 (the first layer: no grad_input, so nothing can name (1011, 0))
        nvtx_range(110, 1010, "ConvolutionBackward0", [[2, 3, 19, 19]], [(98, 0)], 12_000, 13_000, seq=8, tid=2),
        nvtx_range(111, 1011, "aten::convolution_backward", grads, [(98, 0), (90, 0), (92, 0)] + [(0, -1)] * 8,
                   12_100, 12_900, parent=110, tid=2),
        nvtx_range(112, 1012, "torch::autograd::AccumulateGrad", [[4, 3, 3, 3]], [(1011, 1)], 13_100, 13_200, tid=2),
        # a backward call whose forward call is not in the trace: transposed unknown
        nvtx_range(120, 1020, "ConvolutionBackward0", [[2, 6, 4, 4]], [(97, 0)], 14_000, 15_000, seq=99, tid=2),
        nvtx_range(121, 1021, "aten::convolution_backward", grads, [(97, 0)] + [(0, -1)] * 10,
                   14_100, 14_900, parent=120, tid=2),
        nvtx_range(122, 1022, "torch::autograd::AccumulateGrad", [W], [(1021, 1)], 15_100, 15_200, tid=2),
    ])
    load_sql(con, "base/nvtx_conv_args.sql")
    assert rows(con, """SELECT op_id, transposed, output_mask FROM nvtx_conv_args
                        WHERE name = 'aten::convolution_backward' ORDER BY op_id""") == [
        (101, False, [True, True, False]), (111, True, [False, True, False]), (121, None, [False, True, False])]
