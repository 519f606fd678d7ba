"""Materialized views (lake/derive.py): the derived table the lake's database serves for a trace
equals the view evaluated directly over the lake's tables, and derivation is incremental."""

from __future__ import annotations

import gzip
import math
import shutil

import duckdb
import pyarrow as pa
import pytest
from conftest import DATA
from tracelake.jobs.derive_job import ensure_derived
from tracelake.lake import catalog, derive, layout, materialize
from tracelake.lake.database import connect
from tracelake.lake.scoped import ScopedDatabase, derived_served

MATERIALIZED = materialize.view_fingerprints()


def _rows(con, sql: str, params: list) -> list[tuple]:
    rows = con.execute(sql, params).fetchall()
    return sorted(rows, key=lambda r: tuple((x is None, str(x)) for x in r))


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(a, list) and isinstance(b, list):  # list(DISTINCT ...) has no order (callctx_bottomup.callers)
        a, b = sorted(a, key=str), sorted(b, key=str)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def _by_trace(rows: list[tuple], column: int) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = {}
    for row in rows:
        out.setdefault(row[column], []).append(row)
    return out


def _freeze(con, view: str) -> None:
    """Replace the view by a table of its rows (a view checked already: the views above it read
    those rows instead of evaluating it again; `findings` alone took 34 s of the 45 s that the
    sample lake's views took when each evaluated everything under it)."""
    con.execute(f"CREATE TEMP TABLE {view} AS SELECT * FROM main.{view}")  # shadows the view (scoped.derived_served)


def _check_lake(lake, trace_ids: list[str] | None = None) -> int:
    """Every materialized view served by the lake's database, for each trace, against the view
    evaluated directly on an in-memory database of the whole lake (or of the traces' runs); and as
    a report task reads it (scoped.derived_served: a scoped database with the derived rows). The
    views are checked in dependency order, each evaluated over the base tables and the views under
    it, these as the rows already checked."""
    served = connect(lake)
    ids = trace_ids or sorted(layout.complete_trace_ids(lake))
    keys = derive.run_keys(lake)
    scope = sorted(t for t in keys if keys[t] in {keys[i] for i in ids})
    direct = ScopedDatabase(lake).load(scope)
    report_side = ScopedDatabase(lake).load(scope)
    checked = 0
    with derived_served(report_side, lake, scope) as from_partitions:
        assert sorted(from_partitions) == sorted(MATERIALIZED)
        for view in MATERIALIZED:
            assert [c[:2] for c in report_side.execute(f"DESCRIBE {view}").fetchall()] == \
                [c[:2] for c in direct.execute(f"DESCRIBE {view}").fetchall()], f"{view}: columns or types differ"
            checked += _compare(report_side, direct, view, ids)
            _freeze(direct, view)
    report_side.close()
    try:
        for view in MATERIALIZED:
            definition = served.execute("SELECT sql FROM duckdb_views() WHERE view_name = ?", [view]).fetchone()[0]
            scan = served.execute("SELECT macro_definition FROM duckdb_functions() WHERE function_name = ?",
                                  [f"_lake_{view}"]).fetchone()
            assert f"_lake_{view}()" in definition and scan and "read_parquet" in scan[0], \
                f"{view} is not served from its derived table"
            assert [c[:2] for c in served.execute(f"DESCRIBE {view}").fetchall()] == \
                [c[:2] for c in direct.execute(f"DESCRIBE {view}").fetchall()], f"{view}: columns or types differ"
            # every trace's rows in one query a side (a trace_id filter does not reach under windowed
            # views: a query per trace would evaluate the view again for each), compared trace by trace
            checked += _compare(served, direct, view, ids)
    finally:
        served.close()
        direct.close()
    return checked


