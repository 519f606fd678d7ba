"""`.nsys-rep` reports: read through the `nsys` on PATH (its SQLite export, in a temporary folder);
without `nsys`, one line says what to run. The `nsys` of these tests is a stand-in that writes a
real export (the recorded sample), as `nsys export --type sqlite --output OUT REPORT` does."""

from __future__ import annotations

import gzip
import sqlite3
import stat
import sys
from pathlib import Path

import pytest
from conftest import DATA
from tracelake.cli.main import main
from tracelake.ingest.discover import discover

NSYS = DATA / "nsys-2025.3.1_cnn-train-pageable_h100.sqlite.gz"

FAKE_NSYS = f"""#!{sys.executable}
import gzip, shutil, sys
args = sys.argv[1:]
assert args[:3] == ["export", "--type", "sqlite"], args
out = args[args.index("--output") + 1]
with gzip.open({str(NSYS)!r}) as src, open(out, "wb") as dst:
    shutil.copyfileobj(src, dst)
"""


@pytest.fixture
def report(tmp_path) -> Path:
    path = tmp_path / "traces" / "profile.nsys-rep"
    path.parent.mkdir()
    path.write_bytes(b"PK\x03\x04 a report: nsys reads it, tracelake does not")
    return path


def _with_nsys(tmp_path, monkeypatch, script: str | None) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if script is not None:
        nsys = bin_dir / "nsys"
        nsys.write_text(script)
        nsys.chmod(nsys.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(bin_dir))


def test_without_nsys_one_line_says_what_to_run(tmp_path, monkeypatch, capsys, report):
    _with_nsys(tmp_path, monkeypatch, None)
    assert main(["ingest", str(report), "--lake", str(tmp_path / "lake")]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == (f"error  {report}: an Nsight Systems report and no `nsys` on PATH to export it: run "
                    f"`nsys export --type sqlite --output profile.sqlite {report}`, then ingest the .sqlite")


def test_with_nsys_the_report_is_exported_and_read_as_itself(tmp_path, monkeypatch, report):
    _with_nsys(tmp_path, monkeypatch, FAKE_NSYS)
    lake = tmp_path / "lake"
    assert main(["ingest", str(report), "--lake", str(lake), "--quiet"]) == 0
    from tracelake.lake.database import connect

    con = connect(lake)
    try:
        (path, kernels) = con.execute("SELECT t.path, count(k.name) FROM traces t JOIN kernels k USING (trace_id) "
                                      "GROUP BY t.path").fetchone()
    finally:
        con.close()
    export = sqlite3.connect(":memory:")
    export.deserialize(gzip.decompress(NSYS.read_bytes()))
    assert path == str(report)
    assert kernels == export.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]


def test_failing_nsys_is_one_error_line(tmp_path, monkeypatch, capsys, report):
    _with_nsys(tmp_path, monkeypatch, f"#!{sys.executable}\nimport sys\nsys.exit('cannot open the report')\n")
    assert main(["ingest", str(report), "--lake", str(tmp_path / "lake")]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == f"error  {report}: `nsys export --type sqlite` failed (exit 1): cannot open the report"


def test_a_report_beside_its_export_is_left_to_the_export(report):
    (report.parent / "profile.sqlite").write_bytes(b"")
    (report.parent / "other.nsys-rep").write_bytes(b"")
    assert [Path(p).name for p in discover([str(report.parent)])] == ["other.nsys-rep", "profile.sqlite"]
