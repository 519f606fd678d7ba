"""The batch job: incremental re-runs, skipped non-traces, failures, kill -9 safety, JSON summary."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from conftest import DATA, REPO
from tracelake.cli.main import main
from tracelake.lake.database import connect

MNIST = DATA / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz"
MLP = DATA / "torch-2.11_mlp-compiled-inference-fp16_h100.pt.trace.json.gz"
RESNET = DATA / "torch-2.11_resnet50-train-fp32-pageable_h100.pt.trace.json.gz"
NSYS = DATA / "nsys-2025.3.1_cnn-train-pageable_h100.sqlite.gz"


def _run_json(args, capsys) -> tuple[int, dict]:
    code = main(["run", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def _statuses(summary) -> dict[str, str]:
    return {Path(f["path"]).name: f["status"] for f in summary["files"]}


def _lake_state(lake: Path) -> dict:
    con = connect(lake)
    try:
        ids = sorted(r[0] for r in con.execute("SELECT trace_id FROM traces").fetchall())
        counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                  for t in ("kernels", "api_calls", "cpu_ops", "callctx_nodes", "annotations")}
    finally:
        con.close()
    return {"ids": ids, "counts": counts}


def test_incremental_runs(tmp_path, capsys):
    src = tmp_path / "traces" / "job1"
    src.mkdir(parents=True)
    for f in (MNIST, MLP, RESNET):
        shutil.copy(f, src / f.name)
    out = tmp_path / "out"
    code, first = _run_json([str(tmp_path / "traces"), "--out", str(out), "--jobs", "2", "--no-reports"], capsys)
    assert code == 0 and set(_statuses(first).values()) == {"ok"}
    stages = first["stage_seconds"]  # where the run's time went: every stage, within the whole
    assert list(stages) == ["ingest", "derive", "database"] and min(stages.values()) > 0
    assert sum(stages.values()) <= first["seconds"] + 0.005

    code, again = _run_json([str(tmp_path / "traces"), "--out", str(out), "--no-reports"], capsys)
    assert code == 0 and set(_statuses(again).values()) == {"unchanged"}

    shutil.copy(NSYS, src / MLP.name)  # the file changes content (a different trace)
    (src / RESNET.name).unlink()
    code, third = _run_json([str(tmp_path / "traces"), "--out", str(out), "--prune", "--no-reports"], capsys)
    statuses = _statuses(third)
    assert statuses[MLP.name] == "ok" and statuses[MNIST.name] == "unchanged" and statuses[RESNET.name] == "removed"
    state = _lake_state(out / "lake")
    assert len(state["ids"]) == 2 and not any(i.startswith("torch-2.11_resnet50") for i in state["ids"])
    sources = {r[0] for r in connect(out / "lake").execute("SELECT source FROM traces").fetchall()}
    assert sources == {"pytorch", "nsys"}  # the changed file's old trace is gone, its new one is in


def test_an_unchanged_rerun_writes_no_report_and_a_change_writes_them(tmp_path, capsys):
    src = tmp_path / "traces"
    src.mkdir()
    shutil.copy(MLP, src / MLP.name)
    out = tmp_path / "out"
    assert _run_json([str(src), "--out", str(out)], capsys)[0] == 0
    index = out / "reports" / "index.html"
    written = index.stat().st_mtime_ns
    code, again = _run_json([str(src), "--out", str(out)], capsys)
    assert code == 0 and set(_statuses(again).values()) == {"unchanged"}
    assert index.stat().st_mtime_ns == written  # current: not written again
    page = out / "reports" / "traces" / f"{again['files'][0]['trace_id']}.html"
    page.unlink()  # a page gone: the reports are written again
    assert _run_json([str(src), "--out", str(out)], capsys)[0] == 0
    assert page.exists() and index.stat().st_mtime_ns != written
    written = index.stat().st_mtime_ns
    shutil.copy(MNIST, src / MNIST.name)  # a new file
    assert _run_json([str(src), "--out", str(out)], capsys)[0] == 0
    assert index.stat().st_mtime_ns != written and len(list((out / "reports" / "traces").glob("*.html"))) == 2


def test_identical_files_are_one_trace_and_the_copies_its_aliases(tmp_path, capsys):
    src = tmp_path / "traces"
    for folder in ("a", "b"):
        (src / folder).mkdir(parents=True)
        shutil.copy(MNIST, src / folder / MNIST.name)  # the same name and bytes in two folders
    shutil.copy(MNIST, src / "a" / "renamed.pt.trace.json.gz")  # the same bytes under another name
    shutil.copy(MLP, src / "a" / MLP.name)
    out = tmp_path / "out"
    args = [str(src), "--out", str(out), "--no-reports"]
    code, first = _run_json(args, capsys)
    by_path = {Path(f["path"]).relative_to(src).as_posix(): f for f in first["files"]}
    assert code == 0 and sorted(f["status"] for f in by_path.values()) == ["alias", "alias", "ok", "ok"]
    copies = [f"a/{MNIST.name}", f"b/{MNIST.name}", "a/renamed.pt.trace.json.gz"]
    (read,) = [p for p in copies if by_path[p]["status"] == "ok"]  # the first the run finds
    assert {by_path[p]["trace_id"] for p in copies} == {by_path[read]["trace_id"]}
    con = connect(out / "lake")
    paths = sorted(p for (p,) in con.execute("SELECT path FROM traces").fetchall())
    con.close()
    assert paths == sorted([str(src / read), str(src / "a" / MLP.name)])

    code, again = _run_json(args, capsys)  # nothing changed: nothing is read, the paths stay
    assert code == 0 and set(_statuses(again).values()) == {"unchanged"}
    assert {Path(f["path"]).relative_to(src).as_posix(): f["trace_id"] for f in again["files"]} == \
        {p: f["trace_id"] for p, f in by_path.items()}

    # copies change: one becomes the MLP's bytes (an alias of its trace), one new bytes (read); the
    # trace they were copies of stays
    changed = [p for p in copies if p != read]
    shutil.copy(MLP, src / changed[0])
    shutil.copy(RESNET, src / changed[1])
    code, third = _run_json(args, capsys)
    third_by_path = {Path(f["path"]).relative_to(src).as_posix(): f for f in third["files"]}
    assert (third_by_path[changed[0]]["status"], third_by_path[changed[0]]["trace_id"]) == \
        ("alias", by_path[f"a/{MLP.name}"]["trace_id"])
    assert third_by_path[changed[1]]["status"] == "ok"
    ids = _lake_state(out / "lake")["ids"]
    assert len(ids) == 3 and by_path[read]["trace_id"] in ids


def test_non_traces_are_skipped_and_bad_traces_fail_and_the_reports_list_them(tmp_path, capsys):
    src = tmp_path / "in"
    src.mkdir()
    shutil.copy(MLP, src / MLP.name)
    (src / "config.json").write_text('{"lr": 0.1, "batch": 32}')
    con = sqlite3.connect(src / "notes.sqlite")
    con.execute("CREATE TABLE notes (text)")
    con.commit()
    con.close()
    code, summary = _run_json([str(src), "--out", str(tmp_path / "out")], capsys)
    statuses = _statuses(summary)
    assert code == 0 and statuses == {MLP.name: "ok", "config.json": "skipped", "notes.sqlite": "skipped"}
    assert list(summary["stage_seconds"]) == ["ingest", "derive", "database", "reports"]
    assert sum(summary["stage_seconds"].values()) <= summary["seconds"] + 0.005
    (src / "cut.json.gz").write_bytes(MLP.read_bytes()[:200])
    code, summary = _run_json([str(src), "--out", str(tmp_path / "out")], capsys)
    failed = [f for f in summary["files"] if f["status"] == "error"]
    assert code == 1 and len(failed) == 1 and "cut.json.gz" in failed[0]["error"]
    index = (tmp_path / "out" / "reports" / "index.html").read_text()
    assert "1 run from 1 trace file" in index and "1 input failed" in index and "cut.json.gz" in index
    assert len(list((tmp_path / "out" / "reports" / "traces").glob("*.html"))) == 1


def test_kill_dash_nine_then_rerun_equals_a_clean_run(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    for i in range(6):  # distinct contents: a trace per file
        for f in (MNIST, RESNET, NSYS):
            shutil.copy(f, src / f"{i}-{f.name}")
        with open(src / f"{i}-{MNIST.name}", "ab") as fh:
            fh.write(b"\0" * (i + 1))  # trailing bytes after the gzip stream: same events, new hash
    cmd = [sys.executable, "-m", "tracelake.cli.main", "run", str(src), "--jobs", "2", "-q", "--no-reports"]
    proc = subprocess.Popen(cmd + ["--out", str(tmp_path / "killed")], cwd=REPO, start_new_session=True)
    time.sleep(2.5)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert subprocess.run(cmd + ["--out", str(tmp_path / "killed")], cwd=REPO).returncode == 0
    assert subprocess.run(cmd + ["--out", str(tmp_path / "clean")], cwd=REPO).returncode == 0
    assert _lake_state(tmp_path / "killed" / "lake") == _lake_state(tmp_path / "clean" / "lake")
    assert not (tmp_path / "killed" / "lake" / ".staging").exists()


def test_dask_executor_on_a_local_cluster(tmp_path, capsys):
    from distributed import LocalCluster

    src = tmp_path / "in"
    src.mkdir()
    for f in (MNIST, MLP, NSYS):
        shutil.copy(f, src / f.name)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        code, summary = _run_json([str(src), "--out", str(tmp_path / "dask"), "--executor", "dask",
                                   "--scheduler", cluster.scheduler_address, "--no-reports"], capsys)
    assert code == 0 and set(_statuses(summary).values()) == {"ok"}
    code, _ = _run_json([str(src), "--out", str(tmp_path / "local"), "--no-reports"], capsys)
    assert _lake_state(tmp_path / "dask" / "lake") == _lake_state(tmp_path / "local" / "lake")


def _timed_lines(proc) -> list[tuple[float, str]]:
    """The process's stderr lines with the time each arrived."""
    return [(time.perf_counter(), line.rstrip("\n")) for line in proc.stderr]


