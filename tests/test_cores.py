"""`tracelake run --jobs N` keeps about N cores busy (lake/cores.py, jobs/process_settings.py): a
worker's thread pools (polars, Arrow, DuckDB) get its share of the N cores, and the calling
process, deriving alone, N threads. Without --jobs the pools are sized as before: polars and
Arrow to the machine's cores / workers, DuckDB to every core."""

from __future__ import annotations

import os

import duckdb
import pytest
from tracelake.jobs import process_settings
from tracelake.lake import cores
from tracelake.lake.planner import planner_settings

POOLS = ("POLARS_MAX_THREADS", "OMP_NUM_THREADS", cores.ENV_THREADS, cores.ENV_CORES)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    for variable in POOLS:  # monkeypatch restores them, the settings' own writes included
        monkeypatch.setenv(variable, "")
        monkeypatch.delenv(variable)


def _duckdb_threads() -> int:
    con = planner_settings(duckdb.connect())
    try:
        return int(con.execute("SELECT current_setting('threads')").fetchone()[0])
    finally:
        con.close()


def test_jobs_1_is_one_thread_in_every_pool():
    process_settings.use_cores(1)  # the CLI's --jobs 1, in the calling process
    assert cores.threads() == 1 and _duckdb_threads() == 1  # deriving or rendering alone: one core
    process_settings.limit_threads(1)  # its one worker
    assert [os.environ[v] for v in ("POLARS_MAX_THREADS", "OMP_NUM_THREADS", cores.ENV_THREADS)] == ["1"] * 3
    assert cores.threads() == 1 and _duckdb_threads() == 1


def test_a_worker_gets_its_share_of_the_jobs_cores():
    process_settings.use_cores(6)
    process_settings.limit_threads(3)  # 3 workers (e.g. 3 derivation batches) share the 6 cores
    assert os.environ["POLARS_MAX_THREADS"] == "2" and cores.threads() == 2 and _duckdb_threads() == 2
    assert cores.per_worker(2) == 1


def test_without_jobs_duckdb_takes_every_core_as_before():
    machine = os.cpu_count() or 1
    default = duckdb.connect()
    try:
        every = int(default.execute("SELECT current_setting('threads')").fetchone()[0])
    finally:
        default.close()
    process_settings.use_cores(None)
    assert cores.threads() == machine and not cores.bounded()
    process_settings.limit_threads(2)
    assert os.environ["POLARS_MAX_THREADS"] == str(max(1, machine // 2))
    assert cores.ENV_THREADS not in os.environ and _duckdb_threads() == every
