"""Nsight Systems ingest: row counts straight from the SQLite file, names as NVIDIA prints them."""

from __future__ import annotations

import csv
import gzip
import shutil
import sqlite3
from pathlib import Path

import pyarrow.compute as pc
import pytest
from conftest import DATA, corpus_files, ids
from tracelake.ingest.dispatch import ingest_file

CORPUS_NSYS = corpus_files("nsys")
SAMPLE_NSYS = DATA / "nsys-2025.3.1_cnn-train-pageable_h100.sqlite.gz"

# lake table -> SQL counting the same rows in the export (None: table absent there)
SOURCE_COUNTS = {
    "kernels": "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL",
    "memcpy": "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY",
    "memset": "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET",
    "api_calls": "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME",
    "synchronizations": "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    "annotations": "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (34, 59, 60, 70, 71)",
    "memory_events": "SELECT count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS",
    "cpu_samples": "SELECT count(*) FROM COMPOSITE_EVENTS",
    "os_runtime_calls": "SELECT count(*) FROM OSRT_API",
    "profiler_overhead": "SELECT count(*) FROM PROFILER_OVERHEAD",
    "processes": "SELECT count(DISTINCT pid) FROM PROCESSES",
}
CALLCHAIN_TABLES = {"cuda": "CUDA_CALLCHAINS", "sampling": "SAMPLING_CALLCHAINS", "osrt": "OSRT_CALLCHAINS"}


def _local_sqlite(path: Path, tmp_path: Path) -> Path:
    if path.suffix != ".gz":
        return path
    out = tmp_path / path.stem
    with gzip.open(path, "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def _count(con, sql: str) -> int:
    try:
        return con.execute(sql).fetchone()[0]
    except sqlite3.OperationalError:  # table absent in this export
        return 0


def _check(path: Path, tmp_path: Path, result=None):
    result = result or ingest_file(str(path))
    con = sqlite3.connect(f"file:{_local_sqlite(path, tmp_path)}?mode=ro", uri=True)
    for table, sql in SOURCE_COUNTS.items():
        got = result.tables[table].num_rows if table in result.tables else 0
        assert got == _count(con, sql), table
    chains = result.tables.get("callchains")
    for kind, source in CALLCHAIN_TABLES.items():
        got = sum(k == kind for k in chains.column("kind").to_pylist()) if chains is not None else 0
        assert got == _count(con, f"SELECT count(*) FROM {source}"), kind
    traces = result.tables["traces"].to_pylist()[0]
    assert traces["source"] == "nsys" and traces["tool_version"] and traces["schema_version"]
    return result


def _oracle_names(oracle_dir: Path) -> set[str]:
    path = oracle_dir / "cuda_gpu_kern_sum.csv"
    if path.stat().st_size == 0:
        return set()
    return {row["Name"] for row in csv.DictReader(open(path, newline=""))}


@pytest.fixture(scope="module")
def sample():
    return ingest_file(str(SAMPLE_NSYS))


def test_sample_counts_and_kernel_names(sample, tmp_path):
    result = _check(SAMPLE_NSYS, tmp_path, sample)
    names = set(result.tables["kernels"].column("name").to_pylist())
    assert names == _oracle_names(DATA / "oracles" / "nsys-2025.3.1_cnn-train-pageable_h100")


def test_tables_asked_for_are_the_same_and_the_span_still_covers_the_rest(sample, tmp_path):
    """`tracelake stats` of an export reads only the tables its reports need: those are the same
    rows, and the trace's span (the end of an NVTX range never closed) still covers the tables
    not read: here the OS runtime calls begin and end the trace."""
    asked = {"kernels", "memcpy", "memset", "api_calls", "profiler_overhead"}
    some = ingest_file(str(SAMPLE_NSYS), tables=asked)
    assert set(some.tables) == asked | {"traces"}  # nor annotations, os_runtime_calls, callchains, ...
    assert all(some.tables[t].equals(sample.tables[t]) for t in asked)
    con = sqlite3.connect(f"file:{_local_sqlite(SAMPLE_NSYS, tmp_path)}?mode=ro", uri=True)
    osrt = con.execute('SELECT min(start), max("end") FROM OSRT_API').fetchone()
    span = ["start_ns", "end_ns", "duration_ns"]
    assert some.tables["traces"].select(span).to_pylist() == sample.tables["traces"].select(span).to_pylist() \
        == [{"start_ns": osrt[0], "end_ns": osrt[1], "duration_ns": osrt[1] - osrt[0]}]


@pytest.mark.corpus
@pytest.mark.parametrize("path", CORPUS_NSYS, ids=ids(CORPUS_NSYS))
def test_corpus_counts_and_kernel_names(path, corpus, tmp_path):
    result = _check(path, tmp_path)
    stem = path.name.removesuffix(".gz").removesuffix(".sqlite")
    names = set(result.tables["kernels"].column("name").to_pylist()) if "kernels" in result.tables else set()
    assert names == _oracle_names(corpus / "oracles" / "nsys-stats" / stem)


@pytest.mark.corpus
def test_multi_process_export_keeps_processes_and_devices_apart(corpus):
    result = ingest_file(str(corpus / "traces/nsys/nsys-2025.3.1_gpt2-ddp-2rank_h200x2.sqlite.gz"))
    k = result.tables["kernels"]
    pairs = set(zip(k.column("pid").to_pylist(), k.column("device_id").to_pylist()))
    assert len(pairs) == 2 and len({p for p, _ in pairs}) == 2 and len({d for _, d in pairs}) == 2
    # every kernel found its launching thread through (pid, correlation_id)
    assert k.column("tid").null_count == 0


@pytest.mark.corpus
def test_cuda_backtraces_join_to_kernels(corpus):
    result = ingest_file(str(corpus / "traces/nsys/nsys-2025.3.1_gpt2-train-pystacks_h100.sqlite.gz"))
    api = result.tables["api_calls"].filter(pc.not_equal(result.tables["api_calls"].column("api"), "backtrace"))
    with_chain = {(p, c) for p, c, cc in zip(api.column("pid").to_pylist(), api.column("correlation_id").to_pylist(),
                                             api.column("callchain_id").to_pylist()) if cc is not None}
    k = result.tables["kernels"]
    launched = sum((p, c) in with_chain for p, c in zip(k.column("pid").to_pylist(), k.column("correlation_id").to_pylist()))
    assert launched > 0.8 * k.num_rows  # 3153 of 3729: nsys records backtraces only for calls over its threshold
    symbols = set(result.tables["callchains"].column("symbol").to_pylist())
    assert any(s and "at::_ops::addmm" in s for s in symbols)
