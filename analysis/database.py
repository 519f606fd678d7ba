"""The lake's DuckDB database, <lake>/tracelake.duckdb: a view per base table over its Parquet
partitions (where they are: ingest/lake_layout.py) and every view of sql/; and ScopedDatabase,
the same views over a few traces' rows in memory.

DuckDB resolves relative paths in views against the process's working directory, not the
database file, so the views hold the lake's absolute path. The database records that path;
whenever tracelake opens a lake whose folder was moved or copied it rebuilds the views first
(`tracelake relink DIR` does only that, for users of the plain duckdb CLI). See docs/lake.md.

The database is written only when what it holds would change: the fingerprint in _lake_info
covers the SQL catalog, the schema, the version and which tables have partitions (the base views
read a glob of them, so adding a trace to a table that has some changes nothing). Opening a lake
to run one query therefore reads a few bytes and imports neither pyarrow nor the schema.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from importlib import resources
from pathlib import Path

import duckdb
from tracelake.ingest import lake_layout

from . import __version__, catalog, derive, lake_scan

DB_FILE = "tracelake.duckdb"


def _duck_types() -> dict:
    import pyarrow as pa

    return {
        pa.int64(): "BIGINT", pa.int32(): "INTEGER", pa.float64(): "DOUBLE", pa.string(): "VARCHAR",
        pa.bool_(): "BOOLEAN", pa.list_(pa.string()): "VARCHAR[]", pa.timestamp("us", tz="UTC"): "TIMESTAMPTZ",
    }


def _quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _empty(spec, duck_types: dict) -> str:
    typed = ", ".join(f"CAST(NULL AS {duck_types[c.type]}) AS {c.name}" for c in spec.columns)
    return f"SELECT {typed} WHERE false"


def base_tables(con, lake: Path, trace_ids: list[str], temp: bool = False, only: set[str] | None = None) -> None:
    """(Re)create every base table on `con` as an in-memory TABLE (a TEMP one with `temp`, which
    shadows the placeholder of a catalog template) of the rows of `trace_ids`, from their
    partitions or segments ([] gives empty typed tables; so do tables not in `only`)."""
    from tracelake.ingest.schema import TABLES

    duck_types = _duck_types()
    create = "CREATE OR REPLACE TEMP TABLE" if temp else "CREATE OR REPLACE TABLE"
    for table, spec in TABLES.items():
        cols = ", ".join(c.name for c in spec.columns)
        wanted = trace_ids and (only is None or table in only)
        source = lake_scan.scoped_source(lake, table, trace_ids) if wanted else None
        if source:
            try:
                con.execute(f"{create} {table} AS SELECT {cols} FROM {source};")
            except duckdb.BinderException:  # files written before a column was added to the schema
                con.execute(f"{create} {table} AS SELECT {_present_or_null(con, spec, source)} FROM {source};")
        else:
            con.execute(f"{create} {table} AS {_empty(spec, duck_types)};")


def _lake_base_tables(con) -> None:
    """Every base table as a view over a table macro that returns no rows yet (lake_scan.py:
    `_point_base_tables` points it at the lake's files, listed when a query reads it, not now)."""
    from tracelake.ingest.schema import TABLES

    duck_types = _duck_types()
    for table, spec in TABLES.items():
        lake_scan.placeholder(con, table, ", ".join(c.name for c in spec.columns), _empty(spec, duck_types))


def _point_base_tables(con, lake: Path) -> None:
    from tracelake.ingest.schema import TABLES

    duck_types = _duck_types()
    for table, spec in TABLES.items():
        # union_by_name (older partitions may lack newer columns) opens every file, which
        # defeats pruning by trace_id: only where the partitions' schemas may differ
        lake_scan.point(con, table, lake, table, union_by_name=not lake_layout.uniform_schema(lake, table),
                        columns={c.name: duck_types[c.type] for c in spec.columns})


def _present_or_null(con, spec, source: str) -> str:
    """The table's columns, NULL for those no file has (a lake written by an older tracelake)."""
    present = {r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
    duck_types = _duck_types()
    return ", ".join(c.name if c.name in present else f"CAST(NULL AS {duck_types[c.type]}) AS {c.name}"
                     for c in spec.columns)


def _catalog_fingerprint() -> str:
    """What the views of every lake depend on: the SQL catalog and its loader, the schema, this module, the versions."""
    h = hashlib.sha256(f"{__version__} {duckdb.__version__}".encode())
    for f in catalog.load_files():
        h.update(f.path.encode())
        h.update(f.text.encode())
    for module in ("tracelake.ingest/schema.py", "tracelake.analysis/database.py", "tracelake.analysis/catalog.py",
                   "tracelake.analysis/derive.py", "tracelake.analysis/lake_scan.py"):
        package, name = module.split("/")
        h.update(resources.files(package).joinpath(name).read_bytes())
    return h.hexdigest()[:16]


def _fingerprint(lake: Path, derived: list[str] | None = None) -> str:
    """What the database's content depends on besides the lake's path (see the module doc)."""
    h = hashlib.sha256(_catalog_fingerprint().encode())
    for table in sorted(p.name for p in lake.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if lake_layout.table_files(lake, table):
            h.update(f"\n{table}".encode())
    fingerprints = derive.current()
    for view in derive.with_partitions(lake) if derived is None else derived:  # served from partitions
        h.update(f"\n{view}@{fingerprints[view]}".encode())
    h.update(lake_layout.layout_state(lake).encode())  # compacted segments and their tombstones
    return h.hexdigest()[:16]


def _new_database(path: Path) -> duckdb.DuckDBPyConnection:
    # Written in the v1.0 storage format so that older DuckDB CLIs and drivers open it too.
    return duckdb.connect(str(path), config={"storage_compatibility_version": "v1.0.0"})


def install_catalog(con) -> None:
    """The sql/ views, created over base tables that read no files yet (see _write_database)."""
    from tracelake.ingest.schema import TABLES

    _lake_base_tables(con)
    catalog.install(con, set(TABLES))


def catalog_template(placed: bool = False) -> Path | None:
    """A database holding just the installed catalog, kept per catalog fingerprint in the user's
    cache folder ($TRACELAKE_CACHE, else $XDG_CACHE_HOME/tracelake or ~/.cache/tracelake):
    installing the views takes most of a new lake's database time (0.6 s), copying this file
    almost none. placed: the catalog with every materialized view already a placeholder scan
    (derive.place: 0.5 s for the 89 MB trace's lake). None when the cache folder cannot be
    written (the caller installs the catalog)."""
    root = os.environ.get("TRACELAKE_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache",
                                                     "tracelake")
    template = Path(root) / f"catalog-{_catalog_fingerprint()}{'-placed' if placed else ''}.duckdb"
    if template.exists():
        return template
    base = catalog_template() if placed else None
    if placed and base is None:
        return None
    tmp = template.with_name(f".{template.name}.{os.getpid()}.tmp")
    try:
        template.parent.mkdir(parents=True, exist_ok=True)
        tmp.unlink(missing_ok=True)
        if base is not None:
            shutil.copyfile(base, tmp)
        con = _new_database(tmp)
        try:
            if base is None:
                install_catalog(con)
            else:
                derive.place(con)
            con.execute("CHECKPOINT")
        finally:
            con.close()
        os.replace(tmp, template)
    except BaseException as e:  # an interrupted or failed template leaves no file behind
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        if isinstance(e, (OSError, duckdb.Error)):
            return None
        raise
    return template


def build_database(lake: str | Path, jobs: int = 1) -> Path:
    """(Re)write <lake>/tracelake.duckdb: base table views, every sql/ view (materialized ones
    served from their derived partitions, derived first where missing: analysis/derive.py), and
    _lake_info. jobs: worker processes for that derivation."""
    lake = Path(lake).resolve()
    lake.mkdir(parents=True, exist_ok=True)
    lake_layout.finish_compaction(lake)
    derive.derive(lake, derive.plan(lake, jobs=jobs), jobs=jobs)
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
    # The sql/ views are created over empty typed base tables, then the base tables are pointed
    # at the Parquet files: binding a view lists and opens the files of every table it reads,
    # which over a large lake took longer than the ingest (10.8 s for 200 traces). DuckDB binds
    # views again when they are queried, so they read the files from then on. The first step is
    # the same for every lake: copied from the cached template when there is one.
    derived = derive.with_partitions(lake)
    served = len(derived) == len(derive.current())  # every materialized view (the usual lake)
    template = catalog_template(placed=served)
    if template is not None:
        shutil.copyfile(template, tmp)
    con = _new_database(tmp)
    try:
        if template is None:
            install_catalog(con)
        derive.serve(con, lake, derived, placed=template is not None and served)
        _point_base_tables(con, lake)
        con.execute("CREATE TABLE _lake_info (lake_path VARCHAR, catalog_fingerprint VARCHAR, tracelake_version VARCHAR)")
        con.execute("INSERT INTO _lake_info VALUES (?, ?, ?)", [str(lake), _fingerprint(lake, derived), __version__])
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
    return row == (str(lake), _fingerprint(lake))


def update_database(lake: str | Path) -> Path:
    """<lake>/tracelake.duckdb, written again only when missing, moved, or not what the lake and the
    SQL catalog would give now (after an ingest that added traces to tables that had some: not)."""
    lake = Path(lake).resolve()
    db = lake / DB_FILE
    if not db.exists() or not _is_current(db, lake):
        build_database(lake)
    return db


def connect(lake: str | Path, read_only: bool = True, private: bool = False) -> duckdb.DuckDBPyConnection:
    """Open a lake's database, rebuilding it first when missing, moved, or older than the SQL catalog.

    DuckDB shares one database instance, settings included, among a process's connections to a
    file. `private` gives the connection an instance of its own (the file attached read-only to
    an in-memory database), so settings it locks (`sql --safe`) bind no other connection.
    """
    lake = Path(lake).resolve()
    lake_layout.check_path(lake)
    if not lake_layout.is_lake(lake) and not (lake / DB_FILE).exists():
        raise FileNotFoundError(f"{lake}: not a tracelake lake (no traces/ folder); run `tracelake ingest` first")
    db_file = str(update_database(lake))
    if not private:
        return planner_settings(duckdb.connect(db_file, read_only=read_only))
    con = duckdb.connect(":memory:")
    con.execute(f"ATTACH '{db_file.replace(chr(39), chr(39) * 2)}' AS lake (READ_ONLY)")
    con.execute("USE lake")
    return planner_settings(con)


# DuckDB optimizer passes that cost more to plan tracelake's deep views than they save when running
# them: projection_pullup took 1.6 s of the 2.4 s that DuckDB spent optimizing `findings` for a
# 13k-event trace whose rows took 0.4 s to compute (bench/RESULTS.md, run). Optimizers never change
# a result, only how it is computed.
SLOW_OPTIMIZERS = ("projection_pullup",)


def planner_settings(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Turn off SLOW_OPTIMIZERS on `con` (those this DuckDB has); returns `con`."""
    known = {r[0] for r in con.execute("SELECT name FROM duckdb_optimizers()").fetchall()}
    off = [name for name in SLOW_OPTIMIZERS if name in known]
    if off:
        con.execute(f"SET disabled_optimizers = '{','.join(off)}'")
    return con


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

    def __init__(self, lake: str | Path):
        from tracelake.ingest.schema import TABLES

        self.lake = Path(lake).resolve()
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
        base_tables(self.con, self.lake, trace_ids, temp=self._temp, only=only)
        return self.con

    def close(self) -> None:
        self.con.close()


def connect_scoped(lake: str | Path, trace_ids: list[str], only: set[str] | None = None) -> duckdb.DuckDBPyConnection:
    """A ScopedDatabase of these traces (of the tables in `only`), for one use: close the
    connection when done."""
    return ScopedDatabase(lake).load(trace_ids, only)

