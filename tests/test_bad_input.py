"""Bad input: one clear line naming the file and the problem, salvage where documented, no partial lake."""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import pytest
from conftest import DATA
from tracelake.analysis.cli import main
from tracelake.ingest.dispatch import ingest_file
from tracelake.ingest.errors import TraceError

MNIST = DATA / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz"
NSYS = DATA / "nsys-2025.3.1_cnn-train-pageable_h100.sqlite.gz"


def _error(path: Path) -> str:
    with pytest.raises(TraceError) as info:
        ingest_file(str(path))
    message = str(info.value)
    assert message.startswith(str(path)) and "\n" not in message
    return message


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def _trace(events, **top) -> bytes:
    return json.dumps({"schemaVersion": 1, **top, "traceEvents": events}).encode()


def _kernel(ts, dur, name="k", corr=1):
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
            "args": {"device": 0, "stream": 7, "correlation": corr}}


def test_empty_file(tmp_path):
    assert "empty file" in _error(_write(tmp_path, "a.json", b""))


def test_corrupt_gzip(tmp_path):
    data = MNIST.read_bytes()
    bad = data[:10] + bytes(b ^ 0x5A for b in data[10:2000]) + data[2000:]
    assert "gzip" in _error(_write(tmp_path, "bad.json.gz", bad))


def test_not_a_trace_json(tmp_path):
    assert "not a Chrome trace" in _error(_write(tmp_path, "x.json", b'{"hello": [1, 2]}'))
    assert "no trace events" in _error(_write(tmp_path, "y.json", b"[1, 2, 3]"))


def test_unknown_format(tmp_path):
    assert "unknown format" in _error(_write(tmp_path, "z.sqlite", b"\x00\x01 definitely not a trace"))


def test_truncated_json_keeps_complete_events(tmp_path):
    full = gzip.decompress(MNIST.read_bytes())
    at = 0
    for _ in range(50):  # cut in the middle of the file's kernel events
        at = full.index(b'"cat": "kernel"', at + 1)
    cut = _write(tmp_path, "cut.json", full[: at + 100])
    whole = ingest_file(str(MNIST))
    salvaged = ingest_file(str(cut))
    row = salvaged.tables["traces"].to_pylist()[0]
    assert row["is_truncated"] and any("cut short" in w for w in row["warnings"])
    n = salvaged.tables["kernels"].num_rows
    assert 0 < n < whole.tables["kernels"].num_rows
    # the salvaged kernels are exactly the first n complete ones of the file
    assert salvaged.tables["kernels"].column("start_ns").to_pylist() == \
        whole.tables["kernels"].column("start_ns").to_pylist()[:n]


