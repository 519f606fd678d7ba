"""PyTorch (Kineto) ingest against independent counts, exact timestamps and HTA's numbers."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
from conftest import DATA, SAMPLE_FILES, corpus_files, ids
from independent_counts import count_tables, exact_kernel_starts_ns
from tracelake.ingest.dispatch import ingest_file

SAMPLE_JSON = [p for p in SAMPLE_FILES if ".json" in p.name]
CORPUS_JSON = corpus_files("pytorch")
GOLDEN_HTA = Path(__file__).parent / "golden" / "hta"


def _check_counts(path: Path):
    result = ingest_file(str(path))
    expected = count_tables(path)
    got = {name: result.tables[name].num_rows if name in result.tables else 0 for name in expected}
    assert got == dict(expected)
    assert result.tables["traces"].column("source")[0].as_py() == "pytorch"


@pytest.mark.parametrize("path", SAMPLE_JSON, ids=ids(SAMPLE_JSON))
def test_sample_counts_match_independent_count(path):
    _check_counts(path)


@pytest.mark.corpus
@pytest.mark.parametrize("path", CORPUS_JSON, ids=ids(CORPUS_JSON))
def test_corpus_counts_match_independent_count(path):
    _check_counts(path)


def _check_exact_starts(path: Path):
    result = ingest_file(str(path))
    got = sorted(result.tables["kernels"].column("start_ns").to_pylist())
    assert got == exact_kernel_starts_ns(path)


def test_sample_kernel_starts_exact_to_the_ns():
    _check_exact_starts(DATA / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz")


@pytest.mark.corpus
def test_absolute_ns_timestamps_are_not_float_rounded(corpus):
    # Absolute epoch µs with a ns fraction: a float parse is off by up to ~100 ns here.
    path = corpus / "traces/pytorch/hta_v100_resnet_ns_resolution_rank0.pt.trace.json.gz"
    _check_exact_starts(path)
    result = ingest_file(str(path))
    starts = result.tables["kernels"].column("start_ns").to_pylist()
    # The event style.md cites: 1712195495519689.047 µs, which float64 turns into ...688960 ns.
    assert 1712195495519689047 in set(
        result.tables["cpu_ops"].column("start_ns").to_pylist() + result.tables["api_calls"].column("start_ns").to_pylist()
        + starts + result.tables["annotations"].column("start_ns").to_pylist()
        + result.tables["memcpy"].column("start_ns").to_pylist()
    )


def _hta_launched_correlations(result) -> set[int]:
    """HTA (include_last_profiler_step=True) keeps GPU ops whose launch call it saw: a runtime call
    with the same correlation id starting no later than the end of the last ProfilerStep."""
    api = result.tables["api_calls"]
    ann = result.tables.get("annotations")
    steps = [e for n, e, g in zip(ann.column("name").to_pylist(), ann.column("end_ns").to_pylist(),
                                   ann.column("is_gpu").to_pylist()) if n.startswith("ProfilerStep#") and not g] if ann else []
    last_end = max(steps) if steps else max(api.column("end_ns").to_pylist())
    return {c for c, s in zip(api.column("correlation_id").to_pylist(), api.column("start_ns").to_pylist())
            if c is not None and math.ceil(s / 1000) <= math.ceil(last_end / 1000)}


def _hta_rounded_breakdown(result) -> dict[str, tuple[int, float]]:
    """Per kernel name: (count, sum µs) with HTA's rounding of ns-resolution events
    (ts = ceil(ts_us), end = floor(ts_us + dur_us), in float64) and HTA's launch filter."""
    out: dict[str, list] = {}
    launched = _hta_launched_correlations(result)
    for table in ("kernels", "memcpy", "memset"):
        t = result.tables.get(table)
        if t is None:
            continue
        for name, s, e, c in zip(t.column("name").to_pylist(), t.column("start_ns").to_pylist(),
                                 t.column("end_ns").to_pylist(), t.column("correlation_id").to_pylist()):
            if c not in launched:
                continue
            ts_us, len_us = s / 1000, (e - s) / 1000  # HTA's float64 µs (correctly rounded, as json parses them)
            dur_us = math.floor(ts_us + len_us) - math.ceil(ts_us)
            entry = out.setdefault(name, [0, 0])
            entry[0] += 1
            entry[1] += dur_us
    return {k: (v[0], v[1]) for k, v in out.items()}


def _golden(stem: str) -> dict[str, tuple[int, float]]:
    rows = list(csv.DictReader(open(GOLDEN_HTA / f"{stem}.kernel_breakdown.csv")))
    return {r["name"]: (round(float(r["sum_us"]) / float(r["mean_us"])) if float(r["mean_us"]) else None,
                        float(r["sum_us"])) for r in rows}


