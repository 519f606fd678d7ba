"""The installed SQL catalog as a database file, cached per catalog fingerprint: every lake's
database and every scoped or derivation database starts as a copy of it."""

from __future__ import annotations

import hashlib
import os
import shutil
from importlib import resources
from pathlib import Path

import duckdb

from . import atomic_write, base_tables, catalog, served_views
from .sql_literal import sql_string
from .version import __version__

# The lake/ modules whose code decides what the views hold (with the SQL files): a change to one
# of them gives every lake's database a new fingerprint.
VIEW_MODULES = ("schema.py", "base_tables.py", "catalog.py", "catalog_template.py", "served_views.py",
                "derive.py", "scan.py", "database.py")


def catalog_fingerprint() -> str:
    """What the views of every lake depend on: the SQL catalog, the modules that make views, the versions."""
    h = hashlib.sha256(f"{__version__} {duckdb.__version__}".encode())
    for f in catalog.load_files():
        h.update(f.path.encode())
        h.update(f.text.encode())
    for name in VIEW_MODULES:
        h.update(resources.files(__package__).joinpath(name).read_bytes())
    return h.hexdigest()[:16]


def new_database(path: Path) -> duckdb.DuckDBPyConnection:
    # Written in the v1.0 storage format so that older DuckDB CLIs and drivers open it too.
    return duckdb.connect(str(path), config={"storage_compatibility_version": "v1.0.0"})


def install_catalog(con) -> None:
    """The sql/ views, created over base tables that read no files yet (see _write_database)."""
    from .schema import TABLES

    base_tables.placeholders(con)
    catalog.install(con, set(TABLES))


def cache_root() -> Path:
    """$TRACELAKE_CACHE, else $XDG_CACHE_HOME/tracelake or ~/.cache/tracelake (small files, safe to delete)."""
    root = os.environ.get("TRACELAKE_CACHE")
    return Path(root) if root else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "tracelake")


def catalog_template(placed: bool = False) -> Path | None:
    """A database holding just the installed catalog, kept per catalog fingerprint in the user's
    cache folder ($TRACELAKE_CACHE, else $XDG_CACHE_HOME/tracelake or ~/.cache/tracelake):
    installing the views takes most of a new lake's database time (0.6 s), copying this file
    almost none. placed: the catalog with every materialized view already a placeholder scan
    (served_views.place: 0.5 s for the 89 MB trace's lake). None when the cache folder cannot be
    written (the caller installs the catalog)."""
    template = cache_root() / f"catalog-{catalog_fingerprint()}{'-placed' if placed else ''}.duckdb"
    if template.exists():
        return template
    base = catalog_template() if placed else None
    if placed and base is None:
        return None
    try:  # an interrupted or failed template leaves no file behind
        template.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write.replacing(template) as tmp:
            if base is not None:
                shutil.copyfile(base, tmp)
            con = new_database(tmp)
            try:
                if base is None:
                    install_catalog(con)
                else:
                    served_views.place(con)
                con.execute("CHECKPOINT")
            finally:
                con.close()
    except (OSError, duckdb.Error):
        return None
    return template


def in_memory_catalog() -> duckdb.DuckDBPyConnection:
    """A fresh in-memory database holding the whole catalog as its own (writable) objects: copied
    from the cached template (COPY FROM DATABASE, ~50 ms), or installed afresh without a cache
    folder. Unlike the template opened read-only with TEMP tables over it, its tables are seen by
    every cursor, so views can be evaluated in several threads (lake/derive.py `as_tables`)."""
    from .planner import bulk_settings

    con = bulk_settings(duckdb.connect())
    con.execute("SET enable_progress_bar = false")  # a worker's queries: no bars in a cluster's logs
    template = catalog_template()
    if template is None:
        install_catalog(con)
    else:
        con.execute(f"ATTACH {sql_string(str(template))} AS catalog_template (READ_ONLY)")
        con.execute("COPY FROM DATABASE catalog_template TO memory")
        con.execute("DETACH catalog_template")
    return con
