"""`tracelake stats`: the sample Nsight export's kernel table equals NVIDIA's cuda_gpu_kern_sum
(tests/data/oracles, `nsys stats` output), asked for by NVIDIA's name; the default reports; a
bad input among good ones; the formats."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest
from conftest import DATA, REPO
from tracelake.cli import stats
from tracelake.cli.main import main

NSYS = DATA / "nsys-2025.3.1_cnn-train-pageable_h100.sqlite.gz"
MNIST = DATA / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz"
ORACLE = DATA / "oracles" / "nsys-2025.3.1_cnn-train-pageable_h100" / "cuda_gpu_kern_sum.csv"


def test_kernel_totals_equal_nsys_stats(capsys):
    assert main(["stats", str(NSYS), "--report", "cuda_gpu_kern_sum", "--format", "csv"]) == 0
    ours = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    nvidia = list(csv.DictReader(ORACLE.open(encoding="utf-8")))
    assert len(ours) == len(nvidia) > 20
    assert {r["name"]: (int(r["total_ns"]), int(r["instances"])) for r in ours} == \
        {r["Name"]: (int(r["Total Time (ns)"]), int(r["Instances"])) for r in nvidia}
    # the same order as NVIDIA's: by total time, longest first
    assert [int(r["total_ns"]) for r in ours] == [int(r["Total Time (ns)"]) for r in nvidia]


def test_default_reports_and_a_bad_input(tmp_path, capsys):
    bad = tmp_path / "broken.pt.trace.json"
    bad.write_text('{"traceEvents": [')
    assert main(["stats", str(NSYS), str(bad), "--lake", str(tmp_path / "lake")]) == 1
    out, err = capsys.readouterr()
    assert "broken.pt.trace.json" in err and len(err.strip().splitlines()) == 1
    for title in ("(summary)", "(kernel_summary, cuda_gpu_kern_sum)", "(memcpy_kind_summary)", "(idle_breakdown)",
                  "(findings)"):
        assert title in out, title
    # NVIDIA's top kernel total of this export, right-aligned in the box
    assert "│  6112303 │" in out and "host_wait" in out and "pageable_copy_in_step" in out
    assert (tmp_path / "lake" / "tracelake.duckdb").exists()  # --lake keeps the lake


def test_json_and_unknown_report(capsys):
    assert main(["stats", str(MNIST), "--report", "kernel_summary,idle_breakdown", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data) == ["kernel_summary", "idle_breakdown"]
    assert data["kernel_summary"] and all(r["file"] == MNIST.name for r in data["kernel_summary"])
    assert main(["stats", str(MNIST), "--report", "cuda_gpu_kern_sum,no_such_report"]) == 2
    assert "--report no_such_report: no such report" in capsys.readouterr().err


def _same_rows(a: str, b: str) -> bool:
    """The same CSV rows; numbers equal to 1e-9 relative (float sums may differ in the last bits
    with the order DuckDB adds them in)."""
    def cell(v: str):
        try:
            return float(v)
        except ValueError:
            return v
    rows_a, rows_b = (list(csv.reader(io.StringIO(t))) for t in (a, b))
    return len(rows_a) == len(rows_b) and all(
        len(ra) == len(rb) and all(cell(x) == pytest.approx(cell(y), rel=1e-9) if isinstance(cell(y), float)
                                   else x == y for x, y in zip(ra, rb))
        for ra, rb in zip(rows_a, rows_b))


def test_a_throwaway_lake_prints_what_a_kept_lake_prints(tmp_path, capsys):
    """Without --lake the views are evaluated directly on the files' rows (no database, no
    derived tables, only the tables the reports read: catalog.reads); with --lake they come from
    the lake's database. The same rows in the same order, for every named report, over two files
    of both sources."""
    reports = ["summary,kernel_summary,memcpy_kind_summary,idle_breakdown,findings",
               "cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum,cuda_api_sum,nvtx_sum,gpu_gaps,gpu_time_util",
               ",".join(set(stats.REPORTS) | set(stats.ALIASES)),
               "callctx_icicle,critical_path,memory_summary,cp_nodes"]  # the ingest builders' tables
    for report in reports:
        args = ["stats", str(NSYS), str(MNIST), "--report", report, "--format", "csv"]
        assert main(args) == 0
        throwaway = capsys.readouterr().out
        assert main([*args, "--lake", str(tmp_path / "lake")]) == 0
        kept = capsys.readouterr().out
        assert throwaway.count("\n") > 50 and _same_rows(throwaway, kept)


def _table_rows(text: str) -> list[list[str]]:
    """The cells of a box table's body rows (after the header line)."""
    lines = [line for line in text.splitlines() if line.startswith("│")]
    return [[c.strip() for c in line.strip("│").split("│")] for line in lines[1:]]


