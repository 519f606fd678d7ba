"""sql/analysis/findings_by_rule.sql: findings grouped by rule, the longest one's evidence as the example."""

from __future__ import annotations

from .conftest import FILES, rows


def test_grouped_by_rule_with_a_fixed_example(con):
    # findings is a view over every rule; here a table of the columns this view reads stands in for it
    con.execute("CREATE TABLE findings (trace_id VARCHAR, rule VARCHAR, severity VARCHAR, start_ns BIGINT, "
                "duration_ns BIGINT, evidence VARCHAR, advice VARCHAR)")
    con.executemany("INSERT INTO findings VALUES (?, ?, ?, ?, ?, ?, ?)", [
        ("t", "sync", "warning", 100, 5, "short", "avoid syncs"),
        ("t", "sync", "warning", 200, 9, "copy a", "avoid syncs"),
        ("t", "sync", "warning", 300, 9, "copy b", "avoid syncs"),  # as long as 'copy a': the last in text order
        ("t", "idle", "info", None, 3, "gap", "overlap"),
        ("u", "sync", "warning", 400, 1, "other trace", "avoid syncs"),
    ])
    con.execute(FILES["analysis/findings_by_rule.sql"].text)
    assert rows(con, "SELECT * FROM findings_by_rule ORDER BY trace_id, rule") == [
        ("t", "idle", "info", 1, 3, "gap", "overlap", None),
        ("t", "sync", "warning", 3, 23, "copy b", "avoid syncs", 300),  # the example's start
        ("u", "sync", "warning", 1, 1, "other trace", "avoid syncs", 400)]
    con.execute("CREATE OR REPLACE TABLE findings AS SELECT * FROM findings ORDER BY evidence DESC")  # other order
    assert rows(con, "SELECT example FROM findings_by_rule WHERE rule = 'sync' AND trace_id = 't'") == [("copy b",)]
