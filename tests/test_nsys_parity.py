"""Parity with NVIDIA's `nsys stats` on every shared export: one test per (trace, report)."""

from __future__ import annotations

import pytest
from conftest import CORPUS, DATA
from nsys_oracle import REPORTS, compare


def _trace_id(con, stem: str) -> str:
    rows = con.execute("SELECT trace_id FROM traces WHERE source = 'nsys' AND file_name LIKE ? || '.sqlite%'",
                       [stem]).fetchall()
    assert len(rows) == 1, stem
    return rows[0][0]


# NVIDIA's report printed nothing although the export has the data: it needs enum tables that
# 2022.1 exports lack. tracelake carries its own enum maps and reports these rows anyway.
# Likewise NVIDIA's memcpy rules refuse exports without the greenContextId column (before 2024).
NVIDIA_REFUSED = {
    ("nsys-2022.1.3_dlprof-pytorch-cnn_rtx2070s", "cuda_gpu_mem_time_sum"): "memcpy_time_summary",
    ("nsys-2022.1.3_dlprof-pytorch-cnn_rtx2070s", "cuda_gpu_mem_size_sum"): "memcpy_size_summary",
    ("nsys-2022.1.3_dlprof-pytorch-cnn_rtx2070s", "cuda_memcpy_async"): "finding_cuda_memcpy_async",
    ("nsys-2023.2.3_cutlass-gemm-cpu-sampling_a40", "cuda_memcpy_sync"): "finding_cuda_memcpy_sync",
}


def _oracle_cases():
    """(trace stem, report) for every report NVIDIA wrote (a missing file: the report was not run)."""
    if CORPUS is None:
        return []
    root = CORPUS / "oracles" / "nsys-stats"
    return [(d.name, r) for d in sorted(root.iterdir()) if d.is_dir() for r in REPORTS if (d / f"{r}.csv").exists()]


@pytest.mark.parametrize("report", list(REPORTS))
def test_sample_trace_matches_nsys_stats(sample_con, report):
    stem = "nsys-2025.3.1_cnn-train-pageable_h100"
    assert compare(sample_con, _trace_id(sample_con, stem), DATA / "oracles" / stem, report) == []


@pytest.mark.corpus
@pytest.mark.parametrize("stem,report", _oracle_cases(), ids=[f"{s}:{r}" for s, r in _oracle_cases()])
def test_corpus_matches_nsys_stats(corpus, corpus_con, stem, report):
    trace_id = _trace_id(corpus_con, stem)
    if (stem, report) in NVIDIA_REFUSED:
        table = NVIDIA_REFUSED[stem, report]
        n = corpus_con.execute(f"SELECT count(*) FROM {table} WHERE trace_id = ?", [trace_id]).fetchone()[0]
        assert n > 0 and (corpus / "oracles" / "nsys-stats" / stem / f"{report}.csv").stat().st_size == 0
        return
    problems = compare(corpus_con, trace_id, corpus / "oracles" / "nsys-stats" / stem, report)
    assert problems == [], "\n".join(problems[:20])