def _compare(derived, direct, view: str, ids: list[str]) -> int:
    """The view's rows of each of `ids` on `derived` equal those evaluated on `direct`; returns
    how many rows were compared."""
    column = [c[0] for c in direct.execute(f"DESCRIBE {view}").fetchall()].index("trace_id")
    got = _by_trace(_rows(derived, f"SELECT * FROM {view} WHERE list_contains(?, trace_id)", [ids]), column)
    want = _by_trace(_rows(direct, f"SELECT * FROM {view} WHERE list_contains(?, trace_id)", [ids]), column)
    checked = 0
    for t in ids:
        g_rows, w_rows = got.get(t, []), want.get(t, [])
        assert len(g_rows) == len(w_rows), f"{view} {t}: {len(g_rows)} rows derived, {len(w_rows)} evaluated"
        for g, w in zip(g_rows, w_rows, strict=True):
            assert _same(g, w), f"{view} {t}: {g} != {w}"
        checked += len(g_rows)
    return checked


def test_materialized_views_are_declared(sample_con):
    for view in MATERIALIZED:  # a derived partition is a trace's rows: the view must say whose
        assert "trace_id" in [c[0] for c in sample_con.execute(f"DESCRIBE {view}").fetchall()], view
    assert {"kernel_summary", "findings", "steps", "temporal_breakdown", "gpu_gaps", "callctx_topdown"} <= set(MATERIALIZED)
    with pytest.raises(ValueError, match="does not create"):
        catalog._materialized("-- materialize: per trace: nope\nCREATE VIEW yes AS SELECT 1;")


def test_derived_tables_equal_their_views_on_the_sample_lake(sample_lake):
    assert _check_lake(sample_lake) > 1000


@pytest.mark.corpus
def test_derived_tables_equal_their_views_on_corpus_traces(corpus_lake):
    # a distributed PyTorch run (its rank files compared with each other), a 2-rank Nsight export
    # and a single-GPU trace; the corpus lake holds every corpus trace
    keys = derive.run_keys(corpus_lake)
    ids = sorted(t for t in keys if "gpt2-ddp-2rank" in keys[t] or t.startswith(("nsys-2025.3.1_gpt2-ddp",
                                                                                    "torch-2.11_mnist-cnn-train")))
    assert len(ids) >= 4
    assert _check_lake(corpus_lake, ids) > 0


def test_views_derived_in_threads_equal_those_derived_one_at_a_time(sample_lake, tmp_path):
    """derive_scope evaluates views whose inputs are done at once, in threads: with 6 threads the
    partitions hold the same rows as with one, and no view fails (a view read before the one it
    depends on was ready would fail or read the unreplaced view)."""
    ids = sorted(layout.complete_trace_ids(sample_lake))
    targets = {t: list(MATERIALIZED) for t in ids}
    rows = {}
    for threads in (1, 6):
        lake = tmp_path / f"lake{threads}"
        shutil.copytree(sample_lake, lake, ignore=shutil.ignore_patterns(layout.DERIVED, "*.duckdb"))
        assert derive.derive_scope(str(lake), ids, targets, threads) == []
        con = duckdb.connect()
        rows[threads] = {view: _rows(con, "SELECT * FROM read_parquet(?, hive_partitioning = true)",
                                     [str(lake / layout.DERIVED / f"{view}@{fp}" / "**" / "*.parquet")])
                         for view, fp in MATERIALIZED.items()}
        con.close()
    assert rows[1].keys() == rows[6].keys() and sum(map(len, rows[1].values())) > 1000
    for view in rows[1]:
        assert len(rows[1][view]) == len(rows[6][view]), view
        assert all(_same(a, b) for a, b in zip(rows[1][view], rows[6][view], strict=True)), view


