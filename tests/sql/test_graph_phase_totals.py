"""sql/analysis/graph_phase_totals.sql: GPU work by CUDA graph phase, for traces with graph activity only."""

from __future__ import annotations

from .conftest import given, load_sql, rows
from .test_graph_replays import KERNEL, _two_replays_and_a_direct_kernel


def test_empty(con):
    load_sql(con, "analysis/graph_phase_totals.sql")
    assert rows(con, "SELECT * FROM graph_phase_totals") == []


def test_phases(con):
    _two_replays_and_a_direct_kernel(con)
    given(con, "kernels", KERNEL, [("eager_only", 1, 0, 7, 1, 0, 10, 10, "k")])  # no graph: no rows
    load_sql(con, "analysis/graph_phase_totals.sql")
    assert rows(con, "SELECT trace_id, phase, ops, gpu_ns FROM graph_phase_totals ORDER BY phase") == [
        ("t", "eager", 1, 5), ("t", "replay", 6, 90)]
