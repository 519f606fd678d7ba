"""sql/analysis/findings_by_rule.sql: findings grouped by rule, the longest one's evidence as the example."""

from __future__ import annotations

from .conftest import FILES, rows


def _findings(con, findings: list[tuple], gaps: list[tuple]) -> None:
    con.execute("CREATE TABLE findings (trace_id VARCHAR, pid BIGINT, rule VARCHAR, severity VARCHAR, "
                "start_ns BIGINT, duration_ns BIGINT, evidence VARCHAR, advice VARCHAR)")
    con.executemany("INSERT INTO findings VALUES (?, ?, ?, ?, ?, ?, ?, ?)", findings)
    con.execute("CREATE TABLE gap_rows (trace_id VARCHAR, pid BIGINT, start_ns BIGINT, end_ns BIGINT, duration_ns BIGINT)")
    if gaps:
        con.executemany("INSERT INTO gap_rows VALUES (?, ?, ?, ?, ?)", gaps)
    con.execute("CREATE MACRO gpu_gaps_over(min_ns) AS TABLE SELECT * FROM gap_rows WHERE duration_ns > min_ns")
    con.execute(FILES["analysis/findings_by_rule.sql"].text)


def test_grouped_by_rule_with_a_fixed_example(con):
    # findings and gpu_gaps_over are views over every rule and kernel; tables of the columns read stand in
    _findings(con, [
        ("t", 1, "sync", "warning", 100, 5, "short", "avoid syncs"),
        ("t", 1, "sync", "warning", 200, 9, "copy a", "avoid syncs"),
        ("t", 1, "sync", "warning", 300, 9, "copy b", "avoid syncs"),  # as long as 'copy a': the last in text order
        ("t", 1, "idle", "info", None, 3, "gap", "overlap"),
        ("u", 1, "sync", "warning", 400, 1, "other trace", "avoid syncs"),
    ], gaps=[])
    assert rows(con, "SELECT * EXCLUDE (cost_ns) FROM findings_by_rule ORDER BY trace_id, rule") == [
        ("t", "idle", "info", 1, 3, "gap", "overlap", None),
        ("t", "sync", "warning", 3, 23, "copy b", "avoid syncs", 300),  # the example's start
        ("u", "sync", "warning", 1, 1, "other trace", "avoid syncs", 400)]
    con.execute("CREATE OR REPLACE TABLE findings AS SELECT * FROM findings ORDER BY evidence DESC")  # other order
    assert rows(con, "SELECT example FROM findings_by_rule WHERE rule = 'sync' AND trace_id = 't'") == [("copy b",)]


def test_a_host_wait_costs_only_the_gpu_idle_inside_it(con):
    _findings(con, [
        ("t", 1, "cuda_api_sync", "warning", 1_000_000, 100_000, "cudaDeviceSynchronize", "avoid syncs"),
        ("t", 1, "cuda_api_sync", "warning", 2_000_000, 100_000, "cudaDeviceSynchronize", "avoid syncs"),
        ("t", 1, "slow_kernel", "info", 3_000_000, 70_000, "gemm", "tune"),
    ], gaps=[
        ("t", 1, 1_060_000, 1_200_000, 140_000),  # the last 40 us of the first wait
        ("t", 2, 2_000_000, 2_100_000, 100_000),  # another process's GPU: not this wait's cost
        ("t", 1, 2_050_000, 2_055_000, 5_000),    # under 10 us: not a gap
    ])
    assert rows(con, "SELECT rule, total_ns, cost_ns FROM findings_by_rule ORDER BY rule") == [
        ("cuda_api_sync", 200_000, 40_000), ("slow_kernel", 70_000, 70_000)]
