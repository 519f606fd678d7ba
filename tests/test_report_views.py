"""The views the report pages read (trace_summary, findings_by_rule, memset_kind_summary,
rank_summary) against the same numbers computed here from the base tables or the views they
summarize, with polars, on the sample lake."""

from __future__ import annotations

import polars as pl
import pytest


def _pl(con, sql: str) -> pl.DataFrame:
    return con.sql(sql).pl()


def test_trace_summary(sample_con):
    summary = {r["trace_id"]: r for r in _pl(sample_con, "SELECT * FROM trace_summary").to_dicts()}
    traces = _pl(sample_con, "SELECT trace_id, file_name FROM traces")
    assert sorted(summary) == sorted(traces["trace_id"])
    kernels = _pl(sample_con, "SELECT trace_id, device_id, name, duration_ns FROM kernels")
    devices = _pl(sample_con, "SELECT trace_id, device_id, name AS gpu FROM devices")
    breakdown = _pl(sample_con, "SELECT trace_id, idle_pct, compute_pct, memcpy_pct FROM temporal_breakdown")
    findings = _pl(sample_con, "SELECT trace_id FROM findings")
    steps = _pl(sample_con, """SELECT trace_id, pid, step_index, wall_ns, gpu_idle_ns FROM steps""")
    # the steady steps: each process's steps after its leading warm-up ones (steady_state.warmup_steps)
    warm = dict(((r[0], r[1]), r[2]) for r in sample_con.execute(
        "SELECT trace_id, pid, warmup_steps FROM steady_state WHERE steps > 0").fetchall())
    steps = steps.filter(pl.struct("trace_id", "pid", "step_index").map_elements(
        lambda r: r["step_index"] >= warm.get((r["trace_id"], r["pid"]), 0), return_dtype=pl.Boolean))
    checked = 0
    for trace_id, row in summary.items():
        mine = kernels.filter(pl.col("trace_id") == trace_id)
        if mine.height:
            totals = mine.group_by("name").agg(pl.col("duration_ns").sum()).sort("duration_ns", descending=True)
            assert row["top_kernel"] == totals["name"][0]
            gpus = mine.select("device_id").unique().join(devices.filter(pl.col("trace_id") == trace_id), on="device_id")
            assert row["gpu_names"] == sorted(set(gpus["gpu"]))
            checked += 1
        rows = breakdown.filter(pl.col("trace_id") == trace_id)
        for column in ("idle_pct", "compute_pct", "memcpy_pct"):
            assert row[column] == pytest.approx(rows[column].mean(), rel=1e-12)
        assert row["findings"] == findings.filter(pl.col("trace_id") == trace_id).height
        steady = steps.filter(pl.col("trace_id") == trace_id)
        assert row["median_step_ns"] == (steady["wall_ns"].median() if steady.height else None)
        assert row["steady_idle_pct"] == (pytest.approx(100 * steady["gpu_idle_ns"].sum() / steady["wall_ns"].sum())
                                          if steady.height else None)
    assert checked == len(summary)  # every sample trace has kernels


def test_findings_by_rule(sample_con):
    grouped = _pl(sample_con, "SELECT * FROM findings_by_rule")
    raw = _pl(sample_con, "SELECT trace_id, rule, severity, duration_ns, evidence FROM findings")
    assert grouped.height > 0 and grouped["occurrences"].sum() == raw.height
    expected = raw.group_by("trace_id", "rule", "severity").agg(pl.len().alias("occurrences"),
                                                                pl.col("duration_ns").sum().alias("total_ns"))
    got = grouped.select("trace_id", "rule", "severity", "occurrences", "total_ns")
    assert got.sort("trace_id", "rule").equals(expected.cast({"occurrences": pl.Int64}).sort("trace_id", "rule"))
    for row in grouped.to_dicts():  # the example is the evidence of the longest flagged operation
        mine = raw.filter((pl.col("trace_id") == row["trace_id"]) & (pl.col("rule") == row["rule"]))
        assert row["example"] in mine.filter(pl.col("duration_ns") == mine["duration_ns"].max())["evidence"].to_list()


def test_memset_kind_summary(sample_con):
    got = _pl(sample_con, "SELECT trace_id, mem_kind, count, total_bytes, total_ns FROM memset_kind_summary")
    raw = _pl(sample_con, "SELECT trace_id, mem_kind, bytes, duration_ns FROM memset")
    assert raw.height > 0
    expected = raw.group_by("trace_id", "mem_kind").agg(pl.len().cast(pl.Int64).alias("count"),
                                                        pl.col("bytes").sum().alias("total_bytes"),
                                                        pl.col("duration_ns").sum().alias("total_ns"))
    assert got.sort("trace_id", "mem_kind").equals(expected.sort("trace_id", "mem_kind"))


@pytest.mark.corpus
def test_rank_summary(corpus_con):
    """On the corpus (the sample lake has no multi-rank run): a row per rank_runs member, its
    breakdown, median step and collective waits as computed here from the views it joins."""
    members = _pl(corpus_con, "SELECT run_id, rank, trace_id, pid FROM rank_runs")
    got = _pl(corpus_con, "SELECT * FROM rank_summary")
    assert members.height >= 4
    assert got.select(members.columns).sort(members.columns).equals(members.sort(members.columns))
    spans = _pl(corpus_con, "SELECT trace_id, pid, span_ns AS span_b, idle_pct AS idle_b FROM temporal_breakdown")
    steps = _pl(corpus_con, "SELECT trace_id, pid, wall_ns FROM steps").group_by("trace_id", "pid").agg(
        pl.col("wall_ns").median().alias("step_b"))
    waits = _pl(corpus_con, "SELECT run_id, rank, wait_ns, is_last FROM collective_instance_ranks "
                            "WHERE matched_by <> 'single'").group_by("run_id", "rank").agg(
        pl.col("wait_ns").sum().alias("wait_b"), pl.col("is_last").sum().cast(pl.Int64).alias("last_b"))
    joined = (got.join(spans, on=["trace_id", "pid"], how="left").join(steps, on=["trace_id", "pid"], how="left")
              .join(waits, on=["run_id", "rank"], how="left"))
    for a, b in (("span_ns", "span_b"), ("idle_pct", "idle_b"), ("median_step_ns", "step_b"),
                 ("collective_wait_ns", "wait_b")):
        assert joined[a].equals(joined[b], check_dtypes=False, null_equal=True), a
    assert joined["arrived_last"].equals(joined["last_b"].fill_null(0), check_dtypes=False)
    assert joined["collective_wait_ns"].drop_nulls().len() > 0
