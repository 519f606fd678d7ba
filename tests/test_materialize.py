"""lake/materialize.py is the one owner of how a view's rows reach a query (docs/lake.md): these
tests hold the policy there, and check that nothing else derives, freezes or decides."""

from __future__ import annotations

import re
import shutil
from concurrent.futures import Future
from pathlib import Path

import pytest
from tracelake.jobs.derive_job import ensure_derived
from tracelake.lake import catalog, layout, lock, materialize
from tracelake.lake.database import build_database
from tracelake.lake.scoped import ScopedDatabase

PACKAGE = Path(__file__).resolve().parents[1]
SOURCES = [p for folder in ("api", "cli", "jobs", "lake", "reports", "analysis", "ingest", "serve")
           for p in (PACKAGE / folder).rglob("*.py")]


def _files_matching(pattern: str) -> set[str]:
    return {p.relative_to(PACKAGE).as_posix() for p in SOURCES if re.search(pattern, p.read_text(encoding="utf-8"))}


def test_only_materialize_freezes_a_view():
    """A table standing in for a view (frozen: evaluated once) is made in one place."""
    assert _files_matching(r"TEMP TABLE \{view\}|CREATE TABLE _rows_") == {"lake/materialize.py"}


def test_only_the_trigger_starts_a_derivation():
    """derive.plan / derive_here are called by jobs/derive_job.py alone (the trigger, ensure_derived)."""
    callers = _files_matching(r"derive\.plan\(|derive_here\(|derive_scope\b") - {"lake/derive.py"}
    assert callers == {"jobs/derive_job.py"}


def test_the_policy_is_not_decided_elsewhere():
    """Which views a lake keeps, and the list of shared views, live in materialize alone."""
    assert _files_matching(r"DERIVE_FROM_TRACES|SHARED_VIEWS|def kept") == {"lake/materialize.py"}


@pytest.fixture
def small_lake(sample_lake, tmp_path) -> Path:
    lake = tmp_path / "lake"
    shutil.copytree(sample_lake, lake, copy_function=shutil.copy2)
    return lake


def _derived_files(lake: Path) -> set[str]:
    return {p.relative_to(lake).as_posix() for p in (lake / layout.DERIVED).rglob("*.parquet")}


def test_building_the_database_derives_nothing(small_lake, monkeypatch):
    """A stale view (its SQL changed) is derived by ensure_derived, never by a database build."""
    changed = dict(materialize.view_fingerprints(), kernel_summary="0" * 12)
    monkeypatch.setattr(materialize, "view_fingerprints", lambda: changed)
    before = _derived_files(small_lake)
    build_database(small_lake)
    assert _derived_files(small_lake) == before
    assert materialize.stale(small_lake) == {"kernel_summary": "0" * 12}
    assert ensure_derived(small_lake) == []
    assert materialize.stale(small_lake) == {}
    new = _derived_files(small_lake) - before
    assert {p.split("/")[1] for p in new} == {"kernel_summary@000000000000"}
    assert len(new) == len(layout.complete_trace_ids(small_lake))


