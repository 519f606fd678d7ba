"""Bad input: one clear line naming the file and the problem, salvage where documented, no partial lake."""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
from pathlib import Path

import pytest
from conftest import DATA
from tracelake.cli.main import main
from tracelake.ingest.dispatch import ingest_file
from tracelake.ingest.errors import ErrorKind, TraceError

MNIST = DATA / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz"
MLP = DATA / "torch-2.11_mlp-compiled-inference-fp16_h100.pt.trace.json.gz"
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
    # a JSON array of other objects (a results file) is no trace, not a trace with 0 events
    with pytest.raises(TraceError) as info:
        ingest_file(str(_write(tmp_path, "steps.json", b'[{"name": "step", "dur_us": 1.5}]')))
    assert "not a PyTorch trace" in str(info.value) and info.value.kind == ErrorKind.NOT_A_TRACE


def test_metadata_only_trace(tmp_path):
    meta = {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}}
    assert "no timed events" in _error(_write(tmp_path, "m.json", _trace([meta])))


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
    from tracelake.lake.version import __version__
    from tracelake.lake.writer import write_trace

    write_trace(lake, result.trace_id, result.tables, tracelake_version=__version__)
    import pyarrow.parquet as pq

    row = pq.read_table(next((lake / "kernels").glob("*/data.parquet"))).to_pylist()[0]
    assert row["device_id"] is None and row["grid_x"] is None and row["stream_id"] == 7


# --- Hostile inputs, by class (issue #23) ---------------------------------------------------------

def _nsys_copy(tmp_path: Path, name: str = "export.sqlite") -> Path:
    path = tmp_path / name
    path.write_bytes(gzip.decompress(NSYS.read_bytes()))
    return path


def _kernel_witness(path: Path) -> tuple[int, int]:
    """(kernel rows, GPU ns) of an export, counted by sqlite3 itself: the independent witness."""
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT count(*), sum(\"end\" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
    finally:
        con.close()


# Reading layer: only regular files are opened; nothing blocks on a FIFO or a device.

def _refused_promptly(path: str) -> str:
    """The one-line error for a non-regular file, within 10 s (a FIFO is unblocked if it hangs)."""
    import threading

    outcome: dict = {}

    def attempt():
        try:
            ingest_file(path)
        except TraceError as e:
            outcome["error"] = str(e)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive() and os.path.exists(path):  # hung on the FIFO: release it, then fail
        with open(path, "wb"):
            pass
    assert not worker.is_alive() and "error" in outcome, f"{path}: not refused within 10 s"
    message = outcome["error"]
    assert message.startswith(path) and "\n" not in message
    return message


def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "x.json"
    os.mkfifo(fifo)
    assert "FIFO" in _refused_promptly(str(fifo)) and "not a regular file" in _refused_promptly(str(fifo))


@pytest.mark.parametrize("path, kind", [("/dev/zero", "character device"), ("/dev/null", "character device")])
def test_devices_are_refused(path, kind):
    assert kind in _refused_promptly(path)


def test_directory_named_like_a_trace_is_refused(tmp_path):
    folder = tmp_path / "rank0.json"
    folder.mkdir()
    assert "a directory" in _refused_promptly(str(folder))


def test_symlink_to_a_regular_trace_is_read(tmp_path):
    link = tmp_path / "link.json.gz"
    link.symlink_to(MNIST)
    assert ingest_file(str(link)).tables["kernels"].num_rows == ingest_file(str(MNIST)).tables["kernels"].num_rows


# Reading layer: inflation is bounded (size and ratio), with limits that can be raised.

def _gzip_bomb(inflated_mib: int) -> bytes:
    """A valid JSON trace of `inflated_mib` MiB, almost all whitespace, as repeated gzip members
    (about 1000x compression: a 1 GiB bomb is a ~1 MiB file)."""
    head = gzip.compress(b'{"traceEvents": [' + b" " * 1024, 9)
    blank = gzip.compress(b" " * (1 << 20), 9)
    tail = gzip.compress(_trace([_kernel(1.0, 1.0)])[len(b'{"schemaVersion": 1, "traceEvents": ['):], 9)
    return head + blank * inflated_mib + tail


def test_gzip_bomb_is_refused_with_bounded_memory(tmp_path):
    """The issue's case: 1 MiB of gzip inflating to 1 GiB of valid JSON. Refused by the default
    ratio limit after about 100 MiB, in a process whose peak RSS is measured (was 2.2 GiB)."""
    import subprocess
    import sys

    bomb = _write(tmp_path, "bomb.json.gz", _gzip_bomb(1024))
    assert len(bomb.read_bytes()) < 2 << 20
    # Peak RSS is VmHWM of the child's own address space: ru_maxrss survives fork + exec and would
    # report the test process's own peak when it is larger (it is, after the CLI tests).
    script = ("import re, sys\nfrom tracelake.ingest.dispatch import ingest_file\n"
              "from tracelake.ingest.errors import ErrorKind, TraceError\n"
              "try:\n    ingest_file(sys.argv[1])\n    print('ingested')\nexcept TraceError as e:\n    print(e)\n"
              "status = open('/proc/self/status').read()\n"
              "print(int(re.search(r'VmHWM:\\s+(\\d+) kB', status).group(1)) // 1024)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRACELAKE_MAX_")}
    out = subprocess.run([sys.executable, "-c", script, str(bomb)], capture_output=True, text=True, env=env,
                         timeout=120)
    message, peak_mib = out.stdout.strip().splitlines()
    allowed_mib = 100 * bomb.stat().st_size / (1 << 20)  # the default ratio limit: 100x
    assert message.startswith(str(bomb)) and f"inflates past {allowed_mib:.1f} MiB" in message
    assert "--max-inflated" in message
    assert int(peak_mib) < 600, f"peak RSS {peak_mib} MiB"