def test_a_gated_view_waits_for_its_gate_and_a_failed_gate_raises(sample_lake):
    """as_tables' gates (`tracelake stats` evaluates views while the critical path and calling
    context are still being built): a view in `gates` is evaluated only once its future is done,
    so it reads the rows the gate loaded, not the empty table before; a gate that failed raises
    instead of letting the view read tables that were never loaded."""
    import threading
    import time
    from concurrent.futures import Future

    ids = sorted(layout.complete_trace_ids(sample_lake))
    for outcome in ("loads", "fails"):
        scoped = ScopedDatabase(sample_lake, writable=True)
        con = scoped.load(ids)
        expected = con.execute("SELECT count(*), sum(total_ns) FROM kernel_summary").fetchall()[0]
        kernels = pa.table(con.sql("SELECT * FROM kernels"))
        con.execute("DELETE FROM kernels")
        gate: Future = Future()

        def load_late(gate=gate, outcome=outcome, kernels=kernels, con=con):
            time.sleep(0.3)
            if outcome == "fails":
                gate.set_exception(RuntimeError("the analysis failed"))
                return
            cursor = con.cursor()
            cursor.register("kernels_arrow", kernels)
            cursor.execute("INSERT INTO kernels SELECT * FROM kernels_arrow")
            cursor.close()
            gate.set_result(None)

        threading.Thread(target=load_late).start()
        if outcome == "fails":
            with pytest.raises(RuntimeError, match="the analysis failed"):
                materialize.as_tables(con, ["kernel_summary"], 2, gates={"kernel_summary": gate})
        else:
            assert materialize.as_tables(con, ["kernel_summary"], 2, gates={"kernel_summary": gate}) == []
            assert expected[0] > 10
            assert con.execute("SELECT count(*), sum(total_ns) FROM kernel_summary").fetchall() == [expected]
            assert con.execute("SELECT table_type FROM information_schema.tables WHERE table_name = 'kernel_summary'"
                           ).fetchall() == [("BASE TABLE",)]
        scoped.close()


def _inodes(lake) -> dict:
    return {p.relative_to(lake).as_posix(): p.stat().st_ino for p in (lake / layout.DERIVED).rglob("*.parquet")}


# Views whose rows once depended on how DuckDB's threads split the work: list order
# (callctx_bottomup.callers), ties (critical_path_ops.rank_in_step, fusion_candidates' mode and
# NULL signatures, the ASOF joins of nvtx_gpu_projection and largest_gpu_gaps), float sums (mfu).
DETERMINISTIC = ["callctx_bottomup", "critical_path_ops", "fusion_candidates", "largest_gpu_gaps", "mfu",
                 "nvtx_gpu_projection"]


def test_views_give_the_same_rows_run_after_run(sample_lake):
    """Evaluated again in 4 threads, each view gives exactly the same rows: the same list order,
    the same tie choices and the same last bits of its doubles (no tolerance, unlike _same)."""
    db = ScopedDatabase(sample_lake)
    con = db.load(sorted(layout.complete_trace_ids(sample_lake)))
    con.execute("SET threads = 4")
    try:
        for view in DETERMINISTIC:
            runs = [sorted(con.execute(f"SELECT * FROM {view}").fetchall(), key=repr) for _ in range(4)]
            assert runs[0], f"{view}: no rows on the sample lake"
            for run in runs[1:]:
                assert run == runs[0], f"{view}: {[r for r in run if r not in runs[0]][:2]}"
    finally:
        con.close()


def test_a_changed_view_is_derived_again_alone_from_the_lake(sample_lake, tmp_path, monkeypatch):
    lake = tmp_path / "lake"
    shutil.copytree(sample_lake, lake, copy_function=shutil.copy2)
    before = _inodes(lake)
    changed = dict(MATERIALIZED, kernel_summary="0" * 12)
    monkeypatch.setattr(materialize, "view_fingerprints", lambda: changed)
    assert materialize.stale(lake) == {"kernel_summary": "0" * 12}
    ensure_derived(lake)  # what every command does before it reads the lake (and relink)
    after = _inodes(lake)
    new = {p for p in after if p not in before}
    assert new and all(p.startswith("derived/kernel_summary@000000000000/") for p in new)
    assert len(new) == len(layout.complete_trace_ids(lake))
    assert not any(p.startswith(f"derived/kernel_summary@{MATERIALIZED['kernel_summary']}/") for p in after)
    assert all(after[p] == before[p] for p in after if p in before)  # nothing else written again


