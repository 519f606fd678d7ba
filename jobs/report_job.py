"""The report job: per-trace pages and an index page linking them, written atomically (temp + rename).

The twin of run_job.py for the HTML side; reports/ only renders (a connection in, HTML out). Pages
are rendered in a process pool, or on a Dask cluster (executor='dask': its workers must see the
lake and the output folder at the same paths), a run (its rank files, else one trace) per task,
costliest first (batches). Each worker keeps one ScopedDatabase (views installed once) and one warm chart
renderer for all the runs it is given. Beside each page, traces/<trace_id>.json keeps the trace's
row of the index, so the index never evaluates the views over the whole lake for them again.
With export=True (`--export`), traces/<trace_id>.trace.json.gz beside each page is the trace's
Perfetto export (analysis.trace_export), which the page's findings and largest gaps link to; it
goes with its page.
A page that fails is listed (page_errors, and on the index) and the others go on; the index page
is written last, by the caller's process. write_trace_report renders the page of one trace alone
(`tracelake report --trace ID`, and its e-mail) in the caller's process, as a worker renders it.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from ..analysis import critpath_whatif
from ..lake import atomic_write, cores, materialize
from ..lake.database import connect
from ..lake.scoped import ScopedDatabase, connect_scoped, derived_served
from ..lake.version import __version__
from ..reports.data import INDEX_COLUMNS, INDEX_VIEWS, index_rows
from ..reports.render import index_report, trace_page, trace_report
from . import report_stamp, report_views, stage_workers
from .trace_export import page_export_path
from .trace_export import write as write_export
from .worker_pool import process_pool


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        atomic_write.write_text(path, text)  # nothing half-written is left, whatever went wrong
    except OSError as e:
        if e.filename is None:  # a failed write() names no file: the page's
            raise OSError(e.errno, e.strerror, str(path)) from e
        raise


def write_reports(con, out_dir: Path, trace_ids: list[str] | None = None, failures: list[dict] | None = None,
                  render_ids: set[str] | None = None, index: Path | None = None, jobs: int | None = None,
                  executor: str = "local", scheduler: str | None = None,
                  page_errors: list[dict] | None = None,
                  on_pages: Callable[[int, int], None] = lambda done, total: None, export: bool = False) -> Path:
    """out_dir/traces/<trace_id>.html for each trace (only those in render_ids, all when None, are
    rendered again) and an index page linking them: `index`, by default out_dir/index.html.
    jobs: worker processes (default: all cores), with executor 'local'; executor 'dask': the pages
    are rendered on the Dask cluster at `scheduler`. A page that cannot be rendered is appended to
    page_errors ({trace_id, error}) and listed on the index instead of linked; the others go on.
    on_pages(done, total) is called with (0, pages to render) and as each task's pages are written.
    export: also write each rendered trace's Perfetto export beside its page, and link it (without,
    a rendered page's old export is removed). Returns the index path."""
    all_ids = [r[0] for r in con.execute("SELECT trace_id FROM traces ORDER BY file_bytes DESC").fetchall()]
    wanted = None if trace_ids is None else set(trace_ids)
    ids = [t for t in all_ids if wanted is None or t in wanted]
    links = {t: out_dir / "traces" / f"{t}.html" for t in ids}
    siblings = {t: f"{t}.html" for t in ids}  # trace pages link each other (per-rank section)
    stale = {t for t in ids if render_ids is None or t in render_ids or not links[t].exists()
             or not _index_row_path(links[t]).exists()}
    # a run's pages show all its ranks: when one rank is rendered again, so are its siblings
    scopes = [(scope, members) for scope, members in trace_scopes(con, ids).items() if stale.intersection(members)]
    events = dict(con.execute("SELECT trace_id, event_count FROM traces").fetchall())
    workers = jobs or cores.threads()
    if executor != "dask":
        work_s = sum(_cost(len(members), sum(events.get(t) or 0 for t in scope)) for scope, members in scopes)
        workers = max(1, stage_workers.worth(workers, work_s, WORKER_START_S))  # one: in this process
    tasks = [(scope, [(t, str(links[t])) for t in members], siblings, export)
             for scope, members in batches(scopes, events, workers)]
    _remove_leftovers(out_dir / "traces")
    # the diff pages are written by a thread of this process while the workers render the trace
    # pages (they read only the lake's database), not after them; its cursor is closed after the
    # thread has ended, however the block is left
    with con.cursor() as diff_con, ThreadPoolExecutor(1) as diff_thread:
        diffs_done = diff_thread.submit(write_diff_pages, diff_con, out_dir / "diffs", trace_ids is None)
        try:
            errors = _run_tasks(str(lake_path(con)), tasks, workers, executor, scheduler,
                                on_pages)
        except BaseException:  # (Ctrl-C) the thread's query stops too: leaving the block waits for it
            diff_con.interrupt()
            raise
        diffs = diffs_done.result()
    if page_errors is not None:
        page_errors.extend(errors)
    failed = {e["trace_id"] for e in errors}
    if trace_ids is None:  # pages of traces no longer in the lake (changed or pruned files) go too
        for page in (out_dir / "traces").glob("*.html"):
            if page.stem not in links:
                _remove_page(page)
    index = index or out_dir / "index.html"
    relative = {t: Path(os.path.relpath(p, index.parent)).as_posix() for t, p in links.items() if t not in failed}
    rows = {t: row for t in ids if t not in failed and (row := _read_index_row(links[t])) is not None}
    missing = [t for t in ids if t not in rows and t not in failed]
    rows |= {r["trace_id"]: r for r in (index_rows(con, missing) if missing else [])}
    listed = (failures or []) + [{"path": e["trace_id"], "error": f"report page of {e['trace_id']}: {e['error']}"}
                                 for e in errors]
    diff_links = {run: {"link": Path(os.path.relpath(p, index.parent)).as_posix(), "verdict": verdict}
                  for run, (p, verdict) in diffs.items()}
    with materialize.ready(con, INDEX_VIEWS):
        html = index_report(con, relative, listed, list(rows.values()), version=__version__, diffs=diff_links)
    write_atomically(index, html)
    return index


