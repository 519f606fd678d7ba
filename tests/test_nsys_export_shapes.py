"""Nsight exports of other shapes than nsys's full default export read as the full one does:
trimmed exports whose GPU tables have no globalPid column, and exports whose rows are not in
timestamp order (Nsight Systems 2025.6+ no longer promises it). The truth is the export's own
rows, read with sqlite3."""

from __future__ import annotations

import gzip
import sqlite3
from pathlib import Path

import pytest
from conftest import DATA, ingested

NSYS = DATA / "nsys-2025.3.1_cnn-train-pageable_h100.sqlite.gz"
GPU_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")


def _copy(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.write_bytes(gzip.decompress(NSYS.read_bytes()))
    return path


def _truth(path: Path) -> tuple[set[int], int, int]:
    """(processes of the GPU work, its rows, the union of its intervals in ns), by sqlite3 and Python."""
    con = sqlite3.connect(path)
    try:
        pids = {p for (p,) in con.execute(
            "SELECT DISTINCT (globalPid >> 24) & 16777215 FROM CUPTI_ACTIVITY_KIND_KERNEL")}
        spans = sorted(r for t in GPU_TABLES for r in con.execute(f'SELECT start, "end" FROM {t} WHERE start > 0'))
    finally:
        con.close()
    covered, reach = 0, None
    for start, end in spans:
        if reach is None or start > reach:
            covered, reach = covered + end - start, end
        elif end > reach:
            covered, reach = covered + end - reach, end
    return pids, len(spans), covered


@pytest.fixture(scope="module")
def shapes(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shapes")
    full = _copy(folder, "full.sqlite")
    trimmed = _copy(folder, "trimmed.sqlite")
    con = sqlite3.connect(trimmed)
    for table in GPU_TABLES:
        con.execute(f"ALTER TABLE {table} DROP COLUMN globalPid")
    con.commit()
    con.close()
    shuffled = _copy(folder, "shuffled.sqlite")
    con = sqlite3.connect(shuffled)
    for table in (*GPU_TABLES, "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"):
        con.execute(f"CREATE TEMP TABLE rows_of AS SELECT * FROM {table} ORDER BY random()")
        con.execute(f"DELETE FROM {table}")
        con.execute(f"INSERT INTO {table} SELECT * FROM rows_of")
        con.execute("DROP TABLE rows_of")
    con.commit()
    first = [r[0] for r in con.execute('SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 50')]
    con.close()
    assert first != sorted(first), "the copy's rows are not shuffled"
    with ingested(tmp_path_factory, "shapes", full, trimmed, shuffled) as db:
        ids = dict(db.execute("SELECT file_name, trace_id FROM traces").fetchall())
        yield db, ids, _truth(full)


def test_gpu_work_without_global_pid_keeps_its_process_and_is_counted_busy(shapes):
    db, ids, (pids, n, covered) = shapes
    trace = ids["trimmed.sqlite"]
    assert {p for (p,) in db.execute("SELECT DISTINCT pid FROM gpu_ops WHERE trace_id = ?", [trace]).fetchall()} \
        == pids
    assert db.execute("SELECT count(*) FROM gpu_ops WHERE trace_id = ? AND start_ns > 0", [trace]).fetchone()[0] == n
    assert db.execute("SELECT sum(busy_ns) FROM temporal_breakdown WHERE trace_id = ?", [trace]).fetchone()[0] \
        == covered
    (warnings,) = db.execute("SELECT warnings FROM traces WHERE trace_id = ?", [trace]).fetchone()
    assert any("no globalPid column" in w for w in warnings)


STEP_VIEWS = {
    "gpu_ops": "SELECT pid, name, start_ns, end_ns FROM gpu_ops",
    "temporal_breakdown": "SELECT pid, busy_ns, idle_ns, compute_ns FROM temporal_breakdown",
    "steps": "SELECT step, step_index, start_ns, end_ns, gpu_busy_ns, compute_ns FROM steps",
    "nvtx_ranges": "SELECT range, start_ns, end_ns, depth FROM nvtx_ranges",
    "kernel_launches": "SELECT * EXCLUDE (trace_id) FROM kernel_launches",
}


@pytest.mark.parametrize("view", STEP_VIEWS)
def test_rows_out_of_time_order_give_the_same_answers(shapes, view):
    db, ids, (_, n, covered) = shapes
    sql = STEP_VIEWS[view] + " WHERE trace_id = ? ORDER BY ALL"
    full = db.execute(sql, [ids["full.sqlite"]]).fetchall()
    assert full, f"{view} is empty: the comparison would prove nothing"
    assert db.execute(sql, [ids["shuffled.sqlite"]]).fetchall() == full
    assert db.execute("SELECT sum(busy_ns) FROM temporal_breakdown WHERE trace_id = ?",
                      [ids["shuffled.sqlite"]]).fetchone()[0] == covered
