"""The lake's DuckDB database, <lake>/tracelake.duckdb: a view per base table over its Parquet
partitions (where they are: lake/layout.py) and every view of sql/ (lake/catalog.py), the
materialized ones served from their derived partitions (lake/derive.py, lake/served_views.py).

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

import hashlib
import shutil
import warnings
from pathlib import Path

import duckdb

from . import atomic_write, base_tables, format_version, layout, lock, materialize, served_views
from .catalog_template import cache_root, catalog_fingerprint, catalog_template, install_catalog, new_database
from .lock import writes_lake
from .planner import planner_settings
from .sql_literal import sql_string
from .version import __version__

DB_FILE = "tracelake.duckdb"


def _fingerprint(lake: Path, derived: list[str] | None = None) -> str:
    """What the database's content depends on besides the lake's path (see the module doc)."""
    h = hashlib.sha256(catalog_fingerprint().encode())
    for table in sorted(p.name for p in lake.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if layout.table_files(lake, table):
            h.update(f"\n{table}".encode())
    fingerprints = materialize.view_fingerprints()
    for view in served_views.with_partitions(lake) if derived is None else derived:  # served from partitions
        h.update(f"\n{view}@{fingerprints[view]}".encode())
    h.update(layout.layout_state(lake).encode())  # compacted segments and their tombstones
    return h.hexdigest()[:16]


@writes_lake(lambda a: a["lake"])  # one writer at a time (lake/lock.py)
def build_database(lake: str | Path) -> Path:
    """(Re)write <lake>/tracelake.duckdb: base table views, every sql/ view (materialized ones
    served from their derived partitions where the lake has them: jobs/derive_job.ensure_derived
    derives them), and _lake_info. Writes nothing else."""
    lake = Path(lake).resolve()
    lake.mkdir(parents=True, exist_ok=True)
    layout.finish_compaction(lake)
    db = lake / DB_FILE
    with atomic_write.replacing(db, sidecars=(".wal",)) as tmp:  # a failed build leaves no half-written file
        _write_database(tmp, lake)
    format_version.record(lake)  # which tracelake wrote the lake (lake/format_version.py)
    return db


def _write_database(tmp: Path, lake: Path) -> None:
    # The sql/ views are created over empty typed base tables, then the base tables are pointed
    # at the Parquet files: binding a view lists and opens the files of every table it reads,
    # which over a large lake took longer than the ingest (10.8 s for 200 traces). DuckDB binds
    # views again when they are queried, so they read the files from then on. The first step is
    # the same for every lake: copied from the cached template when there is one.
    derived = served_views.with_partitions(lake)
    served = len(derived) == len(materialize.view_fingerprints())  # every materialized view (the usual lake)
    template = catalog_template(placed=served)
    if template is not None:
        shutil.copyfile(template, tmp)
    con = new_database(tmp)
    try:
        if template is None:
            install_catalog(con)
        served_views.serve(con, lake, derived, placed=template is not None and served)
        base_tables.point_at_lake(con, lake)
        con.execute("CREATE TABLE _lake_info (lake_path VARCHAR, catalog_fingerprint VARCHAR, tracelake_version VARCHAR)")
        con.execute("INSERT INTO _lake_info VALUES (?, ?, ?)", [str(lake), _fingerprint(lake, derived), __version__])
    finally:
        con.close()


def recorded(db: Path) -> tuple[str, str] | None:
    """(lake path, fingerprint) the database was built for; None when it is missing or cannot be
    opened (another process holds it for writing: the plain duckdb CLI without -readonly)."""
    try:
        con = duckdb.connect(str(db), read_only=True)
    except duckdb.Error:
        return None
    try:
        return con.execute("SELECT lake_path, catalog_fingerprint FROM _lake_info").fetchone()
    except duckdb.Error:
        return None
    finally:
        con.close()


def is_current(db: Path, lake: Path, row: tuple | None = None) -> bool:
    row = recorded(db) if row is None else row
    return row == (str(lake), _fingerprint(lake))


def update_database(lake: str | Path) -> Path:
    """<lake>/tracelake.duckdb, written again only when missing, moved, or not what the lake and the
    SQL catalog would give now (after an ingest that added traces to tables that had some: not)."""
    lake = Path(lake).resolve()
    db = lake / DB_FILE
    if not db.exists() or not is_current(db, lake):
        build_database(lake)
    if lock.holds(lake):  # a writer, done: which tracelake wrote the lake (lake/format_version.py)
        format_version.record(lake)
    return db


def private_database(lake: Path) -> Path:
    """A database of the lake built in the user's cache folder, for readers that cannot use the
    lake's own (read-only lake, stale while a writer works, held by another process): the same
    views, materialized ones served where the lake has their partitions and evaluated otherwise.
    Nothing in the lake is written. Kept per lake path and fingerprint, so the next reader reuses it."""
    lake = Path(lake).resolve()
    key = hashlib.sha256(str(lake).encode()).hexdigest()[:16]
    db = cache_root() / "lakes" / f"{key}-{_fingerprint(lake)}.duckdb"
    if db.exists():
        return db
    db.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write.replacing(db, sidecars=(".wal",)) as tmp:
        _write_database(tmp, lake)
    for old in db.parent.glob(f"{key}-*.duckdb"):  # the lake's earlier states
        if old != db:
            old.unlink(missing_ok=True)
    return db


def for_reading(lake: Path) -> Path:
    """The database file a reader opens: the lake's own when current; else rebuilt in place when
    no other process writes the lake and it can be written (as before); else, without waiting,
    the lake's own as last built while a writer works (it sees each trace as its writer publishes
    it), or a private one (`private_database`) when the lake is read-only, moved, or its database
    cannot be opened (a writer replaces it, whoever holds the old file)."""
    lake = Path(lake).resolve()
    db = lake / DB_FILE
    row = recorded(db)
    if row is not None and is_current(db, lake, row):
        return db
    if row is None and db.exists():  # held for writing by another process (the plain duckdb CLI)
        return private_database(lake)
    if lock.holds(lake):
        return build_database(lake)
    held = lock.try_lock(lake)  # None: another process writes it, or it cannot be written
    if held is not None:
        with held:
            try:
                return build_database(lake)
            except (OSError, duckdb.IOException):  # read-only, full disk: a reader still answers
                pass
    elif row is not None and row[0] == str(lake):
        return db  # a writer works on it and rebuilds it when done
    return private_database(lake)


def connect(lake: str | Path, read_only: bool = True, private: bool = False) -> duckdb.DuckDBPyConnection:
    """Open a lake's database, rebuilding it first when missing, moved, or older than the SQL catalog.

    DuckDB shares one database instance, settings included, among a process's connections to a
    file. `private` gives the connection an instance of its own (the file attached read-only to
    an in-memory database), so settings it locks (`sql --safe`) bind no other connection.
    """
    lake = Path(lake).resolve()
    layout.check_path(lake)
    if not layout.is_lake(lake) and not (lake / DB_FILE).exists():
        raise FileNotFoundError(f"{lake}: not a tracelake lake (no traces/ folder); run `tracelake ingest` first")
    line = format_version.notice(lake)  # traces an earlier tracelake wrote without what this one reads
    if line:
        warnings.warn(line, format_version.LakeFormatWarning, stacklevel=2)
    db_file = str(update_database(lake) if not read_only else for_reading(lake))
    if not private:
        try:
            return planner_settings(duckdb.connect(db_file, read_only=read_only))
        except duckdb.IOException:  # taken for writing since (the plain duckdb CLI): a private copy
            return planner_settings(duckdb.connect(str(private_database(lake)), read_only=True))
    con = duckdb.connect(":memory:")
    con.execute(f"ATTACH {sql_string(db_file)} AS lake (READ_ONLY)")
    con.execute("USE lake")
    return planner_settings(con)