def write_trace_report(con, trace_id: str, out: Path, eml: Path | None = None, export: bool = False) -> None:
    """`tracelake report --trace ID -o OUT.html`: the page of one trace of the lake `con` opens,
    rendered as a page of write_reports is (a database of its run's traces, views_frozen), to
    `out`. export: its Perfetto export beside it (page_export_path), which the page links; eml:
    also the page as an e-mail (charts as attached PNGs), which links no export."""
    scope = list(next(iter(trace_scopes(con, [trace_id]))))
    scoped = connect_scoped(lake_path(con), scope)
    exported = page_export_path(out)
    try:
        with views_frozen(scoped, lake_path(con), scope):
            whatif = critpath_whatif.report_rows(scoped, trace_id)
            if export:
                write_export(scoped, trace_id, exported)
            page = trace_report(scoped, trace_id, version=__version__, whatif=whatif,
                                export=exported.name if export else None)
            # the e-mail carries no export: its page does not link one
            mailed = trace_report(scoped, trace_id, version=__version__, whatif=whatif) if eml and export else page
    finally:
        scoped.close()
    write_atomically(out, page)
    if eml:
        from ..reports.email import build_message

        eml.write_bytes(build_message(mailed, f"tracelake report: {trace_id}").as_bytes())


def write_diff_pages(con, out_dir: Path, prune: bool = True) -> dict[str, tuple[Path, str]]:
    """A diff page (`tracelake diff --format html`) for each run the index compares with the previous
    run of its workload (run_overview) when both record steps: out_dir/<the run's first trace
    id>.html. The diff reads the lake's materialized views (under 0.1 s a pair on the recorded
    pairs). A pair that cannot be diffed is left out (the index then links no page). prune: remove
    the pages of pairs no longer compared. Returns run id -> (its page, the diff's verdict:
analysis/diff_noise.verdict's, which the index's runs that got slower or faster are)."""
    from ..reports.render import diff_report
    from .diff import DiffInputError, compare

    pairs = con.execute("""SELECT r.run_id, r.trace_ids, r.first_file, p.trace_ids, p.first_file
                           FROM run_overview r JOIN run_overview p ON p.run_id = r.previous_run_id
                           WHERE r.compared_per = 'step' ORDER BY r.run_id""").fetchall()
    pages = {}
    for run_id, ids, first_file, previous_ids, previous_file in pairs:
        try:
            result = compare(con, previous_ids, ids, previous_file, first_file, summaries=True)
        except DiffInputError:
            continue
        page = out_dir / f"{ids[0]}.html"
        write_atomically(page, diff_report(result, version=__version__, title=f"tracelake diff: {first_file} vs {previous_file}"))
        pages[run_id] = (page, result["noise"]["verdict"])
    if prune and out_dir.is_dir():
        kept = {page for page, _ in pages.values()}
        for page in out_dir.glob("*.html"):
            if page not in kept:
                page.unlink(missing_ok=True)
    return pages


