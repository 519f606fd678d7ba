"""Read-only, introspecting, columnar access to an Nsight Systems SQLite export.

Every table and column is optional: `read` selects only the columns a file has and fills the
others with NULL, so one mapping serves nsys 2021 to 2025 exports. Reads go through the ADBC
SQLite driver straight into Arrow (4.5x faster than sqlite3 row tuples on the 35 MB pystacks
export, bench/bench_nsys_ingest.py); a table whose column types confuse ADBC's type inference
falls back to sqlite3.
"""

from __future__ import annotations

import gzip
import os
import shutil
import sqlite3
import tempfile
import threading
import zlib
from contextlib import contextmanager
from pathlib import Path

import polars as pl
import pyarrow as pa

from ...lake.sql_literal import sql_string
from ..errors import TraceError
from ..integrity import unique_ids
from ..reading import InflateBudget, open_input, read_head
from .constants import REPORT_SUFFIXES, SQLITE_MAGIC


def _check_header(path: str, head: bytes) -> None:
    if head.startswith(SQLITE_MAGIC):
        return
    if path.endswith(REPORT_SUFFIXES) or head[:4] == b"PK\x03\x04" or b"QDSTRM" in head[:64]:
        raise TraceError(path, "this is an Nsight Systems report, not its SQLite export: "
                               "run `nsys export --type sqlite` on it first")
    raise TraceError(path, "not a SQLite file")


@contextmanager
def open_export(path: str):
    """Yields an Export; gzipped exports are unpacked into a temporary file removed afterwards."""
    tmpdir = None
    head = read_head(path, 100)
    if not head:
        raise TraceError(path, "empty file")
    local = path
    try:
        if head[:2] == b"\x1f\x8b":
            tmpdir = tempfile.mkdtemp(prefix="tracelake-")
            local = os.path.join(tmpdir, "export.sqlite")
            _gunzip(path, local)
            with open(local, "rb") as f:
                head = f.read(100)
        _check_header(path, head)
        size = os.path.getsize(local)
        page_size = int.from_bytes(head[16:18], "big") or 65536
        page_size = 65536 if page_size == 1 else page_size
        page_count = int.from_bytes(head[28:32], "big")
        if page_count and size < page_count * page_size:
            raise TraceError(path, f"truncated SQLite file ({size} of {page_count * page_size} bytes)")
        export = Export(path, local)
        try:
            yield export
        finally:
            export.close()
    finally:
        if tmpdir:
            shutil.rmtree(tmpdir, ignore_errors=True)


def _gunzip(path: str, local: str) -> None:
    """Inflate a gzipped export into `local`, within the inflate limits (reading.InflateBudget)."""
    try:
        with open_input(path) as raw, gzip.GzipFile(fileobj=raw) as src, open(local, "wb") as dst:
            budget = InflateBudget(path, os.fstat(raw.fileno()).st_size)
            while block := src.read(1 << 22):
                budget.count(len(block))
                dst.write(block)
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise TraceError(path, f"corrupt or truncated gzip data ({e})") from None
    except OSError as e:
        raise TraceError(path, f"cannot unpack gzip data to a temporary file ({e.strerror or e})") from None


