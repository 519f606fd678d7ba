"""Concurrent writers (issue #32, class 1): the lake's writer lock (lake/lock.py), with real
`tracelake` processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from lake_processes import MNIST, SMALL, folder_with, row_counts, start, tracelake, wait_for_lock_holder


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lock")
    return folder_with(tmp, "a", SMALL), folder_with(tmp, "b", MNIST), tmp


@pytest.fixture(scope="module")
def union_lake(inputs):
    """The lake of one run over both folders: what any order of writers must end with."""
    a, b, tmp = inputs
    done = tracelake("run", a, b, "--out", tmp / "union", "--no-reports", "--jobs", "1", "-q")
    assert done.returncode == 0, done.stderr
    counts = row_counts(tmp / "union" / "lake")
    assert len({t for _, t in counts}) == 2 and len(counts) > 200  # 2 traces, base + derived tables
    return counts


def test_two_runs_at_once_serialize_and_equal_one_run_of_both(inputs, union_lake):
    a, b, tmp = inputs
    out = tmp / "together"
    runs = [start("run", d, "--out", out, "--no-reports", "--jobs", "1") for d in (a, b)]
    results = [(p.wait(timeout=600), *p.communicate()) for p in runs]
    assert [rc for rc, _, _ in results] == [0, 0], [err for _, _, err in results]
    waited = [err for _, _, err in results if "waiting " in err]
    assert len(waited) == 1, [err for _, _, err in results]  # the second one waited, saying for whom
    line = next(x for x in waited[0].splitlines() if x.startswith("waiting "))
    assert f"{out / 'lake'} is being written by pid " in line and "tracelake run" in line and " since " in line
    assert row_counts(out / "lake") == union_lake
    both = tracelake("sql", "--lake", out / "lake", "--format", "csv", "SELECT count(*) AS n FROM traces")
    assert both.stdout.splitlines() == ["n", "2"]


def test_a_killed_holder_does_not_block_and_no_wait_names_it(inputs, union_lake):
    a, b, tmp = inputs
    out = tmp / "killed"
    writer = start("run", b, "--out", out, "--no-reports", "--jobs", "1")
    info = wait_for_lock_holder(out / "lake", writer.pid)
    busy = tracelake("ingest", a, "--lake", out / "lake", "--no-wait")
    assert busy.returncode == 75
    assert busy.stderr.count("\n") == 1 and f"pid {writer.pid} on {info['host']}" in busy.stderr
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    again = tracelake("run", a, b, "--out", out, "--no-reports", "--jobs", "1", "--no-wait")
    assert again.returncode == 0, again.stderr
    assert row_counts(out / "lake") == union_lake
    assert not (out / "lake" / ".staging").exists()


def test_a_killed_lock_holder_of_any_kind_releases_it(tmp_path):
    """A process killed while holding only the lock (no tracelake work at all)."""
    lake = tmp_path / "lake"
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from tracelake.lake.lock import writer_lock\n"
                               f"with writer_lock({str(lake)!r}):\n    print('held', flush=True); time.sleep(600)"],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "held\n"
    assert tracelake("ingest", SMALL, "--lake", lake, "--no-wait").returncode == 75
    holder.kill()
    holder.wait()
    done = tracelake("ingest", SMALL, "--lake", lake, "--no-wait", "-q")
    assert done.returncode == 0, done.stderr


def test_a_waiter_names_a_holder_that_writes_who_it_is_late(tmp_path):
    """A holder takes the lock a few instructions before it writes who it is; a second writer
    arriving in between waited for that line instead of saying 'it has not said which yet' (seen
    in CI: the second of two runs started at once). Here the holder writes 300 ms late."""
    import fcntl
    import json
    import threading
    import time

    from tracelake.lake.lock import LOCK_FILE, LakeBusy, writer_lock

    lake = tmp_path / "lake"
    lake.mkdir()
    taken = threading.Event()

    def late_holder():
        with open(lake / LOCK_FILE, "a+", encoding="utf-8") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            taken.set()
            time.sleep(0.3)
            f.write(json.dumps({"pid": 4242, "host": "h", "since": time.time(), "command": "tracelake run x"}))
            f.flush()
            time.sleep(0.5)

    holder = threading.Thread(target=late_holder)
    holder.start()
    taken.wait()
    with pytest.raises(LakeBusy, match="written by pid 4242 on h"), writer_lock(lake, wait=False):
        pass
    holder.join()
    with writer_lock(lake, wait=False):  # free again once the holder's file is closed
        pass
