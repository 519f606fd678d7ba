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
