"""Operator views and performance models (issue #17).

Golden: FLOPs per step (or per annotated region) and operator equal FlopCounterMode's counts of
the same work, recorded with the traces (tests/recorded/*_flops.json). Hand-computed: one
synthetic call per formula, with FLOPs and bytes worked out here. Roofs: a GPU missing from
gpu_peaks gives NULL roofs and MFU.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from tracelake.analysis import catalog
from tracelake.analysis.database import base_tables, connect
from tracelake.ingest.schema import TABLES

REPO = Path(__file__).resolve().parents[1]
RECORDED = REPO / "tests" / "recorded"
GPT = "torch-2.11_gpt-train-bf16-sdpa_h100"
RESNET = "torch-2.11_resnet50-train-bf16-channels-last-shapes_h100"
ODD = "torch-2.11_ops-odd-sizes_h100"


# --- golden: FlopCounterMode ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def recorded_con(tmp_path_factory):
    from tracelake.analysis.cli import main

    lake = tmp_path_factory.mktemp("ops") / "lake"
    files = [str(RECORDED / f"{name}.pt.trace.json.gz") for name in (GPT, RESNET, ODD)]
    assert main(["ingest", *files, "--lake", str(lake), "--quiet"]) == 0
    con = connect(lake)
    yield con
    con.close()


def _truth(name: str) -> dict:
    return json.loads((RECORDED / f"{name}_flops.json").read_text())


def _flops_by_step(con, name: str) -> dict[str, dict[str, int]]:
    rows = con.execute("""
        SELECT e.step, replace(e.name, 'aten::', 'aten.'), sum(e.flops)
        FROM op_efficiency e JOIN traces t USING (trace_id)
        WHERE t.file_name LIKE ? || '%' AND e.flops IS NOT NULL
        GROUP BY ALL""", [name]).fetchall()
    out: dict[str, dict[str, int]] = {}
    for step, op, flops in rows:
        out.setdefault(step, {})[op] = int(flops)
    return out


@pytest.mark.parametrize("name,steps", [(GPT, 3), (RESNET, 2)])
def test_flops_per_step_and_operator_equal_flop_counter_mode(recorded_con, name, steps):
    truth = _truth(name)["step"]
    measured = _flops_by_step(recorded_con, name)
    assert sorted(measured) == [f"ProfilerStep#{i}" for i in range(1, steps + 1)]
    for step, per_op in measured.items():
        assert per_op == truth, step


def test_flops_per_region_equal_flop_counter_mode(recorded_con):
    rows = recorded_con.execute("""
        SELECT a.name, replace(m.name, 'aten::', 'aten.'), sum(m.flops)
        FROM op_models m
        JOIN traces t USING (trace_id)
        JOIN annotations a ON a.trace_id = m.trace_id AND a.name LIKE 'region:%' AND NOT a.is_gpu
                          AND m.start_ns BETWEEN a.start_ns AND a.end_ns
        WHERE t.file_name LIKE ? || '%' AND m.flops IS NOT NULL
        GROUP BY ALL""", [ODD]).fetchall()
    measured: dict[str, dict[str, int]] = {}
    for region, op, flops in rows:
        measured.setdefault(region.removeprefix("region:"), {})[op] = int(flops)
    checked = 0
    for region, truth in _truth(ODD)["regions"].items():
        if "error" in truth:
            continue
        assert measured.get(region) == truth, region
        checked += 1
    assert checked >= 12  # gemm x 5 precisions, backward, conv x 3, attention x 2, fp8
    # FlopCounterMode rejects GQA shapes; tracelake counts them with the query's heads
    # (q [4, 8, 512, 64], k and v [4, 2, 512, 64]: 2 x 4 x 8 x 512 x 512 x (64 + 64))
    assert measured["attention_gqa_bf16_forward"] == {
        "aten._scaled_dot_product_cudnn_attention": 2 * 4 * 8 * 512 * 512 * (64 + 64)}


def test_tf32_roof_and_fp32_roof(recorded_con):
    rows = dict(recorded_con.execute("""
        SELECT a.name, list(DISTINCT e.precision)
        FROM op_efficiency e
        JOIN annotations a ON a.trace_id = e.trace_id AND a.name IN ('region:gemm_fp32', 'region:gemm_tf32')
                          AND NOT a.is_gpu AND e.start_ns BETWEEN a.start_ns AND a.end_ns
        WHERE e.category = 'gemm'
        GROUP BY ALL""").fetchall())
    assert rows == {"region:gemm_fp32": ["fp32"], "region:gemm_tf32": ["tf32"]}


def test_mfu_and_coverage_on_the_gpt_step(recorded_con):
    truth = sum(_truth(GPT)["step"].values())
    rows = recorded_con.execute("""
        SELECT m.step, m.flops, m.wall_ns, m.mfu_pct, m.peak_tflops
        FROM mfu m JOIN traces t USING (trace_id)
        WHERE t.file_name LIKE ? || '%' ORDER BY m.step""", [GPT]).fetchall()
    assert [r[0] for r in rows] == ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"]
    for _step, flops, wall_ns, mfu_pct, peak in rows:
        assert flops == truth
        assert peak == pytest.approx(989.5)  # H100 SXM dense bf16
        assert mfu_pct == pytest.approx(100 * flops / (wall_ns * 1e-9 * 989.5e12))
    cov = recorded_con.execute("""
        SELECT coverage_pct, flops_coverage_pct, has_shapes FROM model_coverage c JOIN traces t USING (trace_id)
        WHERE t.file_name LIKE ? || '%'""", [GPT]).fetchall()
    assert len(cov) == 1 and cov[0][2] and 0 < cov[0][1] < cov[0][0] <= 100


def test_operator_summary_attributes_backward_to_forward(recorded_con):
    rows = recorded_con.execute("""
        SELECT name, forward_op, calls, device_ns, device_self_ns
        FROM operator_summary s JOIN traces t USING (trace_id)
        WHERE t.file_name LIKE ? || '%' AND name IN ('aten::mm', 'aten::convolution_backward',
                                                    'aten::convolution')""",
                                   [RESNET]).fetchall()
    by = {(n, f): (c, d, s) for n, f, c, d, s in rows}
    calls, device_ns, self_ns = by[("aten::convolution_backward", "aten::convolution")]
    assert calls == 106 and device_ns == self_ns > 0
    calls, device_ns, self_ns = by[("aten::convolution", None)]
    assert calls == 106 and device_ns > self_ns  # the kernels come from aten::cudnn_convolution inside
    # the classifier's backward mms belong to aten::addmm (AddmmBackward0)
    assert by[("aten::mm", "aten::addmm")][0] == 4
    # each launched GPU operation counts once in device_self_ns: their sum is the GPU time of the
    # trace's operations that have a launching operator
    self_total, gpu_total = recorded_con.execute("""
        SELECT (SELECT sum(device_self_ns) FROM operator_summary WHERE trace_id = t.trace_id),
               (SELECT sum(duration_ns) FROM gpu_ops WHERE trace_id = t.trace_id)
        FROM traces t WHERE t.file_name LIKE ? || '%'""", [RESNET]).fetchone()
    assert 0.95 * gpu_total < self_total <= gpu_total


# --- hand-computed formulas ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def _catalog_con():
    con = duckdb.connect()
    base_tables(con, Path("/nonexistent"), trace_ids=[], kind="TABLE")
    catalog.install(con, set(TABLES))
    yield con
    con.close()


@pytest.fixture
def synthetic(_catalog_con):
    """An empty in-memory lake with every view: one trace 't' on one GPU (name set by the test)."""
    con = _catalog_con

    def make(device_name: str = "NVIDIA H100 80GB HBM3") -> duckdb.DuckDBPyConnection:
        for table in ("traces", "devices", "cpu_ops", "kernels", "annotations"):
            con.execute(f"DELETE FROM {table}")
        con.execute("INSERT INTO traces (trace_id, source, start_ns, end_ns) VALUES ('t', 'pytorch', 0, 10000000)")
        con.execute("INSERT INTO devices (trace_id, device_id, name) VALUES ('t', 0, ?)", [device_name])
        return con

    return make


def _op(con, op_id, name, dims, types, concrete=None, start=None, end=None, parent=None, kernel_ns=1000):
    start = op_id * 10_000 if start is None else start
    end = start + 5_000 if end is None else end
    args = {"Input Dims": dims, "Input type": types,
            "Concrete Inputs": concrete if concrete is not None else [""] * len(dims)}
    con.execute("""INSERT INTO cpu_ops (trace_id, op_id, start_ns, end_ns, duration_ns, pid, tid, name,
                   external_id, parent_op_id, depth, args_json)
                   VALUES ('t', ?, ?, ?, ?, 1, 1, ?, ?, ?, ?, ?)""",
                [op_id, start, end, end - start, name, op_id, parent, 0 if parent is None else 1,
                 json.dumps(args)])
    if kernel_ns:
        con.execute("""INSERT INTO kernels (trace_id, start_ns, end_ns, duration_ns, device_id, stream_id, pid,
                       tid, correlation_id, external_id, name)
                       VALUES ('t', ?, ?, ?, 0, 7, 1, 1, ?, ?, 'some_kernel')""",
                    [start + 100, start + 100 + kernel_ns, kernel_ns, op_id, op_id])


BF, HALF, F32, F8 = "c10::BFloat16", "c10::Half", "float", "c10::Float8_e4m3fn"
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
    # GQA (8 query heads, 2 key/value heads), causal; FLOPs with the query's heads, not halved
    ("aten::_scaled_dot_product_flash_attention", [[2, 8, 16, 32], [2, 2, 16, 32], [2, 2, 16, 32], [], [], [], []],
     [BF, BF, BF, "Scalar", "Scalar", "Scalar", ""], ["", "", "", "0.", "True", "False", ""],
     2 * 2 * 8 * 16 * 16 * (32 + 32), (8192 + 2048 + 2048 + 2 * 8 * 16 * 32) * 2),
    # backward: recompute QK^T, dP, dV, dQ, dK = 2 B H Sq Sk (3 Dqk + 2 Dv)
    ("aten::_scaled_dot_product_efficient_attention_backward",
     [[1, 2, 8, 8], [1, 2, 8, 16], [1, 2, 4, 16], [1, 2, 4, 8], [], [], [], [], [], [], [], [], []],
     [HALF, HALF, HALF, HALF, "", "", "", "", "", "Scalar", "", "Scalar", ""],
     None, 2 * 1 * 2 * 8 * 4 * (3 * 16 + 2 * 8), (2 * 128 + 2 * (256 + 128 + 64)) * 2),
    ("aten::native_layer_norm", [[4, 10], [], [10], [10], []], [F32, "ScalarList", F32, F32, "Scalar"], None,
     None, (40 + 10 + 10) * 4 + 40 * 4),
    ("aten::_softmax", [[4, 10], [], []], [BF, "Scalar", "Scalar"], None, None, 80 + 80),
    ("aten::add", [[4, 10], [10], []], [BF, BF, "Scalar"], None, None, 80 + 20 + 80),
    ("aten::sum", [[4, 10], [], [], []], [F32, "ScalarList", "Scalar", ""], None, None, 160),
]


@pytest.mark.parametrize("name,dims,types,concrete,flops,bytes_", CASES, ids=[c[0] + str(i) for i, c in enumerate(CASES)])
def test_formula_by_hand(synthetic, name, dims, types, concrete, flops, bytes_):
    con = synthetic()
    _op(con, 1, name, dims, types, concrete)
    rows = con.execute("SELECT flops, bytes, device_ns, achieved_tflops, achieved_tbps FROM op_efficiency").fetchall()
    assert rows == [(flops, bytes_, 1000, None if flops is None else flops / 1000 / 1e3, bytes_ / 1000 / 1e3)]


def test_roofs_and_bound_on_a_known_gpu(synthetic):
    con = synthetic()
    # 4096^3 bf16 mm in 200 us: 687 TFLOP/s, AI 1365 FLOP/byte > ridge 989.5 / 3.35
    _op(con, 1, "aten::mm", [[4096, 4096], [4096, 4096]], [BF, BF], kernel_ns=200_000)
    row = con.execute("SELECT precision, peak_tflops, peak_tbps, bound, roof_ns, roof_pct FROM op_efficiency").fetchone()
    flops = 2 * 4096**3
    assert row[:4] == ("bf16", 989.5, 3.35, "compute")
    assert row[4] == pytest.approx(flops / 989.5e3) and row[5] == pytest.approx(100 * flops / 989.5e3 / 200_000)


def test_gpu_missing_from_the_table_gives_null_roofs(synthetic):
    con = synthetic("Mystery Accelerator 9000")
    con.execute("INSERT INTO annotations (trace_id, annotation_id, start_ns, end_ns, duration_ns, pid, tid, name, "
                "kind, is_gpu) VALUES ('t', 1, 0, 1000000, 1000000, 1, 1, 'ProfilerStep#1', 'user_annotation', false)")
    _op(con, 1, "aten::mm", [[64, 64], [64, 64]], [BF, BF])
    row = con.execute("SELECT step, gpu, flops, achieved_tflops, peak_tflops, peak_tbps, bound, roof_pct "
                      "FROM op_efficiency").fetchone()
    assert row[0] == "ProfilerStep#1" and row[2] == 2 * 64**3 and row[3] > 0
    assert row[1] is None and row[4:] == (None, None, None, None)
    assert con.execute("SELECT flops, mfu_pct, peak_tflops FROM mfu").fetchall() == [(2 * 64**3, None, None)]


def test_outermost_call_counts_and_autocast_wrapper_gives_way(synthetic):
    con = synthetic()
    # aten::convolution > aten::_convolution > aten::cudnn_convolution (launches the kernel)
    conv = ([[1, 2, 8, 8], [4, 2, 3, 3], [], [], [], [], [], [], []],
            [BF, BF, "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"],
            ["", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"])
    _op(con, 1, "aten::convolution", *conv, start=0, end=1000, kernel_ns=0)
    _op(con, 2, "aten::_convolution", *conv, start=100, end=900, parent=1, kernel_ns=0)
    _op(con, 3, "aten::cudnn_convolution", [[1, 2, 8, 8], [4, 2, 3, 3]], [BF, BF], start=200, end=800, parent=2,
        kernel_ns=700)
    # autocast: aten::addmm with fp32 inputs holds the casts and aten::addmm with bf16 inputs
    _op(con, 4, "aten::addmm", [[8], [4, 16], [16, 8], [], []], [F32, F32, F32, "Scalar", "Scalar"],
        start=2000, end=3000, kernel_ns=0)
    _op(con, 5, "aten::addmm", [[8], [4, 16], [16, 8], [], []], [BF, BF, BF, "Scalar", "Scalar"],
        start=2500, end=2900, parent=4, kernel_ns=300)
    rows = con.execute("SELECT op_id, name, dtype, flops, device_ns FROM op_efficiency ORDER BY op_id").fetchall()
    assert rows == [(1, "aten::convolution", BF, 2 * 1 * 36 * 72, 700),
                    (5, "aten::addmm", BF, 2 * 4 * 8 * 16, 300)]


def test_op_category_is_one_definition(synthetic):
    con = synthetic()
    cases = {"aten::addmm": "gemm", "AddmmBackward0": "gemm", "aten::convolution_backward": "conv",
             "autograd::engine::evaluate_function: ConvolutionBackward0": "conv",
             "aten::_scaled_dot_product_flash_attention_backward": "attention", "aten::native_layer_norm": "norm",
             "aten::_fused_rms_norm": "norm", "aten::_log_softmax_backward_data": "softmax",
             "aten::gelu_backward": "elementwise", "aten::add_": "elementwise", "aten::sum": "reduction",
             "aten::embedding_dense_backward": "embedding", "aten::_foreach_addcdiv_": "optimizer",
             "nccl:all_reduce": "communication", "c10d::allreduce_": "communication",
             "aten::copy_": "memcpy/memset", "aten::fill_": "memcpy/memset", "aten::view": "other"}
    got = dict(con.execute("SELECT n, op_category(n) FROM unnest(?) AS t(n)", [list(cases)]).fetchall())
    assert got == cases


# --- corpus: every GPU has a peak row; Nsight emit_nvtx ranges use the same models -------------------

@pytest.mark.corpus
def test_every_corpus_gpu_is_in_the_peak_table(corpus_con):
    missing = corpus_con.execute("""
        SELECT DISTINCT device FROM device_peaks WHERE gpu IS NULL AND device <> ''""").fetchall()
    assert missing == []
    names = dict(corpus_con.execute("SELECT DISTINCT device, gpu FROM device_peaks WHERE device <> ''").fetchall())
    assert names["NVIDIA H100 80GB HBM3"] == "H100 SXM5 80GB" and names["NVIDIA H200"] == "H200 SXM 141GB"
    assert names["Tesla V100-SXM2-32GB"] == "V100 SXM2" and names["AMD Instinct MI300X"] == "Instinct MI300X"


@pytest.mark.corpus
def test_nsight_autograd_nvtx_ranges_use_the_same_models(corpus_con):
    rows = corpus_con.execute("""
        SELECT e.step, replace(e.name, 'aten::', 'aten.'), count(*), sum(e.flops), count(e.bytes), count(e.roof_pct)
        FROM op_efficiency e JOIN traces t USING (trace_id)
        WHERE t.file_name = 'nsys-2025.3.1_gpt2-train-pystacks_h100.sqlite.gz' AND e.flops IS NOT NULL
        GROUP BY ALL ORDER BY 1, 2""").fetchall()
    steps = {r[0] for r in rows}
    assert len(steps) >= 5
    # no dtypes in NVTX ranges: FLOPs yes, bytes and roofs NULL (not zero)
    assert all(r[4] == 0 and r[5] == 0 for r in rows)
    # GPT-2 small, batch 8 x 256 tokens: the 12 layers' QKV projection addmm [2048, 768] x [768, 2304]
    per_step = {(r[0], r[1]): r[3] for r in rows}
    assert per_step[(":step 1", "aten.addmm")] >= 12 * 2 * 2048 * 2304 * 768
    # every step after the first does the same work
    later = [{op: f for (s, op), f in per_step.items() if s == step} for step in sorted(steps)[1:]]
    assert all(x == later[0] for x in later)
