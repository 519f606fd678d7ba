"""Compaction (lake/compact.py): a compacted lake answers every view exactly as the lake of loose
partitions did, also with traces ingested after it, re-ingested, removed or re-derived, and after a
compaction stopped at any point."""

from __future__ import annotations

import math
import shutil

import pytest
from conftest import DATA
from tracelake.cli.main import main
from tracelake.jobs.derive_job import ensure_derived
from tracelake.lake import compact as compaction
from tracelake.lake import layout, materialize
from tracelake.lake.database import connect
from tracelake.lake.schema import TABLES

SMALL = DATA / "torch-2.11_mlp-compiled-inference-fp16_h100.pt.trace.json.gz"


def _norm(v):
    if isinstance(v, float):
        return "nan" if math.isnan(v) else float(f"{v:.9g}")  # sums in another order differ in the last bits
    if isinstance(v, (list, tuple)):
        return tuple(sorted((_norm(x) for x in v), key=repr)) if isinstance(v, list) else tuple(_norm(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _norm(x)) for k, x in v.items()))
    return v


def snapshot(lake, where: str = "") -> dict[str, list]:
    """Every table and view with a trace_id column: its rows, normalized and sorted."""
    con = connect(lake)
    try:
        names = [r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.columns WHERE column_name = 'trace_id' "
            "AND NOT starts_with(table_name, '_') GROUP BY 1 ORDER BY 1").fetchall()]
        out = {}
        for name in names:
            cols = [c for c in con.execute(f"DESCRIBE {name}").fetchall() if c[0] != "ingested_at"]  # when, not what
            select = ", ".join(f'"{c[0]}"::VARCHAR' if c[1].startswith("TIMESTAMP") else f'"{c[0]}"' for c in cols)
            rows = con.execute(f"SELECT {select} FROM {name} {where}").fetchall()
            out[name] = sorted((tuple(_norm(x) for x in r) for r in rows), key=repr)
        return out
    finally:
        con.close()


def _differ(a: dict, b: dict) -> list[str]:
    return sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))


@pytest.fixture(scope="module")
def reference(sample_lake):
    return snapshot(sample_lake)


@pytest.fixture
def lake(sample_lake, tmp_path):
    copy = tmp_path / "lake"
    shutil.copytree(sample_lake, copy, ignore=shutil.ignore_patterns("tracelake.duckdb"))
    return copy


def _small_id(lake) -> str:
    return next(t for t in layout.complete_trace_ids(lake) if t.startswith(SMALL.name.split(".pt.")[0]))


def test_compacted_lake_answers_every_view_as_before(lake, reference):
    before = sum(1 for _ in lake.rglob("*.parquet"))
    summary = compaction.compact(lake)
    assert summary.traces == summary.loose == 4
    assert not any(lake.glob("*/trace_id=*")) and not any(lake.glob("derived/*/trace_id=*"))
    assert sum(1 for _ in lake.rglob("*.parquet")) <= len(TABLES) + len(materialize.view_fingerprints()) < before
    kernels = next(lake.glob("kernels/part-*.parquet"))
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(kernels).metadata
    column = meta.schema.names.index("trace_id")
    stats = meta.row_group(0).column(column).statistics
    assert stats.has_min_max, "trace_id's min/max per row group let a trace filter skip the others' rows"
    _assert_segments_sorted(lake)
    assert _differ(snapshot(lake), reference) == []
    assert compaction.compact(lake).traces == 0  # nothing loose: nothing done


def _assert_segments_sorted(lake) -> None:
    """Every segment file's rows in trace_id order: a trace's rows fill few row groups."""
    import pyarrow.parquet as pq

    for segment in lake.rglob("part-*.parquet"):
        ids = pq.read_table(segment, columns=["trace_id"]).column(0).to_pylist()
        assert ids == sorted(ids), segment


