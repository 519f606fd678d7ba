"""The memory a tracelake job may use (`--max-memory SIZE`, or $TRACELAKE_MAX_MEMORY): how it is
shared among the job's processes, how much of a process's share DuckDB may hold before it spills
to disk, and how many trace events a derivation batch may hold.

What it cannot bound: decoding one trace file is done in memory (about 3.5 KB a PyTorch event at
its peak: 2.9 GiB for the 0.88 GB / 3.4M-event trace, bench big_input), so a single file larger than
the budget still needs that much. A big file's decode workers (ingest/kineto/parallel.py) take at
most a quarter of their process's share. Everything DuckDB does (deriving views, report queries) stays
under its limit, spilling to a temporary folder where it must (docs/lake.md, "Memory")."""

from __future__ import annotations

import os
import tempfile

from .sizes import parse_size

ENV_MAX_MEMORY = "TRACELAKE_MAX_MEMORY"  # the whole job's budget, as the user gave it
ENV_PROCESS_MEMORY = "TRACELAKE_PROCESS_MEMORY"  # one worker process's share, in bytes (set for workers)
DUCKDB_SHARE = 0.5  # of a process's share: the rest is Python, Arrow and polars around the queries
# DuckDB never gets less: installing the catalog into a fresh cache (the first process after an
# upgrade) ran out of memory at 64 MiB, and a spill cannot help there
DUCKDB_FLOOR = 256 << 20


def job_budget() -> int | None:
    """The job's budget in bytes, or None when none was given."""
    text = os.environ.get(ENV_MAX_MEMORY)
    return parse_size(text) if text else None


def share_among(workers: int) -> None:
    """In a worker process of a job of `workers` (its initializer): its share of the job's budget."""
    budget = job_budget()
    if budget is not None:
        os.environ[ENV_PROCESS_MEMORY] = str(budget // max(1, workers))


def process_budget() -> int | None:
    """This process's share in bytes: a worker's, else the whole job's; None without a budget."""
    share = os.environ.get(ENV_PROCESS_MEMORY)
    return int(share) if share else job_budget()


def limit_duckdb(con) -> None:
    """With a budget, DuckDB's memory limit on `con` is DUCKDB_SHARE of this process's share, and
    what does not fit goes to a temporary folder of this process (DuckDB removes its files)."""
    budget = process_budget()
    if budget is None:
        return
    con.execute(f"SET memory_limit = '{max(DUCKDB_FLOOR, int(budget * DUCKDB_SHARE))}B'")
    spill = os.path.join(tempfile.gettempdir(), f"tracelake-spill-{os.getpid()}")
    con.execute(f"SET temp_directory = '{spill}'")
