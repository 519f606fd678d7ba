"""sql/analysis/run_overview.sql (run_overview, run_workloads) and run_comparison_changes.sql: runs linked by
run_comparison into workloads; each run with its change; each pair with its top kernel changes."""

from __future__ import annotations

from .conftest import given, load_sql, rows
from .test_run_comparison import KERNEL, TRACE, runs  # noqa: F401 - the fixture: runs a, b, c of one workload


def test_empty(con):
    for path, view in (("analysis/run_overview.sql", "run_workloads"), ("analysis/run_overview.sql", "run_overview"),
                       ("analysis/run_comparison_changes.sql", "run_comparison_changes")):
        load_sql(con, path)
        assert rows(con, f"SELECT * FROM {view}") == []


def test_workloads(runs):  # noqa: F811
    given(runs, "traces", TRACE, [("z", "pytorch", "/r/z.json", "z.json", 0, 1_000, 5_000)])
    given(runs, "kernels", KERNEL, [("z", 1, 0, 7, 0, 100, 100, "other_kernel")])  # nothing in common: its own
    load_sql(runs, "analysis/run_overview.sql")
    assert rows(runs, "SELECT run_id, workload FROM run_workloads ORDER BY run_id") == [
        ("a", "a.json"), ("b", "a.json"), ("c", "a.json"), ("z", "z.json")]


def test_overview(runs):  # noqa: F811
    load_sql(runs, "analysis/run_overview.sql")
    assert rows(runs, """SELECT run_id, previous_run_id, previous_file, compared_per, round(change_pct, 3), workload
                         FROM run_overview ORDER BY run_id""") == [
        ("a", None, None, None, None, "a.json"),
        ("b", "a", "a.json", "step", 100.0, "a.json"),  # median step 500 -> 1,000 ns
        ("c", "b", "b.json", "run", -50.0, "a.json")]


def test_changes(runs):  # noqa: F811
    load_sql(runs, "analysis/run_comparison_changes.sql")
    got = rows(runs, "SELECT run_id, previous_run_id, first_file, previous_file, kernels FROM run_comparison_changes "
                     "ORDER BY run_id")
    assert [r[:4] for r in got] == [("b", "a", "b.json", "a.json"), ("c", "b", "c.json", "b.json")]
    # most slowed down first: b: k1 +200, k2 +50 per step; c: k2 0, k1 -200 per run (faster)
    assert [[(k["name"], k["delta_ns_per_rank_step"], k["delta_ns_per_rank"]) for k in r[4]] for r in got] == [
        [("k1", 200.0, 100.0), ("k2", 50.0, 0.0)], [("k2", None, 0.0), ("k1", None, -200.0)]]