def test_inflate_limits_apply_to_every_reader_and_can_be_raised(tmp_path):
    from tracelake.ingest.reading import Limits

    tight = Limits(max_inflated_bytes=1 << 20, max_inflate_ratio=2, ratio_floor_bytes=0)
    nsys_gz = _write(tmp_path, "n.sqlite.gz", NSYS.read_bytes())
    plain = _write(tmp_path, "plain.json", gzip.decompress(MNIST.read_bytes()))
    for path in (MNIST, nsys_gz, plain):
        with pytest.raises(TraceError) as info:
            ingest_file(str(path), tight)
        assert str(info.value).startswith(str(path)) and "TRACELAKE_MAX_INFLATED" in str(info.value)
    roomy = Limits(max_inflated_bytes=1 << 30, max_inflate_ratio=50, ratio_floor_bytes=0)
    assert ingest_file(str(nsys_gz), roomy).tables["kernels"].num_rows == 1200
    lake = tmp_path / "lake"
    assert main(["ingest", str(MNIST), "--lake", str(lake), "-q", "--max-inflated", "1M"]) == 1
    assert main(["ingest", str(MNIST), "--lake", str(lake), "-q", "--max-inflated", "1G",
                 "--max-inflate-ratio", "2"]) == 0  # the ratio applies above 64 MiB only


