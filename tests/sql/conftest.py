"""Tiny per-view SQL tests (tests/sql/ mirrors sql/): an empty in-memory DuckDB, a few literal rows
put into base tables (typed as in lake/schema.py), one .sql file loaded with the files it declares
it depends on, and the exact rows the view returns. No Parquet, no trace files.

    def test_gap(con):
        given(con, "kernels", ["trace_id", "pid", "device_id", "stream_id", "start_ns", "end_ns"],
              [("t", 1, 0, 7, 0, 100), ("t", 1, 0, 7, 150, 200)])
        load_sql(con, "analysis/idle_breakdown.sql")
        assert rows(con, "SELECT start_ns, duration_ns FROM idle_breakdown") == [(100, 50)]
"""

from __future__ import annotations

import itertools

import duckdb
import pytest
from tracelake.lake import catalog
from tracelake.lake.base_tables import duck_types
from tracelake.lake.schema import TABLES

FILES = {f.path: f for f in catalog.load_files()}
_TYPES = duck_types()  # the lake's own Arrow -> DuckDB type map
_CREATE = {name: f"CREATE TABLE IF NOT EXISTS {name} ({', '.join(f'{c.name} {_TYPES[c.type]}' for c in t.columns)});"
           for name, t in TABLES.items()}

_SERIAL = itertools.count()


@pytest.fixture(scope="session")
def _duckdb():
    db = duckdb.connect(":memory:")
    yield db
    db.close()


@pytest.fixture
def con(_duckdb):
    """A fresh empty in-memory database per test (ATTACH is ~5x faster than a new connection)."""
    name = f"test_db_{next(_SERIAL)}"
    _duckdb.execute(f"ATTACH ':memory:' AS {name}; USE {name}")
    yield _duckdb
    _duckdb.execute(f"USE memory; DETACH {name}")


def given(con, table: str, columns: list[str], data: list[tuple]) -> None:
    """Put rows into a base table (created empty on first use); the columns not named stay NULL."""
    con.execute(_CREATE[table])
    marks = ", ".join("?" for _ in columns)
    con.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", data)


def load_sql(con, path: str, tables_below: bool = False) -> None:
    """Create the views and macros of sql/<path> and of every file it depends on, in order. With
    tables_below, each view the file depends on is made a table of its rows once it is created (as
    the lake materializes them): a view over a deep tree (steady_summary's) takes DuckDB a minute to
    evaluate on empty tables, its tables no time. The rows must then be given first."""
    closure, todo = {}, [FILES[path]]
    creator = {name: f for f in FILES.values() for name in f.creates}
    while todo:
        f = todo.pop()
        if f.path not in closure:
            closure[f.path] = f
            todo.extend(creator[d] for d in f.depends if d not in TABLES and d not in f.creates)
    files = catalog.ordered(list(closure.values()), set(TABLES))
    con.execute("".join(_CREATE[d] for f in files for d in f.depends if d in TABLES))
    for f in files:
        con.execute(f.text)
        if tables_below and f.path != path:
            for view in f.creates:
                if con.execute("SELECT 1 FROM duckdb_views() WHERE view_name = ? AND database_name = current_database()",
                               [view]).fetchall():
                    con.execute(f"CREATE TABLE _rows AS SELECT * FROM {view}; DROP VIEW {view}; "
                                f"ALTER TABLE _rows RENAME TO {view}")


def rows(con, sql: str, params=None) -> list[tuple]:
    return con.execute(sql, params or []).fetchall()
