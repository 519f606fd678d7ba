"""lake/atomic_write.py: a file is replaced whole or not at all, and a failed write leaves no
temporary file behind, in the helper and in the writers that use it."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest
from tracelake.jobs import report_job, trace_export
from tracelake.lake import atomic_write, format_version, layout


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.name.endswith(".tmp") or ".tmp." in p.name)


def test_replaces_the_file_and_leaves_nothing_else(tmp_path):
    target = tmp_path / "page.html"
    target.write_text("old")
    atomic_write.write_text(target, "new")
    assert target.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.html"]


@pytest.mark.parametrize("error", [OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt()])
def test_a_failed_write_keeps_the_old_file_and_no_temporary_one(tmp_path, error):
    target = tmp_path / "tracelake.duckdb"
    target.write_text("old")
    with pytest.raises(type(error)), atomic_write.replacing(target, sidecars=(".wal",)) as tmp:
        tmp.write_text("half")
        Path(f"{tmp}.wal").write_text("log")
        raise error
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tracelake.duckdb"]


def test_a_failed_rename_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "taken"
    target.mkdir()
    (target / "inside").write_text("a folder cannot be replaced by a file")
    with pytest.raises(OSError):
        atomic_write.write_text(target, "text")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def test_sidecars_are_removed_after_success_too(tmp_path):
    with atomic_write.replacing(tmp_path / "db", sidecars=(".wal",)) as tmp:
        tmp.write_text("db")
        Path(f"{tmp}.wal").write_text("log")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db"]


def _full_disk(monkeypatch):
    """Every write of text or bytes fails after writing a little, as on a full disk."""
    real_write_text = Path.write_text

    def write_text(self, data, *args, **kwargs):
        real_write_text(self, data[:3], *args, **kwargs)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", write_text)


def test_writers_leave_no_temporary_file_when_the_disk_is_full(tmp_path, monkeypatch):
    lake = tmp_path / "lake"
    lake.mkdir()
    page = tmp_path / "reports" / "a.html"
    page.parent.mkdir()
    page.write_text("old page")
    _full_disk(monkeypatch)
    with pytest.raises(OSError):
        format_version.record(lake)  # lake.json (left its temporary file before)
    with pytest.raises(OSError):
        layout.write_manifest(lake, {"generation": "g", "segments": {}, "cleanup": None})  # (so did this)
    with pytest.raises(OSError) as e:
        report_job.write_atomically(page, "new page")
    assert e.value.filename == str(page)  # the error names the page
    assert page.read_text() == "old page"
    monkeypatch.undo()

    def fails(f):
        f.write(b"{")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError):
        trace_export._write_atomically(tmp_path / "reports" / "a.trace.json.gz", fails)
    assert _leftovers(tmp_path) == []
    assert not (lake / format_version.LAKE_JSON).exists()


def test_writers_still_write(tmp_path):
    lake = tmp_path / "lake"
    lake.mkdir()
    format_version.record(lake)
    assert json.loads((lake / format_version.LAKE_JSON).read_text())["format"] == format_version.FORMAT
    layout.write_manifest(lake, {"generation": "g", "segments": {}, "cleanup": None})
    assert layout.manifest(lake)["generation"] == "g"
    trace_export._write_atomically(tmp_path / "x.trace.json.gz", lambda f: f.write(b"{}"))
    assert _leftovers(tmp_path) == []
