"""Nsight Systems ingest vs. its floor, plus linear scaling in table size (issue #4).

- ours:  tracelake ingest of nsys-2025.3.1_gpt2-train-pystacks_h100.sqlite (unpacked first) into a
         lake: read, resolve strings, map, write Parquet. Best of 3.
- floor: the same SELECTs (same tables, same columns) read into Arrow with the ADBC driver.
- scaling: copies of the export whose event tables hold k times their rows -> µs per row.
"""

from __future__ import annotations

import gzip
import shutil
import sqlite3
import tempfile
from pathlib import Path

import adbc_driver_sqlite.dbapi as adbc
from tracelake.ingest.nsys import reader as nsys_reader
from tracelake.ingest.nsys.tables import ingest_nsys
from tracelake.lake.version import __version__
from tracelake.lake.writer import write_trace

from .common import SHARED, best_of

REFERENCE = "traces/nsys/nsys-2025.3.1_gpt2-train-pystacks_h100.sqlite.gz"
EVENT_TABLES = ["CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_MEMCPY",
                "CUPTI_ACTIVITY_KIND_MEMSET", "NVTX_EVENTS", "CUDA_CALLCHAINS", "SAMPLING_CALLCHAINS",
                "COMPOSITE_EVENTS", "OSRT_API", "OSRT_CALLCHAINS"]


def ours(path: Path, lake: Path) -> int:
    result = ingest_nsys(str(path))
    write_trace(lake, result.trace_id, result.tables, tracelake_version=__version__)
    return result.event_count


def queries_of(path: Path) -> list[str]:
    with nsys_reader.open_export(str(path)) as export:
        from tracelake.ingest.nsys.tables import _Mapper

        m = _Mapper(export)
        m.api_calls()
        for name in ("kernels", "memcpy", "memset", "synchronizations", "annotations", "processes", "threads",
                     "devices", "memory_events", "callchains", "cpu_samples", "os_runtime_calls", "profiler_overhead"):
            getattr(m, name)()
        export.key_values("META_DATA_EXPORT")
        return list(export.queries)


def floor(path: Path, queries: list[str]) -> int:
    rows = 0
    con = adbc.connect(path.resolve().as_uri() + "?mode=ro&immutable=1", autocommit=True)
    try:
        for sql in queries:
            cur = con.cursor()
            cur.execute(sql)
            rows += cur.fetch_arrow_table().num_rows
            cur.close()
    finally:
        con.close()
    return rows


def scaled(path: Path, factor: int, out: Path) -> int:
    shutil.copy(path, out)
    con = sqlite3.connect(out)
    for table in EVENT_TABLES:
        if factor > 1:
            columns = [r[1] for r in con.execute(f"PRAGMA table_info('{table}')")]
            con.execute(f"CREATE TEMP TABLE _orig AS SELECT * FROM {table}")
            for i in range(1, factor):
                # ids (callchains, samples) get a per-copy offset so primary keys stay unique
                select = ", ".join(f'"{c}" + {i * 10**9}' if c == "id" else f'"{c}"' for c in columns)
                con.execute(f"INSERT INTO {table} SELECT {select} FROM _orig")
            con.execute("DROP TABLE _orig")
    con.commit()
    rows = sum(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in EVENT_TABLES)
    con.close()
    return rows


def run() -> list[tuple[str, str]]:
    tmp = Path(tempfile.mkdtemp(prefix="tracelake-bench-"))
    rows = []
    try:
        sqlite = tmp / "pystacks.sqlite"
        with gzip.open(SHARED / REFERENCE, "rb") as src, open(sqlite, "wb") as dst:
            shutil.copyfileobj(src, dst)
        queries = queries_of(sqlite)
        n_rows = floor(sqlite, queries)
        t_floor = best_of(lambda: floor(sqlite, queries))
        t_ours = best_of(lambda: ours(sqlite, tmp / "lake"))
        rows.append((f"Nsight ingest, 35 MB pystacks export ({n_rows:,} rows read): tracelake", f"{t_ours:.2f} s"))
        rows.append(("  floor (same tables and columns into Arrow via ADBC)", f"{t_floor:.2f} s"))
        rows.append(("  tracelake / floor (target <= 2.0)", f"{t_ours / t_floor:.2f}"))
        per_row = []
        for factor in (1, 2, 4):
            big = tmp / f"x{factor}.sqlite"
            n = scaled(sqlite, factor, big)
            t = best_of(lambda big=big: ours(big, tmp / "lake"), repeat=2)
            per_row.append(t / n * 1e6)
            big.unlink()
        rows.append(("  scaling, µs per event-table row at 1x / 2x / 4x rows", " / ".join(f"{x:.2f}" for x in per_row)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows
