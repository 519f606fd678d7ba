"""The database `tracelake export` reads: the exported traces' rows alone, in memory, with every view
under the export's queries (jobs/trace_export.py, jobs/run_export.py) evaluated once.

Queried over the lake's base tables, chrome_trace_events evaluates `findings` and the views under
it once per reference: 10-40 s for a 60k-event trace that ingests in 1-2 s. Here each view
is evaluated once into a table (materialize.ready, on every core), or, where the lake keeps it
for these traces, read from its derived partitions (scoped.derived_served). Files are read into
memory as `tracelake stats` reads them: no lake is written."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..lake import catalog, cores, materialize
from ..lake.schema import TABLES
from ..lake.scoped import ScopedDatabase, derived_served
from .ingest_job import FileOutcome, read_in_memory

if TYPE_CHECKING:
    import duckdb

# What the exports query: a trace's events, a run's collectives and ranks, the traces' facts.
READS = ("chrome_trace_events", "collective_flow_points", "rank_runs", "traces")


@cache
def _tables() -> frozenset[str]:
    """The base tables under READS (the others stay empty)."""
    return frozenset(catalog.reads(READS, TABLES) & set(TABLES))


def _evaluated(served: frozenset[str]) -> list[str]:
    """The shared and materialized views under READS down to those `served` (read as they are),
    less those, in order (materialize.in_order)."""
    return materialize.in_order(catalog.reads(READS, TABLES, stop=served) - served)


@contextmanager
def of_lake(lake: str | Path, trace_ids: list[str]) -> Iterator:
    """A connection to a database of these traces of `lake`, ready for the exports' queries."""
    scoped = ScopedDatabase(lake, writable=True)
    try:
        con = scoped.load(trace_ids, only=set(_tables()))
        with derived_served(con, lake, trace_ids, lambda servable: servable & catalog.view_reads(READS)) as served:
            with materialize.ready(con, _evaluated(frozenset(served)), threads=cores.threads()):
                yield con
    finally:
        scoped.close()


@contextmanager
def of_files(paths: list[str], on_outcome: Callable[[FileOutcome], None]
             ) -> Iterator[tuple[list[FileOutcome], duckdb.DuckDBPyConnection]]:
    """(the files' outcomes, a connection to a database of the traces read), ready for the exports'
    queries. The database is set up while the files are read; the views that do not read the
    calling context or the critical path are evaluated while those are built."""
    evaluated = ExitStack()
    with ThreadPoolExecutor(1) as pool, ThreadPoolExecutor(2, thread_name_prefix="tracelake-analysis") as analyses:
        scoped_future = pool.submit(ScopedDatabase, None, writable=True)
        read = read_in_memory(paths, set(_tables()), analyses, on_outcome=on_outcome)
        scoped = scoped_future.result()
        try:
            con = scoped.load_arrow(read.tables, only=set(TABLES) - read.later)
            read.tables.clear()  # copied into the database
            loaded = pool.submit(lambda: scoped.load_arrow(read.analysis_tables(), only=read.later))
            evaluated.enter_context(materialize.ready(con, _evaluated(frozenset()), threads=cores.threads(),
                                                      waiting=(read.later, loaded)))
            read.analyses.clear()
        except BaseException:
            evaluated.close()
            scoped.close()
            raise
    try:
        yield read.outcomes, con
    finally:
        evaluated.close()
        scoped.close()
