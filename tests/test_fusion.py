"""Fusion candidates against torch.compile (issue #34).

Golden: the same training step of two programs (an MLP with LayerNorm, GELU and dropout; a CNN
with batch norm and ReLU) recorded eagerly and under torch.compile on one H200
(tests/recorded/record_fusion.py). The GPU time per step that compilation removed, measured with
CUDA events while the GPU ran the steps back to back (`_truth.json`), is the truth for the saving
tracelake predicts from the eager trace alone. The compiled trace's kernels are already fused:
little is left to predict there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ingested

RECORDED = Path(__file__).resolve().parents[0] / "recorded"
TRUTH = json.loads((RECORDED / "torch-2.11_fusion_h200_truth.json").read_text())
PROGRAMS = ("mlp", "cnn")


def _name(program: str, mode: str) -> str:
    return f"torch-2.11_fusion-{program}-{mode}_h200"


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    files = [RECORDED / f"{_name(p, m)}.pt.trace.json.gz" for p in PROGRAMS for m in ("eager", "compiled")]
    with ingested(tmp_path_factory, "fusion", *files) as db:
        yield db


def predicted_ms_per_step(con, program: str, mode: str) -> float:
    """Mean over the trace's profiled steps of fusion_summary's saving (0 for a step without chains)."""
    (saved,) = con.execute("""
        SELECT coalesce(sum(f.saved_ns), 0) / 1e6 / ?
        FROM traces t LEFT JOIN fusion_summary f USING (trace_id)
        WHERE t.file_name = ? || '.pt.trace.json.gz'""",
        [TRUTH["programs"][program][mode]["profiled_steps"], _name(program, mode)]).fetchone()
    return saved


@pytest.mark.parametrize("program", PROGRAMS)
def test_predicted_saving_within_35_percent_of_torch_compile(con, program):
    measured = TRUTH["programs"][program]["measured_saving_gpu_ms_per_step"]
    predicted = predicted_ms_per_step(con, program, "eager")
    # recorded: mlp 0.434 predicted / 0.337 measured, cnn 1.345 / 1.158
    assert predicted == pytest.approx(measured, rel=0.35), (predicted, measured)


@pytest.mark.parametrize("program", PROGRAMS)
def test_little_left_to_fuse_after_compilation(con, program):
    eager = predicted_ms_per_step(con, program, "eager")
    assert predicted_ms_per_step(con, program, "compiled") < eager / 4


def test_candidates_name_the_python_line_and_repeat_per_layer(con):
    """The MLP's blocks repeat their chains 4 times per step; the CNN's ReLU + batch-norm backward
    chain points at the module whose forward calls the ReLU (Kineto names a frame by the line
    where its function starts)."""
    rows = con.execute("""
        SELECT c.operators, c.per_step, c.python_location
        FROM fusion_candidates c JOIN traces t USING (trace_id)
        WHERE t.file_name LIKE 'torch-2.11_fusion-%-eager%' AND c.rank = 1 ORDER BY t.file_name""").fetchall()
    cnn, mlp = rows
    assert "aten::threshold_backward > aten::cudnn_batch_norm_backward" in cnn[0]
    assert mlp[0] == "aten::sum > aten::native_dropout_backward > aten::gelu_backward" and mlp[1] == 4
    source = (RECORDED / "record_fusion.py").read_text().splitlines()
    for _ops, _per_step, location in rows:
        file, line = location.split("(")[0], int(location.split("(")[1].split(")")[0])
        assert file == "record_fusion.py" and "forward" in location
        body = source[line - 1:line + 3]
        assert body[0].strip().startswith("def forward(self") and any("relu" in b or "gelu" in b for b in body[1:])


def test_bandwidth_is_the_traces_own_and_below_the_datasheet(con):
    got = con.execute("""
        SELECT r.stream_tbps, p.memory_tbps FROM fusion_rates r
        JOIN device_peaks p USING (trace_id, device_id)""").fetchall()
    assert len(got) == 2  # the eager traces (the compiled ones have no modelled elementwise calls)
    for tbps, peak in got:
        assert 0.6 * peak < tbps < peak
