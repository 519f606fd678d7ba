"""DuckDB settings made on every connection tracelake opens: the planner's, for tracelake's deep
views, and the threads this process may use."""

from __future__ import annotations

import duckdb

from .cores import bounded, threads
from .memory_budget import limit_duckdb

# DuckDB optimizer passes that cost more to plan tracelake's deep views than they save when running
# them: projection_pullup took 1.6 s of the 2.4 s that DuckDB spent optimizing `findings` for a
# 13k-event trace whose rows took 0.4 s to compute (bench/RESULTS.md, run). Optimizers never change
# a result, only how it is computed.
SLOW_OPTIMIZERS = ("projection_pullup",)


def planner_settings(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Turn off SLOW_OPTIMIZERS on `con` (those this DuckDB has), give DuckDB this process's
    `threads` where a job bounds them (else DuckDB takes every core) and, under a memory budget
    (`--max-memory`), limit DuckDB's memory (memory_budget.limit_duckdb); returns `con`."""
    limit_duckdb(con)
    if bounded():
        con.execute(f"SET threads = {threads()}")
    known = {r[0] for r in con.execute("SELECT name FROM duckdb_optimizers()").fetchall()}
    off = [name for name in SLOW_OPTIMIZERS if name in known]
    if off:
        con.execute(f"SET disabled_optimizers = '{','.join(off)}'")
    return con
