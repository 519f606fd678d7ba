"""sql/analysis/findings_op_efficiency.sql: the operator-efficiency rules with their evidence."""

from __future__ import annotations

from .conftest import load_sql, rows
from .op_rows import BF, F32, op, trace


def test_fp32_and_memory_bound_and_below_roof(con):
    trace(con)
    # fp32 GEMM, 2 ms: on an H100 it could use TF32/bf16 Tensor Cores
    op(con, 1, "aten::mm", [[1024, 1024], [1024, 1024]], [F32, F32], kernel_ns=2_000_000)
    # skinny bf16 GEMM with a dimension of 1001: intensity ~ 2 M N K / 2 (MK + KN + MN) << ridge 295
    op(con, 2, "aten::mm", [[64, 1001], [1001, 64]], [BF, BF], kernel_ns=1_500_000)
    # big bf16 GEMM at 2 % of its roof
    op(con, 3, "aten::mm", [[4096, 4096], [4096, 4096]], [BF, BF], kernel_ns=7_000_000)
    load_sql(con, "analysis/findings_op_efficiency.sql")
    got = {r[0]: r[1] for r in rows(con, """
        SELECT rule, list(evidence ORDER BY evidence) FROM (
            SELECT * FROM finding_fp32_matmul UNION ALL BY NAME SELECT * FROM finding_memory_bound_matmul
            UNION ALL BY NAME SELECT * FROM finding_matmul_below_roof) GROUP BY rule""")}
    (fp32,) = got["fp32_matmul"]
    assert fp32.startswith("aten::mm [[1024, 1024], [1024, 1024]]: 1 calls, 2.000 ms") and "494 in TF32" in fp32
    (memory,) = got["memory_bound_matmul"]
    assert memory.startswith("aten::mm bf16 [[64, 1001], [1001, 64]]") and "not a multiple of 8" in memory
    assert [e.split("]]:")[0] + "]]" for e in got["matmul_below_roof"]] == [
        "aten::mm bf16 [[4096, 4096], [4096, 4096]]", "aten::mm fp32 [[1024, 1024], [1024, 1024]]"]


def test_unfused_attention(con):
    trace(con)
    op(con, 1, "aten::_scaled_dot_product_attention_math", [[2, 4, 128, 64]] * 3, [BF] * 3, kernel_ns=0)
    op(con, 2, "aten::bmm", [[8, 128, 64], [8, 64, 128]], [BF, BF], start=10_100, end=10_200, parent=1)
    op(con, 3, "aten::_softmax", [[2, 4, 128, 128], [], []], [BF, "Scalar", "Scalar"], start=10_300, end=10_400,
       parent=1)
    load_sql(con, "analysis/findings_op_efficiency.sql")
    assert rows(con, "SELECT rule, duration_ns, evidence FROM finding_unfused_attention ORDER BY evidence") == [
        ("unfused_attention", 2000, "1 calls of aten::_scaled_dot_product_attention_math (the unfused math fallback "
         "of scaled_dot_product_attention), 0.002 ms on the GPU"),
        ("unfused_attention", 1000, "1 calls of aten::_softmax over [batch, heads, seq, seq] scores such as "
         "[[2,4,128,128],[],[]] (hand-written attention), 0.001 ms on the GPU")]
