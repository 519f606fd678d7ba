"""Kernel time per kernel name against AMD TraceLens (github.com/AMD-AGI/TraceLens): its perf report's
kernel_summary sheet (TraceLens_generate_perf_report_pytorch --enable_kernel_summary), recorded by
tests/golden/tracelens/make_goldens.sh in TraceLens's own virtualenv, against tracelake's
kernel_summary view on the same corpus traces.

TraceLens's sheet has one row per parent op category, parent op, kernel name and stream; summed per
kernel name it must give tracelake's instances exactly and its total_ns to the nanosecond: both read
the same Kineto `dur` fields (µs with three decimals, so whole nanoseconds); TraceLens adds them as
float64 µs, whose rounding error (about n * 1e-16 of the total, below 1e-6 ns on these traces) cannot
reach half a nanosecond, while tracelake adds whole ns.
"""

from __future__ import annotations

import csv
import gzip
import io
from collections import defaultdict
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden" / "tracelens"
# Files under ../shared/traces/pytorch with a recorded golden (the list make_goldens.sh runs on).
TRACES = ["torch-2.11_gpt2-small-train-bf16_h100.pt.trace.json.gz",
          "torch-2.11_gpt2-train-12steps-stacks_h200_large.pt.trace.json.gz",
          "torch-2.11_gpt2-ddp-2rank_h200x2/rank0.pt.trace.json.gz",
          "torch-2.11_mlp-compiled-inference-fp16_h100.pt.trace.json.gz",
          "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz",
          "torch-2.11_resnet50-train-bf16-channels-last_h100.pt.trace.json.gz",
          "torch-2.11_resnet50-train-fp32-pageable_h100.pt.trace.json.gz",
          "dlrm_8rank_v100/worker0_step_12.1694128201545.pt.trace.json.gz",
          "hta_v100_resnet_ns_resolution_rank0.pt.trace.json.gz",
          "hta_v100_spmd_dhen_rank1_memory_large.json.gz",
          "tracelens_h100_timesformer_inference_pystack.json.gz",
          "tracelens_mi300x_resnet_actckpt_train_rank0.json.gz",
          "tracelens_mi300x_sd35_xdit_inference_rank0_large.json.gz",
          "tracelens_mi300x_vllm_graph_capture_rank0.pt.trace.json.gz"]


def _golden_path(rel: str) -> Path:
    stem = rel.removesuffix(".json.gz").removesuffix(".pt.trace").replace("/", ".")
    return GOLDEN / f"{stem}.kernel_summary.csv.gz"


def _tracelens_per_name(rel: str) -> dict[str, tuple[int, float]]:
    """TraceLens's kernel_summary rows summed per kernel name: (instances, total µs)."""
    totals: dict[str, list] = defaultdict(lambda: [0, 0.0])
    with gzip.open(_golden_path(rel), "rt", encoding="utf-8", newline="") as f:
        for row in csv.DictReader(io.StringIO(f.read())):
            entry = totals[row["Kernel name"]]
            entry[0] += int(row["Kernel duration (µs)_count"])
            entry[1] += float(row["Kernel duration (µs)_sum"])
    return {name: (n, us) for name, (n, us) in totals.items()}


def test_every_listed_trace_has_its_golden():
    assert [rel for rel in TRACES if not _golden_path(rel).exists()] == []
    assert len(list(GOLDEN.glob("*.kernel_summary.csv.gz"))) == len(TRACES)


@pytest.mark.corpus
@pytest.mark.parametrize("rel", TRACES)
def test_kernel_summary_equals_tracelens(corpus_con, rel):
    theirs = _tracelens_per_name(rel)
    rows = corpus_con.execute(
        "SELECT name, instances, total_ns FROM kernel_summary JOIN traces USING (trace_id) "
        "WHERE source = 'pytorch' AND ends_with(path, ?)", ["/pytorch/" + rel]).fetchall()
    ours = {name: (instances, total_ns) for name, instances, total_ns in rows}
    assert theirs, rel
    assert set(ours) == set(theirs)
    for name, (count, total_us) in theirs.items():
        assert ours[name][0] == count, name
        assert abs(ours[name][1] - total_us * 1000) < 0.5, name
