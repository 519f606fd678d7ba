"""Parent and depth of time ranges that nest on one lane (a (pid, tid) pair)."""

from __future__ import annotations

import numpy as np

NO_START = -(2**63) + 1  # a missing start sorts first (one above int64's minimum, so that it can be negated)


def nest(lanes: np.ndarray, starts: np.ndarray, ends: np.ndarray, has_end: np.ndarray) -> tuple[np.ndarray, ...]:
    """The sweep on arrays: lanes (int ids), starts, ends (a mark's: its start), has_end (False: a mark).

    Ranges are visited by lane, start, then longest first, then input order, with a stack of the
    open ones. Returns (parent row or -1, depth, the visiting order), int64 arrays.
    """
    n = len(starts)
    order = np.lexsort((-ends, starts, lanes))
    parent = [-1] * n
    depth = [0] * n
    stack: list[tuple[int, int, int]] = []  # (end, start, row) of the open ranges, innermost last
    pop, push = stack.pop, stack.append
    current_lane = None
    for i, ln, s, e, closed in zip(order.tolist(), lanes[order].tolist(), starts[order].tolist(),
                                   ends[order].tolist(), has_end[order].tolist(), strict=True):
        if ln != current_lane:
            stack.clear()
            current_lane = ln
        # pop ranges that ended at or before this start (a zero-length range at s still holds it)
        while stack:
            top_end, top_start, top_row = stack[-1]
            if top_end > s or (top_end == s and top_start == s):
                parent[i] = top_row
                depth[i] = len(stack)
                break
            pop()
        if closed:
            push((e, s, i))
    return np.array(parent, np.int64), np.array(depth, np.int64), order


def parent_and_depth(lane: list, start_ns: list, end_ns: list, ids: list) -> tuple[list, list]:
    """For each range, the id of the innermost range on the same lane that contains it, and its depth.

    A range contains another when it starts no later and ends no earlier (ties: the earlier row in
    start order is the parent). Ranges with a NULL end (marks) nest but never contain others.
    """
    n = len(ids)
    if n == 0:
        return [], []
    lane_ids: dict = {}
    lanes = np.array([lane_ids.setdefault(x, len(lane_ids)) for x in lane], np.int64)
    starts = np.array([NO_START if s is None else s for s in start_ns], np.int64)
    has_end = np.array([e is not None for e in end_ns], bool)
    ends = np.where(has_end, np.array([0 if e is None else e for e in end_ns], np.int64), starts)
    parent, depth, _ = nest(lanes, starts, ends, has_end)
    return [None if p < 0 else ids[p] for p in parent.tolist()], depth.tolist()
