"""DuckDB settings made on every connection tracelake opens: the planner's, for tracelake's deep
views, and the threads this process may use."""

from __future__ import annotations

import duckdb

from . import declared_peak
from .cores import bounded, threads
from .memory_budget import limit_duckdb

# DuckDB optimizer passes that cost more to plan tracelake's deep views than they save when running
# them: projection_pullup took 1.6 s of the 2.4 s that DuckDB spent optimizing `findings` for a
# 13k-event trace whose rows took 0.4 s to compute (bench/RESULTS.md, run). Optimizers never change
# a result, only how it is computed.
SLOW_OPTIMIZERS = ("projection_pullup",)

# ASOF joins whose left side DuckDB estimates at no more than this many rows are run as a nested
# loop join (default 64). tracelake's CTEs make such estimates wildly low: fusion_chains' ASOF
# join of 942 calls to their top-level operators, estimated at 27 rows, became a nested loop of
# 1.1M rows and took 0.25 s of the view's 0.27 s on the 22 MB GPT-2 trace (0.11 s as an ASOF
# join, 5 runs each). Set where the views are evaluated in bulk (bulk_settings: derivation,
# `tracelake stats`): deriving the 37 corpus traces on one core, 25.7 / 23.6 s of evaluation at
# 64, 24.6 / 21.1 s at 0. Not for the report pages, whose small queries it slowed: the 37 corpus
# pages in one process 47.2 / 46.0 s at 64, 50.9 / 52.6 s at 0 (alternating runs).
BULK_ASOF_LOOP_JOIN_ROWS = 0


def planner_settings(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Turn off SLOW_OPTIMIZERS on `con` (those this DuckDB has), give DuckDB this process's
    `threads` where a job bounds them (else DuckDB takes every core), the declared MFU peak
    (declared_peak) and, under a memory budget
    (`--max-memory`), limit DuckDB's memory (memory_budget.limit_duckdb); returns `con`."""
    limit_duckdb(con)
    declared_peak.apply(con)
    if bounded():
        con.execute(f"SET threads = {threads()}")
    known = {r[0] for r in con.execute("SELECT name FROM duckdb_optimizers()").fetchall()}
    off = [name for name in SLOW_OPTIMIZERS if name in known]
    if off:
        con.execute(f"SET disabled_optimizers = '{','.join(off)}'")
    return con


def bulk_settings(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """planner_settings, and those for evaluating many views over whole traces at once (an
    in-memory catalog: derivation, `tracelake stats`); returns `con`."""
    planner_settings(con)
    try:  # a local setting despite its GLOBAL scope: SET GLOBAL, so that every cursor has it
        con.execute(f"SET GLOBAL asof_loop_join_threshold = {BULK_ASOF_LOOP_JOIN_ROWS}")
    except duckdb.CatalogException:  # a DuckDB before the setting
        pass
    return con