def test_run_derives_only_the_changed_trace(tmp_path):
    from tracelake.jobs import run_job

    src = tmp_path / "traces"
    src.mkdir()
    for f in sorted(DATA.glob("torch-2.11_*"), key=lambda f: f.stat().st_size)[:2]:
        shutil.copy(f, src / f.name)
    out = tmp_path / "out"
    run_job.run([str(src)], out, jobs=1)
    lake = out / "lake"
    before = _inodes(lake)
    changed = sorted(src.iterdir())[0]
    text = gzip.decompress(changed.read_bytes())
    changed.write_bytes(gzip.compress(text + b"\n"))  # same events, new content
    summary = run_job.run([str(src)], out, jobs=1)
    [fresh] = [f["trace_id"] for f in summary.files if f["status"] == "ok"]
    after = _inodes(lake)
    assert {p for p in after if p not in before} == {p for p in after if f"trace_id={fresh}/" in p}
    assert all(after[p] == before[p] for p in after if f"trace_id={fresh}/" not in p)
    assert sum(f"trace_id={fresh}/" in p for p in after) == len(MATERIALIZED)


def test_tasks_are_batched_by_whole_runs_within_the_event_budget():
    tasks = [(["a0", "a1"], {"a0": ["v"], "a1": ["v"]}), (["b"], {"b": ["v"]}), (["c"], {"c": ["v", "w"]}),
             (["d"], {"d": ["w"]})]
    events = {"a0": 300, "a1": 300, "b": 500, "c": 200, "d": 100}
    # 1,400 events in batches of at most ~600: 3 batches; the largest run first, each to the lightest batch
    assert derive.batches(tasks, events, jobs=1, budget=600) == [
        (["a0", "a1"], {"a0": ["v"], "a1": ["v"]}), (["b"], {"b": ["v"]}), (["c", "d"], {"c": ["v", "w"], "d": ["w"]})]
    assert len(derive.batches(tasks, events, jobs=1, budget=10**9)) == 1  # everything in one
    assert len(derive.batches(tasks, events, jobs=2, budget=10**9)) == 2  # but one per worker at least
    assert len(derive.batches(tasks, events, jobs=8, budget=10**9)) == 4  # and never a run split
    assert derive.batch_budget(1) >= derive.batch_budget(2) >= derive.MIN_BATCH_EVENTS  # memory shared by workers


def _derived_rows(con, lake, view: str, fp: str) -> list[tuple]:
    return _rows(con, "SELECT * FROM read_parquet(?, hive_partitioning = true)",
                 [str(lake / layout.DERIVED / f"{view}@{fp}" / "**" / "*.parquet")])


def test_ingest_derives_a_lake_once_it_is_worth_it(tmp_path, monkeypatch, sample_lake):
    """`tracelake ingest` of a few traces into a new lake writes no derived tables (its views read
    the base tables); the trace that brings the lake to DERIVE_FROM_TRACES derives every trace, and
    from then on each ingest derives its own. The rows derived file by file are those of the same
    4 files derived at once (the sample lake, whose derived rows equal its views evaluated directly:
    test_derived_tables_equal_their_views_on_the_sample_lake)."""
    from tracelake.cli.main import main

    monkeypatch.setattr(materialize, "DERIVE_FROM_TRACES", 3)
    files = sorted(p for p in DATA.iterdir() if p.name.endswith((".json.gz", ".sqlite.gz")))[:4]
    lake = tmp_path / "lake"
    for f in files[:2]:
        assert main(["ingest", str(f), "--lake", str(lake), "--quiet"]) == 0
    assert not layout.has_any_derived(lake)
    con = connect(lake)
    assert con.execute("SELECT count(DISTINCT trace_id) FROM kernel_summary").fetchone()[0] == 2
    con.close()
    assert main(["ingest", str(files[2]), "--lake", str(lake), "--quiet"]) == 0
    assert materialize.missing_partitions(lake) == {}
    assert main(["ingest", str(files[3]), "--lake", str(lake), "--quiet"]) == 0
    assert materialize.missing_partitions(lake) == {}
    assert sorted(layout.complete_trace_ids(lake)) == sorted(layout.complete_trace_ids(sample_lake))
    con = duckdb.connect()
    checked = 0
    for view, fp in MATERIALIZED.items():
        here, at_once = _derived_rows(con, lake, view, fp), _derived_rows(con, sample_lake, view, fp)
        assert len(here) == len(at_once), view
        assert all(_same(a, b) for a, b in zip(here, at_once, strict=True)), view
        checked += len(here)
    con.close()
    assert checked > 1000


