"""What the index page shows, as queries on the lake's views (trace_summary, run_overview,
run_comparison_changes, rank_summary): they select, order, rename and convert units for display;
joins, aggregates and layout live in views. A trace page's sections query their own views
(reports/sections)."""

from __future__ import annotations

import polars as pl

from .page import frame
from .sections.parallelism import groups as group_rows
from .sections.ranks import rows as rank_rows

# The views several of the index page's queries read (run_overview, run_comparison_changes, the
# run history): the report job evaluates them once for the page (lake/materialize.ready).
INDEX_VIEWS = ("runs", "run_kernel_time", "run_comparison")


def run_comparisons(con) -> list[dict]:
    """Each run next to the previous run of the same workload, with the kernels that changed most
    (3 slower, 3 faster: run_comparison_changes)."""
    return frame(con, "SELECT * FROM run_comparison_changes ORDER BY first_file, run_id").to_dicts()


SUMMARY_COLUMNS = ("trace_id", "file_name", "source", "rank", "duration_ns", "is_truncated", "idle_pct",
                   "steady_idle_pct", "compute_pct", "top_kernel", "findings", "finding_rules")
# run_ranks: a distributed run's ranks side by side (rank_rows), and run_groups: its process groups
# (group_rows), kept with the run's first rank only
INDEX_COLUMNS = (*SUMMARY_COLUMNS, "run_ranks", "run_groups")


def index_row(summary_row: dict, run_ranks: list[dict], run_groups: list[dict]) -> dict:
    return {c: summary_row[c] for c in SUMMARY_COLUMNS} | {"run_ranks": run_ranks,
                                                           "run_groups": run_groups if run_ranks else []}


def run_ranks_of(trace_id: str, ranks: list[dict]) -> list[dict]:
    """The ranks of a distributed run (rank_rows) when this trace is its first rank's, else none:
    the index shows each run once, its ranks side by side."""
    return ranks if len(ranks) > 1 and ranks[0]["trace_id"] == trace_id else []


def index_rows(con, trace_ids: list[str] | None = None) -> list[dict]:
    """A row per trace (all, or these) for the index page (trace_summary, and run_ranks)."""
    rows = frame(con, f"""SELECT {', '.join(SUMMARY_COLUMNS)} FROM trace_summary
                          WHERE ? IS NULL OR list_contains(?, trace_id) ORDER BY file_name""",
                 [trace_ids, trace_ids]).to_dicts()
    # the first rank of each distributed run (rank_runs evaluated once, not once per trace)
    firsts = set(frame(con, "SELECT trace_id FROM run_first_rank")["trace_id"].to_list())
    for row in rows:
        row["run_ranks"] = run_ranks_of(row["trace_id"], rank_rows(con, row["trace_id"])) \
            if row["trace_id"] in firsts else []
        row["run_groups"] = group_rows(con, row["trace_id"]) if row["run_ranks"] else []
    return rows


# A run without steps whose kernel time changed by more than this since the previous run of its
# workload: listed among the runs that got slower or faster (runs with steps: by their diff's verdict).
CHANGE_PCT = 5.0


def kernel_verdict(run: dict) -> str | None:
    """The verdict on a run compared with the previous one by kernel time (run_overview.compared_per
    'run': no steps, so no noise test): slower or faster by CHANGE_PCT or more, else None. None too
    for a run compared by step time: its verdict is its diff's."""
    if run["compared_per"] != "run" or run["change_pct"] is None or abs(run["change_pct"]) < CHANGE_PCT:
        return None
    return "slower" if run["change_pct"] > 0 else "faster"


def run_rows(con, trace_rows: list[dict]) -> list[dict]:
    """The index's runs, oldest first: a row per run of `runs` whose traces are among trace_rows,
    with those rows (rank files grouped), its findings summed, and the change since the previous
    run of the same workload (run_comparison: step time when both record steps, else kernel time)."""
    by_trace = {r["trace_id"]: r for r in trace_rows}
    runs = frame(con, """
        SELECT run_id, trace_ids, first_file, start_epoch_ns, ranks, steps_per_rank, median_step_ns,
               kernel_ns_per_rank, idle_pct, previous_run_id, previous_file, paired_because, compared_per,
               change_pct
        FROM run_overview ORDER BY start_epoch_ns NULLS LAST, first_file""").to_dicts()
    out = []
    for run in runs:
        members = [by_trace[t] for t in run["trace_ids"] if t in by_trace]
        if not members:
            continue
        run["traces"] = sorted(members, key=lambda r: (r["rank"] is None, r["rank"], r["file_name"]))
        run["findings"] = sum(r["findings"] or 0 for r in members)
        run["finding_rules"] = list(dict.fromkeys(rule for r in members for rule in r.get("finding_rules") or []))[:3]
        run["busy_pct"] = None if run["idle_pct"] is None else 100.0 - run["idle_pct"]
        run["is_truncated"] = any(r["is_truncated"] for r in members)
        out.append(run)
    return out


def run_history(con) -> pl.DataFrame:
    """A row per run with a wall-clock start: run (its first file), started (UTC), step_ms (median
    step; NULL without steps), idle_pct, workload (run_overview)."""
    return frame(con, """SELECT first_file AS run, make_timestamp(CAST(start_epoch_ns // 1000 AS BIGINT)) AS started,
                                median_step_ns / 1e6 AS step_ms, idle_pct, workload
                         FROM run_overview WHERE start_epoch_ns IS NOT NULL ORDER BY started, first_file""")
