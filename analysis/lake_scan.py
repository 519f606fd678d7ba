"""A view of the lake's database that scans Parquet files, created without listing them.

DuckDB binds a view, and a table macro without parameters, when it is created: over a glob of a
lake's partitions that lists every folder (0.07 s per 1,000 traces, for each of some 80 tables and
materialized views). So each such view reads a table macro `_lake_<name>()`, created first as an
empty relation of the right columns (the view binds on that), then replaced by one whose file
pattern is a parameter's default value: a macro with parameters is bound only when a query calls
it, so the files are listed when a query reads the view, not when the database is built.
"""

from __future__ import annotations


def _quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def placeholder(con, name: str, select: str, empty: str) -> None:
    """View `name` = SELECT `select` FROM _lake_<name>(), which returns the rows of `empty` (none)."""
    con.execute(f"CREATE OR REPLACE MACRO _lake_{name}() AS TABLE {empty}")
    con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT {select} FROM _lake_{name}()")


def point(con, name: str, files: list[str], union_by_name: bool = False) -> None:
    """Make the view `name` (made by `placeholder`) read these Parquet files or globs (hive partitioned)."""
    pattern = "[" + ", ".join(_quote(f) for f in files) + "]"
    union = ", union_by_name = true" if union_by_name else ""
    con.execute(f"CREATE OR REPLACE MACRO _lake_{name}(files := {pattern}) AS TABLE SELECT * FROM read_parquet("
                f"files, hive_partitioning = true, hive_types = {{'trace_id': VARCHAR}}{union})")