def test_open_derives_a_lake_that_keeps_no_derived_tables(tmp_path):
    """tracelake.open derives every view of a lake that keeps none (as a report index does), so that
    its queries do not evaluate every view under them over the base tables; a read-only lake is read
    as it is (tests/test_lake_read_only.py)."""
    import tracelake
    from tracelake.cli.main import main

    files = sorted(p for p in DATA.iterdir() if p.name.startswith(("torch-2.11_mlp", "torch-2.11_mnist")))
    lake = tmp_path / "lake"
    assert main(["ingest", *map(str, files), "--lake", str(lake), "--quiet"]) == 0
    assert not layout.has_any_derived(lake)
    with tracelake.open(lake) as con:
        assert con.execute("SELECT count(DISTINCT trace_id) FROM findings").fetchone()[0] == 2
    assert materialize.missing_partitions(lake) == {} and layout.has_any_derived(lake)


def test_a_report_index_derives_the_lake_first_and_shows_the_same(tmp_path):
    """`tracelake report` with an index page derives a lake that keeps no derived tables yet (its
    cross-run views are 50x faster over them) and says the same: its pages equal those rendered
    from the underived lake. A page of one trace leaves the lake as it is."""
    from tracelake.cli.main import main
    from tracelake.jobs.report_job import write_reports

    files = sorted(p for p in DATA.iterdir() if p.name.startswith(("torch-2.11_mlp", "torch-2.11_mnist")))
    lake = tmp_path / "lake"
    assert main(["ingest", *map(str, files), "--lake", str(lake), "--quiet"]) == 0
    assert main(["report", "--lake", str(lake), "--trace", "torch-2.11_mlp", "-o", str(tmp_path / "one.html")]) == 0
    assert not layout.has_any_derived(lake)
    con = connect(lake)
    try:
        write_reports(con, tmp_path / "before", index=tmp_path / "before.html")
    finally:
        con.close()
    assert main(["report", "--lake", str(lake), "-o", str(tmp_path / "after.html")]) == 0
    assert materialize.missing_partitions(lake) == {}
    pages = sorted(p.relative_to(tmp_path / "before") for p in (tmp_path / "before").rglob("*.html"))
    assert len(pages) == 2
    assert (tmp_path / "after.html").read_text() == (tmp_path / "before.html").read_text().replace("before/", "after_files/")
    for page in pages:
        assert (tmp_path / "after_files" / page).read_bytes() == (tmp_path / "before" / page).read_bytes(), page


def test_a_query_derives_the_views_it_reads_first_and_says_the_same(tmp_path, capsys):
    """`tracelake sql` of a query that evaluates materialized views derives those of them that a
    lake of a few traces does not keep yet (once: the lake keeps them, and ingest derives them for
    each new trace), and answers as the underived lake does; a query of base tables and plain views
    leaves the lake as it is."""
    from tracelake.cli.main import main

    files = sorted(p for p in DATA.iterdir() if p.name.startswith(("torch-2.11_mlp", "torch-2.11_mnist")))
    lake = tmp_path / "lake"
    assert main(["ingest", *map(str, files[:1]), "--lake", str(lake), "--quiet"]) == 0
    assert catalog.materialized_reads("SELECT * FROM kernels k JOIN memory_summary USING (trace_id)") == set()
    assert {"temporal_breakdown", "steps"} <= catalog.materialized_reads("SELECT * FROM runs")
    assert main(["sql", "--lake", str(lake), "SELECT count(*) FROM kernels JOIN memory_summary USING (trace_id)"]) == 0
    assert not layout.has_any_derived(lake) and materialize.kept_views(lake) == {}
    shutil.copytree(lake, tmp_path / "before")
    query = "SELECT * FROM steps ORDER BY ALL"
    asked = catalog.materialized_reads(query)
    assert "steps" in asked and len(asked) < len(MATERIALIZED) / 4
    capsys.readouterr()
    assert main(["sql", "--lake", str(lake), "--format", "csv", query]) == 0
    printed = capsys.readouterr()
    assert printed.err == "" and printed.out.count("\n") > 2
    assert set(materialize.kept_views(lake)) == asked
    assert set(materialize.missing_partitions(lake)[layout.complete_trace_ids(lake).pop()]) == set(MATERIALIZED) - asked
    # the next ingest derives the kept views for its trace; the others stay views
    assert main(["ingest", str(files[1]), "--lake", str(lake), "--quiet"]) == 0
    assert set(materialize.kept_views(lake)) == asked
    assert all(set(v) == set(MATERIALIZED) - asked for v in materialize.missing_partitions(lake).values())
    shutil.rmtree(tmp_path / "before")
    shutil.copytree(lake, tmp_path / "before", ignore=shutil.ignore_patterns("derived", "*.duckdb"))
    underived, derived = connect(tmp_path / "before"), connect(lake)
    try:
        assert not layout.has_any_derived(tmp_path / "before")
        for q in (query, "SELECT * FROM temporal_breakdown ORDER BY ALL"):
            assert derived.sql(q).fetchall() == underived.sql(q).fetchall(), q
    finally:
        underived.close()
        derived.close()
    # a report index derives every view
    assert main(["report", "--lake", str(lake), "-o", str(tmp_path / "index.html")]) == 0
    assert materialize.missing_partitions(lake) == {} and materialize.kept_views(lake) == MATERIALIZED


