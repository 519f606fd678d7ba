"""Operator views and performance models (issue #17).

Golden: FLOPs per step (or per annotated region) and operator equal FlopCounterMode's counts of
the same work, recorded with the traces (tests/recorded/*_flops.json). The hand-computed case per
formula and the roofs of an unknown GPU are in tests/sql/test_op_models.py and test_op_efficiency.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tracelake.lake.database import connect

REPO = Path(__file__).resolve().parents[1]
RECORDED = REPO / "tests" / "recorded"
GPT = "torch-2.11_gpt-train-bf16-sdpa_h100"
RESNET = "torch-2.11_resnet50-train-bf16-channels-last-shapes_h100"
ODD = "torch-2.11_ops-odd-sizes_h100"
# the RESNET program under `nsys profile --pytorch=autograd-shapes-nvtx`, then odd convolutions
NSYS_RESNET = "nsys-2025.3.1_resnet50-train-bf16-shapes_h100"


# --- golden: FlopCounterMode ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def recorded_con(tmp_path_factory):
    from tracelake.cli.main import main

    lake = tmp_path_factory.mktemp("ops") / "lake"
    files = [str(RECORDED / f"{name}.pt.trace.json.gz") for name in (GPT, RESNET, ODD)]
    files.append(str(RECORDED / f"{NSYS_RESNET}.sqlite.gz"))
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


def _flops_by_region(con, name: str) -> dict[str, dict[str, int]]:
    rows = con.execute("""
        SELECT a.name, replace(m.name, 'aten::', 'aten.'), sum(m.flops)
        FROM op_models m
        JOIN traces t USING (trace_id)
        JOIN annotations a ON a.trace_id = m.trace_id AND a.name LIKE 'region:%' AND NOT a.is_gpu
                          AND m.start_ns BETWEEN a.start_ns AND a.end_ns
        WHERE t.file_name LIKE ? || '%' AND m.flops IS NOT NULL
        GROUP BY ALL""", [name]).fetchall()
    measured: dict[str, dict[str, int]] = {}
    for region, op, flops in rows:
        measured.setdefault(region.removeprefix("region:"), {})[op] = int(flops)
    return measured


def test_flops_per_region_equal_flop_counter_mode(recorded_con):
    measured = _flops_by_region(recorded_con, ODD)
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


def test_nsight_conv_flops_from_the_data_flow_equal_flop_counter_mode(recorded_con):
    # emit_nvtx ranges carry no stride, padding, transposed or output_mask: the convolutions' FLOPs
    # come from the consumers' shapes and the consumed gradients (nvtx_conv_args). Truth:
    # FlopCounterMode around one more step of the program (equal to the PyTorch recording's truth)
    truth = _truth(NSYS_RESNET)["step"]
    assert truth == _truth(RESNET)["step"]
    assert truth["aten.convolution"] > 0 and truth["aten.convolution_backward"] > 0
    nsys = _flops_by_step(recorded_con, NSYS_RESNET)
    steps = sorted(s for s in nsys if s is not None)
    assert len(steps) == 3  # NVTX 'step 0' (warm-up), 'step 1', 'step 2'
    for step in steps:
        assert nsys[step] == truth, step
    # the same per step as the PyTorch trace of the program, category by category
    def by_category(name: str) -> list[dict[str, int]]:
        rows = recorded_con.execute("""
            SELECT e.step, e.category, sum(e.flops)
            FROM op_efficiency e JOIN traces t USING (trace_id)
            WHERE t.file_name LIKE ? || '%' AND e.step IS NOT NULL AND e.flops IS NOT NULL
            GROUP BY ALL""", [name]).fetchall()
        steps: dict[str, dict[str, int]] = {}
        for step, category, flops in rows:
            steps.setdefault(step, {})[category] = int(flops)
        return list(steps.values())

    expected = {"conv": truth["aten.convolution"] + truth["aten.convolution_backward"],
                "gemm": truth["aten.addmm"] + truth["aten.mm"]}
    assert by_category(NSYS_RESNET) == [expected] * 3
    assert by_category(RESNET) == [expected] * 2
    # odd geometry: stride, dilation + groups, depthwise, transposed, 1x1 stride 2 without padding
    regions = _truth(NSYS_RESNET)["regions"]
    assert len(regions) == 5
    assert _flops_by_region(recorded_con, NSYS_RESNET) == regions


def test_nsys_calls_get_the_dtypes_pytorch_recorded(recorded_con):
    """NVTX ranges carry no dtypes; op_models reads them from the kernels' names. Truth: the dtypes the
    PyTorch profiler recorded for the same program (RESNET), call by call (name and shapes)."""
    def calls(name: str, step_like: str):
        return recorded_con.execute("""
            SELECT e.step, e.name, e.shapes, e.dtype, e.bytes, e.device_ns
            FROM op_efficiency e JOIN traces t USING (trace_id)
            WHERE t.file_name LIKE ? || '%' AND e.step LIKE ?""", [name, step_like]).fetchall()

    torch = calls(RESNET, "ProfilerStep#%")
    nsys = calls(NSYS_RESNET, "%step _")
    recorded = {(n, s): d for _, n, s, d, _, _ in torch}
    named = [(n, s, d) for _, n, s, d, _, _ in nsys if d is not None]
    assert named and all(recorded[(n, s)] == d for n, s, d in named)
    # every call but the 0-dim num_batches_tracked += 1 (its [] is not told apart from a scalar's)
    assert {n for _, n, s, d, _, _ in nsys if d is None} == {"aten::add_"}
    assert sum(ns for *_, d, _, ns in nsys if d is not None) >= 0.98 * sum(r[5] for r in nsys)
    # the bytes per step as the recorded dtypes give them, but for batch norm's fp32 weight, bias and
    # running statistics, counted at the input's bf16 (~0.2 MB of 13 GB)
    per_step = {}
    for step, *_, nbytes, _ in nsys + torch:
        per_step.setdefault(step, 0)
        per_step[step] += nbytes or 0
    want = per_step["ProfilerStep#1"]
    assert per_step["ProfilerStep#2"] == want
    for step in (":step 0", ":step 1", ":step 2"):
        assert abs(per_step[step] - want) <= 1e-4 * want, step


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
    # no dtypes in NVTX ranges: the GEMMs' come from their nvjet kernels (bytes and roofs for every
    # call); cuDNN's generated attention kernels name none: bytes and roofs NULL (not zero)
    assert {r[1] for r in rows} == {"aten.mm", "aten.addmm", "aten._scaled_dot_product_cudnn_attention",
                                    "aten._scaled_dot_product_cudnn_attention_backward"}
    assert all((r[4], r[5]) == ((r[2], r[2]) if r[1] in ("aten.mm", "aten.addmm") else (0, 0)) for r in rows)
    # GPT-2 small, batch 8 x 256 tokens: the 12 layers' QKV projection addmm [2048, 768] x [768, 2304]
    per_step = {(r[0], r[1]): r[3] for r in rows}
    assert per_step[(":step 1", "aten.addmm")] >= 12 * 2 * 2048 * 2304 * 768
    # every step after the first does the same work
    later = [{op: f for (s, op), f in per_step.items() if s == step} for step in sorted(steps)[1:]]
    assert all(x == later[0] for x in later)


def test_a_lake_written_before_the_operator_tree_columns_still_opens(tmp_path):
    import pyarrow.parquet as pq
    from tracelake.cli.main import main

    lake = tmp_path / "lake"
    assert main(["ingest", str(RECORDED / f"{ODD}.pt.trace.json.gz"), "--lake", str(lake), "--quiet"]) == 0
    (part,) = (lake / "cpu_ops").glob("trace_id=*/data.parquet")
    pq.write_table(pq.read_table(part).drop_columns(["parent_op_id", "depth"]), part)
    shutil.rmtree(lake / ".schemas")  # the versions of that time recorded no partition schemas
    (lake / "tracelake.duckdb").unlink()
    con = connect(lake)
    assert con.execute("SELECT count(*), count(parent_op_id) FROM cpu_ops").fetchone()[1] == 0
    # no operator tree: FLOPs still counted, autograd wrappers no longer recognised
    assert con.execute("SELECT count(*) FROM op_efficiency WHERE flops > 0").fetchone()[0] > 0
    con.close()
