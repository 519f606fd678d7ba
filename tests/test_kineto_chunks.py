"""Chunked Kineto decode: the tables do not depend on where the events array is cut."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from conftest import DATA, corpus_files, ids
from tracelake.ingest.dispatch import ingest_file
from tracelake.ingest.kineto import decode as kineto_decode
from tracelake.ingest.kineto import tables as kineto
from tracelake.lake.writer import conform

CORPUS_JSON = corpus_files("pytorch")
MNIST = DATA / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz"
_TRACES_COLUMNS = ["event_count", "start_ns", "end_ns", "is_truncated", "warnings", "content_sha256", "rank"]


def _tables(path: Path, chunk_bytes: int, monkeypatch) -> dict[str, pa.Table]:
    monkeypatch.setattr(kineto_decode, "CHUNK_BYTES", chunk_bytes)
    result = ingest_file(str(path))
    tables = {name: conform(name, t) for name, t in result.tables.items() if name != "traces"}
    tables["traces"] = result.tables["traces"].select(_TRACES_COLUMNS)
    return tables


def _decode_modes(monkeypatch) -> list[bool]:
    """Records the `chunked` argument of every decode() the ingester makes."""
    calls = []
    real = kineto.decode

    def spy(path, chunked=True):
        calls.append(chunked)
        return real(path, chunked)

    monkeypatch.setattr(kineto, "decode", spy)
    return calls


def _assert_same(a: dict[str, pa.Table], b: dict[str, pa.Table]):
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].equals(b[name]), name


def test_sample_many_chunks_equal_one(monkeypatch):
    modes = _decode_modes(monkeypatch)
    many = _tables(MNIST, 1 << 18, monkeypatch)
    assert modes == [True]  # every cut was good: no fallback to a whole decode
    _assert_same(many, _tables(MNIST, 1 << 40, monkeypatch))


@pytest.mark.corpus
@pytest.mark.parametrize("path", CORPUS_JSON, ids=ids(CORPUS_JSON))
def test_corpus_many_chunks_equal_one(path, monkeypatch):
    one = _tables(path, 1 << 40, monkeypatch)
    chunk = max(1 << 16, path.stat().st_size // 4)  # compressed size: several chunks per file
    _assert_same(_tables(path, chunk, monkeypatch), one)


def test_cut_inside_an_event_falls_back_to_whole_decode(tmp_path, monkeypatch):
    # Args holding a list of objects contain '}, {': a cut guessed there splits an event.
    events = [{"ph": "X", "cat": "cpu_op", "name": f"op{i}", "pid": 1, "tid": 1, "ts": i + 0.5, "dur": 0.25,
               "args": {"External id": i, "Input Dims": [{"a": 1}, {"b": 2}, {"c": 3}] * 20}} for i in range(200)]
    path = tmp_path / "nested.json"
    path.write_text(json.dumps({"traceEvents": events}))
    modes = _decode_modes(monkeypatch)
    chunked = _tables(path, 2000, monkeypatch)
    assert modes == [True, False]
    _assert_same(chunked, _tables(path, 1 << 40, monkeypatch))
    assert chunked["cpu_ops"].num_rows == 200


def test_malformed_events_in_several_chunks_give_one_warning(tmp_path, monkeypatch):
    kernel = {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.5, "dur": 1.0,
              "args": {"device": 0, "stream": 7, "correlation": 1}}
    events = [kernel if i % 50 else "not an event" for i in range(300)]
    path = tmp_path / "odd.json"
    path.write_text(json.dumps({"traceEvents": events}, indent=1))
    modes = _decode_modes(monkeypatch)
    monkeypatch.setattr(kineto_decode, "CHUNK_BYTES", 4000)
    result = ingest_file(str(path))
    assert modes == [True]
    assert result.tables["kernels"].num_rows == 294
    assert result.warnings == ["skipped 6 malformed events (not an event object)"]
