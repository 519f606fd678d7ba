"""The cores a tracelake job may keep busy (`tracelake run --jobs N`, else the machine's), and how
they are shared among its worker processes (jobs/process_settings.py sets a worker's share before
it imports polars, pyarrow or DuckDB; lake/planner.py gives DuckDB connections theirs)."""

from __future__ import annotations

import os

ENV_CORES = "TRACELAKE_CORES"  # the job's cores, as the user gave them (`--jobs`)
ENV_THREADS = "TRACELAKE_THREADS"  # one worker process's share of them (set for workers)


def _set(variable: str) -> int | None:
    text = os.environ.get(variable, "")
    return max(1, int(text)) if text.isdigit() else None


def bounded() -> bool:
    """Whether a job bounds this process's threads (else each thread pool takes every core)."""
    return bool(_set(ENV_THREADS) or _set(ENV_CORES))


def threads() -> int:
    """The threads this process may keep busy: a worker's share of the job's cores, else the job's
    cores, else the machine's."""
    return _set(ENV_THREADS) or _set(ENV_CORES) or os.cpu_count() or 1


def per_worker(workers: int) -> int:
    """A worker's share when `workers` processes share this process's cores."""
    return max(1, threads() // max(1, workers))
