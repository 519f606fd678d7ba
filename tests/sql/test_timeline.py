"""sql/analysis/timeline.sql: operations shorter than a pixel merged into spans per lane and category."""

from __future__ import annotations

from .conftest import load_sql, rows


def _spans(con, values: str, px_ns: int) -> list[tuple]:
    load_sql(con, "analysis/timeline.sql")
    con.execute(f"CREATE TABLE ops (lane VARCHAR, category VARCHAR, start_ns BIGINT, end_ns BIGINT, "
                f"name VARCHAR); INSERT INTO ops VALUES {values}")
    return rows(con, f"""SELECT lane, category, start_ns, end_ns, ops, busy_ns, name
                         FROM timeline_spans(ops, {px_ns}) ORDER BY lane, category, start_ns""")


def test_short_operations_merge_long_ones_stay(con):
    assert _spans(con, """
        ('s7', 'compute', 0, 10, 'a'), ('s7', 'compute', 30, 50, 'b'),   -- 20 ns apart: one span
        ('s7', 'compute', 140, 160, 'c'),                                 -- 90 ns after: still the span
        ('s7', 'compute', 300, 310, 'd'),                                 -- 140 ns after: a span of its own
        ('s7', 'compute', 40, 500, 'long'),                               -- a pixel or more: its own mark
        ('s7', 'memcpy', 5, 15, 'm'),                                     -- another category
        ('s8', 'compute', 20, 25, 'e')                                    -- another lane
        """, 100) == [
        ("s7", "compute", 0, 160, 3, 50, None),
        ("s7", "compute", 40, 500, 1, 460, "long"),
        ("s7", "compute", 300, 310, 1, 10, "d"),
        ("s7", "memcpy", 5, 15, 1, 10, "m"),
        ("s8", "compute", 20, 25, 1, 5, "e")]


def test_a_pixel_of_one_nanosecond_merges_nothing(con):
    assert _spans(con, "('s', 'compute', 0, 10, 'a'), ('s', 'compute', 10, 20, 'b')", 1) == [
        ("s", "compute", 0, 10, 1, 10, "a"), ("s", "compute", 10, 20, 1, 10, "b")]
