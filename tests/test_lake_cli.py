"""The lake, its DuckDB database and the CLI on the bundled sample traces."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import DATA, REPO, SAMPLE_FILES
from tracelake.cli.main import main
from tracelake.lake import database, layout
from tracelake.lake.schema import EVENT_TABLES, TABLES
from tracelake.lake.scoped import ScopedDatabase, derived_served

TRACE_FILES = [p for p in SAMPLE_FILES if p.name.endswith((".gz", ".json", ".sqlite"))]


def _duckdb_cli() -> str:
    exe = Path(sys.executable).with_name("duckdb")
    found = str(exe) if exe.exists() else shutil.which("duckdb")
    assert found, "the duckdb CLI (pip install duckdb-cli, part of the dev extras) is missing"
    return found


def test_every_sample_trace_is_in_the_lake(sample_con):
    rows = sample_con.execute("SELECT file_name, source FROM traces ORDER BY 1").fetchall()
    assert [r[0] for r in rows] == sorted(p.name for p in TRACE_FILES)
    assert {r[1] for r in rows} == {"nsys", "pytorch"}


def test_parquet_files_match_the_schema(sample_lake):
    for name, table in TABLES.items():
        files = list((sample_lake / name).glob("trace_id=*/data.parquet"))
        assert len(files) == len(TRACE_FILES), name
        for f in files:
            assert pq.read_schema(f).remove_metadata() == table.arrow_schema, f


def test_event_counts_add_up(sample_con):
    declared = sample_con.execute("SELECT sum(event_count) FROM traces").fetchone()[0]
    counted = sum(sample_con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in EVENT_TABLES)
    assert declared == counted


def test_sql_command_formats(sample_lake, capsys):
    query = "SELECT source, count(*) AS n FROM traces GROUP BY 1 ORDER BY 1"
    assert main(["sql", "--lake", str(sample_lake), "--format", "csv", query]) == 0
    assert capsys.readouterr().out.splitlines() == ["source,n", "nsys,1", "pytorch,3"]
    assert main(["sql", "--lake", str(sample_lake), "--format", "json", query]) == 0
    assert json.loads(capsys.readouterr().out) == [{"source": "nsys", "n": 1}, {"source": "pytorch", "n": 3}]
    assert main(["sql", "--lake", str(sample_lake), query]) == 0
    assert capsys.readouterr().out.splitlines() == [  # as the DuckDB shell draws it, without the types
        "┌─────────┬───┐",
        "│ source  │ n │",
        "├─────────┼───┤",
        "│ nsys    │ 1 │",
        "│ pytorch │ 3 │",
        "└─────────┴───┘",
        "2 rows",
    ]


def test_exit_codes(sample_lake, tmp_path, capsys):
    assert main(["sql", "--lake", str(sample_lake), "SELECT * FROM no_such_table"]) == 2
    assert main(["sql", "--lake", str(tmp_path / "nowhere"), "SELECT 1"]) == 2
    with pytest.raises(SystemExit) as e:
        main(["ingest"])
    assert e.value.code == 2
    assert main(["ingest", str(tmp_path / "missing.json"), "--lake", str(tmp_path / "l")]) == 1
    assert "missing.json" in capsys.readouterr().err


def test_help_everywhere():
    from tracelake.cli.commands import COMMANDS

    for cmd in ([], *([c.NAME] for c in COMMANDS)):
        out = subprocess.run([sys.executable, "-m", "tracelake.cli.main", *cmd, "--help"], capture_output=True,
                             text=True, cwd=REPO)
        assert out.returncode == 0 and "usage: tracelake" in out.stdout, cmd
        assert f"Example: tracelake {cmd[0] if cmd else ''}" in out.stdout, cmd


def test_version_names_the_libraries(capsys):
    import duckdb
    import polars
    import pyarrow

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for part in ("tracelake ", f"duckdb {duckdb.__version__}", f"polars {polars.__version__}",
                 f"pyarrow {pyarrow.__version__}"):
        assert part in out, (part, out)


def test_moved_lake_is_relinked_and_the_duckdb_cli_reads_it_from_anywhere(sample_lake, tmp_path):
    moved = tmp_path / "elsewhere" / "lake"  # a copy: the session's lake is held open by other tests
    shutil.copytree(sample_lake, moved)
    con = database.connect(moved)  # tracelake notices the move and rebuilds the views
    try:
        n = con.execute("SELECT count(*) FROM traces").fetchone()[0]
        path = con.execute("SELECT lake_path FROM _lake_info").fetchone()[0]
    finally:
        con.close()
    assert n == len(TRACE_FILES) and path == str(moved.resolve())
    somewhere = tmp_path / "somewhere" / "else"
    somewhere.mkdir(parents=True)
    out = subprocess.run([_duckdb_cli(), str(moved / "tracelake.duckdb"), "-csv", "-c",
                          "SELECT (SELECT count(*) FROM traces) AS t, (SELECT count(*) FROM kernels) AS k"],
                         capture_output=True, text=True, cwd=somewhere)
    assert out.returncode == 0, out.stderr
    traces, kernels = map(int, out.stdout.split()[1].split(","))
    assert traces == len(TRACE_FILES) and kernels > 0


def test_reingest_replaces_and_crash_leftovers_are_removed(tmp_path, monkeypatch):
    lake = tmp_path / "lake"
    one = DATA / "torch-2.11_mlp-compiled-inference-fp16_h100.pt.trace.json.gz"
    assert main(["ingest", str(one), "--lake", str(lake), "-q"]) == 0
    assert main(["ingest", str(one), "--lake", str(lake), "-q"]) == 0
    con = database.connect(lake)
    assert con.execute("SELECT count(*) FROM traces").fetchone()[0] == 1
    clean = con.execute("SELECT count(*) FROM kernels").fetchone()[0]
    con.close()

    # A crash after some tables were renamed into place but before `traces`.
    calls = {"n": 0}
    real_replace = os.replace

    def crash_after_three(src, dst):
        calls["n"] += 1
        if calls["n"] > 3:
            raise KeyboardInterrupt
        real_replace(src, dst)

    other = DATA / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz"
    monkeypatch.setattr(layout.os, "replace", crash_after_three)
    assert main(["ingest", str(other), "--lake", str(lake), "-q"]) == 130  # Ctrl-C: one line, exit 130
    monkeypatch.setattr(layout.os, "replace", real_replace)
    assert len(list((lake / "devices").iterdir())) == 2  # the half-written trace is on disk ...
    removed = layout.remove_incomplete(lake)
    assert len(removed) == 1 and removed[0].startswith("torch-2.11_mnist")
    assert len(list((lake / "devices").iterdir())) == 1  # ... and gone before the next write
    assert not (lake / ".staging").exists()
    con = database.connect(lake)
    assert con.execute("SELECT count(*) FROM kernels").fetchone()[0] == clean
    con.close()


def test_scoped_database_answers_as_the_whole_lake_after_swapping_scopes(sample_lake, sample_con):
    """A ScopedDatabase reused for trace after trace (report workers do) gives each trace the same
    rows as the whole-lake database does: views evaluated over the scope's base tables, and all of
    them where the trace's derived rows are served (scoped.derived_served, as report tasks read a
    derived lake); it holds nothing after load([])."""
    queries = {
        "kernel_summary": "SELECT name, total_ns, instances FROM kernel_summary WHERE trace_id = ? ORDER BY name",
        "temporal_breakdown": "SELECT pid, round(compute_pct, 6), round(idle_pct, 6) FROM temporal_breakdown WHERE trace_id = ? "
                              "ORDER BY pid",
        "findings": "SELECT rule, count(*) FROM findings WHERE trace_id = ? GROUP BY rule ORDER BY rule",
        "steps": "SELECT step, wall_ns, gpu_idle_ns FROM steps WHERE trace_id = ? ORDER BY pid, step_index",
    }
    ids = [r[0] for r in sample_con.sql("SELECT trace_id FROM traces ORDER BY file_name").fetchall()]
    db = ScopedDatabase(sample_lake)
    try:
        for trace_id in ids[:2] + ids[:1]:  # an Nsight trace, a PyTorch one, the first again after it
            con = db.load([trace_id])
            assert con.sql("SELECT DISTINCT trace_id FROM kernels").fetchall() in ([(trace_id,)], [])
            for view in ("kernel_summary", "steps"):  # evaluated over the scope's base tables
                sql = queries[view]
                assert con.sql(sql, params=[trace_id]).fetchall() == sample_con.sql(sql, params=[trace_id]).fetchall(), view
            with derived_served(con, sample_lake, [trace_id]) as served:
                assert set(queries) <= set(served)
                for view, sql in queries.items():
                    assert con.sql(sql, params=[trace_id]).fetchall() == sample_con.sql(sql, params=[trace_id]).fetchall(), view
        assert db.load([]).sql("SELECT count(*) FROM kernels").fetchall() == [(0,)]
        assert any(sample_con.sql(queries["kernel_summary"], params=[t]).fetchall() for t in ids)
    finally:
        db.close()


def test_ingest_folder_skips_files_that_are_no_trace(tmp_path, capsys):
    """A results .json beside the traces (the recordings keep their truth so) is listed as skipped,
    not counted as a failure; named on the command line it is an error."""
    folder = tmp_path / "run"
    folder.mkdir()
    shutil.copy(DATA / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz", folder)
    (folder / "steps.json").write_text('[{"name": "ProfilerStep#1", "dur_us": 1.5}]')
    (folder / "flops.json").write_text('{"aten::mm": 123}')
    assert main(["ingest", str(folder), "--lake", str(tmp_path / "lake")]) == 0
    out = capsys.readouterr().out
    assert out.count("\nskip   ") + out.startswith("skip   ") == 2 and "1 ingested, 0 failed, 2 skipped" in out
    assert main(["ingest", str(folder / "steps.json"), "--lake", str(tmp_path / "lake")]) != 0
    assert "not a PyTorch trace" in capsys.readouterr().err


def test_a_command_line_ingest_ends_with_its_output_and_lake_whole(tmp_path):
    """`tracelake ingest` and `stats` from the command line end without Python's teardown
    (cli/main.py QUICK_EXIT): every line they wrote still arrives, even into a file or pipe, the
    exit code is the command's, and the lake's database answers afterwards."""
    trace = DATA / "torch-2.11_mlp-compiled-inference-fp16_h100.pt.trace.json.gz"
    lake = tmp_path / "lake"
    run = [sys.executable, "-m", "tracelake.cli.main"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # output buffered, as usual
    done = subprocess.run([*run, "ingest", str(trace), str(tmp_path / "missing.json"), "--lake", str(lake)],
                          capture_output=True, text=True, cwd=REPO, env=env)
    assert done.returncode == 1  # one file is missing
    assert done.stdout.startswith("ok ") and done.stdout.splitlines()[-1].startswith("1 ingested, 1 failed")
    assert "missing.json" in done.stderr
    con = database.connect(lake)
    try:
        [(kernels, names)] = con.sql("SELECT count(*), count(DISTINCT name) FROM kernels").fetchall()
    finally:
        con.close()
    assert kernels > names > 1
    stats = subprocess.run([*run, "stats", str(trace), "--report", "kernel_summary", "--format", "csv"],
                           capture_output=True, text=True, cwd=REPO, env=env)
    assert stats.returncode == 0 and len(stats.stdout.splitlines()) == 1 + names  # a header and a row per name