def test_truncated_gzip_is_salvaged_too(tmp_path):
    data = MNIST.read_bytes()
    result = ingest_file(str(_write(tmp_path, "cut.json.gz", data[: len(data) * 9 // 10])))
    row = result.tables["traces"].to_pylist()[0]
    assert row["is_truncated"] and result.tables["kernels"].num_rows > 0


def test_trace_without_gpu_events_is_valid(tmp_path):
    ops = [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 10.5, "dur": 2}]
    result = ingest_file(str(_write(tmp_path, "cpu.json", _trace(ops))))
    assert result.tables["cpu_ops"].num_rows == 1 and "kernels" not in result.tables


def test_absurd_values_are_dropped_with_warnings(tmp_path):
    events = [_kernel(100.0, 5.0), _kernel(200.0, -3.0, corr=2), _kernel(0, 0, corr=3)]
    result = ingest_file(str(_write(tmp_path, "absurd.json", _trace(events))))
    warnings = result.tables["traces"].to_pylist()[0]["warnings"]
    assert result.tables["kernels"].num_rows == 1
    assert any("negative duration" in w for w in warnings) and any("ts=0" in w for w in warnings)


def test_odd_strings_survive(tmp_path):
    name = "<script>alert('x')</script> \u00e9\u4e2d " + "A" * 5000
    data = _trace([_kernel(1.0, 1.0, name=name)]).replace(b"\\u00e9", b"\xff\xfe")  # invalid UTF-8 bytes
    result = ingest_file(str(_write(tmp_path, "odd.json", data)))
    got = result.tables["kernels"].column("name")[0].as_py()
    assert got.startswith("<script>") and got.endswith("A" * 5000)


def test_wrongly_typed_fields_do_not_crash(tmp_path):
    events = [_kernel(1.0, 1.0), {"ph": "X", "cat": "kernel", "name": 5, "pid": [1], "ts": "x", "dur": {}},
              "not an event", {"ph": "X", "cat": "kernel", "ts": 3, "dur": 1, "args": {"correlation": "7", "grid": 3}}]
    result = ingest_file(str(_write(tmp_path, "typed.json", _trace(events))))
    assert result.tables["kernels"].num_rows >= 2


def test_nsys_report_gets_export_advice(tmp_path):
    assert "nsys export --type sqlite" in _error(_write(tmp_path, "r.nsys-rep", b"PK\x03\x04 zip data"))


def test_sqlite_that_is_not_nsys(tmp_path):
    path = tmp_path / "other.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (a)")
    con.commit()
    con.close()
    assert "not an Nsight Systems export" in _error(path)


def test_truncated_sqlite(tmp_path):
    data = gzip.decompress(NSYS.read_bytes())
    assert "truncated" in _error(_write(tmp_path, "cut.sqlite", data[: len(data) // 3]))


def test_locked_sqlite_still_reads(tmp_path):
    path = _write(tmp_path, "locked.sqlite", gzip.decompress(NSYS.read_bytes()))
    holder = sqlite3.connect(path)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        assert ingest_file(str(path)).tables["kernels"].num_rows == 1200
    finally:
        holder.rollback()
        holder.close()


def test_nsys_export_without_gpu_activity(tmp_path):
    path = tmp_path / "cpu_only.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    con.execute("CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT)")
    con.execute("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2025.3.1'), "
                "('EXPORT_SCHEMA_VERSION', '3.20.3')")
    con.commit()
    con.close()
    result = ingest_file(str(path))
    assert "no GPU activity" in " ".join(result.warnings)


def test_nsys_strings_with_invalid_utf8_are_replaced(tmp_path):
    """SQLite stores TEXT unchecked: a damaged page (found by test_fuzz) gave kernel names with
    invalid UTF-8, which crashed the calling-context build. They are read with U+FFFD instead."""
    path = tmp_path / "bad_utf8.sqlite"
    path.write_bytes(gzip.decompress((DATA / "nsys-2025.3.1_cnn-train-pageable_h100.sqlite.gz").read_bytes()))
    con = sqlite3.connect(path)
    for sid in con.execute("SELECT shortName, demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1").fetchone():
        con.execute("UPDATE StringIds SET value = CAST(x'6b65726e656cff' AS TEXT) WHERE id = ?", (sid,))
    con.commit()
    con.close()
    lake = tmp_path / "lake"
    assert main(["ingest", str(path), "--lake", str(lake)]) == 0
    out = tmp_path / "out.txt"
    assert main(["callctx", "--lake", str(lake), "--trace", "bad_utf8", "--format", "folded", "-o", str(out)]) == 0
    assert "kernel\ufffd" in out.read_text()


def test_batch_goes_on_and_leaves_nothing_half_written(tmp_path, capsys):
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "good.json.gz").write_bytes((DATA / "torch-2.11_mlp-compiled-inference-fp16_h100.pt.trace.json.gz").read_bytes())
    (inputs / "broken.json").write_bytes(b'{"traceEvents": "nope"')
    (inputs / "empty.sqlite").write_bytes(b"")
    lake = tmp_path / "lake"
    assert main(["ingest", str(inputs), "--lake", str(lake)]) == 1
    err = capsys.readouterr().err
    assert "broken.json" in err and "empty.sqlite: empty file" in err
    partitions = {p.name for p in (lake / "kernels").iterdir()}
    assert len(partitions) == 1 and next(iter(partitions)).startswith("trace_id=good-")
    assert not (lake / ".staging").exists()


def test_values_too_large_for_their_column_become_null(tmp_path):
    # found by the fuzzer: a device id of 2**31 must not crash writing the int32 column
    events = [dict(_kernel(1.0, 1.0), args={"device": 2**31, "stream": 7, "correlation": 1, "grid": [2**40, 1, 1]})]
    result = ingest_file(str(_write(tmp_path, "huge.json", _trace(events))))
    lake = tmp_path / "lake"
    from tracelake.analysis import __version__
    from tracelake.ingest.lake_writer import write_trace

    write_trace(lake, result.trace_id, result.tables, tracelake_version=__version__)
    import pyarrow.parquet as pq

    row = pq.read_table(next((lake / "kernels").glob("*/data.parquet"))).to_pylist()[0]
    assert row["device_id"] is None and row["grid_x"] is None and row["stream_id"] == 7
