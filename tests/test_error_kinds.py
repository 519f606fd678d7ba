"""Errors carry a kind (ingest/errors.py); the batch job skips files that are not traces by kind,
never by the words of the message (which holds the file's path, chosen by the user)."""

from __future__ import annotations

import gzip
import sqlite3
from pathlib import Path

import pytest
from conftest import DATA
from tracelake.ingest.dispatch import ingest_file
from tracelake.ingest.errors import ErrorKind, TraceError
from tracelake.jobs import run_job

MNIST = DATA / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz"


def _sqlite_without_nsys_tables(path: Path) -> None:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE notes (text)")
    con.commit()
    con.close()


def _files(tmp_path: Path) -> dict[str, ErrorKind]:
    """name -> the kind its error must have."""
    (tmp_path / "config.json").write_text('{"lr": 0.1, "batch": 32}')
    (tmp_path / "readme.json").write_bytes(b"plain text, not JSON")
    (tmp_path / "hello.json.gz").write_bytes(gzip.compress(b"plain text, not JSON"))
    _sqlite_without_nsys_tables(tmp_path / "notes.sqlite")
    (tmp_path / "empty.json").write_bytes(b"")
    (tmp_path / "cut.json.gz").write_bytes(MNIST.read_bytes()[:200])
    (tmp_path / "run.nsys-rep").write_bytes(b"PK\x03\x04 an Nsight Systems report")
    # messages that hold the words of another kind: the path is part of every message
    (tmp_path / "unknown format, not a Chrome trace.json").write_bytes(b"")
    return {"config.json": ErrorKind.NOT_A_TRACE, "readme.json": ErrorKind.NOT_A_TRACE,
            "hello.json.gz": ErrorKind.NOT_A_TRACE, "notes.sqlite": ErrorKind.NOT_A_TRACE,
            "empty.json": ErrorKind.BAD_TRACE, "cut.json.gz": ErrorKind.BAD_TRACE, "run.nsys-rep": ErrorKind.BAD_TRACE,
            "unknown format, not a Chrome trace.json": ErrorKind.BAD_TRACE}


def test_each_error_has_its_kind(tmp_path):
    for name, kind in _files(tmp_path).items():
        with pytest.raises(TraceError) as info:
            ingest_file(str(tmp_path / name))
        assert info.value.kind == kind, (name, str(info.value))


def test_the_batch_job_skips_by_kind(tmp_path):
    (tmp_path / "in").mkdir()
    expected = _files(tmp_path / "in")
    summary = run_job.run([str(tmp_path / "in")], tmp_path / "out", jobs=1)
    got = {Path(f["path"]).name: (f["status"], f["error_kind"]) for f in summary.files}
    assert got == {name: ("skipped" if kind == ErrorKind.NOT_A_TRACE else "error", kind)
                   for name, kind in expected.items()}