class Export:
    def __init__(self, path: str, local: str):
        self.path = path
        uri = Path(local).resolve().as_uri() + "?mode=ro&immutable=1"
        self._uri = uri
        # One ADBC connection per thread: the mapper reads tables in parallel.
        self._local = threading.local()
        self._database = None
        self._connections: list = []
        self._lock = threading.Lock()
        try:
            self.tables = set(self._query("SELECT name FROM sqlite_master WHERE type = 'table'").column(0).to_pylist())
        except Exception as e:  # noqa: BLE001 - driver errors have many types
            self.close()
            raise TraceError(path, f"cannot read SQLite database ({_first_line(e)})") from None
        self._columns: dict[str, list[str]] = {}
        self._strings: pl.DataFrame | None = None
        self.warnings: list[str] = []  # integrity problems found while reading (duplicate ids)
        self.queries: list[str] = []  # every data SELECT, in order (the benchmark's floor replays them)

    def close(self) -> None:
        for conn in self._connections:
            conn.close()
        self._connections.clear()
        if self._database is not None:
            self._database.close()
            self._database = None

    def _conn(self):
        conn = getattr(self._local, "conn", None)
        if conn is None:
            # The driver's own API, imported here: its DB-API module imports pyarrow.dataset, and
            # with it pandas where that is installed (0.2 s on the GPU machine), and ssl, for nothing.
            import adbc_driver_manager
            import adbc_driver_sqlite

            with self._lock:
                if self._database is None:
                    self._database = adbc_driver_sqlite.connect(self._uri)
                conn = self._local.conn = adbc_driver_manager.AdbcConnection(self._database)
                self._connections.append(conn)
        return conn

    def _query(self, sql: str) -> pa.Table:
        import adbc_driver_manager

        statement = adbc_driver_manager.AdbcStatement(self._conn())
        try:
            statement.set_sql_query(sql)
            stream, _ = statement.execute_query()
            return _valid_utf8(pa.RecordBatchReader.from_stream(stream).read_all())
        finally:
            statement.close()

    def columns(self, table: str) -> list[str]:
        """The table's column names (introspected when first asked: tables tracelake does not
        read, whatever their names, are never touched)."""
        if table not in self._columns:
            info = self._query(f"SELECT name FROM pragma_table_info({sql_string(table)})")
            self._columns[table] = info.column("name").to_pylist()
        return self._columns[table]

    def has(self, table: str, column: str | None = None) -> bool:
        return table in self.tables and (column is None or column in self.columns(table))

    def read(self, table: str, columns: list[str], where: str | None = None) -> pl.DataFrame | None:
        """The named columns of `table` (absent ones NULL), or None when the table is absent."""
        if table not in self.tables:
            return None
        present = [c for c in columns if c in self.columns(table)]
        if not present:
            return pl.DataFrame({c: [] for c in columns})
        sql = "SELECT " + ", ".join(map(quote_identifier, present)) + f" FROM {quote_identifier(table)}"
        if where:
            sql += f" WHERE {where}"
        self.queries.append(sql)
        try:
            frame = pl.from_arrow(self._query(sql))
        except Exception:  # noqa: BLE001 - ADBC infers types from the first rows; retry row-wise
            frame = self._read_sqlite3(sql, present)
        if isinstance(frame, pl.Series):
            frame = frame.to_frame()
        missing = [c for c in columns if c not in present]
        if missing:
            frame = frame.with_columns([pl.lit(None).alias(c) for c in missing])
        return frame.select(columns)

    def aggregate(self, table: str, select: str, where: str | None = None) -> tuple:
        """The one row of `SELECT <select> FROM table [WHERE where]` (aggregates), as Python values."""
        sql = f"SELECT {select} FROM {quote_identifier(table)}" + (f" WHERE {where}" if where else "")
        conn = sqlite3.connect(self._uri, uri=True)
        try:
            return conn.execute(sql).fetchone()
        except sqlite3.DatabaseError as e:
            raise TraceError(self.path, f"cannot read SQLite database ({e})") from None
        finally:
            conn.close()

    def has_rows(self, table: str) -> bool:
        return table in self.tables and self.aggregate(table, "1", "1 LIMIT 1") is not None

    def _read_sqlite3(self, sql: str, columns: list[str]) -> pl.DataFrame:
        try:
            conn = sqlite3.connect(self._uri, uri=True)
            try:
                rows = conn.execute(sql).fetchall()
            finally:
                conn.close()
        except sqlite3.DatabaseError as e:
            raise TraceError(self.path, f"cannot read SQLite database ({e})") from None
        return pl.DataFrame(rows, schema=columns, orient="row", infer_schema_length=None)

    def strings(self) -> pl.DataFrame:
        """StringIds as (id, value)."""
        with self._lock:
            return self._read_strings()

    def _read_strings(self) -> pl.DataFrame:
        if self._strings is None:
            s = self.read("StringIds", ["id", "value"])
            s = (s if s is not None else pl.DataFrame({"id": [], "value": []})).with_columns(
                pl.col("id").cast(pl.Int64), pl.col("value").cast(pl.String)
            )
            self._strings = unique_ids(s, "id", "StringIds", self.warnings)
        return self._strings

    def resolve(self, frame: pl.DataFrame, id_column: str, as_name: str) -> pl.DataFrame:
        """Replace a StringIds id column by its text (a lookup: never adds rows)."""
        strings = self.strings().rename({"id": "__sid", "value": as_name})
        keyed = frame.with_columns(pl.col(id_column).cast(pl.Int64).alias("__sid")).drop(id_column)
        return keyed.join(strings, on="__sid", how="left", maintain_order="left", validate="m:1").drop("__sid")

    def key_values(self, table: str) -> dict[str, str]:
        frame = self.read(table, ["name", "value"])
        if frame is None:
            return {}
        return {str(k): str(v) for k, v in frame.iter_rows() if k is not None}


def quote_identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _valid_utf8(table: pa.Table) -> pa.Table:
    """SQLite does not enforce UTF-8 and the driver does not check it: a damaged page gives text
    columns with invalid bytes, which crash later conversions. Replace them (U+FFFD) instead."""
    for i, column in enumerate(table.columns):
        if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
            continue
        try:
            column.validate(full=True)
        except pa.ArrowInvalid:
            binary = column.cast(pa.large_binary() if pa.types.is_large_string(column.type) else pa.binary())
            fixed = [None if b is None else b.decode("utf-8", "replace") for b in binary.to_pylist()]
            table = table.set_column(i, table.field(i), pa.array(fixed, column.type))
    return table


def _first_line(e: Exception) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]