def test_progress_names_each_stage_and_the_summary_times_the_whole_run(tmp_path):
    """Not a terminal: a line as each stage starts (ingest, derive, reports), then the summary,
    whose time covers the reports too: it is at least the time between the first line and itself."""
    src = tmp_path / "in"
    src.mkdir()
    for f in (MNIST, MLP):
        shutil.copy(f, src / f.name)
    proc = subprocess.Popen([sys.executable, "-m", "tracelake.cli.main", "run", str(src), "--out",
                             str(tmp_path / "out"), "--jobs", "2"], cwd=REPO, stderr=subprocess.PIPE, text=True)
    lines = _timed_lines(proc)
    assert proc.wait() == 0
    texts = [text for _, text in lines]
    stages = [t for t in texts if t.split(":")[0] in ("ingest", "derive", "reports")]
    assert stages[:3] == ["ingest: 2 files to read", "derive: the views of 2 traces", "reports: 2 pages"], texts
    (t_summary, summary), = [(t, text) for t, text in lines if text.startswith("2 ok in ")]
    assert texts.index(summary) > texts.index("reports: 2 pages")
    seconds = float(summary.split(" in ")[1].split(" s;")[0])
    assert seconds >= t_summary - lines[0][0] - 0.05, (seconds, t_summary - lines[0][0])


