"""Upgrades (issue #32, class 5): lakes written by earlier commits of main (tests/old_lakes/, made
by its make.sh) opened by this tracelake, in real processes: the same numbers as a lake this
version writes, or one line saying which traces to read again and how, and then the same numbers."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import pytest
from conftest import REPO
from lake_processes import SMALL, tracelake
from tracelake.lake.format_version import outdated

OLD = REPO / "tests" / "old_lakes"
# commit -> what this version finds in its lake
CASES = {
    "d2f70a7": None,  # the commit before "Lake: one package": the same format
    "18011df": "devices.max_blocks_per_sm",  # before per-SM device limits and gpu_metrics
    "d0e98eb": "cp_edges",  # before the critical path and the memory work (memory_events.event_id)
}
TRACE_ID = "torch-2.11_mlp-compiled-inference-fp16_h100-eb82c7ad27"  # SMALL's bytes, in every lake
QUERY = ("SELECT (SELECT count(*) FROM traces) AS traces, (SELECT sum(total_ns) FROM kernel_summary) AS kernel_ns, "
         "(SELECT count(*) FROM memory_events) AS memory_events, (SELECT count(*) FROM step_phases) AS steps, "
         "(SELECT count(*) FROM findings) AS findings, (SELECT count(*) FROM memory_timeline) AS memory_timeline")


def _answer(lake):
    r = tracelake("sql", "--lake", lake, "--format", "csv", QUERY)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    return r.stdout.splitlines(), [line for line in r.stderr.splitlines() if line]


@pytest.fixture(scope="module")
def today(tmp_path_factory):
    lake = tmp_path_factory.mktemp("today") / "lake"
    assert tracelake("ingest", SMALL, "--lake", lake, "-q").returncode == 0
    answer, said = _answer(lake)
    assert not said and answer[1].startswith("1,")
    return answer


def _unpack(commit: str, where: Path) -> Path:
    with tarfile.open(OLD / f"{commit}.tar.gz") as tar:
        tar.extractall(where, filter="data")
    return where / "lake"


@pytest.mark.parametrize("commit", list(CASES))
def test_a_lake_of_an_earlier_commit(commit, today, tmp_path):
    lake = _unpack(commit, tmp_path)
    assert not (lake / "lake.json").exists()  # written before lakes recorded their version
    answer, said = _answer(lake)
    lacks = CASES[commit]
    if lacks is None:
        assert said == [] and answer == today
    else:
        assert len(said) == 1 and said[0].startswith(f"warning  {lake}: 1 trace written by an earlier tracelake"), said
        lacking = outdated(lake)
        assert list(lacking) == [TRACE_ID]
        assert commit != "d0e98eb" or "memory_events.event_id" in lacking[TRACE_ID]
        assert lacks in said[0] and f"tracelake ingest /tmp/tracelake-old-lake-fixture/{commit}/{SMALL.name}" in said[0]
        src = Path(f"/tmp/tracelake-old-lake-fixture/{commit}")  # where the lake says the file is
        src.mkdir(parents=True, exist_ok=True)
        shutil.copy(SMALL, src / SMALL.name)
        try:
            r = tracelake("run", src, "--out", lake.parent, "--no-reports", "--jobs", "1", "--json")
        finally:
            shutil.rmtree(src)
        assert r.returncode == 0, r.stderr
        assert [f["status"] for f in json.loads(r.stdout)["files"]] == ["ok"]  # read again, though unchanged
        assert _answer(lake) == (today, [])
    info = json.loads((lake / "lake.json").read_text())  # every writer records it (sql rebuilt the database)
    assert info["format"] == 1 and info["schema"] and info["tracelake_version"]


def test_a_lake_of_a_newer_format_is_refused_in_one_line(today, tmp_path):
    lake = _unpack("d2f70a7", tmp_path)
    (lake / "lake.json").write_text(json.dumps({"format": 99, "tracelake_version": "9.0"}))
    for cmd in (["sql", "--lake", lake, "SELECT 1"], ["ingest", SMALL, "--lake", lake]):
        r = tracelake(*cmd)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert "written by tracelake 9.0 (lake format 99)" in r.stderr and "upgrade tracelake" in r.stderr
