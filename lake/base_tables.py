"""The base tables (lake/schema.py) on a DuckDB connection, three ways: as placeholders that read
no files yet (a catalog is installed over them), pointed at the lake's Parquet partitions (the
lake's database), or as in-memory tables of a few traces' rows (a scoped database, a derivation)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from . import layout, scan


def duck_types() -> dict:
    import pyarrow as pa

    return {
        pa.int64(): "BIGINT", pa.int32(): "INTEGER", pa.float64(): "DOUBLE", pa.string(): "VARCHAR",
        pa.bool_(): "BOOLEAN", pa.list_(pa.string()): "VARCHAR[]", pa.timestamp("us", tz="UTC"): "TIMESTAMPTZ",
    }


def _empty(spec, types: dict) -> str:
    typed = ", ".join(f"CAST(NULL AS {types[c.type]}) AS {c.name}" for c in spec.columns)
    return f"SELECT {typed} WHERE false"


def load(con, lake: Path, trace_ids: list[str], temp: bool = False, only: set[str] | None = None,
         lazy: set[str] = frozenset(), held: dict[str, Path] | None = None) -> None:
    """(Re)create every base table on `con` as an in-memory TABLE (a TEMP one with `temp`, which
    shadows the placeholder of a catalog template) of the rows of `trace_ids`, from their
    partitions or segments ([] gives empty typed tables; so do tables not in `only`). The tables
    in `lazy` become views over those files instead: read when a query reads them, not now (the
    report pages read few tables besides the derived views: jobs/report_views.read_tables).
    Traces in `held` (a derivation's: layout.held_traces) are read from their held folders."""
    from .schema import TABLES

    types = duck_types()
    schema = "temp." if temp else ""
    existing = dict(con.execute(
        "SELECT table_name, 'TABLE' FROM duckdb_tables() WHERE temporary = $t UNION ALL "
        "SELECT view_name, 'VIEW' FROM duckdb_views() WHERE temporary = $t AND NOT internal", {"t": temp}).fetchall())
    empty = []  # statements run together: one call, one wait for the GIL (beside a decoding thread)
    for table, spec in TABLES.items():
        cols = ", ".join(c.name for c in spec.columns)
        wanted = trace_ids and (only is None or table in only)
        source = scan.scoped_source(lake, table, trace_ids, held) if wanted else None
        kind = "VIEW" if source and table in lazy else "TABLE"
        if existing.get(table, kind) != kind:  # a view cannot be replaced by a table, nor the reverse
            con.execute(f"DROP {existing[table]} {schema}{table}")
        create = f"CREATE OR REPLACE {'TEMP ' if temp else ''}{kind}"
        if source:
            try:
                con.execute(f"{create} {table} AS SELECT {cols} FROM {source};")
            except duckdb.BinderException:  # files written before a column was added to the schema
                con.execute(f"{create} {table} AS SELECT {present_or_null(con, spec, source)} FROM {source};")
        else:
            empty.append(f"{create} {table} AS {_empty(spec, types)};")
    if empty:
        con.execute("\n".join(empty))


def load_arrow(con, traces: dict[str, dict], temp: bool = False, only: set[str] | None = None) -> None:
    """Like `load`, from tables held in memory rather than the lake: `traces` maps a trace id to its
    tables (name -> Arrow table in the schema's columns, as lake/writer.conform makes them); a
    table no trace has is empty. With `only`, just those tables are replaced."""
    import pyarrow as pa

    from .schema import TABLES

    types = duck_types()
    create = "CREATE OR REPLACE TEMP TABLE" if temp else "CREATE OR REPLACE TABLE"
    for table, spec in TABLES.items():
        if only is not None and table not in only:
            continue
        parts = [t.append_column("trace_id", pa.array([trace_id] * t.num_rows, pa.string()))
                 for trace_id, tables in traces.items() if (t := tables.get(table)) is not None and t.num_rows]
        if not parts:
            con.execute(f"{create} {table} AS {_empty(spec, types)};")
            continue
        rows = pa.concat_tables(parts)  # noqa: F841 - read by DuckDB's replacement scan below
        con.execute(f"{create} {table} AS SELECT {', '.join(c.name for c in spec.columns)} FROM rows;")


def placeholders(con) -> None:
    """Every base table as a view over a table macro that returns no rows yet (scan.py:
    `point_at_lake` points it at the lake's files, listed when a query reads it, not now)."""
    from .schema import TABLES

    types = duck_types()
    for table, spec in TABLES.items():
        scan.placeholder(con, table, ", ".join(c.name for c in spec.columns), _empty(spec, types))


def point_at_lake(con, lake: Path) -> None:
    from .schema import TABLES

    types = duck_types()
    for table, spec in TABLES.items():
        # union_by_name (older partitions may lack newer columns) opens every file, which
        # defeats pruning by trace_id: only where the partitions' schemas may differ
        scan.point(con, table, lake, table, union_by_name=not layout.uniform_schema(lake, table),
                        columns={c.name: types[c.type] for c in spec.columns})


def present_or_null(con, spec, source: str) -> str:
    """The table's columns, NULL for those no file has (a lake written by an older tracelake)."""
    present = {r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
    types = duck_types()
    return ", ".join(c.name if c.name in present else f"CAST(NULL AS {types[c.type]}) AS {c.name}"
                     for c in spec.columns)
