"""Reading a lake table (or a derived table) as SQL: its loose per-trace partitions and the
compacted segments that hold rows of it (lake/layout.py), minus the rows tombstones void.

A view of the lake's database is created without listing its files. DuckDB binds a view, and a
table macro without parameters, when it is created: over a glob of a lake's partitions that lists
every folder (0.07 s per 1,000 traces, for each of some 80 tables and materialized views). So each
such view reads a table macro `_lake_<name>()`, created first as an empty relation of the right
columns (the view binds on that), then replaced by one whose file patterns are parameters' default
values: a macro with parameters is bound only when a query calls it, so the files are listed when a
query reads the view, not when the database is built.
"""

from __future__ import annotations

from pathlib import Path

from . import layout
from .sql_literal import sql_string

_HIVE = "hive_partitioning = true, hive_types = {'trace_id': VARCHAR}"
_HELD_FILE = "_tracelake_held_file"  # a held file's path (<held>/<trace_id>/<table>/data.parquet: layout.held_file)


def _list(values) -> str:
    return "[" + ", ".join(sql_string(v) for v in values) + "]"


def _in(values) -> str:
    return "(" + ", ".join(sql_string(v) for v in values) + ")"


def placeholder(con, name: str, select: str, empty: str) -> None:
    """View `name` = SELECT `select` FROM _lake_<name>(), which returns the rows of `empty` (none)."""
    con.execute(f"CREATE OR REPLACE MACRO _lake_{name}() AS TABLE {empty}")
    con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT {select} FROM _lake_{name}()")


def point(con, name: str, lake: Path, folder: str, union_by_name: bool = False,
          columns: dict[str, str] | None = None) -> bool:
    """Make the view `name` (made by `placeholder`) read `folder` of the lake: the glob of its loose
    partitions (if it has any) and its segments. False (the view left empty) when it has neither.
    With union_by_name (partitions of several schemas: an older tracelake wrote some), `columns`
    (name -> type) that no file has are read as NULL; finding that out lists the files now."""
    params, parts = [], []
    union = ", union_by_name = true" if union_by_name else ""
    loose = layout.table_files(lake, folder) if "/" not in folder else (
        [layout.loose_glob(lake, folder)] if layout.has_loose(lake, folder) else [])
    if loose:
        params.append(f"files := {_list(loose)}")
        parts.append(f"SELECT * FROM read_parquet(files, {_HIVE}{union})")
    segments = layout.segment_sources(lake, folder)
    whole = [f for f, gone in segments if not gone]
    if whole:
        params.append(f"parts := {_list(whole)}")
        parts.append("SELECT * FROM read_parquet(parts, hive_partitioning = false, union_by_name = true)")
    for i, (f, gone) in enumerate((f, gone) for f, gone in segments if gone):
        params.append(f"part{i} := {sql_string(f)}")
        parts.append(f"SELECT * FROM read_parquet(part{i}, hive_partitioning = false) WHERE trace_id NOT IN {_in(gone)}")
    if not parts:
        return False
    body = " UNION ALL BY NAME ".join(parts)
    con.execute(f"CREATE OR REPLACE MACRO _lake_{name}({', '.join(params)}) AS TABLE {body}")
    if union_by_name and columns:
        present = {r[0] for r in con.execute(f"DESCRIBE SELECT * FROM _lake_{name}()").fetchall()}
        missing = [f'CAST(NULL AS {t}) AS "{c}"' for c, t in columns.items() if c not in present]
        if missing:
            con.execute(f"CREATE OR REPLACE MACRO _lake_{name}({', '.join(params)}) AS TABLE "
                        f"SELECT *, {', '.join(missing)} FROM ({body})")
    return True


def scoped_source(lake: Path, folder: str, trace_ids: list[str], held: dict[str, Path] | None = None) -> str | None:
    """A FROM expression for the rows of `folder` of these traces (files listed now), or None.
    Traces in `held` (trace_id -> folder: layout.held_traces) are read from there, not the lake."""
    held = {t: d for t, d in (held or {}).items() if t in trace_ids and "/" not in folder}
    parts = []
    if held:  # one scan of all held files: a union of one scan per trace plans slowly (200 traces: 2x the load)
        files = _list(str(layout.held_file(d, folder)) for d in held.values())
        parts.append(f"SELECT * EXCLUDE ({_HELD_FILE}), parse_path({_HELD_FILE})[-3] AS trace_id "
                     f"FROM read_parquet({files}, filename = '{_HELD_FILE}', union_by_name = true)")
    trace_ids = [t for t in trace_ids if t not in held]
    files = layout.table_files(lake, folder, trace_ids) if "/" not in folder else [
        str(f) for t in trace_ids if (f := layout.loose_file(lake, folder, t)).exists()]
    if files:
        parts.append(f"SELECT * FROM read_parquet({_list(files)}, {_HIVE}, union_by_name = true)")
    for f, gone in layout.segment_sources(lake, folder, trace_ids):
        keep = f"trace_id IN {_in(trace_ids)}" + (f" AND trace_id NOT IN {_in(gone)}" if gone else "")
        parts.append(f"SELECT * FROM read_parquet({sql_string(f)}, hive_partitioning = false) WHERE {keep}")
    return "(" + " UNION ALL BY NAME ".join(parts) + ")" if parts else None


def all_source(lake: Path, folder: str) -> str | None:
    """A FROM expression for every row of `folder` (files listed now), or None when it has none."""
    parts = []
    if layout.has_loose(lake, folder):
        parts.append(f"SELECT * FROM read_parquet({sql_string(layout.loose_glob(lake, folder))}, {_HIVE}, "
                     "union_by_name = true)")
    for f, gone in layout.segment_sources(lake, folder):
        keep = f" WHERE trace_id NOT IN {_in(gone)}" if gone else ""
        parts.append(f"SELECT * FROM read_parquet({sql_string(f)}, hive_partitioning = false){keep}")
    return "(" + " UNION ALL BY NAME ".join(parts) + ")" if parts else None
