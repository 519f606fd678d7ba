"""A big Kineto trace decoded on several worker processes (ingest/kineto/parallel.py) gives the
tables of the decode in one process: the same rows, row ids, metadata and warnings, for plain
and gzip files, bare arrays, a byte order mark, damaged files and files whose cuts are wrong."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pytest
from conftest import DATA, corpus_files, ids
from tracelake.ingest.dispatch import ingest_file
from tracelake.ingest.errors import TraceError
from tracelake.ingest.kineto import parallel
from tracelake.ingest.kineto import tables as kineto
from tracelake.ingest.kineto.decode import ChunkFailed
from tracelake.ingest.process_pool import lending
from tracelake.jobs.worker_pool import process_pool
from tracelake.lake.writer import conform

CORPUS_JSON = corpus_files("pytorch")
MNIST = DATA / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz"
_TRACES_COLUMNS = ["event_count", "start_ns", "end_ns", "is_truncated", "warnings", "content_sha256", "rank",
                   "metadata_json", "clock_offset_ns", "world_size"]


@pytest.fixture
def reads(monkeypatch) -> list[str]:
    """Small ranges, no size floor and 2 cores, so that any file is decoded in parallel where
    workers are lent; records per read how: 'parallel', 'here' (in this process), or 'failed' (a
    range did not decode, and the file was then decoded here)."""
    monkeypatch.setattr(parallel, "MIN_TEXT_BYTES", 0)
    monkeypatch.setattr(parallel, "RANGE_BYTES", 1 << 16)
    monkeypatch.setenv("TRACELAKE_CORES", "2")
    used = []
    real = kineto.read_rows

    def spy(*args):
        try:
            read = real(*args)
        except ChunkFailed:
            used.append("failed")
            raise
        used.append("here" if read is None else "parallel")
        return read

    monkeypatch.setattr(kineto, "read_rows", spy)
    return used


def _tables(path: Path, lent: bool, wanted: set[str] | None = None) -> dict[str, pa.Table]:
    if lent:
        with lending(process_pool):
            result = ingest_file(str(path), tables=wanted)
    else:
        result = ingest_file(str(path), tables=wanted)
    tables = {name: conform(name, t) for name, t in result.tables.items() if name != "traces"}
    tables["traces"] = result.tables["traces"].select(_TRACES_COLUMNS)
    return tables


def _assert_same(a: dict[str, pa.Table], b: dict[str, pa.Table]):
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].equals(b[name]), name


def _plain(tmp_path: Path, prefix: bytes = b"") -> Path:
    path = tmp_path / "mnist.pt.trace.json"
    path.write_bytes(prefix + gzip.decompress(MNIST.read_bytes()))
    return path


def test_gzip_file_in_parallel_equals_one_process(reads):
    _assert_same(_tables(MNIST, lent=True), _tables(MNIST, lent=False))
    assert reads == ["parallel", "here"]


@pytest.mark.parametrize("prefix", [b"", b"\xef\xbb\xbf  \n"], ids=["plain", "byte-order-mark"])
def test_plain_file_in_parallel_equals_one_process(reads, tmp_path, prefix):
    path = _plain(tmp_path, prefix)
    assert path.stat().st_size > 20 * parallel.RANGE_BYTES  # many ranges
    _assert_same(_tables(path, lent=True), _tables(path, lent=False))
    assert reads == ["parallel", "here"]


def test_wanted_tables_in_parallel_equal_one_process(reads, tmp_path):
    path = _plain(tmp_path)
    wanted = {"kernels", "api_calls"}
    _assert_same(_tables(path, lent=True, wanted=wanted), _tables(path, lent=False, wanted=wanted))


def test_bare_array_with_keys_after_it(reads, tmp_path):
    doc = json.loads(gzip.decompress(MNIST.read_bytes()))
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(doc["traceEvents"]))
    _assert_same(_tables(bare, lent=True), _tables(bare, lent=False))
    # the keys written after the array reach the metadata in both ways
    reordered = tmp_path / "keys-after.json"
    events = doc.pop("traceEvents")
    reordered.write_text(json.dumps({"schemaVersion": doc.get("schemaVersion"), "traceEvents": events,
                                     **{k: v for k, v in doc.items() if k != "schemaVersion"}}))
    lent = _tables(reordered, lent=True)
    _assert_same(lent, _tables(reordered, lent=False))
    assert json.loads(lent["traces"]["metadata_json"][0].as_py()).keys() >= {"distributedInfo"} & doc.keys()
    assert reads == ["parallel", "here"] * 2


def test_cut_inside_an_event_is_decoded_in_one_process(reads, tmp_path):
    # Args holding a list of objects contain '}, {': a cut guessed there splits an event.
    events = [{"ph": "X", "cat": "cpu_op", "name": f"op{i}", "pid": 1, "tid": 1, "ts": i + 0.5, "dur": 0.25,
               "args": {"External id": i, "Input Dims": [{"a": 1}, {"b": 2}, {"c": 3}] * 2000}} for i in range(40)]
    path = tmp_path / "nested.json"
    path.write_text(json.dumps({"traceEvents": events}))
    lent = _tables(path, lent=True)
    assert reads == ["failed"]
    _assert_same(lent, _tables(path, lent=False))
    assert lent["cpu_ops"].num_rows == 40


def test_truncated_file_is_salvaged_as_in_one_process(reads, tmp_path):
    text = gzip.decompress(MNIST.read_bytes())
    path = tmp_path / "cut.json"
    path.write_bytes(text[: len(text) * 2 // 3])
    lent = _tables(path, lent=True)
    _assert_same(lent, _tables(path, lent=False))
    assert lent["traces"]["is_truncated"][0].as_py()


def test_malformed_events_in_several_ranges_give_one_warning(reads, tmp_path):
    kernel = {"ph": "X", "cat": "kernel", "name": "k" * 500, "pid": 0, "tid": 7, "ts": 1.5, "dur": 1.0,
              "args": {"device": 0, "stream": 7, "correlation": 1}}
    path = tmp_path / "odd.json"
    path.write_text(json.dumps({"traceEvents": [kernel if i % 50 else "not an event" for i in range(3000)]}))
    lent = _tables(path, lent=True)
    assert reads[0] == "parallel"
    _assert_same(lent, _tables(path, lent=False))
    assert lent["traces"]["warnings"][0].as_py() == ["skipped 60 malformed events (not an event object)"]


def test_not_a_trace_is_the_same_error(reads, tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"traceEvents": [{"name": "x" * 100, "value": i} for i in range(5000)]}))
    with pytest.raises(TraceError) as lent, lending(process_pool):
        ingest_file(str(path))
    with pytest.raises(TraceError) as here:
        ingest_file(str(path))
    assert str(lent.value) == str(here.value)


@pytest.mark.corpus
@pytest.mark.parametrize("path", CORPUS_JSON, ids=ids(CORPUS_JSON))
def test_corpus_in_parallel_equals_one_process(path, reads):
    _assert_same(_tables(path, lent=True), _tables(path, lent=False))


def _dies(path, work, build, pids_only):
    import os

    os._exit(1)


def test_a_worker_that_dies_sends_the_file_back_to_one_process(reads, monkeypatch):
    monkeypatch.setattr(parallel, "_rows_of_range", _dies)
    _assert_same(_tables(MNIST, lent=True), _tables(MNIST, lent=False))
    assert reads == ["failed", "here"]


def test_a_small_memory_budget_keeps_the_decode_in_one_process(reads, monkeypatch):
    monkeypatch.setenv("TRACELAKE_PROCESS_MEMORY", str(1 << 30))  # a quarter: one worker of 256 MiB
    _tables(MNIST, lent=True)
    monkeypatch.setenv("TRACELAKE_PROCESS_MEMORY", str(2 << 30))
    _tables(MNIST, lent=True)
    assert reads == ["here", "parallel"]
