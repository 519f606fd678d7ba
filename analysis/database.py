"""The lake's DuckDB database, <lake>/tracelake.duckdb: a view per base table over its Parquet
partitions (where they are: ingest/lake_layout.py) and every view of sql/; and ScopedDatabase,
the same views over a few traces' rows in memory.

DuckDB resolves relative paths in views against the process's working directory, not the
database file, so the views hold the lake's absolute path. The database records that path;
whenever tracelake opens a lake whose folder was moved or copied it rebuilds the views first
(`tracelake relink DIR` does only that, for users of the plain duckdb CLI). See docs/lake.md.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import duckdb
import pyarrow as pa
from tracelake.ingest import lake_layout
from tracelake.ingest.schema import TABLES

from . import __version__, catalog

DB_FILE = "tracelake.duckdb"

_DUCK_TYPES = {
    pa.int64(): "BIGINT", pa.int32(): "INTEGER", pa.float64(): "DOUBLE", pa.string(): "VARCHAR",
    pa.bool_(): "BOOLEAN", pa.list_(pa.string()): "VARCHAR[]", pa.timestamp("us", tz="UTC"): "TIMESTAMPTZ",
}


def _quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def base_tables(con, lake: Path, trace_ids: list[str] | None = None, kind: str = "VIEW") -> None:
    """(Re)create every base table on `con` as a VIEW over its Parquet partitions or as an in-memory
    TABLE of them: all partitions, or those of `trace_ids` ([] gives empty typed relations)."""
    for table, spec in TABLES.items():
        cols = ", ".join(c.name for c in spec.columns)
        files = lake_layout.table_files(lake, table, trace_ids)
        if files:
            pattern = "[" + ", ".join(_quote(f) for f in files) + "]"
            source = (f"read_parquet({pattern}, hive_partitioning = true, "
                      f"hive_types = {{'trace_id': VARCHAR}}, union_by_name = true)")
            try:
                con.execute(f"CREATE OR REPLACE {kind} {table} AS SELECT {cols} FROM {source};")
            except duckdb.BinderException:  # files written before a column was added to the schema
                con.execute(f"CREATE OR REPLACE {kind} {table} AS SELECT {_present_or_null(con, spec, source)} "
                            f"FROM {source};")
        else:
            typed = ", ".join(f"CAST(NULL AS {_DUCK_TYPES[c.type]}) AS {c.name}" for c in spec.columns)
            con.execute(f"CREATE OR REPLACE {kind} {table} AS SELECT {typed} WHERE false;")


def _present_or_null(con, spec, source: str) -> str:
    """The table's columns, NULL for those no file has (a lake written by an older tracelake)."""
    present = {r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
    return ", ".join(c.name if c.name in present else f"CAST(NULL AS {_DUCK_TYPES[c.type]}) AS {c.name}"
                     for c in spec.columns)


def _catalog_fingerprint() -> str:
    h = hashlib.sha256(__version__.encode())
    for f in catalog.load_files():
        h.update(f.path.encode())
        h.update(f.text.encode())
    return h.hexdigest()[:16]


def build_database(lake: str | Path) -> Path:
    """(Re)write <lake>/tracelake.duckdb: base table views, every sql/ view, and _lake_info."""
    lake = Path(lake).resolve()
    lake.mkdir(parents=True, exist_ok=True)
    db = lake / DB_FILE
    tmp = lake / f".{DB_FILE}.{os.getpid()}.tmp"
    tmp.unlink(missing_ok=True)
    try:
        _write_database(tmp, lake)
        os.replace(tmp, db)
    except BaseException:  # a failed or interrupted build leaves no half-written file behind
        tmp.unlink(missing_ok=True)
        raise
    finally:
        Path(str(tmp) + ".wal").unlink(missing_ok=True)
    return db


def _write_database(tmp: Path, lake: Path) -> None:
    # Written in the v1.0 storage format so that older DuckDB CLIs and drivers open it too.
    con = duckdb.connect(str(tmp), config={"storage_compatibility_version": "v1.0.0"})
    try:
        # The sql/ views are created over empty typed base tables, then the base tables are pointed
        # at the Parquet files: binding a view lists and opens the files of every table it reads,
        # which over a large lake took longer than the ingest (10.8 s for 200 traces). DuckDB binds
        # views again when they are queried, so they read the files from then on.
        base_tables(con, lake, trace_ids=[])
        catalog.install(con, set(TABLES))
        base_tables(con, lake)
        con.execute("CREATE TABLE _lake_info (lake_path VARCHAR, catalog_fingerprint VARCHAR, tracelake_version VARCHAR)")
        con.execute("INSERT INTO _lake_info VALUES (?, ?, ?)", [str(lake), _catalog_fingerprint(), __version__])
    finally:
        con.close()


def _is_current(db: Path, lake: Path) -> bool:
    try:
        con = duckdb.connect(str(db), read_only=True)
    except duckdb.Error:
        return False
    try:
        row = con.execute("SELECT lake_path, catalog_fingerprint FROM _lake_info").fetchone()
    except duckdb.Error:
        return False
    finally:
        con.close()
    return row == (str(lake), _catalog_fingerprint())


def connect(lake: str | Path, read_only: bool = True) -> duckdb.DuckDBPyConnection:
    """Open a lake's database, rebuilding it first when missing, moved, or older than the SQL catalog."""
    lake = Path(lake).resolve()
    lake_layout.check_path(lake)
    if not lake_layout.is_lake(lake) and not (lake / DB_FILE).exists():
        raise FileNotFoundError(f"{lake}: not a tracelake lake (no traces/ folder); run `tracelake ingest` first")
    db = lake / DB_FILE
    if not db.exists() or not _is_current(db, lake):
        build_database(lake)
    return duckdb.connect(str(db), read_only=read_only)


class ScopedDatabase:
    """An in-memory database with every view whose base tables hold just a few traces' rows.

    Queries about a few traces run on their data alone, however large the lake (the reports use
    it: DuckDB does not push a trace_id filter through windowed views). The catalog is installed
    once (about 0.2 s); `load` swaps in the rows of other traces, and the views, which DuckDB binds
    when they are queried, then answer for those.
    """

    def __init__(self, lake: str | Path):
        self.lake = Path(lake).resolve()
        self.con = duckdb.connect()
        self.load([])  # empty typed tables, so that the views bind
        catalog.install(self.con, set(TABLES))

    def load(self, trace_ids: list[str]) -> duckdb.DuckDBPyConnection:
        """Replace the tables by those of `trace_ids` (in memory); returns the connection."""
        base_tables(self.con, self.lake, trace_ids, kind="TABLE")
        return self.con

    def close(self) -> None:
        self.con.close()


def connect_scoped(lake: str | Path, trace_ids: list[str]) -> duckdb.DuckDBPyConnection:
    """A ScopedDatabase of these traces, for one use: close the connection when done."""
    return ScopedDatabase(lake).load(trace_ids)

