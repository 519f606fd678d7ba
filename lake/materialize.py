"""Materialization: the one module that decides how a view's rows reach a query (docs/lake.md,
"How a view's rows reach a query", defines the words used here).

- Which views a lake *keeps* (derives for every trace, kept_views) and which a reader still needs
  derived (`absent`, `stale`). The trigger that derives them is jobs/derive_job.ensure_derived;
  lake/derive.py does the deriving.
- Which views a connection evaluates *once* (a table standing in for the view, so the views and
  queries above read its rows instead of evaluating it again), and the only code that does it:
  `ready` (TEMP tables, or tables replacing the views in threads, `as_tables`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import duckdb

from . import catalog, layout

# A lake of fewer complete traces than this keeps only the views it was asked for (see kept_views).
DERIVE_FROM_TRACES = 8

# Views most materialized views read: a derivation (and a query of materialized views evaluated
# over the base tables) evaluates them once, before the materialized views (`in_order`).
SHARED_VIEWS = ("gpu_ops", "gpu_op_class", "api", "gpu_active_range", "gpu_busy", "nvtx_ranges", "rank_runs")

# From this many names shared by the queries, `stats` evaluates their views on every core (`in_threads`): below,
# copying the catalog into a writable database (~50 ms) costs more than a second thread saves (a
# view takes 15-40 ms). Measured on the 22 MB GPT-2 trace, default reports (72 views): 2.4 -> 1.9 s.
PARALLEL_FROM_VIEWS = 8


def view_fingerprints() -> dict[str, str]:
    """Materialized view -> fingerprint of its SQL, in catalog (dependency) order."""
    return catalog.materialized()


def kept_views(lake: Path) -> dict[str, str]:
    """The materialized views the lake keeps as derived tables (view -> current fingerprint), which
    every command that writes it derives for each new trace: all of them from DERIVE_FROM_TRACES
    complete traces on; below that, those it holds partitions of (under this or an earlier
    fingerprint: a view whose SQL changed is derived again, `stale`). `tracelake run`, `relink` and
    the report index derive all of them; a query derives those it reads (`absent`).
    Derived tables pay where views are read over many traces (`runs`, `findings`, the index, a
    10,000-trace lake); a trace's own views answer about as fast from its base tables, so
    `tracelake ingest` of a file into a new lake pays for decoding and writing it, not for ~117
    views it may never read (docs/lake.md). Either way every view gives the same rows
    (tests/test_derive.py)."""
    lake = Path(lake)
    views = view_fingerprints()
    root = lake / layout.DERIVED
    present = {d.name.split("@")[0] for d in root.iterdir()} if root.is_dir() else set()
    if present >= set(views) or len(layout.complete_trace_ids(lake)) >= DERIVE_FROM_TRACES:
        return views
    return {v: fp for v, fp in views.items() if v in present}


def keeps_all(lake: Path) -> bool:
    """Whether the lake keeps every materialized view (the usual lake: `run`, or 8 traces and more)."""
    return len(kept_views(lake)) == len(view_fingerprints())


def absent(lake: Path, views: Iterable[str] | None = None, kept: dict[str, str] | None = None) -> dict[str, str]:
    """The materialized views among `views` (default: all) that the lake does not keep yet
    (`kept`: kept_views(lake), when the caller has it)."""
    kept = kept_views(lake) if kept is None else kept
    wanted = None if views is None else set(views)
    return {v: fp for v, fp in view_fingerprints().items() if (wanted is None or v in wanted) and v not in kept}


def stale(lake: Path, kept: dict[str, str] | None = None) -> dict[str, str]:
    """The views the lake keeps (`kept`: kept_views(lake), when the caller has it) that have no
    partition under their current fingerprint (their SQL changed since they were derived: a new
    tracelake). Read from folder names: no trace is listed."""
    kept = kept_views(lake) if kept is None else kept
    return {v: fp for v, fp in kept.items() if not layout.has_derived(lake, v, fp)}


def missing_partitions(lake: Path, views: dict[str, str] | None = None) -> dict[str, set[str]]:
    """trace_id -> the materialized views (of `views`, default all) it has no current partition of
    (complete traces only)."""
    views = view_fingerprints() if views is None else views
    complete = layout.complete_trace_ids(lake)
    out: dict[str, set[str]] = {}
    for view, fp in views.items():
        for t in complete - layout.derived_trace_ids(lake, view, fp):
            out.setdefault(t, set()).add(view)
    return out


def in_order(views: Iterable[str]) -> list[str]:
    """The shared and materialized views among `views`, in an order in which each comes after the
    views it reads: the shared ones first (they read none of the others), then the materialized
    ones in catalog order. A view may be both: it comes once."""
    views = set(views)
    return [v for v in SHARED_VIEWS if v in views] + [v for v in view_fingerprints() if v in views and v not in SHARED_VIEWS]


@cache
def with_shared(targets: frozenset[str]) -> frozenset[str]:
    """The views a derivation of `targets` evaluates into tables: them, and the shared views under them."""
    return targets | (frozenset(SHARED_VIEWS) & frozenset(catalog.view_reads(targets)))


def shared_by(readers: list[set[str]]) -> list[str]:
    """What queries reading these names (one set per query) evaluate once: the shared and
    materialized views two or more of them read (catalog.shared_reads), in order (`in_order`)."""
    return in_order(catalog.shared_reads(readers))


def in_threads(readers: list[set[str]]) -> bool:
    """Whether `ready` is worth running on every core for the views these queries share
    (PARALLEL_FROM_VIEWS of the views and macros they share); the connection must then be
    writable (an in-memory catalog: ScopedDatabase(writable=True))."""
    return len(catalog.shared_reads(readers)) >= PARALLEL_FROM_VIEWS


@contextmanager
def ready(con, views: Iterable[str], *, threads: int = 1,
          waiting: tuple[set[str], Future] | None = None) -> Iterator[None]:
    """A block in which each of `views` (in an order where a view comes after those it reads) is
    evaluated once: its rows are a table that the views above it and the queries in the block
    read instead of evaluating it again, once per reference.

    With one thread, a TEMP table of the same name shadows each view on this connection (DuckDB
    looks in the temp schema first), dropped when the block ends. With several (`in_threads`, on a
    writable in-memory catalog), each view is replaced by a table of its rows (`as_tables`), each as
    soon as the views it reads are done; a view that fails stays a view, whose error the query
    that reads it gives. `waiting`: (tables, a future done when they are loaded): the views that
    read them wait for it, the others do not; the block starts once it is done (its error raised)."""
    views = list(views)
    if threads > 1:
        gates = {}
        if waiting is not None and waiting[0]:
            from .schema import TABLES

            gates = {v: waiting[1] for v in views if catalog.reads({v}, TABLES) & waiting[0]}
        as_tables(con, views, threads, gates=gates)
    if waiting is not None:
        waiting[1].result()
    if threads > 1:
        yield
        return
    try:
        for view in views:
            con.execute(f"CREATE OR REPLACE TEMP TABLE {view} AS SELECT * FROM main.{view}")
        yield
    finally:
        for view in views:
            con.execute(f"DROP TABLE IF EXISTS temp.{view}")


def as_tables(con, order: list[str], threads: int = 1, then=None,
              gates: dict[str, Future] | None = None) -> list[tuple[str, duckdb.Error]]:
    """Evaluate the views `order` (an order `in_order` gives) on `con` (an `in_memory_catalog`
    whose base tables are tables of main), each into a table that replaces the view, so the views
    above read its rows; `threads` views at a time, each as soon as the views it reads are done
    (a view takes ~15 ms of DuckDB's planning whatever its size, one thread each) and, for a view
    in `gates`, its future is (tables it reads still being loaded; the future's error is raised).
    then(view, cursor) runs after each. Returns the views that failed, with their errors: they
    stay views (the views above them evaluate them)."""
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    needs = _dependencies(order)
    gates = gates or {}
    failed: list[tuple[str, duckdb.Error]] = []

    def materialize(view: str) -> None:
        cur = con.cursor()
        try:
            try:
                stand_in(cur, view, f"SELECT * FROM main.{view}")
            except duckdb.Error as e:
                failed.append((view, e))
                return
            if then is not None:
                then(view, cur)
        finally:
            cur.close()

    with ThreadPoolExecutor(max(1, threads)) as pool:
        pending, running, done = list(order), dict[Future, str](), set[str]()
        while pending or running:
            for view in [v for v in pending if needs[v] <= done and (v not in gates or gates[v].done())]:
                if view in gates:
                    gates[view].result()  # a gate that failed: the view would read tables never loaded
                pending.remove(view)
                running[pool.submit(materialize, view)] = view
            closed = {gates[v] for v in pending if v in gates and not gates[v].done()}
            finished, _ = wait({*running, *closed}, return_when=FIRST_COMPLETED)
            for future in finished:
                if future in running:
                    future.result()
                    done.add(running.pop(future))
    return failed


def stand_in(con, view: str, rows: str) -> None:
    """Replace `view` on `con` (an in-memory catalog) by a table of the rows of the query `rows`:
    the views above it read the table. One transaction: other cursors see the view or its table,
    never neither (a view read before its turn, by a dependency the depends lines lack, is evaluated)."""
    con.execute(f"CREATE TABLE _rows_{view} AS {rows}")
    con.execute(f"BEGIN; DROP VIEW {view}; ALTER TABLE _rows_{view} RENAME TO {view}; COMMIT")


def _dependencies(views: list[str]) -> dict[str, set[str]]:
    """view -> the views of `views` it reads (through views that are not in it), and those before
    it in its own file (a file's views may read the ones it created before)."""
    creator = {name: f for f in catalog.load_files() for name in f.creates}
    among = set(views)
    out = {}
    for view in views:
        found, seen = set(), set()
        stack = [d for d in creator[view].depends if d in creator]
        while stack:
            d = stack.pop()
            if d in seen:
                continue
            seen.add(d)
            if d in among:
                found.add(d)
            elif creator[d] is not creator[view]:
                stack.extend(x for x in creator[d].depends if x in creator)
        earlier = creator[view].creates[:creator[view].creates.index(view)]
        out[view] = (found | (set(earlier) & among)) - {view}
    return out
