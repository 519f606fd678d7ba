"""Parent and depth of time ranges that nest on one lane (a (pid, tid) pair)."""

from __future__ import annotations

import polars as pl


def parent_and_depth(lane: list, start_ns: list, end_ns: list, ids: list) -> tuple[list, list]:
    """For each range, the id of the innermost range on the same lane that contains it, and its depth.

    A range contains another when it starts no later and ends no earlier (ties: the earlier row in
    start order is the parent). Ranges with a NULL end (marks) nest but never contain others.
    """
    n = len(ids)
    parents: list = [None] * n
    depths: list = [0] * n
    if n == 0:
        return parents, depths
    starts = [s if s is not None else -(2**63) for s in start_ns]
    ends = list(end_ns)
    lanes = [str(x) for x in lane]
    order = (
        pl.DataFrame({"lane": lanes, "start": starts, "end": ends}, schema_overrides={"end": pl.Int64})
        .with_row_index("i")
        .sort(["lane", "start", pl.coalesce("end", "start")], descending=[False, False, True])["i"]
        .to_list()
    )
    stack: list[int] = []
    current_lane = None
    for i in order:
        if lanes[i] != current_lane:
            stack, current_lane = [], lanes[i]
        s = starts[i]
        while stack and (ends[stack[-1]] is None or ends[stack[-1]] <= s) and not (
            ends[stack[-1]] is not None and ends[stack[-1]] == s and starts[stack[-1]] == s
        ):
            stack.pop()
        if stack:
            parents[i] = ids[stack[-1]]
            depths[i] = len(stack)
        if ends[i] is not None:
            stack.append(i)
    return parents, depths
