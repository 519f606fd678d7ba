"""Readers during writes (issue #32, class 2): `tracelake sql`, the Python API and the duckdb CLI
query a lake in a loop, each in its own process, while `tracelake run` adds traces to it: every
query sees a trace whole (its kernels) with its materialized views (its steps), or not at all."""

from __future__ import annotations

import subprocess
import sys
import time

from conftest import DATA
from lake_processes import MNIST, SMALL, TRACELAKE, folder_with, start, tracelake

NSYS = DATA / "nsys-2025.3.1_cnn-train-pageable_h100.sqlite.gz"
DUCKDB = str(__import__("pathlib").Path(sys.executable).with_name("duckdb"))
# per trace: its kernels (a base table) and whether it has steps (a materialized view)
QUERY = ("SELECT k.trace_id || ':' || k.n || ':' || (s.trace_id IS NOT NULL) AS r FROM "
         "(SELECT trace_id, count(*) AS n FROM kernels GROUP BY 1) k "
         "LEFT JOIN (SELECT DISTINCT trace_id FROM step_phases) s USING (trace_id) ORDER BY 1")
API_LOOP = f"""
import sys, time, tracelake
while True:
    try:
        with tracelake.open(sys.argv[1]) as con:
            rows = con.execute({QUERY!r}).fetchall()
        print("ok " + " ".join(r[0] for r in rows), flush=True)
    except Exception as e:
        print("error " + type(e).__name__ + ": " + str(e).splitlines()[0], flush=True)
    time.sleep(0.2)
"""


def _state(line: str) -> dict[str, tuple[int, bool]]:
    out = {}
    for item in line.split():
        trace, n, steps = item.rsplit(":", 2)
        out[trace] = (int(n), steps == "true")
    return out


def test_queries_during_a_run_see_whole_traces_and_no_errors(tmp_path):
    out = tmp_path / "out"
    lake = out / "lake"
    first = tracelake("run", folder_with(tmp_path, "a", SMALL), "--out", out, "--no-reports", "--jobs", "1", "-q")
    assert first.returncode == 0, first.stderr
    api = subprocess.Popen([sys.executable, "-c", API_LOOP, str(lake)], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    writer = start("run", folder_with(tmp_path, "b", MNIST, NSYS), "--out", out, "--no-reports", "--jobs", "1")
    seen: dict[str, list[str]] = {"sql": [], "duckdb": []}
    while writer.poll() is None:
        for name, cmd in [("sql", [TRACELAKE, "sql", "--lake", str(lake), "--format", "csv", QUERY]),
                          ("duckdb", [DUCKDB, "-readonly", "-csv", str(lake / "tracelake.duckdb"), "-c", QUERY])]:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            seen[name].append(f"ok {' '.join(r.stdout.split()[1:])}" if r.returncode == 0 and not r.stderr
                              else f"error {r.stderr.strip()}")
        time.sleep(0.1)
    assert writer.wait() == 0, writer.stderr.read()
    time.sleep(1)
    api.kill()
    seen["api"] = api.communicate()[0].splitlines()
    final = tracelake("sql", "--lake", lake, "--format", "csv", QUERY)
    after = _state(" ".join(final.stdout.split()[1:]))
    assert len(after) == 3 and all(steps for _, steps in after.values())
    for name, results in seen.items():
        assert results and not [r for r in results if not r.startswith("ok ")], (name, results)
        states = [_state(r.removeprefix("ok ")) for r in results]
        for state in states:  # each trace's kernels all there or not at all, and its derived rows with them
            assert all(after[t][0] == n for t, (n, _) in state.items()), (name, state, after)
            assert all(steps for _, steps in state.values()), (name, state)
        assert len(states[0]) >= 1 and len(states[-1]) >= len(states[0]), name
    assert sum(len(s) for s in seen.values()) >= 6


def test_a_plain_duckdb_cli_holding_the_database_blocks_no_tracelake_reader_or_writer(tmp_path):
    lake = tmp_path / "lake"
    assert tracelake("ingest", SMALL, "--lake", lake, "-q").returncode == 0
    holder = subprocess.Popen([DUCKDB, str(lake / "tracelake.duckdb")], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        holder.stdin.write("SELECT 'held';\n")
        holder.stdin.flush()
        assert "held" in holder.stdout.readline() + holder.stdout.readline() + holder.stdout.readline()
        blocked = subprocess.run([DUCKDB, "-readonly", str(lake / "tracelake.duckdb"), "-c", "SELECT 1"],
                                 capture_output=True, text=True)
        assert blocked.returncode != 0 and "lock" in blocked.stderr  # DuckDB's own rule: one writer or readers
        q = "SELECT count(*) AS n FROM traces"
        assert tracelake("sql", "--lake", lake, "--format", "csv", q).stdout.split() == ["n", "1"]
        api = subprocess.run([sys.executable, "-c", "import sys, tracelake\nwith tracelake.open(sys.argv[1]) as c: "
                              f"print(c.execute({q!r}).fetchone()[0])", str(lake)], capture_output=True, text=True)
        assert api.stdout.split() == ["1"], api.stderr
        more = tracelake("ingest", MNIST, "--lake", lake, "-q")
        assert more.returncode == 0 and not more.stderr, more.stderr
        assert tracelake("sql", "--lake", lake, "--format", "csv", q).stdout.split() == ["n", "2"]
    finally:
        holder.kill()
        holder.wait()


def test_a_held_trace_is_invisible_until_it_is_published_with_its_derived_tables(tmp_path):
    """The order that test above relies on, step by step: `run` holds each ingested trace (written,
    not published); derivation writes its derived tables beside it and then publishes both."""
    from tracelake.jobs.ingest_job import ingest_one
    from tracelake.lake import derive, layout, materialize

    out = tmp_path / "out"
    assert tracelake("run", folder_with(tmp_path, "a", SMALL), "--out", out, "--no-reports", "--jobs", "1",
                     "-q").returncode == 0
    lake = out / "lake"
    held = ingest_one(str(MNIST), lake, hold=True)
    assert held.status == "ok" and set(layout.held_traces(lake)) == {held.trace_id}
    assert held.trace_id not in layout.complete_trace_ids(lake)
    seen = tracelake("sql", "--lake", lake, "--format", "csv", "SELECT count(*) AS n FROM traces")
    assert seen.stdout.split() == ["n", "1"], seen.stderr
    tasks = derive.plan(lake, held=True)
    assert [held.trace_id in targets for _, targets in tasks] == [True]
    assert derive.derive_here(lake, tasks) == []
    assert layout.held_traces(lake) == {} and held.trace_id in layout.complete_trace_ids(lake)
    views = materialize.view_fingerprints()
    assert all(held.trace_id in layout.derived_trace_ids(lake, v, fp) for v, fp in views.items()), views
    assert tracelake("sql", "--lake", lake, "--format", "csv", "SELECT count(*) AS n FROM traces").stdout.split() == ["n", "2"]
