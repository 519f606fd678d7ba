"""ScopedDatabase: every view over a few traces' rows in memory, however large the lake."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import closing, contextmanager
from functools import cache
from pathlib import Path

import duckdb

from . import base_tables, catalog, layout, scan
from .catalog_template import catalog_template, in_memory_catalog
from .planner import planner_settings
from .served_views import typed_select


class ScopedDatabase:
    """An in-memory database with every view whose base tables hold just a few traces' rows.

    Queries about a few traces run on their data alone, however large the lake (the reports use
    it: DuckDB does not push a trace_id filter through windowed views). The catalog is installed
    once; `load` swaps in the rows of other traces, and the views, which DuckDB binds when they
    are queried, then answer for those.

    The catalog comes from the cached template (catalog_template), opened read-only, with the
    rows in TEMP tables that shadow its placeholder base tables: installing the views afresh
    takes about 2 s on the 2-core machine, opening the template a few ms. Without a cache folder
    the views are installed into an in-memory database.
    """

    def __init__(self, lake: str | Path | None, writable: bool = False):
        """lake: where `load` reads traces from; None for one that only gets tables from memory
        (`load_arrow`). writable: the catalog copied into memory (`in_memory_catalog`, ~50 ms
        more), its base tables tables of main, so that views can be evaluated into tables in
        several threads (materialize.ready: `tracelake stats`)."""
        from .schema import TABLES

        self.lake = Path(lake).resolve() if lake is not None else None
        template = None if writable else catalog_template()
        self._temp = template is not None
        if writable:
            self.con = in_memory_catalog()
        else:
            self.con = planner_settings(duckdb.connect(str(template), read_only=True) if self._temp else duckdb.connect())
            self.con.execute("SET enable_progress_bar = false")  # a worker's queries: no bars in a cluster's logs
        self.load([])  # empty typed tables, so that the views bind
        if not self._temp and not writable:
            catalog.install(self.con, set(TABLES))

    def load(self, trace_ids: list[str], only: set[str] | None = None,
             lazy: set[str] = frozenset()) -> duckdb.DuckDBPyConnection:
        """Replace the tables by those of `trace_ids` (in memory; those not in `only` empty; those
        in `lazy` views over their files); returns the connection."""
        base_tables.load(self.con, self.lake, trace_ids, temp=self._temp, only=only, lazy=lazy)
        return self.con

    def load_arrow(self, traces: dict[str, dict], only: set[str] | None = None) -> duckdb.DuckDBPyConnection:
        """Replace the tables (those in `only`: the others stay as they are) by these traces'
        tables held in memory (base_tables.load_arrow); returns the connection. Without TEMP
        tables (`writable`, or no template) it loads on a cursor of its own, so that it may run
        in a thread beside queries of the other tables."""
        if self._temp:  # TEMP tables are the connection's own
            base_tables.load_arrow(self.con, traces, temp=True, only=only)
        else:
            with closing(self.con.cursor()) as cursor:
                base_tables.load_arrow(cursor, traces, only=only)
        return self.con

    def close(self) -> None:
        self.con.close()


def connect_scoped(lake: str | Path, trace_ids: list[str], only: set[str] | None = None) -> duckdb.DuckDBPyConnection:
    """A ScopedDatabase of these traces (of the tables in `only`), for one use: close the
    connection when done."""
    return ScopedDatabase(lake).load(trace_ids, only)


@contextmanager
def derived_served(con, lake: str | Path | None, trace_ids: list[str],
                   wanted: Callable[[set[str]], set[str]] | None = None) -> Iterator[list[str]]:
    """For the block: each materialized view whose current derived partitions (lake/derive.py)
    hold every one of `trace_ids`, read from them into a TEMP table that shadows the view on `con`
    (a ScopedDatabase's connection loaded with those traces), with the view's columns and types.
    The views were evaluated once when the lake was derived; a report task evaluated them again
    (the 37 corpus pages: 31 s of 89 s). A view some trace lacks a partition of (not derived,
    derived by an older SQL, failed on it) stays a view. `wanted(servable)`: of the views that could
    be served, those the caller reads (the others are not served: binding each costs about 1 ms).
    Yields the views served."""
    served = []
    try:
        if lake is not None and trace_ids:
            sources = derived_sources(Path(lake), trace_ids)
            keep = set(sources) if wanted is None else wanted(set(sources))
            for view, source in sources.items():
                if view not in keep:
                    continue
                con.execute(f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT {typed_select(view_columns()[view])} "
                            f"FROM {source}")
                served.append(view)
        yield served
    finally:
        for view in served:
            con.execute(f"DROP VIEW IF EXISTS temp.{view}")


def derived_sources(lake: Path, trace_ids: list[str], views: Iterable[str] | None = None) -> dict[str, str]:
    """Materialized view (of `views`, default all) -> a FROM expression of its current partitions
    of `trace_ids`, for the views that have one for each of them (and whose columns are known)."""
    known = view_columns()
    wanted = None if views is None else set(views)
    out = {}
    for view, fingerprint in catalog.materialized().items():
        if wanted is not None and view not in wanted:
            continue
        folder = layout.derived_folder(view, fingerprint)
        if view not in known:
            continue
        if not (all(layout.loose_file(lake, folder, t).exists() for t in trace_ids)
                or set(trace_ids) <= layout.derived_trace_ids(lake, view, fingerprint)):
            continue
        source = scan.scoped_source(lake, folder, trace_ids)
        if source is not None:
            out[view] = source
    return out


@cache
def view_columns() -> dict[str, list[tuple[str, str]]]:
    """Materialized view -> its (column, type) in order, from the catalog template in which each is
    a typed scan ({} without a cache folder: nothing is served)."""
    template = catalog_template(placed=True)
    if template is None:
        return {}
    con = duckdb.connect(str(template), read_only=True)
    try:
        rows = con.execute("SELECT table_name, column_name, data_type FROM duckdb_columns() "
                           "WHERE table_name IN (SELECT unnest(?)) ORDER BY table_name, column_index",
                           [list(catalog.materialized())]).fetchall()
    finally:
        con.close()
    out: dict[str, list[tuple[str, str]]] = {}
    for view, column, kind in rows:
        out.setdefault(view, []).append((column, kind))
    return out