def _check_against_hta(path: Path, stem: str):
    result = ingest_file(str(path))
    ours, hta = _hta_rounded_breakdown(result), _golden(stem)
    assert set(hta) <= set(ours)
    # HTA quirk: a cpu_op that shares its name with a kernel (torch.compile's Triton launchers,
    # 'triton_*') is counted as a GPU kernel too. Check that explanation, then compare the rest.
    op_names = result.tables["cpu_ops"].column("name").to_pylist() if "cpu_ops" in result.tables else []
    for name in set(hta) & set(op_names):
        count = hta.pop(name)[0]
        assert count == ours[name][0] + op_names.count(name), name
    for name, (count, sum_us) in hta.items():
        assert ours[name][1] == pytest.approx(sum_us, abs=0.5), name
        if count is not None:
            assert ours[name][0] == count, name


@pytest.mark.parametrize("stem", ["torch-2.11_mnist-cnn-train_h100", "torch-2.11_mlp-compiled-inference-fp16_h100",
                                  "torch-2.11_resnet50-train-fp32-pageable_h100"])
def test_sample_kernel_time_per_name_equals_hta(stem):
    _check_against_hta(DATA / f"{stem}.pt.trace.json.gz", stem)


@pytest.mark.corpus
@pytest.mark.parametrize("file_name", ["torch-2.11_gpt2-small-train-bf16_h100.pt.trace.json.gz",
                                       "hta_v100_resnet_ns_resolution_rank0.pt.trace.json.gz",
                                       "hta_a100_trace_diff_control_rank3.json.gz",
                                       "tracelens_h100_timesformer_inference_pystack.json.gz"])
def test_corpus_kernel_time_per_name_equals_hta(corpus, file_name):
    stem = file_name.removesuffix(".json.gz").removesuffix(".pt.trace")
    _check_against_hta(corpus / "traces" / "pytorch" / file_name, stem)


@pytest.mark.corpus
@pytest.mark.parametrize("file_name", ["torch-2.11_gpt2-small-train-bf16_h100.pt.trace.json.gz",
                                       "hta_a100_trace_diff_control_rank3.json.gz",
                                       "tracelens_h100_timesformer_inference_pystack.json.gz"])
def test_kernel_summary_view_agrees_with_hta(corpus, corpus_con, file_name):
    """kernel_summary (exact ns) vs HTA's breakdown (µs, rounded per kernel): for every kernel name
    both count the same instances, totals differ by at most 2 µs per instance."""
    stem = file_name.removesuffix(".json.gz").removesuffix(".pt.trace")
    hta = _golden(stem)
    rows = corpus_con.execute(
        "SELECT name, instances, total_ns FROM kernel_summary JOIN traces USING (trace_id) WHERE file_name = ?",
        [file_name]).fetchall()
    ours = {name: (n, total) for name, n, total in rows}
    compared = 0
    for name, (count, sum_us) in hta.items():
        if name in ours and ours[name][0] == count:
            compared += 1
            assert abs(ours[name][1] / 1000 - sum_us) <= 2 * count, name  # start rounded up, end down
    kernel_names = [n for n in hta if not n.startswith(("Memcpy", "Memset"))]
    assert compared >= 0.9 * len(kernel_names)


def test_tables_asked_alone_are_those_of_a_whole_read():
    """`tracelake stats` of a file asks for the tables its reports read: their rows are built
    alone (GPU work still gets its launcher's pid/tid, the devices their vendor, processes and
    threads every CPU-side lane), equal to the same tables of a full read; nothing else is kept
    but the traces row, which is whole again once `traces` is asked for."""
    path = str(DATA / "torch-2.11_resnet50-train-fp32-pageable_h100.pt.trace.json.gz")
    whole = ingest_file(path).tables
    assert {"kernels", "memcpy", "flows", "processes", "threads", "devices", "cpu_ops"} <= set(whole)
    for asked in ({"kernels"}, {"memcpy", "memset"}, {"flows"}, {"processes", "threads"}, {"devices"},
                  {"cpu_ops", "kernel_summary"}):
        got = ingest_file(path, tables=asked).tables
        assert set(got) == {t for t in asked if t in whole} | {"traces"}, asked
        for name in set(got) - {"traces"}:
            assert got[name].equals(whole[name]), name
    traces = ingest_file(path, tables={"traces"}).tables["traces"]
    assert traces.drop(["ingested_at"]).equals(whole["traces"].drop(["ingested_at"]))
