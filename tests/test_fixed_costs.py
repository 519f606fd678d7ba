"""Fixed per-file costs (issue #16): the database is kept when nothing in it changed, a new lake's
database is copied from a cached catalog template and equals one built from scratch, a query
process loads no ingester, a stats process of an Nsight export no PyTorch decoder, and the
calling context places calls among ranges as the sweep did."""

from __future__ import annotations

import random
import re
import subprocess
import sys

import duckdb
import polars as pl
from conftest import DATA
from tracelake.analysis import callctx_build
from tracelake.ingest.nesting import parent_and_depth
from tracelake.jobs.ingest_job import ingest_paths
from tracelake.lake import database


def _views(db) -> list[tuple]:
    """(name, SQL) of every view; DuckDB prints an EXCLUDE list in no fixed order, so it is sorted."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT view_name, sql FROM duckdb_views() WHERE NOT internal ORDER BY 1").fetchall()
    finally:
        con.close()
    return [(name, re.sub(r"EXCLUDE \(([^)]*)\)", lambda m: "EXCLUDE (" + ", ".join(sorted(m[1].split(", "))) + ")", sql))
            for name, sql in rows]


def test_database_is_kept_when_a_trace_adds_nothing_new_to_it(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACELAKE_CACHE", str(tmp_path / "cache"))
    lake = tmp_path / "lake"
    ingest_paths([str(DATA / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz")], lake)
    before = (lake / database.DB_FILE).stat()
    ingest_paths([str(DATA / "torch-2.11_mlp-compiled-inference-fp16_h100.pt.trace.json.gz")], lake)
    after = (lake / database.DB_FILE).stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    con = database.connect(lake)
    try:  # and the kept database sees the new trace (its views read a glob of the partitions)
        assert con.execute("SELECT count(DISTINCT trace_id) FROM kernels").fetchone()[0] == 2
    finally:
        con.close()


def test_database_from_the_template_equals_one_built_from_scratch(tmp_path, monkeypatch):
    lake = tmp_path / "lake"
    ingest_paths([str(DATA / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz")], lake)
    (tmp_path / "not_a_folder").write_text("")
    monkeypatch.setenv("TRACELAKE_CACHE", str(tmp_path / "not_a_folder"))  # cannot be written: built in place
    scratch = _views(database.build_database(lake))
    monkeypatch.setenv("TRACELAKE_CACHE", str(tmp_path / "cache"))
    database.build_database(lake)  # writes the template
    assert list((tmp_path / "cache").glob("catalog-*.duckdb"))
    assert _views(database.build_database(lake)) == scratch  # copied from it
    assert len(scratch) > 50


def test_a_query_process_loads_no_ingester(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACELAKE_CACHE", str(tmp_path / "cache"))
    lake = tmp_path / "lake"
    ingest_paths([str(DATA / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz")], lake)
    code = ("import sys\nimport tracelake.cli.commands\nfrom tracelake.lake.database import connect\n"
            f"con = connect({str(lake)!r})\ncon.sql('SELECT count(*) FROM kernel_summary').fetchall()\n"
            "print(sorted(m for m in ('pyarrow', 'polars', 'tracelake.ingest.kineto.tables', 'tracelake.lake.schema',"
            " 'tracelake.reports.charts') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"



def test_stats_of_an_nsight_export_loads_only_what_it_reads():
    """`tracelake stats` of an Nsight export: no PyTorch decoder, no Parquet writer, not the ADBC
    DB-API module (its pyarrow.dataset import pulls in pandas where that is installed), no
    numpy.ma (a polars Series made from a NumPy array imports it)."""
    code = ("import io, sys, contextlib\nfrom tracelake.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main(['stats', {str(DATA / 'nsys-2025.3.1_cnn-train-pageable_h100.sqlite.gz')!r}, '--report', "
            "'cuda_gpu_kern_sum,nvtx_sum,gpu_gaps', '--format', 'csv'])\n"
            "print(sorted(m for m in ('tracelake.ingest.kineto.tables', 'msgspec', 'pyarrow.parquet', 'pyarrow.dataset',"
            " 'adbc_driver_manager.dbapi', 'numpy.ma', 'tracelake.analysis.callctx_build') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"

def _reference_paths(ranges: pl.DataFrame, calls: pl.DataFrame) -> dict[int, list]:
    """The former placement: calls join the ranges' sweep as marks."""
    lane = list(zip(ranges["pid"].to_list() + calls["pid"].to_list(), ranges["tid"].to_list() + calls["tid"].to_list()))
    n = ranges.height
    parents, _ = parent_and_depth(lane, ranges["start_ns"].to_list() + calls["start_ns"].to_list(),
                                  ranges["end_ns"].to_list() + [None] * calls.height, list(range(n + calls.height)))
    labels = list(zip(ranges["label"].to_list(), ranges["kind"].to_list()))

    def path(i):
        out = []
        while i is not None:
            out.append(labels[i])
            i = parents[i]
        return out[::-1]

    return {c: path(parents[n + c]) for c in range(calls.height)}


def test_calls_are_placed_among_ranges_as_the_sweep_places_them():
    rng = random.Random(16)
    for _ in range(200):
        rows = []
        for _ in range(rng.randint(0, 25)):  # nested, overlapping, touching, zero-length, identical ranges
            start = rng.randint(0, 40)
            rows.append((rng.randint(1, 2), rng.randint(1, 2), start, start + rng.choice([0, 1, 3, 10, 30])))
        ranges = pl.DataFrame(rows, schema={"pid": pl.Int64, "tid": pl.Int64, "start_ns": pl.Int64, "end_ns": pl.Int64},
                              orient="row").with_row_index("label").with_columns(
            pl.col("label").cast(pl.String), pl.lit("op").alias("kind"))
        calls = pl.DataFrame([(rng.randint(1, 2), rng.randint(1, 3), rng.randint(0, 45)) for _ in range(20)],
                             schema={"pid": pl.Int64, "tid": pl.Int64, "start_ns": pl.Int64}, orient="row")
        assert callctx_build._enclosing_paths(ranges, calls) == _reference_paths(ranges, calls), (rows, calls.rows())
