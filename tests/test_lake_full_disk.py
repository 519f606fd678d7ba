"""A full disk while writing (issue #32, class 3): the lake on a small tmpfs filled up to a few
hundred KB, real `tracelake` processes. Each failure is one line naming the path; the lake and
the earlier page stay whole and queryable; after space is freed the next run leaves no staging
and ends with the lake of a run that never failed."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from lake_processes import MNIST, SMALL, row_counts, tracelake


@pytest.fixture
def disk(tmp_path):
    """A 16 MB tmpfs (root only: CI and the dev machine run tests as root); fill(kb) leaves kb free."""
    where = tmp_path / "disk"
    where.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(where)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (not root, or no mount permission in this container)")

    class Disk:
        path = where

        @staticmethod
        def fill(kb: int) -> None:
            free = shutil.disk_usage(where).free // 1024
            subprocess.run(["fallocate", "-l", f"{(free - kb) * 1024}", str(where / "filler")], check=True)

        @staticmethod
        def free() -> None:
            (where / "filler").unlink()
    yield Disk
    subprocess.run(["umount", "-l", str(where)], check=True)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    out = tmp_path_factory.mktemp("ref")
    _derived_lake_of_small(out)
    assert tracelake("ingest", MNIST, "--lake", out / "lake", "-q").returncode == 0
    return row_counts(out / "lake")


def _derived_lake_of_small(out):
    """A lake of SMALL that keeps derived tables (`run` derives every lake it writes; so does
    every later ingest into it)."""
    done = tracelake("run", SMALL, "--out", out, "--no-reports", "--jobs", "1", "-q")
    assert done.returncode == 0, done.stderr
    assert (out / "lake" / "derived").is_dir()
    return out / "lake"


def _one_error_line(result, *where: str) -> str:
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error")]
    assert len(errors) == 1 and "no space left on device" in errors[0], result.stderr
    assert all(w in errors[0] for w in where), errors[0]
    return errors[0]


def _count(lake) -> list[str]:
    return tracelake("sql", "--lake", lake, "--format", "csv", "SELECT count(*) AS n FROM traces").stdout.split()


@pytest.mark.parametrize("free_kb, stage", [(100, "Parquet of the trace"), (800, "derived tables")])
def test_ingest_on_a_full_disk(disk, reference, free_kb, stage):
    lake = _derived_lake_of_small(disk.path)
    disk.fill(free_kb)
    line = _one_error_line(tracelake("ingest", MNIST, "--lake", lake), str(lake))
    assert (".staging/derive." in line) == (stage == "derived tables"), line
    assert _count(lake) in (["n", "1"], ["n", "2"])  # queryable: the trace is published or not, whole
    disk.free()
    again = tracelake("ingest", MNIST, "--lake", lake, "-q")
    assert again.returncode == 0, again.stderr
    assert not (lake / ".staging").exists()
    assert row_counts(lake) == reference


def test_database_on_a_full_disk_keeps_the_old_one_and_readers_answer(disk):
    old = disk.path / "old"
    assert tracelake("ingest", SMALL, "--lake", old, "-q").returncode == 0
    lake = old.rename(disk.path / "moved")  # its views name the old path: relink writes a new database
    before = (lake / "tracelake.duckdb").read_bytes()
    disk.fill(300)
    _one_error_line(tracelake("relink", "--lake", lake), str(lake))
    assert (lake / "tracelake.duckdb").read_bytes() == before
    assert not list(lake.glob(".tracelake.duckdb*"))
    assert _count(lake) == ["n", "1"]  # a private database in the user's cache answers


def test_report_page_on_a_full_disk_keeps_the_earlier_page(disk, tmp_path):
    lake = tmp_path / "lake"
    assert tracelake("ingest", SMALL, "--lake", lake, "-q").returncode == 0
    page = disk.path / "page.html"
    assert tracelake("report", "--lake", lake, "--trace", "torch", "-o", page).returncode == 0
    before = page.read_bytes()
    disk.fill(20)
    _one_error_line(tracelake("report", "--lake", lake, "--trace", "torch", "-o", page), str(disk.path))
    assert page.read_bytes() == before and sorted(p.name for p in disk.path.iterdir()) == ["filler", "page.html"]


def test_a_report_index_on_a_full_disk_reads_the_views_from_the_base_tables(disk, tmp_path):
    """The report index derives a lake that `ingest` left underived (tests/test_derive.py); with
    the lake's disk full that fails: one warning line naming the lake, and the pages are written
    from the base tables, as before."""
    lake = disk.path / "lake"
    assert tracelake("ingest", SMALL, "--lake", lake, "-q").returncode == 0
    disk.fill(100)
    index = tmp_path / "index.html"
    done = tracelake("report", "--lake", lake, "-o", index)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning")]
    assert len(warnings) == 1 and f"{lake}: views not derived" in warnings[0], done.stderr
    pages = list((tmp_path / "index_files" / "traces").glob("*.html"))
    assert index.stat().st_size > 1000 and len(pages) == 1 and pages[0].stat().st_size > 10_000
    disk.free()
    counts = tracelake("sql", "--lake", lake, "--format", "csv", "SELECT count(*) AS n FROM kernel_summary")
    assert counts.returncode == 0 and int(counts.stdout.splitlines()[1]) > 0, counts.stderr
