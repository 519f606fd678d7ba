"""Range nesting (parent and depth per lane), used for NVTX ranges and user annotations."""

from tracelake.ingest.nesting import parent_and_depth


def test_nested_siblings_and_lanes():
    lanes = ["a", "a", "a", "a", "b", "a"]
    starts = [0, 10, 20, 40, 15, 100]
    ends = [50, 30, 25, 45, 16, 120]
    ids = [1, 2, 3, 4, 5, 6]
    parents, depths = parent_and_depth(lanes, starts, ends, ids)
    assert parents == [None, 1, 2, 1, None, None]
    assert depths == [0, 1, 2, 1, 0, 0]


def test_marks_nest_but_contain_nothing_and_touching_ranges_are_siblings():
    lanes = ["x"] * 4
    starts = [0, 5, 5, 10]
    ends = [10, None, 6, 20]
    parents, depths = parent_and_depth(lanes, starts, ends, [1, 2, 3, 4])
    assert parents == [None, 3, 1, None]  # the mark at 5 lies inside [5, 6], the innermost range
    assert depths == [0, 2, 1, 0]


def test_identical_ranges_nest_in_input_order():
    parents, depths = parent_and_depth(["x", "x"], [0, 0], [10, 10], [1, 2])
    assert parents == [None, 1] and depths == [0, 1]


def test_vectorized_nesting_matches_the_loop():
    import random

    import polars as pl
    from tracelake.ingest.nesting import nest_table

    rng = random.Random(7)
    rows = set()

    def spans(lane, start, end, depth):
        t = start
        while t < end and depth < 5:
            s = t + rng.randint(0, 3)
            e = min(end, s + rng.randint(0, 12))  # zero-length and touching ranges too
            if s >= end:
                break
            rows.add((lane, s, e))
            spans(lane, s, e, depth + 1)
            t = e
    for lane in (1, 2):
        spans(lane, 0, 300, 0)
    rows = sorted(rows, key=lambda r: rng.random())  # distinct ranges (identical ones: next test)
    ids = list(range(100, 100 + len(rows)))
    table = pl.DataFrame({"op_id": ids, "pid": [1] * len(rows), "tid": [r[0] for r in rows],
                          "start_ns": [r[1] for r in rows], "end_ns": [r[2] for r in rows]})
    nested = nest_table(table, "op_id")
    parents, depths = parent_and_depth([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], ids)
    assert len(rows) > 200 and max(depths) >= 4
    assert nested["parent_op_id"].to_list() == parents
    assert nested["depth"].to_list() == depths


def test_vectorized_nesting_of_identical_ranges_follows_row_order():
    import polars as pl
    from tracelake.ingest.nesting import nest_table

    table = pl.DataFrame({"op_id": [7, 8, 9], "pid": [1, 1, 1], "tid": [1, 1, 1],
                          "start_ns": [0, 0, 5], "end_ns": [10, 10, 5]})
    nested = nest_table(table, "op_id")
    assert nested["parent_op_id"].to_list() == [None, 7, 8] and nested["depth"].to_list() == [0, 1, 2]


def test_arrays_from_the_columns_give_what_the_lists_give():
    """parent_and_depth_of (the Nsight ingest's: arrays from the frame's columns) equals
    parent_and_depth on the same rows as lists: lanes with a NULL, marks, identical ranges."""
    import random

    import polars as pl
    from tracelake.ingest.nesting import parent_and_depth_of

    rng = random.Random(11)
    rows = []
    for _ in range(400):
        s = rng.randint(0, 200)
        rows.append((rng.choice([1, 2, None]), rng.choice([7, None]), s, rng.choice([None, s, s + rng.randint(0, 40)])))
    rows += [rows[-1], rows[-1]]
    ids = list(range(1000, 1000 + len(rows)))
    frame = pl.DataFrame({"annotation_id": ids, "pid": [r[0] for r in rows], "tid": [r[1] for r in rows],
                          "start_ns": [r[2] for r in rows], "end_ns": [r[3] for r in rows]},
                         schema_overrides={"pid": pl.Int64, "tid": pl.Int64, "end_ns": pl.Int64})
    parent, depth = parent_and_depth_of(frame, ["pid", "tid"], "annotation_id")
    expected = parent_and_depth([(r[0], r[1]) for r in rows], [r[2] for r in rows], [r[3] for r in rows], ids)
    assert (parent.to_list(), depth.to_list()) == expected
    assert max(expected[1]) >= 3 and None in expected[0] and parent.dtype == pl.Int64


def test_vectorized_parents_match_the_sweep():
    """nest_parents (the calling context's) gives the sweep's parents and order on random ranges
    of a few lanes: ties, zero-length and reversed ranges, marks, missing starts, overlaps that do
    not nest (where the sweep keeps an ended range on its stack under one that holds)."""
    import numpy as np
    from tracelake.ingest.nesting import NO_START, nest, nest_parents

    rng = np.random.default_rng(3)
    nested_somewhere = 0
    for _ in range(2000):
        n = int(rng.integers(0, 50))
        lanes = rng.integers(0, 3, n)
        starts = rng.integers(0, 30, n)
        ends = starts + rng.integers(-2, 15, n)
        starts[rng.random(n) < 0.05] = NO_START
        has_end = rng.random(n) > 0.2
        ends = np.where(has_end, ends, starts)
        parent, _, order = nest(lanes, starts, ends, has_end)
        fast_parent, fast_order = nest_parents(lanes, starts, ends, has_end)
        assert fast_order.tolist() == order.tolist()
        assert fast_parent.tolist() == parent.tolist(), (lanes, starts, ends, has_end)
        nested_somewhere += int((parent >= 0).sum())
    assert nested_somewhere > 10_000