def test_piped_stats_keep_full_names_and_show_percentages_as_nsys_does():
    """A real process whose stdout is a pipe: every kernel name whole, equal to NVIDIA's; time_pct
    shown as a percentage, equal to NVIDIA's Time (%) (rounded to one decimal as nsys prints it)."""
    done = subprocess.run([sys.executable, "-m", "tracelake.cli.main", "stats", str(NSYS), "--report",
                           "cuda_gpu_kern_sum"], capture_output=True, text=True, cwd=REPO, check=True)
    header, *_ = (line for line in done.stdout.splitlines() if "time_pct" in line)
    assert [c.strip() for c in header.strip("│").split("│")][0] == "time_pct"
    rows = _table_rows(done.stdout)
    nvidia = list(csv.DictReader(ORACLE.open(encoding="utf-8")))
    assert [r[-1] for r in rows] == [r["Name"] for r in nvidia]  # same names, whole, in NVIDIA's order
    assert max(len(r[-1]) for r in rows) > 200 and not any("…" in r[-1] for r in rows)
    for ours, theirs in zip(rows, nvidia):
        assert ours[0].endswith(" %")
        if float(theirs["Time (%)"]) >= 0.1:
            assert ours[0] == f"{theirs['Time (%)']} %", (ours, theirs)
        else:  # NVIDIA prints 0.0; a share too small for one decimal keeps two digits
            assert float(ours[0][:-2]) == pytest.approx(float(theirs["Time (%)"]), abs=0.05)


def test_timeunit_converts_and_renames_the_duration_columns(capsys):
    assert main(["stats", str(NSYS), "--report", "cuda_gpu_kern_sum", "--format", "csv", "--timeunit", "usec"]) == 0
    ours = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    nvidia = list(csv.DictReader(ORACLE.open(encoding="utf-8")))
    assert list(ours[0]) == ["time_pct", "total_us", "instances", "avg_us", "med_us", "min_us", "max_us",
                             "stddev_us", "name"]
    for r, n in zip(ours, nvidia):
        assert float(r["total_us"]) == pytest.approx(int(n["Total Time (ns)"]) / 1e3, rel=1e-12)
        assert float(r["max_us"]) == pytest.approx(int(n["Max (ns)"]) / 1e3, rel=1e-12)
    assert main(["stats", str(NSYS), "--report", "summary", "--timeunit", "sec"]) == 0
    out = capsys.readouterr().out
    assert "span_s" in out and "median_step_s" in out and "_ns" not in out
    with pytest.raises(SystemExit) as exit_code:
        main(["stats", str(NSYS), "--timeunit", "fortnight"])
    assert exit_code.value.code == 2


@pytest.mark.corpus
def test_headline_numbers_of_a_run_are_one_table_a_row_per_rank(corpus, capsys):
    """DLRM's 8 rank files: one headline table of 8 rows (not 8 tables), each row its file and
    rank, with the kernel count the file's own JSON holds (counted with the standard library)."""
    from independent_counts import count_tables

    folder = corpus / "traces" / "pytorch" / "dlrm_8rank_v100"
    files = sorted(folder.glob("*.json.gz"))
    assert main(["stats", str(folder), "--report", "summary"]) == 0
    out = capsys.readouterr().out
    assert out.count("** Headline numbers (summary)") == 1
    header = next(line for line in out.splitlines() if "span_ns" in line)
    columns = [c.strip() for c in header.strip("│").split("│")]
    rows = [dict(zip(columns, r)) for r in _table_rows(out)]
    assert [r["file"] for r in rows] == [f.name for f in files] and len(rows) == 8
    for row, f in zip(rows, files):
        assert row["rank"] == f.name.split("_")[0].removeprefix("worker")
        assert int(row["kernels"]) == count_tables(f)["kernels"]
        assert row["gpu_idle_pct"].endswith(" %")


def test_a_reader_that_stops_early_gets_no_error_line():
    """`tracelake stats ... | head`: the reader goes away while stats still writes; the process ends
    quietly (141, as a tool SIGPIPE ended), where it printed "error  Broken pipe" before."""
    proc = subprocess.Popen([sys.executable, "-m", "tracelake.cli.main", "stats", str(NSYS), str(MNIST)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline() == b"\n"  # the first table's blank line: the next ones are not written yet
    proc.stdout.close()
    assert proc.stderr.read() == b"" and proc.wait() == 141


def test_csv_writes_list_and_struct_values_as_json(sample_lake, capsys):
    """CSV holds no nested values: a list column (trace_summary.gpu_names, run_overview.trace_ids)
    is written as its JSON text, by `sql` and by `stats`, rather than failing."""
    assert main(["sql", "--lake", str(sample_lake), "--format", "csv",
                 "SELECT run_id, trace_ids, {'n': 1, 'ids': trace_ids} AS s FROM run_overview ORDER BY run_id"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) >= 3 and all(json.loads(r["trace_ids"]) and json.loads(r["s"])["n"] == 1 for r in rows)
    assert any(r["run_id"] in json.loads(r["trace_ids"]) for r in rows)
    assert main(["stats", str(MNIST), "--report", "trace_summary", "--format", "csv"]) == 0
    (row,) = csv.DictReader(io.StringIO(capsys.readouterr().out))
    assert json.loads(row["gpu_names"]) == ["NVIDIA H100 80GB HBM3"]


def test_a_file_cut_short_says_what_ingest_says_and_fails(tmp_path, capsys):
    data = MNIST.read_bytes()
    cut = tmp_path / "cut.pt.trace.json.gz"
    cut.write_bytes(data[: len(data) // 2])
    assert main(["ingest", str(cut), "--lake", str(tmp_path / "lake")]) == 0
    said_by_ingest = [line.split("warning: ", 1)[1] for line in capsys.readouterr().out.splitlines()
                      if "warning: " in line]
    assert any("cut short" in w for w in said_by_ingest)
    assert main(["stats", str(cut), "--report", "kernel_summary"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [f"error  {cut}: {w}" for w in said_by_ingest]
