"""sql/base/op_category.sql: one category per operator, backward and autograd names included."""

from __future__ import annotations

from .conftest import load_sql, rows

CASES = {"aten::addmm": "gemm", "AddmmBackward0": "gemm", "aten::_scaled_mm": "gemm", "aten::linear": "gemm",
         "aten::convolution_backward": "conv", "autograd::engine::evaluate_function: ConvolutionBackward0": "conv",
         "aten::_scaled_dot_product_flash_attention_backward": "attention", "aten::native_layer_norm": "norm",
         "aten::_fused_rms_norm": "norm", "NativeBatchNormBackward0": "norm",
         "aten::_log_softmax_backward_data": "softmax", "aten::gelu_backward": "elementwise",
         "aten::add_": "elementwise", "aten::threshold_backward": "elementwise", "aten::sum": "reduction",
         "aten::nll_loss_forward": "reduction", "aten::embedding_dense_backward": "embedding",
         "aten::_foreach_addcdiv_": "optimizer", "Optimizer.step#AdamW.step": "optimizer",
         "nccl:all_reduce": "communication", "c10d::allreduce_": "communication",
         "record_param_comms": "communication", "aten::copy_": "memcpy/memset", "aten::fill_": "memcpy/memset",
         "aten::view": "other", "aten::cat": "other"}


def test_categories(con):
    load_sql(con, "base/op_category.sql")
    assert dict(rows(con, "SELECT n, op_category(n) FROM unnest(?) AS t(n)", [list(CASES)])) == CASES
