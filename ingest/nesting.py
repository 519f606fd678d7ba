"""Parent and depth of time ranges that nest on one lane (a (pid, tid) pair)."""

from __future__ import annotations

import numpy as np
import polars as pl

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


def nest_parents(lanes: np.ndarray, starts: np.ndarray, ends: np.ndarray, has_end: np.ndarray) -> tuple[np.ndarray, ...]:
    """nest's parent and visiting order, vectorized (the calling context's 165k ranges of the 89 MB
    reference trace: 61 -> 26 ms); no depth, which depends on ranges that the sweep leaves on its
    stack after they ended (an overlap that does not nest).

    The sweep's parent of a range is the last range before it in visiting order, on its lane, that
    holds its start: one that ends after it, or a zero-length one at it (a range that does not hold
    a start holds no later one, so the sweep popped it or it lies under one that holds). In
    visiting order each range holds the ranges from the next one up to its `death`, the first whose
    start it does not hold (starts only grow along a lane); the parent is then the nearest earlier
    range whose death lies beyond, found for all at once by skipping back over blocks of 2^k
    ranges that all died by then (a sparse table of the blocks' latest death).
    """
    n = len(starts)
    order = np.lexsort((-ends, starts, lanes))
    parent = np.full(n, -1, np.int64)
    if n == 0:
        return parent, order
    lane, start, end = lanes[order], starts[order], ends[order]
    # a range dies at the first later range of its lane that starts at or after its end (after
    # it, for a zero-length one); a mark holds nothing
    bounds = np.flatnonzero(np.r_[True, lane[1:] != lane[:-1], True])
    death = np.empty(n, np.int32)  # positions, and int32 halves the table below
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        lane_start, lane_end = start[lo:hi], end[lo:hi]
        first = np.searchsorted(lane_start, lane_end, side="left")
        zero = np.flatnonzero(lane_end == lane_start)
        first[zero] = np.searchsorted(lane_start, lane_end[zero], side="right")
        death[lo:hi] = lo + first
    np.maximum(death, np.arange(1, n + 1, dtype=np.int32), out=death)
    marks = np.flatnonzero(~has_end[order])
    death[marks] = marks + 1
    # latest[k][p]: the largest death among ranges p .. p + 2^k - 1
    latest = [death]
    while 2 ** len(latest) <= n:
        half, prev = 2 ** (len(latest) - 1), latest[-1]
        latest.append(np.maximum(prev[:-half], prev[half:]))
    # most ranges lie in the one before them: only the others search
    here = np.arange(1, n)
    inside = death[:-1] > here
    parent[order[1:][inside]] = order[:-1][inside]
    here = here[~inside]
    pos = here.copy()
    for k in range(len(latest) - 1, -1, -1):
        step = 2 ** k
        skip = (pos >= step) & (latest[k][np.maximum(pos - step, 0)] <= here)
        pos -= step * skip
    found = (pos > 0) & (death[pos - 1] > here)
    parent[order[here[found]]] = order[pos[found] - 1]
    return parent, order


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


def parent_and_depth_of(frame: pl.DataFrame, lane: list[str], id_col: str) -> tuple[pl.Series, pl.Series]:
    """parent_and_depth of a frame's ranges (columns start_ns, end_ns, id_col, and `lane`: the
    columns whose values make a lane), as Series (parent_id: id_col's type, NULL at the top; depth:
    Int32); the sweep's arrays are taken from the columns (46k NVTX ranges: 90 -> 55 ms). Results
    go back as lists: a Series made from a NumPy array imports numpy.ma (10-20 ms)."""
    def array(column: pl.Series) -> np.ndarray:
        return column.to_arrow().to_numpy(zero_copy_only=False)

    lanes = frame.select(lane).with_row_index("_row").join(
        frame.select(lane).unique(maintain_order=True).with_row_index("_lane"), on=lane, how="left",
        nulls_equal=True).sort("_row")["_lane"].cast(pl.Int64)
    starts = array(frame["start_ns"].cast(pl.Int64).fill_null(NO_START))
    has_end = array(frame["end_ns"].is_not_null())
    ends = np.where(has_end, array(frame["end_ns"].cast(pl.Int64).fill_null(0)), starts)
    parent, depth, _ = nest(array(lanes), starts, ends, has_end)
    ids = frame[id_col].to_list()
    return (pl.Series("parent_id", [None if p < 0 else ids[p] for p in parent.tolist()], frame.schema[id_col]),
            pl.Series("depth", depth.tolist(), pl.Int32))


def nest_table(table: pl.DataFrame, id_col: str) -> pl.DataFrame:
    """parent_and_depth for ranges that nest properly on their lane (pid, tid), vectorized: `table`
    (pid, tid, start_ns, end_ns, id_col) with parent_<id_col> and depth added, in the same order.

    A sweep over start (+1) and end (-1) events per lane gives each range's depth as the number of
    ranges open when it starts (an end at the same time as a start comes first, except the end of a
    zero-length range, which comes after every start at that time); the parent is the latest range
    one level up that started before it. Same answer as parent_and_depth for ranges that nest; a
    range that overlaps an earlier one without nesting is put beside it, not inside it.
    """
    lane = ["pid", "tid"]
    ranges = table.select(*lane, "start_ns", "end_ns", pl.col(id_col).alias("_id")).with_row_index("_row")
    starts = ranges.select(*lane, pl.col("start_ns").alias("ts"), pl.lit(1, pl.Int8).alias("kind"),
                           (-pl.col("end_ns")).alias("tie"), "_row", pl.lit(1, pl.Int32).alias("delta"))
    ends = ranges.select(*lane, pl.col("end_ns").alias("ts"),
                         pl.when(pl.col("end_ns") > pl.col("start_ns")).then(0).otherwise(2).cast(pl.Int8).alias("kind"),
                         pl.lit(0, pl.Int64).alias("tie"), "_row", pl.lit(-1, pl.Int32).alias("delta"))
    events = (pl.concat([starts, ends]).filter(pl.col("ts").is_not_null())
              .sort([*lane, "ts", "kind", "tie", "_row"], nulls_last=True)
              .with_columns(pl.col("delta").cum_sum().over(lane).alias("open"), pl.int_range(pl.len()).alias("seq")))
    opened = (events.filter(pl.col("delta") == 1)
              .select(*lane, "_row", "seq", (pl.col("open") - 1).alias("depth"))
              .join(ranges.select("_row", "_id"), on="_row"))
    up = opened.select(*lane, "seq", (pl.col("depth") + 1).alias("depth"), pl.col("_id").alias("_parent")).sort("seq")
    nested = (opened.sort("seq")
              .join_asof(up, on="seq", by=[*lane, "depth"], strategy="backward", allow_exact_matches=False,
                       check_sortedness=False)
              .select("_row", "_parent", pl.col("depth").cast(pl.Int32)))
    out = ranges.select("_row").join(nested, on="_row", how="left").sort("_row")
    return table.with_columns(out["_parent"].alias(f"parent_{id_col}"), out["depth"].fill_null(0))
