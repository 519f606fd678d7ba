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
