"""sql/lib/intervals.sql: Perfetto-style cases, VALUES in and rows out."""

from __future__ import annotations

import pytest

from .conftest import load_sql, rows

EMPTY = "SELECT 1 AS lane, 0::BIGINT AS start_ns, 0::BIGINT AS end_ns WHERE false"
ONE = "VALUES (1, 10, 20)"
TOUCHING = "VALUES (1, 0, 10), (1, 10, 20)"
OVERLAPPING = "VALUES (1, 0, 10), (1, 5, 20), (1, 30, 40)"
NESTED = "VALUES (1, 0, 100), (1, 10, 20), (1, 30, 40)"
LANES = "VALUES (1, 0, 10), (2, 5, 15), (1, 20, 30)"
NULLS = "VALUES (1, 0, 10), (1, NULL, 50), (1, 60, NULL), (1, 40, 30), (1, 20, 30)"
POINTS = "VALUES (1, 0, 10), (1, 20, 20), (1, 30, 40), (1, 35, 35)"
DUPLICATES = "VALUES (1, 0, 10), (1, 0, 10), (1, 20, 30)"


@pytest.fixture
def lib(con):
    load_sql(con, "lib/intervals.sql")
    return con


def query(con, macro: str, *inputs: str) -> list[tuple]:
    ctes = ", ".join(f"t{i}(lane, start_ns, end_ns) AS ({sql})" for i, sql in enumerate(inputs))
    args = ", ".join(f"t{i}" for i in range(len(inputs)))
    return rows(con, f"WITH {ctes} SELECT * FROM {macro}({args}) ORDER BY ALL")


@pytest.mark.parametrize("given, expected", [
    (EMPTY, []),
    (ONE, [(1, 10, 20)]),
    (TOUCHING, [(1, 0, 20)]),
    (OVERLAPPING, [(1, 0, 20), (1, 30, 40)]),
    (NESTED, [(1, 0, 100)]),
    (LANES, [(1, 0, 10), (1, 20, 30), (2, 5, 15)]),
    (NULLS, [(1, 0, 10), (1, 20, 30)]),  # NULL ends and reversed intervals are ignored
    (POINTS, [(1, 0, 10), (1, 20, 20), (1, 30, 40)]),
    (DUPLICATES, [(1, 0, 10), (1, 20, 30)]),
], ids=["empty", "one", "touching", "overlapping", "nested", "lanes", "nulls", "points", "duplicates"])
def test_union(lib, given, expected):
    assert query(lib, "intervals_union", given) == expected


@pytest.mark.parametrize("given, expected", [
    (EMPTY, []),
    (ONE, [(1, 10)]),
    (TOUCHING, [(1, 20)]),
    (OVERLAPPING, [(1, 30)]),
    (NESTED, [(1, 100)]),
    (LANES, [(1, 20), (2, 10)]),
    (NULLS, [(1, 20)]),
    (POINTS, [(1, 20)]),
    (DUPLICATES, [(1, 20)]),
], ids=["empty", "one", "touching", "overlapping", "nested", "lanes", "nulls", "points", "duplicates"])
def test_union_ns(lib, given, expected):
    assert query(lib, "intervals_union_ns", given) == expected


@pytest.mark.parametrize("given, expected", [
    (EMPTY, []),
    (ONE, []),
    (TOUCHING, []),
    (OVERLAPPING, [(1, 20, 30)]),
    (NESTED, []),
    (LANES, [(1, 10, 20)]),
    (NULLS, [(1, 10, 20)]),
    (POINTS, [(1, 10, 20), (1, 20, 30)]),  # a point splits a gap
    (DUPLICATES, [(1, 10, 20)]),
], ids=["empty", "one", "touching", "overlapping", "nested", "lanes", "nulls", "points", "duplicates"])
def test_gaps(lib, given, expected):
    assert query(lib, "intervals_gaps", given) == expected


@pytest.mark.parametrize("given, expected", [
    (EMPTY, []),
    (ONE, [(1, 10, 20, 1)]),
    (TOUCHING, [(1, 0, 10, 1), (1, 10, 20, 1)]),  # touching is not overlapping
    (OVERLAPPING, [(1, 0, 5, 1), (1, 5, 10, 2), (1, 10, 20, 1), (1, 20, 30, 0), (1, 30, 40, 1)]),
    (NESTED, [(1, 0, 10, 1), (1, 10, 20, 2), (1, 20, 30, 1), (1, 30, 40, 2), (1, 40, 100, 1)]),
    (LANES, [(1, 0, 10, 1), (1, 10, 20, 0), (1, 20, 30, 1), (2, 5, 15, 1)]),
    (DUPLICATES, [(1, 0, 10, 2), (1, 10, 20, 0), (1, 20, 30, 1)]),
], ids=["empty", "one", "touching", "overlapping", "nested", "lanes", "duplicates"])
def test_overlap_count(lib, given, expected):
    assert query(lib, "intervals_overlap_count", given) == expected


@pytest.mark.parametrize("a, b, expected", [
    (EMPTY, ONE, []),
    (ONE, ONE, [(1, 10, 20)]),
    ("VALUES (1, 0, 10)", "VALUES (1, 10, 20)", []),  # touching: nothing in common
    (OVERLAPPING, "VALUES (1, 8, 35)", [(1, 8, 20), (1, 30, 35)]),
    (NESTED, "VALUES (1, 15, 16), (1, 50, 60)", [(1, 15, 16), (1, 50, 60)]),
    (LANES, "VALUES (2, 0, 100), (3, 0, 100)", [(2, 5, 15)]),
    (NULLS, "VALUES (1, 5, 25)", [(1, 5, 10), (1, 20, 25)]),
    (DUPLICATES, DUPLICATES, [(1, 0, 10), (1, 20, 30)]),  # each side's overlaps count once
], ids=["empty", "one", "touching", "overlapping", "nested", "lanes", "nulls", "duplicates"])
def test_intersect(lib, a, b, expected):
    assert query(lib, "intervals_intersect", a, b) == expected


def test_struct_lanes(lib):
    assert rows(lib, """
        WITH ops AS (SELECT {'trace_id': t, 'stream_id': s} AS lane, start_ns, end_ns
                     FROM (VALUES ('a', 7, 0, 10), ('a', 7, 20, 30), ('a', NULL, 0, 30), ('b', 7, 5, 6))
                          v(t, s, start_ns, end_ns))
        SELECT lane.trace_id, lane.stream_id, start_ns, end_ns FROM intervals_gaps(ops)""") == [("a", 7, 10, 20)]


def test_after_gaps_keeps_the_columns_of_the_interval_that_ends_each_gap(lib):
    assert rows(lib, """
        WITH ops(lane, start_ns, end_ns, name) AS (
            VALUES (1, 0, 10, 'a'), (1, 20, 30, 'b'), (1, 20, 25, 'c'), (1, 25, 40, 'd'), (1, 50, 60, 'e'),
                   (2, 5, 6, 'f'))
        SELECT lane, gap_start_ns, start_ns, end_ns, name FROM intervals_after_gaps(ops) ORDER BY ALL""") == [
        (1, 10, 20, 25, "c"), (1, 40, 50, 60, "e")]  # of two starting at once, the one that ends first
