"""Read-only lakes (issue #32, class 4): a lake on a read-only mount (as root, which ignores file
permissions) or without write permission (chmod -R a-w otherwise), current or moved, answers
`sql`, `report -o` elsewhere, `stats --lake` of a file it holds and tracelake.open with the numbers of the writable lake; commands
that write say so in one line. Real `tracelake` processes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
from lake_processes import MNIST, SMALL, tracelake

QUERY = ("SELECT (SELECT count(*) FROM traces) AS traces, (SELECT sum(total_ns) FROM kernel_summary) AS kernel_ns, "
         "(SELECT count(*) FROM step_phases) AS steps, (SELECT count(*) FROM findings) AS findings")


def _answer(lake) -> list[str]:
    r = tracelake("sql", "--lake", lake, "--format", "csv", QUERY)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    return r.stdout.splitlines()


def _api(lake) -> str:
    r = subprocess.run([sys.executable, "-c", f"import sys, tracelake\nwith tracelake.open(sys.argv[1]) as c: "
                        f"print(c.execute({QUERY!r}).fetchone())", str(lake)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip().splitlines()[-1]  # after the progress bar DuckDB draws on a slow query


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    lake = tmp_path_factory.mktemp("ro") / "lake"
    assert tracelake("ingest", SMALL, "--lake", lake, "-q").returncode == 0
    answer = _answer(lake)
    assert answer[1].startswith("1,") and int(answer[1].split(",")[2]) > 0  # a trace with steps
    return lake, answer, _api(lake), _stats(lake)


def _stats(lake) -> str:
    r = tracelake("stats", "--lake", lake, SMALL, "--format", "csv")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    # floats to 9 digits: DuckDB's parallel sums may differ in the last bits from run to run
    return re.sub(r"\d+\.\d+(e[-+]?\d+)?", lambda m: f"{float(m.group()):.9g}", r.stdout)


def _read_only(lake):
    """Make `lake` read-only in place; returns how to undo it."""
    if os.geteuid() != 0:
        subprocess.run(["chmod", "-R", "a-w", str(lake)], check=True)
        return lambda: subprocess.run(["chmod", "-R", "u+w", str(lake)], check=True)
    for cmd in (["mount", "--bind", str(lake), str(lake)], ["mount", "-o", "remount,ro,bind", str(lake)]):
        if subprocess.run(cmd, capture_output=True).returncode != 0:
            pytest.skip("running as root, which ignores permissions, and a read-only bind mount is not permitted")
    return lambda: subprocess.run(["umount", str(lake)], check=True)


@pytest.mark.parametrize("moved", [False, True], ids=["in place", "moved"])
def test_a_read_only_lake_answers_and_writers_say_why_not(written, tmp_path, moved):
    lake, answer, api, stats = written
    if moved:  # its database names the old place: readers need another one, without writing
        lake = shutil.copytree(lake, tmp_path / "copy" / "lake", symlinks=True)
    before = sorted(str(p.relative_to(lake)) for p in lake.rglob("*"))
    undo = _read_only(lake)
    try:
        assert _answer(lake) == answer
        assert _api(lake) == api
        assert _stats(lake) == stats  # a file the lake holds unchanged: read from it, nothing written
        if moved:
            page = tmp_path / "page.html"
            r = tracelake("report", "--lake", lake, "--trace", "torch", "-o", page)
            assert r.returncode == 0 and page.stat().st_size > 10_000, r.stderr
        for writer in (["ingest", SMALL, "--lake", lake], ["compact", "--lake", lake], ["relink", "--lake", lake],
                       ["stats", "--lake", lake, MNIST], ["run", SMALL, "--out", lake.parent]):
            r = tracelake(*writer)
            assert r.returncode == 2 and r.stderr.count("\n") == 1, (writer, r.stderr)
            assert r.stderr.startswith(f"error  {lake}: ") and "this command writes the lake" in r.stderr, r.stderr
    finally:
        undo()
    assert sorted(str(p.relative_to(lake)) for p in lake.rglob("*")) == before
