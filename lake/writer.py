"""Writes one trace's tables into the lake, all or nothing (where they go: layout.py).

Every table of ingest.schema is written for every trace, also when empty, so every view binds and
a trace is replaced by swapping its partitions. Crash safety: the tables are first written to a
staging folder, then renamed into place with `traces` last (layout.publish; or first held until
its derived tables are written, layout.hold); a trace is
complete exactly when its `traces` partition exists, and every lake writer first removes what an
interrupted one left (layout.prepare_for_writing).
"""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from . import layout
from .schema import TABLES


def conform(table_name: str, data: pa.Table | None) -> pa.Table:
    """Cast `data` to the table's schema; absent columns become NULL, unknown ones are an error."""
    schema = TABLES[table_name].arrow_schema
    if data is None:
        return schema.empty_table()
    unknown = set(data.column_names) - set(schema.names) - {"trace_id"}
    if unknown:
        raise ValueError(f"{table_name}: columns not in the schema: {sorted(unknown)}")
    n = data.num_rows
    arrays = []
    for field in schema:
        if field.name in data.column_names:
            arrays.append(_cast(data.column(field.name), field.type))
        else:
            arrays.append(pa.nulls(n, field.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def _cast(column, target: pa.DataType):
    """Cast to the schema's type; integers that do not fit (absurd values in a trace) become NULL."""
    try:
        return column.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        if not (pa.types.is_integer(target) and pa.types.is_integer(column.type)):
            raise
        info = {pa.int32(): (-(2**31), 2**31 - 1), pa.int64(): (-(2**63), 2**63 - 1)}[target]
        wide = column.cast(pa.int64()) if column.type != pa.uint64() else column
        fits = pc.and_(pc.greater_equal(wide, info[0]), pc.less_equal(wide, info[1]))
        return pc.if_else(fits, wide, pa.scalar(None, wide.type)).cast(target)


def write_trace(lake: Path, trace_id: str, tables: dict[str, pa.Table], *, tracelake_version: str) -> None:
    """Write the trace's tables; `traces.tracelake_version` records the version of the writing program."""
    with TraceWriter(lake, trace_id, tracelake_version=tracelake_version) as writer:
        writer.write(tables)
        writer.publish()


class TraceWriter:
    """Writes one trace's tables as they are made, in background threads (pyarrow releases the GIL
    while encoding), so that the ingest job computes the calling context and the critical path
    while the base tables are written; `publish` writes the tables not given (empty), waits and
    puts the trace in place. Leaving the `with` block without publishing discards what was staged.
    """

    def __init__(self, lake: Path, trace_id: str, *, tracelake_version: str):
        self.lake, self.trace_id, self.version = Path(lake), trace_id, tracelake_version
        self.staging = layout.staging_dir(self.lake, trace_id)
        self.files = {name: layout.staged_file(self.staging, name) for name in TABLES}
        self.pending: dict = {}
        self.pool: ThreadPoolExecutor | None = None

    def __enter__(self) -> TraceWriter:
        try:
            for path in self.files.values():
                path.parent.mkdir(parents=True)
        except BaseException:
            layout.discard_staging(self.staging)
            raise
        self.pool = ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1))
        return self

    def write(self, tables: dict[str, pa.Table]) -> None:
        """Start writing these tables (biggest first); each table is written once."""
        for name in sorted(tables, key=lambda n: -(tables[n].num_rows if tables[n] is not None else 0)):
            if name in self.pending:
                raise ValueError(f"{name}: written twice for trace {self.trace_id}")
            self.pending[name] = self.pool.submit(self._write, name, tables[name])

    def _write(self, name: str, table: pa.Table | None) -> None:
        table = conform(name, table)
        if name == "traces":
            table = _stamped(table, self.version)
        _write_parquet(table, self.files[name])

    def publish(self) -> None:
        self._finish()
        layout.publish(self.lake, self.trace_id, self.staging)

    def hold(self) -> None:
        """Like publish, but the trace waits in the lake's staging area until its derived tables are
        written; then both are published together (layout.hold, layout.publish)."""
        self._finish()
        layout.hold(self.lake, self.trace_id, self.staging)

    def _finish(self) -> None:
        self.write({name: None for name in TABLES if name not in self.pending})
        for future in self.pending.values():
            future.result()  # raises the first error of a background write

    def __exit__(self, exc_type, exc, tb) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        layout.discard_staging(self.staging)


def _stamped(traces: pa.Table, tracelake_version: str) -> pa.Table:
    i = traces.schema.get_field_index("tracelake_version")
    return traces.set_column(i, traces.schema.field(i), pa.array([tracelake_version] * traces.num_rows, pa.string()))


def _write_parquet(table: pa.Table, path: Path) -> None:
    """zstd; dictionary encoding only for the short text columns (names, kinds) that repeat. On
    numbers and JSON texts it cost time and space: the 89 MB reference trace's tables wrote in
    113 ms and 3.5 MB instead of 168 ms and 5.4 MB with dictionaries on every column."""
    import pyarrow.parquet as pq  # here: `tracelake stats` of a file writes none (pyarrow.fs, ssl: 10-20 ms)

    dictionary = [f.name for f in table.schema if pa.types.is_string(f.type) and not f.name.endswith("_json")]
    try:
        pq.write_table(table, path, compression="zstd", use_dictionary=dictionary)
    except OSError as e:
        if e.filename is not None:
            raise
        # Arrow's write errors name no file ("[Errno 28] Error writing bytes to file..."): this one
        found = re.search(r"\[errno (\d+)\]", str(e), re.IGNORECASE)
        code = int(found.group(1)) if found else None
        raise OSError(code, os.strerror(code) if code else str(e), str(path)) from e