def test_inflate_limit_environment_variables(tmp_path, monkeypatch, capsys):
    from tracelake.ingest.reading import Limits

    monkeypatch.setenv("TRACELAKE_MAX_INFLATED", "1M")
    monkeypatch.setenv("TRACELAKE_MAX_INFLATE_RATIO", "3")
    assert Limits.from_environment() == Limits(1 << 20, 3)
    assert Limits.from_environment("2G", 7) == Limits(2 << 30, 7)  # options win over the environment
    assert "inflates past" in _error(_write(tmp_path, "m.json.gz", MNIST.read_bytes()))
    monkeypatch.setenv("TRACELAKE_MAX_INFLATED", "lots")
    assert main(["ingest", str(MNIST), "--lake", str(tmp_path / "lake")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error  inflate limits") and "\n" not in err


# Integrity: lookup ids unique, intervals not reversed; tables tracelake does not read are ignored.

@pytest.mark.parametrize("different", [False, True])
def test_duplicate_string_ids_never_multiply_rows(tmp_path, different):
    """The issue's case: StringIds with each id three times turned 1,200 kernels into 3,480."""
    path = _nsys_copy(tmp_path)
    clean_names = sorted(ingest_file(str(path)).tables["kernels"].column("name").to_pylist())
    rows, gpu_ns = _kernel_witness(path)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE s AS SELECT * FROM StringIds")  # no PRIMARY KEY: ids may repeat
    con.execute("INSERT INTO s SELECT id, value || ? FROM StringIds", [" (copy)" if different else ""])
    con.execute("INSERT INTO s SELECT * FROM StringIds")
    con.execute("DROP TABLE StringIds")
    con.execute("ALTER TABLE s RENAME TO StringIds")
    con.commit()
    con.close()
    result = ingest_file(str(path))
    kernels = result.tables["kernels"]
    assert kernels.num_rows == rows == 1200
    assert sum(kernels.column("duration_ns").to_pylist()) == gpu_ns
    assert sorted(kernels.column("name").to_pylist()) == clean_names  # the first text of each id
    warning = next(w for w in result.warnings if w.startswith("StringIds:"))
    assert "repeat an id" in warning and ("with different values" in warning)
    assert result.tables["traces"].column("warnings")[0].as_py() == result.warnings


def test_nsys_rows_ending_before_they_start_are_dropped_and_counted(tmp_path):
    path = _nsys_copy(tmp_path)
    con = sqlite3.connect(path)
    con.execute('UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = start - 1000 WHERE rowid IN '
                "(SELECT rowid FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 3)")
    con.commit()
    con.close()
    con = sqlite3.connect(path)
    kept_ns = con.execute('SELECT sum("end" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE "end" >= start').fetchone()[0]
    con.close()
    result = ingest_file(str(path))
    durations = result.tables["kernels"].column("duration_ns").to_pylist()
    assert len(durations) == 1197 and min(durations) >= 0 and sum(durations) == kept_ns
    assert "dropped 3 kernels rows with a negative duration (end before start)" in result.warnings


def test_tables_tracelake_does_not_read_are_ignored_whatever_their_names(tmp_path):
    path = _nsys_copy(tmp_path)
    con = sqlite3.connect(path)
    for name in ["it's", 'say "hi"', "drop table x; --", "名前"]:
        quoted = '"' + name.replace('"', '""') + '"'
        con.execute(f'CREATE TABLE {quoted} ("a\'b" INTEGER, "c""d" TEXT)')
    con.commit()
    con.close()
    assert ingest_file(str(path)).tables["kernels"].num_rows == 1200


def test_duplicate_device_ids_in_a_pytorch_trace_are_reduced(tmp_path):
    devices = [{"id": 0, "name": "A"}, {"id": 0, "name": "B"}, {"id": 1, "name": "C"}]
    result = ingest_file(str(_write(tmp_path, "d.json", _trace([_kernel(1.0, 1.0)], deviceProperties=devices))))
    assert result.tables["devices"].column("name").to_pylist() == ["A", "C"]
    assert any(w.startswith("devices: 1 rows repeat an id") for w in result.warnings)


# A UTF-8 byte order mark before a PyTorch trace is accepted (plain and gzip, ingest and run).

def test_utf8_bom_is_accepted(tmp_path, capsys):
    text = gzip.decompress(MNIST.read_bytes())
    expected = ingest_file(str(MNIST)).tables["kernels"].num_rows
    bom = b"\xef\xbb\xbf"
    (tmp_path / "in").mkdir()
    plain = _write(tmp_path / "in", "bom.json", bom + text)
    packed = _write(tmp_path / "in", "bom.json.gz", gzip.compress(bom + text, 1))
    for path in (plain, packed):
        assert ingest_file(str(path)).tables["kernels"].num_rows == expected
    code = main(["run", str(tmp_path / "in"), "--out", str(tmp_path / "out"), "--json", "--no-reports"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and {f["status"] for f in summary["files"]} == {"ok"}


# File names that are not UTF-8, or hold control characters: ingested, stored and shown escaped.

def test_non_utf8_file_name_is_ingested_and_the_batch_is_not_poisoned(tmp_path, capsys):
    src = tmp_path / "in"
    src.mkdir()
    raw_name = os.fsdecode(b"rank\xff\xfe0.json.gz")
    (src / raw_name).write_bytes(gzip.compress(_trace([_kernel(1.0, 2.0)])))
    (src / "good.json.gz").write_bytes(gzip.compress(_trace([_kernel(3.0, 1.0)])))
    assert main(["ingest", str(src / raw_name), "--lake", str(tmp_path / "lake")]) == 0
    out = capsys.readouterr().out
    assert "rank\\xff\\xfe0.json.gz" in out
    for attempt in range(2):  # the second run used to crash writing index.html
        code = main(["run", str(src), "--out", str(tmp_path / "out"), "--json", "--jobs", "1"])
        summary = json.loads(capsys.readouterr().out)
        assert code == 0
        statuses = {Path(f["path"]).name: f["status"] for f in summary["files"]}
        want = "ok" if attempt == 0 else "unchanged"
        assert statuses == {"rank\\xff\\xfe0.json.gz": want, "good.json.gz": want}
    reports = tmp_path / "out" / "reports"
    assert (reports / "index.html").is_file()
    assert not [p for p in reports.rglob("*") if p.name.endswith(".tmp")]


def test_control_characters_in_names_and_trace_strings_are_escaped(tmp_path, capsys):
    src = tmp_path / "in"
    src.mkdir()
    forged = "x\nok     pwned -> forged (1 events, 0.00 s)\x1b[2J\r.json.gz"
    (src / forged).write_bytes(MNIST.read_bytes())
    evil_kernel = "k\x1b]0;owned\x07\n\u202eevil"
    (src / "k.json").write_bytes(_trace([_kernel(1.0, 1.0, name=evil_kernel)]))
    (src / "bad\x1b[31m.json").write_bytes(b"not json")
    lake = tmp_path / "lake"
    assert main(["ingest", str(src), "--lake", str(lake)]) == 0  # the file that is no trace: listed as skipped
    main(["run", str(src), "--out", str(tmp_path / "out"), "-v", "--no-reports"])
    assert main(["sql", "--lake", str(lake), "SELECT name FROM kernels WHERE name LIKE 'k%'"]) == 0
    captured = capsys.readouterr()
    for text in (captured.out, captured.err):
        assert "\x1b" not in text and "\r" not in text and "\u202e" not in text and "\x07" not in text
        assert not any(line.startswith("ok     pwned") for line in text.splitlines())
    assert "x\\nok     pwned" in captured.out and "\\x1b]0;owned\\x07\\n\\u202eevil" in captured.out
    assert "skip   " + str(src) + "/bad\\x1b[31m.json" in captured.out
    csv = tmp_path / "names.csv"
    with open(csv, "w") as f:  # not a terminal: CSV keeps the exact values
        from tracelake.cli.output import write_result
        from tracelake.lake.database import connect

        con = connect(lake)
        write_result(con.sql("SELECT name FROM kernels WHERE name LIKE 'k%'"), "csv", f)
        con.close()
    assert "\x1b]0;owned" in csv.read_text()


# Outputs that cannot be written: one line naming the path, exit code 2, no traceback.

def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("error  ") and "\n" not in err and "Traceback" not in err
    return err


def test_output_paths_that_cannot_be_written(tmp_path, capsys):
    a_file = _write(tmp_path, "afile", b"x")
    assert main(["ingest", str(MNIST), "--lake", str(a_file)]) == 2
    assert _one_error_line(capsys) == f"error  {a_file}: exists and is not a directory"
    assert main(["run", str(MNIST), "--out", str(a_file / "sub")]) == 2
    assert "a part of this path is a regular file" in _one_error_line(capsys)
    lake = tmp_path / "lake"
    assert main(["ingest", str(MNIST), "--lake", str(lake), "-q"]) == 0
    assert main(["callctx", "--lake", str(lake), "--trace", "torch", "-o", str(a_file / "x.folded")]) == 2
    assert str(a_file) in _one_error_line(capsys)
    odd = tmp_path / os.fsdecode(b"out\xff")
    assert main(["run", str(MNIST), "--out", str(odd)]) == 2
    assert _one_error_line(capsys).endswith("out\\xff/lake: a lake's path must be valid UTF-8 (DuckDB and Parquet "
                                            "open no other)")
    assert main(["sql", "--lake", str(odd / "lake"), "SELECT 1"]) == 2
    assert "valid UTF-8" in _one_error_line(capsys)
    if os.geteuid() == 0:  # root writes through permission bits: use a file system that refuses it
        readonly = Path("/sys/fs/tracelake-test")
    else:
        readonly = tmp_path / "ro"
        readonly.mkdir()
        readonly.chmod(0o555)
    assert main(["run", str(MNIST), "--out", str(readonly / "out")]) == 2
    assert str(readonly) in _one_error_line(capsys)


# mail: an address with CR/LF is refused in one line (no header injection, no traceback).

@pytest.mark.parametrize("option", ["--to", "--from"])
def test_mail_address_with_line_breaks(tmp_path, capsys, option):
    eml = _write(tmp_path, "r.eml", b"Subject: x\r\n\r\nbody\r\n")
    addresses = {"--to": "team@example.com", "--from": "me@example.com"}
    addresses[option] = "team@example.com\r\nBcc: victim@example.com"
    assert main(["mail", str(eml), "--smtp", "127.0.0.1:9", "--from", addresses["--from"],
                 "--to", addresses["--to"]]) == 2
    assert "control characters" in _one_error_line(capsys)


# sql: the user's own rights by default (documented); --safe reads the lake and nothing else.

def test_sql_safe_mode(sample_lake, tmp_path, capsys):
    target = tmp_path / "copied.csv"
    copy = f"COPY (SELECT 1 AS a) TO '{target}'"
    assert main(["sql", "--lake", str(sample_lake), "--safe", copy]) == 2
    assert "refused a COPY statement" in _one_error_line(capsys) and not target.exists()
    assert main(["sql", "--lake", str(sample_lake), "--safe", "SELECT count(*) FROM read_csv('/etc/hostname')"]) == 2
    assert "disabled by configuration" in _one_error_line(capsys)
    assert main(["sql", "--lake", str(sample_lake), "--safe", "SET enable_external_access = true"]) == 2
    capsys.readouterr()
    into_lake = sample_lake.resolve() / "explained.csv"  # EXPLAIN ANALYZE runs what it explains
    assert main(["sql", "--lake", str(sample_lake), "--safe", f"EXPLAIN ANALYZE COPY (SELECT 1) TO '{into_lake}'"]) == 2
    assert "refused an EXPLAIN of a COPY statement" in _one_error_line(capsys) and not into_lake.exists()
    assert main(["sql", "--lake", str(sample_lake), "--safe", "--format", "csv",
                 "SELECT count(*) AS n FROM kernels"]) == 0
    assert int(capsys.readouterr().out.split()[1]) > 0
    assert main(["sql", "--lake", str(sample_lake), copy]) == 0  # default: the user's own rights
    assert target.read_text().split() == ["a", "1"]


def test_sql_safe_mode_locks_only_its_own_connection(sample_lake, tmp_path, capsys):
    """DuckDB shares a database instance, settings included, among a process's connections to one
    file: the locks of --safe must not bind a connection that a library user holds open."""
    from tracelake.lake.database import connect

    held = connect(sample_lake)
    try:
        for _ in range(2):  # the second --safe must not find the first one's locked settings
            assert main(["sql", "--lake", str(sample_lake), "--safe", "SELECT count(*) FROM kernels"]) == 0
        capsys.readouterr()
        target = tmp_path / "held.csv"
        held.execute(f"COPY (SELECT count(*) AS n FROM kernels) TO '{target}'")
        assert int(target.read_text().split()[1]) > 0
        assert held.execute("SELECT current_setting('lock_configuration')").fetchone()[0] is False
    finally:
        held.close()


def test_a_failed_database_build_leaves_no_temporary_file(sample_lake, tmp_path, monkeypatch):
    import shutil

    from tracelake.lake import database

    lake = tmp_path / "lake"
    shutil.copytree(sample_lake, lake)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(database.base_tables, "point_at_lake", interrupted)  # every build (the catalog may be a copy)
    with pytest.raises(KeyboardInterrupt):
        database.build_database(lake)
    assert not [p.name for p in lake.iterdir() if p.name.startswith(".tracelake.duckdb")]


def test_a_damaged_trace_in_the_lake_does_not_poison_later_runs(tmp_path, capsys):
    """A `traces` file that cannot be read (a damaged disk, a hand-edited lake) used to crash every
    later run; the next run removes that trace and ingests its file again."""
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.json.gz").write_bytes(MLP.read_bytes())
    args = ["run", str(src), "--out", str(tmp_path / "out"), "--json", "--no-reports", "--jobs", "1"]
    assert main(args) == 0
    capsys.readouterr()
    (part,) = (tmp_path / "out" / "lake" / "traces").glob("trace_id=*/data.parquet")
    part.write_bytes(b"PAR1 damaged")
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert [f["status"] for f in summary["files"]] == ["ok"]
    from tracelake.lake.database import connect

    con = connect(tmp_path / "out" / "lake")
    try:
        assert con.execute("SELECT count(*) FROM kernels").fetchone()[0] == ingest_file(str(MLP)).tables["kernels"].num_rows
    finally:
        con.close()