def test_traces_ingested_reingested_and_removed_after_compaction(lake, reference):
    small = _small_id(lake)
    layout.delete_trace(lake, small)
    compaction.compact(lake)
    assert main(["ingest", str(SMALL), "--lake", str(lake), "--quiet"]) == 0  # loose, beside the segment
    assert layout.loose_trace_ids(lake, "kernels") == {small}
    assert _differ(snapshot(lake), reference) == []

    compaction.compact(lake)  # now in the new segment: the same file again
    assert main(["ingest", str(SMALL), "--lake", str(lake), "--quiet"]) == 0
    assert _differ(snapshot(lake), reference) == [], "re-ingested rows counted twice, or the old ones kept"

    other = next(t for t in layout.complete_trace_ids(lake) if t != small)
    layout.delete_trace(lake, other)
    gone = snapshot(lake, f"WHERE trace_id = '{other}'")
    assert all(rows == [] for rows in gone.values()), [k for k, rows in gone.items() if rows]
    summary = compaction.compact(lake)  # rewrites the segments whose rows were voided
    assert summary.segments_rewritten >= 1 and not (lake / layout.COMPACTED / "removed").exists()
    _assert_segments_sorted(lake)
    assert len(layout.manifest(lake)["segments"]) == 1
    assert other not in layout.complete_trace_ids(lake)
    keep = f"WHERE trace_id <> '{other}'"
    base = ["traces", "kernels", "memcpy", "api_calls", "cpu_ops", "kernel_summary", "findings", "steps"]
    after = snapshot(lake, keep)
    assert {k: after[k] for k in base} == {k: [r for r in reference[k] if other not in r] for k in base}


def test_a_compaction_stopped_before_its_commit_leaves_the_lake_as_it_was(lake, reference, monkeypatch):
    def killed(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(layout, "write_manifest", killed)
    with pytest.raises(KeyboardInterrupt):
        compaction.compact(lake)
    monkeypatch.undo()
    assert any(lake.glob("kernels/part-*.parquet"))  # moved in, never named by a manifest
    assert _differ(snapshot(lake), reference) == []
    compaction.compact(lake)
    assert len(list(lake.glob("kernels/part-*.parquet"))) == 1
    assert _differ(snapshot(lake), reference) == []


def test_a_compaction_stopped_after_its_commit_is_finished_by_the_next_command(lake, reference, monkeypatch):
    finish = layout.finish_compaction

    def killed(lake_dir):
        if layout.manifest(lake_dir).get("cleanup"):
            raise KeyboardInterrupt
        finish(lake_dir)

    monkeypatch.setattr(layout, "finish_compaction", killed)
    with pytest.raises(KeyboardInterrupt):
        compaction.compact(lake)
    monkeypatch.undo()
    assert any(lake.glob("kernels/trace_id=*"))  # both loose and compacted, until finished
    assert _differ(snapshot(lake), reference) == []  # opening the lake finishes it
    assert not any(lake.glob("kernels/trace_id=*"))


def test_run_compacts_by_itself_and_knows_the_compacted_traces(tmp_path, reference, monkeypatch):
    from tracelake.jobs.run_job import run

    monkeypatch.setattr(compaction, "AUTO_LOOSE", 3)  # 1,000 in use
    run([str(DATA)], tmp_path / "out", jobs=1)
    lake = tmp_path / "out" / "lake"
    assert layout.manifest(lake)["segments"] and not layout.loose_trace_ids(lake, "kernels")
    assert _differ(snapshot(lake), reference) == []
    again = run([str(DATA)], tmp_path / "out", jobs=1)  # the files' rows are found in the segment
    assert {f["status"] for f in again.files} - {"skipped"} == {"unchanged"}


def test_a_changed_view_is_derived_again_from_the_compacted_tables(lake, reference, monkeypatch):
    compaction.compact(lake)
    fingerprints = dict(materialize.view_fingerprints())
    changed = dict(fingerprints, kernel_summary="0" * 12, findings="1" * 12)
    monkeypatch.setattr(materialize, "view_fingerprints", lambda: changed)
    assert ensure_derived(lake) == []  # as every command does before it reads: derived again, reading the segments
    after = snapshot(lake)
    assert len(layout.loose_trace_ids(lake, layout.derived_folder("kernel_summary", "0" * 12))) == 4
    assert _differ(after, reference) == []
