"""`--max-memory` (lake/memory_budget.py): each worker's share of the job's budget, DuckDB's limit
within it, the derivation batches that fit, and a real run under a small budget that gives the
same answers as one without."""

from __future__ import annotations

import subprocess
import sys

import duckdb
from conftest import DATA
from tracelake.lake import derive, memory_budget
from tracelake.lake.database import connect
from tracelake.lake.planner import planner_settings

MIB = 1 << 20


def _limit(con) -> int:
    [(value,)] = con.execute("SELECT value FROM duckdb_settings() WHERE name = 'memory_limit'").fetchall()
    number, unit = value.split()
    return int(float(number) * {"KiB": 1 << 10, "MiB": MIB, "GiB": 1 << 30, "TiB": 1 << 40}[unit])


def test_a_worker_gets_its_share_and_duckdb_half_of_it(monkeypatch):
    # set (to empty: no budget) rather than deleted, so that monkeypatch restores both after the
    # test, share_among's write included: a budget left in the environment would limit the
    # DuckDB of every later test in this process, and of the processes they start
    monkeypatch.setenv(memory_budget.ENV_PROCESS_MEMORY, "")
    monkeypatch.setenv(memory_budget.ENV_MAX_MEMORY, "")
    default = _limit(planner_settings(duckdb.connect()))
    monkeypatch.setenv(memory_budget.ENV_MAX_MEMORY, "2G")
    assert _limit(planner_settings(duckdb.connect())) == 1 << 30  # the job's own process: half the budget
    memory_budget.share_among(4)  # a worker of 4
    assert memory_budget.process_budget() == 512 * MIB
    assert _limit(planner_settings(duckdb.connect())) == 256 * MIB
    assert default > 1 << 30  # without a budget DuckDB keeps its own default (most of the machine)


def test_derivation_batches_fit_the_budget(monkeypatch):
    monkeypatch.setenv(memory_budget.ENV_MAX_MEMORY, "8G")
    assert derive.batch_budget(2) == (8 << 30) // 2 // derive.BYTES_PER_EVENT
    monkeypatch.setenv(memory_budget.ENV_MAX_MEMORY, "1M")
    assert derive.batch_budget(1) == derive.MIN_BATCH_EVENTS  # a run is never split below this


def test_a_run_under_a_small_budget_gives_the_same_answers(tmp_path, monkeypatch):
    """64 MiB a worker (DuckDB at 32 MiB, raised to its floor): the lake derives every view and
    answers as a run without a budget does; with a cache of its own, so that the catalog is
    installed under the budget too (it ran out of memory at a 64 MiB floor)."""
    trace = DATA / "torch-2.11_resnet50-train-fp32-pageable_h100.pt.trace.json.gz"
    monkeypatch.setenv("TRACELAKE_CACHE", str(tmp_path / "cache"))
    answers = {}
    for budget in (None, "128M"):
        out = tmp_path / str(budget)
        cmd = [sys.executable, "-m", "tracelake.cli.main", "run", str(trace), "--out", str(out), "--no-reports",
               "--jobs", "2", "-v"] + (["--max-memory", budget] if budget else [])
        done = subprocess.run(cmd, capture_output=True, text=True)
        assert done.returncode == 0 and "not derived" not in done.stdout + done.stderr, done.stderr
        con = connect(out / "lake")
        answers[budget] = [con.execute(f"SELECT * FROM {view} ORDER BY ALL").fetchall()
                           for view in ("kernel_summary", "temporal_breakdown", "findings", "memory_peaks")]
        con.close()
    assert answers[None] == answers["128M"] and all(answers[None])