def test_progress_on_a_terminal_counts_pages_with_the_time_left(tmp_path):
    import pty

    src = tmp_path / "in"
    src.mkdir()
    for f in (MNIST, MLP):
        shutil.copy(f, src / f.name)
    main_fd, sub_fd = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "tracelake.cli.main", "run", str(src), "--out",
                             str(tmp_path / "out"), "--jobs", "2"], cwd=REPO, stderr=sub_fd, stdout=subprocess.DEVNULL)
    os.close(sub_fd)
    seen = b""
    while True:
        try:
            chunk = os.read(main_fd, 4096)
        except OSError:  # the terminal's other side closed: the process ended
            break
        if not chunk:
            break
        seen += chunk
    os.close(main_fd)
    assert proc.wait() == 0
    shown = [part.replace("\x1b[K", "") for part in seen.decode().replace("\r\n", "\n").split("\r")]
    assert any(s.startswith("reports: 1/2 pages, about ") for s in shown) and "reports: 2/2 pages" in shown, shown
    assert any(s.startswith("2 ok in ") for s in shown), shown


def test_progress_lines_keep_status_and_path_apart():
    import io

    from tracelake.cli.progress import Progress
    from tracelake.jobs.ingest_job import FileOutcome

    stream = io.StringIO()
    progress = Progress(stream=stream)
    progress.update(FileOutcome("/t/notes.json", "skipped", error="/t/notes.json: not a trace"), 1, 3)
    progress.update(FileOutcome("/t/b/x.json", "alias", "x-0123456789"), 2, 3)
    progress.update(FileOutcome("/t/a/x.json", "unchanged", "x-0123456789"), 3, 3)
    assert stream.getvalue().splitlines() == [
        "skip   /t/notes.json: not a trace",
        "alias  /t/b/x.json = x-0123456789 (the same bytes: not read again)",
        "unchanged /t/a/x.json",
    ]