def write_run_reports(out: str | Path, files: list[dict], jobs: int | None = None, executor: str = "local",
                      scheduler: str | None = None, page_errors: list[dict] | None = None,
                      on_pages: Callable[[int, int], None] = lambda done, total: None, export: bool = False) -> Path:
    """The reports of a batch run (`tracelake run`, tracelake.run): OUTDIR/reports/index.html and the
    pages of the traces it ingested again; files: RunSummary.files; export: each page's Perfetto
    export beside it (write_reports). Returns the index path. Once all are written without an
    error, they are current (report_stamp): an unchanged re-run does not write them again."""
    report_stamp.clear(out)
    errors: list[dict] = []
    con = connect(Path(out) / "lake")
    try:
        index = write_reports(con, Path(out) / "reports", failures=[f for f in files if f["status"] == "error"],
                              render_ids={f["trace_id"] for f in files if f["status"] == "ok"}, jobs=jobs,
                              executor=executor, scheduler=scheduler, page_errors=errors, on_pages=on_pages,
                              export=export)
    finally:
        con.close()
    if page_errors is not None:
        page_errors.extend(errors)
    if not errors:
        report_stamp.record(out, files, export)
    return index


def _index_row_path(page: Path) -> Path:
    return page.with_suffix(".json")


def _read_index_row(page: Path) -> dict | None:
    """The kept index row, or None when missing, unreadable or of other columns (an older version)."""
    try:
        row = json.loads(_index_row_path(page).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return row if isinstance(row, dict) and row.keys() == set(INDEX_COLUMNS) else None


def _remove_leftovers(pages: Path) -> None:
    """Temporary files of page (and export) writers that were killed (a worker lost mid-write): never a page."""
    for tmp in pages.glob(".*.tmp"):
        tmp.unlink(missing_ok=True)


def _run_tasks(lake: str, tasks: list, jobs: int, executor: str = "local", scheduler: str | None = None,
               on_pages: Callable[[int, int], None] = lambda done, total: None) -> list[dict]:
    """Render every task's pages; returns the pages that failed ({trace_id, error}). on_pages(done,
    total): at the start and as each task ends."""
    total, done, errors = sum(len(task[1]) for task in tasks), 0, {}
    on_pages(0, total)

    def finished(i: int, task_errors: list[dict]) -> None:
        nonlocal done
        done += len(tasks[i][1])
        errors[i] = task_errors
        on_pages(done, total)

    if executor == "dask":
        from distributed import Client, as_completed

        with Client(scheduler) as client:
            futures = {client.submit(_render_run, lake, *task, pure=False): i for i, task in enumerate(tasks)}
            for future in as_completed(futures):
                finished(futures[future], _task_errors(future, tasks[futures[future]][1]))
    elif jobs <= 1 or len(tasks) <= 1:
        for i, task in enumerate(tasks):
            finished(i, _render_run(lake, *task))
    else:
        from concurrent.futures import as_completed

        with process_pool(min(jobs, len(tasks))) as pool:
            futures = {pool.submit(_render_run, lake, *task): i for i, task in enumerate(tasks)}
            for future in as_completed(futures):
                finished(futures[future], future.result())
    return [e for i in sorted(errors) for e in errors[i]]  # in task order, whichever ended first


def _task_errors(future, pages: list[tuple[str, str]]) -> list[dict]:
    """A Dask task's failed pages; a task that failed as a whole (its worker lost too often, its
    database not loadable) fails all its pages."""
    try:
        return future.result()
    except Exception as e:  # noqa: BLE001 - listed per page, the other tasks go on
        return [{"trace_id": t, "error": _error_line(e)} for t, _ in pages]


def _error_line(e: BaseException) -> str:
    return " ".join(f"{type(e).__name__}: {e}".split())


@contextmanager
def views_frozen(con, lake: str | Path, scope: list[str], pages: int = 1) -> Iterator[None]:
    """A block in which the views the pages' sections share are evaluated once (materialize.ready),
    and, for several pages, the views each page reads: on a scoped database of the pages' run
    (`scope`, from `lake`), before rendering them. Without it every section evaluates the views under
    it again. The materialized views are read from the lake's derived partitions where it holds
    them for the whole scope (scoped.derived_served), not evaluated again; of the others, those
    that no section reaches through them are neither served nor evaluated (report_views.reached)."""
    with derived_served(con, lake, scope, report_views.reached) as served:
        reached = report_views.reached(set(served))
        views = report_views.shared_views() + (report_views.page_views() if pages > 1 else [])
        with materialize.ready(con, [v for v in views if v in reached and v not in served]):
            yield


_DATABASES = threading.local()  # per worker thread (Dask runs tasks in threads): lake -> its scoped database


def _render_run(lake: str, scope: list[str], pages: list[tuple[str, str]], siblings: dict[str, str],
                export: bool = False) -> list[dict]:
    """Render a run's pages (export: and each one's Perfetto export, which it links); a page that
    fails is returned ({trace_id, error}) and its old page removed (no page of other data stays),
    the others are written."""
    errors: dict[str, str] = {}
    done: set[str] = set()
    try:
        cache = _DATABASES.__dict__
        if lake not in cache:
            cache[lake] = ScopedDatabase(lake)
        # a lake that keeps every materialized view serves them (views_frozen): the tables only
        # they read are left in their files
        lazy = report_views.lazy_tables() if materialize.keeps_all(Path(lake)) else frozenset()
        con = cache[lake].load(scope, lazy=lazy)
        with views_frozen(con, lake, scope, len(pages)):
            for trace_id, path in pages:
                try:
                    exported = page_export_path(Path(path))
                    if export:
                        write_export(con, trace_id, exported)
                    else:
                        exported.unlink(missing_ok=True)  # an older run's export: of other data now
                    page = trace_page(con, trace_id, siblings, version=__version__,
                                      whatif=critpath_whatif.report_rows(con, trace_id),
                                      export=exported.name if export else None)
                    write_atomically(Path(path), page.html)
                    write_atomically(_index_row_path(Path(path)), json.dumps(page.index_row))
                except Exception as e:  # noqa: BLE001 - one page's error does not stop the others
                    errors[trace_id] = _error_line(e)
                done.add(trace_id)
    except Exception as e:  # noqa: BLE001 - the run's traces could not be loaded: its other pages fail
        errors |= {t: _error_line(e) for t, _ in pages if t not in done}
    for trace_id, path in pages:
        if trace_id in errors:
            _remove_page(Path(path))
    return [{"trace_id": t, "error": error} for t, error in errors.items()]


def _remove_page(page: Path) -> None:
    page.unlink(missing_ok=True)
    _index_row_path(page).unlink(missing_ok=True)
    page_export_path(page).unlink(missing_ok=True)


# A task renders the pages of several small runs from one scoped database: loading the tables and
# evaluating the shared views (report_views) cost DuckDB about the same time (mostly planning) for 700 events as for
# 100k, so small runs share it. Every view answers per trace, so a page is the same whichever
# other traces are loaded beside its run's (tests/test_report_batches.py).
BATCH_EVENTS = 150_000
# What a task costs a worker, roughly (the 37 corpus pages on 2 cores): the load and the shared
# views, then each page (its sections, charts and what-if), then each event. A task of 17 small
# pages took 4.6 s, one of the 500k-event page 1.6 s: pages, not events, make most of the cost.
TASK_SECONDS, PAGE_SECONDS, EVENT_SECONDS = 0.3, 0.25, 2e-6
# What a worker costs before its first page (stage_workers): its start, importing the chart libraries
# (0.9 s of CPU on the 2-core machine), and its task's load and shared views.
WORKER_START_S = 1.2


def _cost(pages: int, events: int) -> float:
    return TASK_SECONDS + PAGE_SECONDS * pages + EVENT_SECONDS * events


def batches(scopes: list[tuple[tuple[str, ...], list[str]]], events: dict[str, int],
            workers: int) -> list[tuple[list[str], list[str]]]:
    """Scopes (biggest first), consecutive ones merged into tasks of at most BATCH_EVENTS events
    and at most a 2 x workers share of the estimated cost of all pages (so that the workers stay
    busy to the end); a bigger run is a task alone, and a run that costs more than that share has
    its pages split over several tasks that each load it. The tasks come costliest first, so that
    the longest does not start last: [(traces to load, pages to render)]."""
    size = {scope: sum(events.get(t) or 0 for t in scope) for scope, _ in scopes}
    share = sum(_cost(len(members), size[scope]) for scope, members in scopes) / max(1, 2 * workers)
    out: list[tuple[list[str], list[str]]] = []
    load = 0
    for scope, members in scopes:
        parts = min(len(members), int(_cost(len(members), size[scope]) // max(share, 1e-9)))
        if parts > 1:  # a run too costly for one worker: its pages in several tasks, each loading the run
            out.extend((list(scope), list(members[i::parts])) for i in range(parts))
            load = BATCH_EVENTS  # nothing merges into them
            continue
        if (out and load + size[scope] <= BATCH_EVENTS
                and _cost(len(out[-1][1]) + len(members), load + size[scope]) <= share):
            out[-1][0].extend(scope)
            out[-1][1].extend(members)
            load += size[scope]
        else:
            out.append((list(scope), list(members)))
            load = size[scope]
    return sorted(out, key=lambda task: -_cost(len(task[1]), sum(events.get(t) or 0 for t in task[0])))


def lake_path(con) -> Path:
    return Path(con.sql("SELECT lake_path FROM _lake_info").fetchall()[0][0])


def trace_scopes(con, trace_ids: list[str]) -> dict[tuple[str, ...], list[str]]:
    """The traces each page needs (its run's rank files, else itself) -> the pages that need them.
    A page is rendered from a database of just those traces (ScopedDatabase)."""
    runs: dict[str, set[str]] = {}
    for trace_id, run_id in con.execute("SELECT DISTINCT trace_id, run_id FROM rank_runs").fetchall():
        runs.setdefault(run_id, set()).add(trace_id)
    run_of = {t: tuple(sorted(members)) for members in runs.values() for t in members}
    scopes: dict[tuple[str, ...], list[str]] = {}
    for t in trace_ids:
        scopes.setdefault(run_of.get(t, (t,)), []).append(t)
    return scopes
