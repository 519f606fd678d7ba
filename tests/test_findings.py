"""Each deep-learning rule fires on a real trace recorded to show its problem, and stays quiet on one
that does not have it (see ../shared/traces/*/PROVENANCE.md for what each trace contains)."""

from __future__ import annotations

import pytest


def _count(con, rule: str, file_name: str) -> int:
    return con.execute("SELECT count(*) FROM findings f JOIN traces t USING (trace_id) "
                       "WHERE f.rule = ? AND t.file_name = ?", [rule, file_name]).fetchone()[0]


MNIST = "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz"
RESNET_PAGEABLE = "torch-2.11_resnet50-train-fp32-pageable_h100.pt.trace.json.gz"
MLP = "torch-2.11_mlp-compiled-inference-fp16_h100.pt.trace.json.gz"

# (rule, trace that has the problem, trace that does not) on the bundled samples
SAMPLE_CASES = [
    ("fp32_gemm", MNIST, MLP),                          # fp32 SGEMM on an H100 vs fp16 inference
    ("launch_bound", MNIST, RESNET_PAGEABLE),           # tiny kernels vs ResNet-50
    ("pageable_copy_in_step", RESNET_PAGEABLE, MLP),    # pageable batch copies vs none in steps
    ("gpu_idle_in_step", RESNET_PAGEABLE, None),        # 10 ms sleep per step; every sample idles (corpus: negative)
]

CORPUS_CASES = [
    ("tensor_core_alignment", "torch-2.11_gpt2-small-train-bf16_h100.pt.trace.json.gz",  # vocab 50257
     "torch-2.11_resnet50-train-bf16-channels-last_h100.pt.trace.json.gz"),
    ("host_sync_in_step", "torch-2.11_gpt2-small-train-bf16_h100.pt.trace.json.gz",      # loss.item()
     "torch-2.11_resnet50-train-bf16-channels-last_h100.pt.trace.json.gz"),
    ("pageable_copy_in_step", "nsys-2025.3.1_cnn-train-pageable_h100.sqlite",
     "torch-2.11_resnet50-train-bf16-channels-last_h100.pt.trace.json.gz"),               # pinned copies
    ("gpu_idle_in_step", "nsys-2025.3.1_resnet50-train-nvtx_h100.sqlite",                  # 10 ms sleeps
     "hta_v100_resnet_ns_resolution_rank0.pt.trace.json.gz"),
    ("straggler_rank", "rank1.pt.trace.json.gz", "torch-2.11_gpt2-small-train-bf16_h100.pt.trace.json.gz"),
    ("straggler_rank", "nsys-2025.3.1_gpt2-ddp-2rank_h200x2.sqlite.gz",
     "torch-2.11_gpt2-small-train-bf16_h100.pt.trace.json.gz"),
]


@pytest.mark.parametrize("rule,positive,negative", SAMPLE_CASES, ids=[c[0] for c in SAMPLE_CASES])
def test_rule_on_sample_traces(sample_con, rule, positive, negative):
    assert _count(sample_con, rule, positive) > 0
    if negative:
        assert _count(sample_con, rule, negative) == 0


@pytest.mark.corpus
@pytest.mark.parametrize("rule,positive,negative", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_rule_on_corpus_traces(corpus_con, rule, positive, negative):
    assert _count(corpus_con, rule, positive) > 0
    assert _count(corpus_con, rule, negative) == 0


@pytest.mark.corpus
def test_straggler_is_the_rank_that_sleeps(corpus_con):
    # rank 1 sleeps 20 ms per step in both DDP recordings: it is the straggler in every full step
    rows = corpus_con.execute("SELECT run_id, step, straggler_rank FROM stragglers WHERE run_id LIKE '%gpt2-ddp%'").fetchall()
    assert rows and all(r[2] == 1 for r in rows)


def test_findings_have_evidence_and_advice(sample_con):
    bad = sample_con.execute("SELECT count(*) FROM findings WHERE evidence IS NULL OR advice IS NULL "
                             "OR start_ns IS NULL OR duration_ns IS NULL").fetchone()[0]
    assert bad == 0
