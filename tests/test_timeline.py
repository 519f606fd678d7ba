"""Timeline views on real traces: idle causes, steps, overlap, kernel launches."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

RESNET_PAGEABLE = "torch-2.11_resnet50-train-fp32-pageable_h100.pt.trace.json.gz"
GOLDEN = Path(__file__).parent / "golden" / "hta"


def test_sleep_between_steps_is_host_wait(sample_con):
    # ResNet-50 sleeps 10 ms per step on the host: the GPU waits for the CPU to launch work.
    rows = sample_con.execute(
        "SELECT cause, sum(i.duration_ns), max(i.duration_ns) FROM idle_breakdown i JOIN traces t USING (trace_id) "
        "WHERE t.file_name = ? GROUP BY cause", [RESNET_PAGEABLE]).fetchall()
    by_cause = {c: (total, longest) for c, total, longest in rows}
    assert by_cause["host_wait"][0] > 0.9 * sum(t for t, _ in by_cause.values())
    assert by_cause["host_wait"][1] >= 10_000_000
    assert by_cause["kernel_wait"][1] < 30_000  # kernel waits are the short gaps, by definition


def test_idle_breakdown_threshold_is_in_ns(sample_con):
    loose = sample_con.execute("SELECT count(*) FROM idle_breakdown_over(1000000000) WHERE cause = 'kernel_wait'").fetchone()[0]
    strict = sample_con.execute("SELECT count(*) FROM idle_breakdown_over(1) WHERE cause = 'kernel_wait'").fetchone()[0]
    assert strict == 0 < loose


def test_steps_of_the_pageable_resnet(sample_con):
    rows = sample_con.execute(
        "SELECT step, wall_ns, gpu_busy_ns, gpu_idle_ns, compute_ns, memcpy_ns FROM steps s JOIN traces t USING (trace_id) "
        "WHERE t.file_name = ? ORDER BY step_index", [RESNET_PAGEABLE]).fetchall()
    assert [r[0] for r in rows] == ["ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"]
    for _, wall, busy, idle, compute, memcpy in rows:
        assert busy + idle == wall and idle >= 10_000_000 and compute > 0 and memcpy > 0


def test_kernel_launch_invariants(sample_con):
    bad = sample_con.execute("SELECT count(*) FROM kernel_launches WHERE queue_depth < 0 OR launch_ns < 0 "
                             "OR (queue_delay_ns IS NOT NULL AND queue_delay_ns < 0)").fetchone()[0]
    assert bad == 0
    per_trace = sample_con.execute("SELECT trace_id, kernels FROM kernel_launch_summary").fetchall()
    kernels = dict(sample_con.execute("SELECT trace_id, count(*) FROM kernels GROUP BY 1").fetchall())
    for trace_id, n in per_trace:
        assert n == kernels[trace_id]  # every kernel's launch call is in these traces


@pytest.mark.corpus
@pytest.mark.parametrize("stem,files", [
    ("torch-2.11_gpt2-ddp-2rank_h200x2", ["rank0.pt.trace.json.gz", "rank1.pt.trace.json.gz"]),
    ("hta_a100_trace_diff_control_rank3", ["hta_a100_trace_diff_control_rank3.json.gz"]),
    ("hta_v100_spmd_dhen_rank1_memory_large", ["hta_v100_spmd_dhen_rank1_memory_large.json.gz"]),
])
def test_comm_overlap_agrees_with_hta(corpus_con, stem, files):
    golden = list(csv.DictReader(open(GOLDEN / f"{stem}.comm_comp_overlap.csv")))
    ours = dict(corpus_con.execute(
        "SELECT coalesce(o.rank, 0), o.communication_overlap_pct FROM overlap o JOIN traces t USING (trace_id) "
        "WHERE t.file_name IN (SELECT unnest(?))", [files]).fetchall())
    for row in golden:
        assert ours[int(row["rank"])] == pytest.approx(float(row["comp_comm_overlap_pctg"]), abs=1.0), row


@pytest.mark.corpus
def test_straggler_shows_in_steps(corpus_con):
    comm = dict(corpus_con.execute(
        "SELECT t.rank, sum(s.communication_ns) FROM steps s JOIN traces t USING (trace_id) "
        "WHERE t.file_name IN ('rank0.pt.trace.json.gz', 'rank1.pt.trace.json.gz') GROUP BY 1").fetchall())
    assert comm[0] > 10 * comm[1]  # rank 0 sits in all-reduce waiting for the sleeping rank 1
