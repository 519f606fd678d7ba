"""ScopedDatabase: every view over a few traces' rows in memory, however large the lake."""

from __future__ import annotations

from pathlib import Path

import duckdb

from . import base_tables, catalog
from .catalog_template import catalog_template
from .planner import planner_settings


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

    def __init__(self, lake: str | Path | None):
        """lake: where `load` reads traces from; None for one that only gets tables from memory
        (`load_arrow`)."""
        from .schema import TABLES

        self.lake = Path(lake).resolve() if lake is not None else None
        template = catalog_template()
        self._temp = template is not None
        self.con = planner_settings(duckdb.connect(str(template), read_only=True) if self._temp else duckdb.connect())
        self.con.execute("SET enable_progress_bar = false")  # a worker's queries: no bars in a cluster's logs
        self.load([])  # empty typed tables, so that the views bind
        if not self._temp:
            catalog.install(self.con, set(TABLES))

    def load(self, trace_ids: list[str], only: set[str] | None = None) -> duckdb.DuckDBPyConnection:
        """Replace the tables by those of `trace_ids` (in memory; those not in `only` empty);
        returns the connection."""
        base_tables.load(self.con, self.lake, trace_ids, temp=self._temp, only=only)
        return self.con

    def load_arrow(self, traces: dict[str, dict]) -> duckdb.DuckDBPyConnection:
        """Replace the tables by these traces' tables held in memory (base_tables.load_arrow);
        returns the connection."""
        base_tables.load_arrow(self.con, traces, temp=self._temp)
        return self.con

    def close(self) -> None:
        self.con.close()


def connect_scoped(lake: str | Path, trace_ids: list[str], only: set[str] | None = None) -> duckdb.DuckDBPyConnection:
    """A ScopedDatabase of these traces (of the tables in `only`), for one use: close the
    connection when done."""
    return ScopedDatabase(lake).load(trace_ids, only)
