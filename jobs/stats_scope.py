"""The database `tracelake stats` prints its reports from: the files' traces alone, with the views
the reports share evaluated once.

Without a lake nothing is written: the files' tables are held in memory, only those the reports
read (ScopedDatabase.load_arrow). With a lake the files it does not hold unchanged are ingested,
and their traces' rows read back from it (ScopedDatabase.load). Either way the views the reports
read are evaluated once, on these traces' rows alone (a report per trace would evaluate each view
again): a view that two of the reports (or of the views they read) read is evaluated once into a
table, views that nothing reads not at all. Many such views (the default reports: ~70) are
evaluated on every core (materialize.in_threads)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING

from ..lake import catalog, cores, materialize
from ..lake.schema import TABLES
from ..lake.scoped import ScopedDatabase
from .ingest_job import FileOutcome, ingest_changed, read_in_memory

if TYPE_CHECKING:
    import duckdb


@contextmanager
def of_files(files: list[str], lake: str | None, reads: list[set[str]],
             on_outcome: Callable[[FileOutcome], None]) -> Iterator[tuple[list[FileOutcome],
                                                                         duckdb.DuckDBPyConnection | None]]:
    """(the files' outcomes, a connection to a database of the traces read, None when no file was
    found), the views and tables each report reads (`reads`, one set per report) ready for its
    queries until the block ends. lake: ingest into this lake and read the traces from it."""
    shared, parallel = materialize.shared_by(reads), materialize.in_threads(reads)
    needed = catalog.reads(set().union(*reads), TABLES)
    evaluated = ExitStack()  # the views evaluated once, until the block ends
    # the database (the catalog opened, its empty base tables: DuckDB, without the GIL) is set up
    # while the files are read; of files, the calling context and the critical path are built
    # while the next file is read and the views that do not read them are evaluated
    with ThreadPoolExecutor(1) as pool, ThreadPoolExecutor(2, thread_name_prefix="tracelake-analysis") as analyses:
        scoped_future = pool.submit(ScopedDatabase, lake, writable=parallel)  # None without a lake: tables from memory
        if lake:
            outcomes = ingest_changed(files, lake, on_outcome)
        else:
            read = read_in_memory(files, needed, analyses, on_outcome=on_outcome)
            outcomes = read.outcomes
        scoped = scoped_future.result()
        if not outcomes:
            scoped.close()
            con = None
        else:
            done = [o.trace_id for o in outcomes if o.status == "ok" and o.trace_id is not None]
            if lake:
                con, waiting = scoped.load(done, only=needed), None
            else:
                # the calling-context and critical-path tables are loaded when built, meanwhile the others are read
                con = scoped.load_arrow(read.tables, only=set(TABLES) - read.later)
                loaded = pool.submit(lambda: scoped.load_arrow(read.analysis_tables(), only=read.later))
                waiting = read.later, loaded
            # every table loaded, or the loading's error raised, before a report reads it
            evaluated.enter_context(materialize.ready(con, shared, threads=cores.threads() if parallel else 1,
                                                      waiting=waiting))
    if con is None:
        yield outcomes, None
        return
    try:
        yield outcomes, con
    finally:
        evaluated.close()
        con.close()
