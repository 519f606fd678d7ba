"""The lake is plain hive-partitioned Parquet: engines that know nothing of tracelake read its base
tables and get the numbers tracelake's views give (docs/run.md, "The lake outgrows one machine").

pyarrow.dataset and polars stand in for a warehouse engine (Spark, Trino): both read the same
hive layout; Spark itself needs a JVM, too heavy for CI's 2 cores and the test's few seconds."""

from __future__ import annotations

import polars as pl
import pyarrow.compute as pc
import pyarrow.dataset as ds
from tracelake.lake import layout
from tracelake.lake.database import connect


def _kernel_totals_from_views(lake) -> dict[tuple[str, str], tuple[int, int]]:
    con = connect(lake)
    try:
        rows = con.execute("SELECT trace_id, name, total_ns, instances FROM kernel_summary").fetchall()
    finally:
        con.close()
    return {(t, n): (total, count) for t, n, total, count in rows}


def test_pyarrow_dataset_reads_the_kernels_as_kernel_summary_counts_them(sample_lake):
    assert not layout.manifest(sample_lake)["segments"], "a compacted lake is read through tracelake.duckdb"
    kernels = ds.dataset(sample_lake / "kernels", format="parquet", partitioning="hive").to_table(
        columns=["trace_id", "name", "duration_ns"])
    grouped = kernels.group_by(["trace_id", "name"]).aggregate([("duration_ns", "sum"), ("duration_ns", "count")])
    got = {(t, n): (s, c) for t, n, s, c in zip(*(grouped.column(k).to_pylist() for k in
                                                  ("trace_id", "name", "duration_ns_sum", "duration_ns_count")))}
    want = _kernel_totals_from_views(sample_lake)
    assert len(want) > 50 and got == want
    assert pc.count_distinct(kernels.column("trace_id")).as_py() == len(layout.complete_trace_ids(sample_lake))


def test_polars_reads_the_same_kernels(sample_lake):
    got = (pl.scan_parquet(sample_lake / "kernels" / "**" / "*.parquet", hive_partitioning=True)
           .group_by("trace_id", "name").agg(pl.col("duration_ns").sum(), pl.len()).collect())
    want = _kernel_totals_from_views(sample_lake)
    assert {(t, n): (s, c) for t, n, s, c in got.iter_rows()} == want