def test_a_reader_derives_nothing_while_another_writes(small_lake, monkeypatch):
    """Without the writer lock a reader reads the lake as it is: nothing derived, no error."""
    changed = dict(materialize.view_fingerprints(), kernel_summary="0" * 12)
    monkeypatch.setattr(materialize, "view_fingerprints", lambda: changed)
    before = _derived_files(small_lake)
    import subprocess
    import sys

    holder = subprocess.Popen([sys.executable, "-c", f"""
import sys, time
from tracelake.lake.lock import writer_lock
with writer_lock({str(small_lake)!r}):
    print("held", flush=True)
    time.sleep(60)
"""], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert not lock.holds(small_lake)
        assert ensure_derived(small_lake) == []
        assert _derived_files(small_lake) == before
    finally:
        holder.kill()
        holder.wait()


def test_kept_views_follow_the_trace_count(small_lake):
    """Below DERIVE_FROM_TRACES a lake keeps the views it holds partitions of; keeps_all says so."""
    kept = materialize.kept_views(small_lake)
    assert len(layout.complete_trace_ids(small_lake)) < materialize.DERIVE_FROM_TRACES
    present = {p.name.split("@")[0] for p in (small_lake / layout.DERIVED).iterdir()}
    assert set(kept) == present & set(materialize.view_fingerprints())
    assert materialize.keeps_all(small_lake) == (set(kept) == set(materialize.view_fingerprints()))
    assert materialize.absent(small_lake) == {v: fp for v, fp in materialize.view_fingerprints().items()
                                              if v not in kept}


def _temp_tables(con) -> set[str]:
    return {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()}


def test_ready_shadows_views_for_the_block_only(sample_lake):
    """One thread: a TEMP table per view for the block, with the view's rows; gone after it."""
    db = ScopedDatabase(sample_lake)
    try:
        ids = sorted(layout.complete_trace_ids(sample_lake))[:1]
        con = db.load(ids)
        views = materialize.in_order(["gpu_ops", "kernel_summary", "api"])
        assert views == ["gpu_ops", "api", "kernel_summary"]
        expected = sorted(con.execute("SELECT * FROM kernel_summary").fetchall(), key=repr)
        before = _temp_tables(con)  # the scope's base tables
        with materialize.ready(con, views):
            assert _temp_tables(con) - before == set(views)
            assert sorted(con.execute("SELECT * FROM kernel_summary").fetchall(), key=repr) == expected
        assert _temp_tables(con) == before
    finally:
        db.close()


def test_ready_in_threads_replaces_the_views_after_their_tables_load(sample_lake):
    """Several threads on a writable catalog: each view becomes a table of its rows; a view that
    reads a table still loading waits for it, and the block starts once it is loaded."""
    db = ScopedDatabase(sample_lake, writable=True)
    try:
        ids = sorted(layout.complete_trace_ids(sample_lake))[:1]
        con = db.load(ids)
        expected = sorted(con.execute("SELECT * FROM kernel_summary").fetchall(), key=repr)
        loaded: Future = Future()
        loaded.set_result(None)
        with materialize.ready(con, ["gpu_ops", "kernel_summary"], threads=2, waiting=({"kernels"}, loaded)):
            kinds = dict(con.execute("SELECT table_name, 'table' FROM duckdb_tables() WHERE NOT temporary "
                                     "AND table_name IN ('gpu_ops', 'kernel_summary')").fetchall())
            assert set(kinds) == {"gpu_ops", "kernel_summary"}
            assert sorted(con.execute("SELECT * FROM kernel_summary").fetchall(), key=repr) == expected
    finally:
        db.close()


def test_shared_by_picks_what_two_queries_read():
    """stats' choice: the shared and materialized views that two or more of its queries read."""
    chosen = materialize.shared_by([{"kernel_summary", "gpu_ops"}, {"gpu_ops"}])
    assert "gpu_ops" in chosen and "kernel_summary" not in chosen
    assert "kernel_summary" in materialize.shared_by([{"kernel_summary"}, {"kernel_summary"}])
    assert set(chosen) <= set(materialize.SHARED_VIEWS) | set(catalog.materialized())


def test_a_reader_whose_derivation_worker_dies_reads_on(small_lake, monkeypatch):
    """A worker killed while deriving for a reader (the out-of-memory killer) is one warning line; the
    reader's query then reads the views from the base tables."""
    from concurrent.futures.process import BrokenProcessPool

    from tracelake.jobs import derive_job

    def killed(*args, **kwargs):
        raise BrokenProcessPool("A process in the process pool was terminated abruptly")

    changed = dict(materialize.view_fingerprints(), kernel_summary="0" * 12)
    monkeypatch.setattr(materialize, "view_fingerprints", lambda: changed)
    monkeypatch.setattr(derive_job, "derive", killed)
    [warning] = ensure_derived(small_lake, jobs=2)
    assert warning.startswith(f"{small_lake}: views not derived, read from the base tables: BrokenProcessPool")
    assert "\n" not in warning
