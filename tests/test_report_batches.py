"""The report job renders several small runs' pages from one scoped database (report_job.batches):
a page must not depend on which other traces are loaded beside its run's."""

from __future__ import annotations

from tracelake.jobs import report_job, report_views
from tracelake.lake import materialize
from tracelake.lake.scoped import ScopedDatabase
from tracelake.reports import sections
from tracelake.reports.render import trace_page


def test_batches_merge_small_runs_keep_big_ones_alone_and_start_the_costliest():
    scopes = [(("big",), ["big"]), (("r0", "r1"), ["r0", "r1"]), (("a",), ["a"]), (("b",), ["b"]), (("c",), ["c"])]
    events = {"big": 400_000, "r0": 60_000, "r1": 60_000, "a": 15_000, "b": 10_000, "c": 5_000}
    # estimated seconds (report_job._cost): big 1.35, r0+r1 1.04, a 0.58, b 0.57, c 0.56; all 4.10
    got = report_job.batches(scopes, events, workers=1)
    # one worker: the small runs share a task (150,000 events, 1.85 s, under half of 4.10 s), which
    # costs more than the big page's and so comes first
    assert got == [(["r0", "r1", "a", "b", "c"], ["r0", "r1", "a", "b", "c"]), (["big"], ["big"])]
    # every page rendered exactly once, a run's traces always in one task
    assert sorted(p for _, pages in got for p in pages) == sorted(events)
    # more workers: a task holds at most a 2 x workers share of the cost (here 1.03 s), so that the
    # workers stay busy to the end; a run is not split below twice that share
    assert report_job.batches(scopes, events, workers=2) == [
        (["big"], ["big"]), (["r0", "r1"], ["r0", "r1"]), (["a", "b"], ["a", "b"]), (["c"], ["c"])]
    # four workers (share 0.51 s): the run of two ranks costs twice that, so its pages go to two
    # tasks that each load both ranks
    assert report_job.batches(scopes, events, workers=4) == [
        (["big"], ["big"]), (["r0", "r1"], ["r0"]), (["r0", "r1"], ["r1"]), (["a"], ["a"]), (["b"], ["b"]),
        (["c"], ["c"])]


def test_views_are_frozen_in_catalog_order():
    """What a frozen view reads is frozen before it; findings last, after each of its rules."""
    from tracelake.lake import catalog
    from tracelake.lake.schema import TABLES

    files = catalog.load_files()
    order = [name for f in catalog.ordered(files, set(TABLES)) for name in f.creates]
    shared, page = report_views.shared_views(), report_views.page_views()
    assert shared[:-1] == sorted(shared[:-1], key=order.index) and shared[-1] == "findings"
    assert page == sorted(page, key=order.index)
    assert not set(shared) & set(page)
    rules = set(catalog.rule_views(files))
    assert rules and rules <= set(shared)
    # every view a section reads is evaluated once per task: shared, or a page view
    assert set(sections.views()) <= set(shared) | set(page)


def _page(db: ScopedDatabase, load: list[str], trace_id: str, views: list[str]) -> str:
    con = db.load(load)
    with materialize.ready(con, views):
        return trace_page(con, trace_id, version="test").html


def test_page_is_the_same_with_other_traces_loaded(sample_con, sample_lake):
    """A page alone (as a task of one page renders it) and with the other samples loaded and the
    page views frozen too (as a task of several pages renders it)."""
    ids = [r[0] for r in sample_con.sql("SELECT trace_id FROM traces ORDER BY file_bytes").fetchall()]
    db = ScopedDatabase(sample_lake)
    try:
        alone = _page(db, [ids[0]], ids[0], report_views.shared_views())
        assert _page(db, ids[::-1], ids[0], report_views.shared_views() + report_views.page_views()) == alone
    finally:
        db.close()


def test_a_task_serves_and_evaluates_only_what_its_sections_reach(sample_con, sample_lake):
    """On a derived lake a task reads the materialized views the sections reach from their
    partitions and evaluates the other views they reach; what lies only under a served view (the
    finding rules under `findings`, ...) is neither served nor evaluated, and the page is the same
    as with every view evaluated."""
    from tracelake.lake import catalog
    from tracelake.lake.schema import TABLES

    ids = [r[0] for r in sample_con.sql("SELECT trace_id FROM traces ORDER BY file_bytes").fetchall()]
    db = ScopedDatabase(sample_lake)
    try:
        con = db.load(ids)
        with report_job.views_frozen(con, str(sample_lake), ids, pages=len(ids)):
            temp = dict(con.execute("SELECT table_name, table_type FROM information_schema.tables "
                                    "WHERE table_schema = 'main' AND table_catalog = 'temp'").fetchall())
            page = trace_page(con, ids[0], version="test").html
        served = {v for v, kind in temp.items() if kind == "VIEW" and v not in TABLES}
        evaluated = {v for v, kind in temp.items() if kind != "VIEW" and v not in TABLES}  # not the loaded tables
        assert "findings" in served and "kernel_summary" in served
        reached = catalog.reads(sections.views(), TABLES, stop=served)
        assert served | evaluated <= reached
        rules = set(catalog.rule_views(catalog.load_files()))
        assert not rules & (served | evaluated)
        assert evaluated  # views no partition holds (api, steady_summary, ...) are still evaluated once
        assert _page(db, ids, ids[0], report_views.shared_views() + report_views.page_views()) == page
    finally:
        db.close()