def test_a_view_some_trace_has_no_partition_of_is_evaluated_for_the_report(sample_lake, tmp_path):
    """derived_served serves a view only where every trace of the scope has a current partition of
    it: a trace not derived for one view (a view that failed on it) gets that view evaluated."""
    lake = tmp_path / "lake"
    shutil.copytree(sample_lake, lake, ignore=shutil.ignore_patterns("*.duckdb"))
    ids = sorted(layout.complete_trace_ids(lake))
    fingerprint = MATERIALIZED["kernel_summary"]
    shutil.rmtree(layout.derived_file(lake, "kernel_summary", fingerprint, ids[0]).parent)
    db = ScopedDatabase(lake)
    con = db.load(ids)
    try:
        with derived_served(con, lake, ids) as views:
            assert "kernel_summary" not in views and "findings" in views
            got = con.execute("SELECT count(*) FROM kernel_summary WHERE trace_id = ?", [ids[0]]).fetchone()[0]
        with derived_served(con, lake, ids[1:]) as views:
            assert "kernel_summary" in views
        assert got > 0 and got == con.execute("SELECT count(*) FROM kernel_summary WHERE trace_id = ?",
                                              [ids[0]]).fetchone()[0]
    finally:
        db.close()


def test_a_view_derived_alone_reads_its_neighbours_partitions(sample_lake, tmp_path, monkeypatch):
    """A changed view derived alone (a new tracelake changed `findings`) reads the unchanged
    materialized views under it (its rules) from their partitions, not from the base tables; its
    rows are those of the view evaluated from the base tables."""
    lake = tmp_path / "lake"
    shutil.copytree(sample_lake, lake, copy_function=shutil.copy2)
    changed = dict(MATERIALIZED, findings="1" * 12)
    monkeypatch.setattr(materialize, "view_fingerprints", lambda: changed)
    served: list[str] = []
    serve = derive._serve_derived
    monkeypatch.setattr(derive, "_serve_derived", lambda *args: served.extend(serve(*args)) or served)
    assert ensure_derived(lake) == []
    rules = set(catalog.rule_views(catalog.load_files())) & set(MATERIALIZED)
    assert rules and rules <= set(served) and "findings" not in served
    columns = "trace_id, rule, severity, pid, start_ns, duration_ns, evidence, advice"
    derived = duckdb.sql(f"SELECT {columns} FROM read_parquet('{lake}/derived/findings@{'1' * 12}/*/*.parquet', "
                         "hive_partitioning = true)").fetchall()
    db = ScopedDatabase(lake)
    try:
        evaluated = db.load(sorted(layout.complete_trace_ids(lake))).execute(f"SELECT {columns} FROM findings").fetchall()
    finally:
        db.close()
    assert derived and sorted(derived, key=repr) == sorted(evaluated, key=repr)
