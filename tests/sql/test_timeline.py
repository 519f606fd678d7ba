"""sql/analysis/timeline.sql: the marks of a lane less than a pixel apart merged into spans, per lane
and category; labelled marks kept whole."""

from __future__ import annotations

from .conftest import load_sql, rows


def _spans(con, values: str, px_ns: int) -> list[tuple]:
    load_sql(con, "analysis/timeline.sql")
    con.execute(f"CREATE TABLE ops (lane VARCHAR, category VARCHAR, start_ns BIGINT, end_ns BIGINT, "
                f"name VARCHAR, label VARCHAR); INSERT INTO ops VALUES {values}")
    return rows(con, f"""SELECT lane, category, start_ns, end_ns, ops, busy_ns, name, label
                         FROM timeline_spans(ops, {px_ns}) ORDER BY lane, category, start_ns, end_ns""")


def test_marks_closer_than_a_pixel_merge_labelled_ones_stay(con):
    assert _spans(con, """
        ('s7', 'compute', 0, 10, 'a', NULL), ('s7', 'compute', 30, 50, 'b', NULL),  -- 20 ns apart: one span
        ('s7', 'compute', 140, 160, 'c', NULL),                    -- 90 ns after: still the span
        ('s7', 'compute', 260, 500, 'long', NULL),                 -- 100 ns after: a span of its own, long or not
        ('s7', 'compute', 550, 560, 'e', NULL),                    -- 50 ns after: its span
        ('s7', 'compute', 45, 100, 'K', 'K1'),                     -- labelled: its own mark, extends nothing
        ('s7', 'memcpy', 5, 15, 'm', NULL),                        -- another category
        ('s8', 'compute', 20, 25, 'x', NULL)                       -- another lane
        """, 100) == [
        ("s7", "compute", 0, 160, 3, 50, "b", None),  # a span: named after its longest row
        ("s7", "compute", 45, 100, 1, 55, "K", "K1"),
        ("s7", "compute", 260, 560, 2, 250, "long", None),
        ("s7", "memcpy", 5, 15, 1, 10, "m", None),
        ("s8", "compute", 20, 25, 1, 5, "x", None)]


def test_a_span_is_named_after_its_longest_row_the_first_of_equals(con):
    assert _spans(con, "('s', 'c', 0, 10, 'b', NULL), ('s', 'c', 10, 20, 'a', NULL), ('s', 'c', 20, 25, 'c', NULL)",
                  100) == [("s", "c", 0, 25, 3, 25, "b", None)]


def test_a_long_mark_holds_the_span_open_to_its_end(con):
    # the second row starts before the first ends: the span's reach is the furthest end so far
    assert _spans(con, "('s', 'c', 0, 1000, 'a', NULL), ('s', 'c', 10, 20, 'b', NULL), ('s', 'c', 1050, 1060, 'c', NULL)",
                  100) == [("s", "c", 0, 1060, 3, 1020, "a", None)]


def test_a_pixel_of_one_nanosecond_merges_only_touching_marks(con):
    assert _spans(con, "('s', 'c', 0, 10, 'a', NULL), ('s', 'c', 11, 20, 'b', NULL), ('s', 'c', 20, 30, 'd', NULL)",
                  1) == [("s", "c", 0, 10, 1, 10, "a", None), ("s", "c", 11, 30, 2, 19, "d", None)]


def test_times_before_zero_are_bucketed_by_their_floor(con):
    # -99 and 50 are 149 ns apart: two spans (a bucket truncated toward zero would hold both)
    assert _spans(con, "('s', 'c', -99, -98, 'a', NULL), ('s', 'c', 50, 51, 'b', NULL)", 100) == [
        ("s", "c", -99, -98, 1, 1, "a", None), ("s", "c", 50, 51, 1, 1, "b", None)]


def test_twenty_thousand_operations_stay_a_few_marks_per_pixel(con):
    # 20,000 kernels of 3 us every 5 us, with a 1 ms pause every 1,000: at 10 us a pixel, a span per burst
    load_sql(con, "analysis/timeline.sql")
    con.execute("""CREATE TABLE ops AS
                   SELECT 's' AS lane, 'compute' AS category, i * 5000 + (i // 1000) * 1000000 AS start_ns,
                          i * 5000 + (i // 1000) * 1000000 + 3000 AS end_ns, 'k' || i AS name, NULL AS label
                   FROM range(20000) t(i)""")
    assert rows(con, "SELECT count(*), sum(ops), sum(busy_ns) FROM timeline_spans(ops, 10000)") == [
        (20, 20000, 20000 * 3000)]
