"""The index page (reports/templates/index.html.j2): a row per run, dated by the trace's own
clock, the runs that got slower or faster than the previous run of their workload, the chart of
step time and idle across runs, and the inputs that failed with their reasons.

Three runs of one workload are made from the sample MNIST trace: day 0 as recorded; day 1 with
every interval stretched by 1.25 (slower); day 2 as recorded again (faster than day 1).
"""

from __future__ import annotations

import gzip
import json
import re

import pytest
from conftest import DATA
from tracelake.analysis.diff_noise import INCONCLUSIVE
from tracelake.cli.main import main
from tracelake.jobs.derive_job import ensure_derived
from tracelake.jobs.report_job import write_diff_pages
from tracelake.lake.database import connect
from tracelake.reports.data import index_rows, run_rows
from tracelake.reports.render import index_report

DAY_NS = 86_400 * 10**9


# three runs of the MNIST trace a day apart, the second with every time 25 % longer
DATED_RUNS = (("day0", 0, 1.0), ("day1", 1, 1.25), ("day2", 2, 1.0))


def _copy(src, dst, day: int, stretch: float) -> None:
    doc = json.loads(gzip.decompress(src.read_bytes()))
    t0 = min(e["ts"] for e in doc["traceEvents"] if "ts" in e)
    for e in doc["traceEvents"]:
        if "ts" in e:
            e["ts"] = t0 + (e["ts"] - t0) * stretch
        if "dur" in e:
            e["dur"] = e["dur"] * stretch
    doc["baseTimeNanoseconds"] += day * DAY_NS
    dst.write_bytes(gzip.compress(json.dumps(doc).encode()))


@pytest.fixture(scope="module")
def history_con(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("history")
    src = DATA / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz"
    for name, day, stretch in DATED_RUNS:
        _copy(src, tmp / f"{name}.pt.trace.json.gz", day, stretch)
    assert main(["ingest", str(tmp), "--lake", str(tmp / "lake"), "-q"]) == 0
    ensure_derived(tmp / "lake", None, jobs=2)  # as `tracelake report` does before an index page
    con = connect(tmp / "lake")
    yield con
    con.close()


def test_runs_are_dated_and_compared(history_con):
    runs = run_rows(history_con, index_rows(history_con))
    assert [r["first_file"] for r in runs] == ["day0.pt.trace.json.gz", "day1.pt.trace.json.gz",
                                               "day2.pt.trace.json.gz"]
    starts = [r["start_epoch_ns"] for r in runs]
    assert starts[1] - starts[0] == pytest.approx(DAY_NS, abs=10**9)
    changes = [r["change_pct"] for r in runs]
    assert changes[0] is None  # the first run of the workload
    assert changes[1] == pytest.approx(25, abs=1)  # median step stretched by 1.25
    assert changes[2] == pytest.approx(-20, abs=1)  # back: 1 / 1.25
    assert [r["previous_file"] for r in runs[1:]] == ["day0.pt.trace.json.gz", "day1.pt.trace.json.gz"]


def test_index_page_for_a_team_lead(history_con, tmp_path):
    rows = index_rows(history_con)
    links = {r["trace_id"]: f"traces/{r['trace_id']}.html" for r in rows}
    failures = [{"path": "/data/run9/<rank0>.pt.trace.json", "error": "/data/run9/<rank0>.pt.trace.json: "
                 "truncated JSON at byte 1024"}]
    pages = write_diff_pages(history_con, tmp_path)
    diffs = {run: {"link": f"diffs/{page.name}", "verdict": verdict} for run, (page, verdict) in pages.items()}
    html = index_report(history_con, links, failures, rows, version="test", diffs=diffs)
    assert "<script" not in html and "http://" not in html and "https://" not in html
    changed = html.split("Changed since the previous run")[1].split("<h2>")[0]
    assert re.search(r"day1\.pt\.trace\.json\.gz</td><td>\d{4}-\d\d-\d\d \d\d:\d\d</td><td>day0", changed)
    assert "+25." in changed and "-20." in changed
    # why each is paired with the day before: the same program on the same GPU
    assert changed.count("program names differ (day1, day0), same GPU (H100 80GB HBM3), 100 % of operators and "
                         "ranges shared") == 1
    # the MNIST trace has 3 steady steps: even 3 steps all 25 % slower than 3 others cannot be
    # told from noise (the exact rank test's smallest p is 2/20 = 0.1), so no run got slower;
    # the index says what each diff page says
    assert "got slower" not in html and "got faster" not in html
    assert "2 changed over too few steps to tell" in html
    for page, verdict in pages.values():
        assert f'data-value="{verdict}"' in page.read_text() and verdict == INCONCLUSIVE
    assert changed.count(f'<td data-metric="verdict">{INCONCLUSIVE}</td>') == 2
    assert html.count('src="data:image/svg+xml;base64,') == 1  # step time and idle across runs
    assert "truncated JSON at byte 1024" in html and "&lt;rank0&gt;" in html and "<rank0>" not in html
    assert sorted(re.findall(r'href="([^"]+)"', html)) == sorted([*links.values(), *(d["link"] for d in diffs.values())])
    # told a diff's verdict, the index lists the run as that diff says
    day1 = next(run for run in pages if run.startswith("day1"))
    html = index_report(history_con, links, failures, rows, version="test",
                        diffs={**diffs, day1: {**diffs[day1], "verdict": "slower"}})
    assert "1 got slower" in html and "1 changed over too few steps to tell" in html


def test_an_index_with_every_page_failed_lists_the_failures(history_con):
    """No page written (a full disk, every trace broken): the index still renders, with the failures.
    history used to be computed inside the loop over runs, so it was unbound when there were none."""
    failures = [{"path": "/data/a.json", "error": "/data/a.json: no space left on device"}]
    html = index_report(history_con, {}, failures, [], version="test")
    assert "no space left on device" in html and "<script" not in html
