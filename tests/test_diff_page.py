"""The diff page (`tracelake diff --format html`, issue #30 item 4) and the memory-peak cause.

The page is read back as a reader sees it (tests/page_reader.py) and compared with the JSON object
of the same diff: the recorded pair base vs all (tests/recorded/record_diff.py: four planted
causes). The memory cause is checked on the hand-built traces of tests/test_memory.py, whose every
allocation, and so every step's peak, is chosen there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from browser import chromium, open_checked
from conftest import REPO
from page_reader import read
from test_memory import ACTIVATION, BASE, EXTRA, LEAK, _training_trace
from tracelake.cli.main import main
from tracelake.jobs.diff import diff
from tracelake.lake.version import __version__
from tracelake.reports.render import diff_report
from tracelake.reports.theme import short

RECORDED = REPO / "tests" / "recorded"
BASE_FILE = RECORDED / "torch-2.11_diff-base_h100.pt.trace.json.gz"
NEW_FILE = RECORDED / "torch-2.11_diff-all_h100.pt.trace.json.gz"


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("diffpage") / "lake"
    assert main(["ingest", str(BASE_FILE), str(NEW_FILE), "--lake", str(where), "-q"]) == 0
    return where


@pytest.fixture(scope="module")
def written(lake, tmp_path_factory) -> dict:
    """The page, its .eml and the JSON of the same diff, written by the command."""
    out = tmp_path_factory.mktemp("diffpage-out")
    page, eml, js = out / "diff.html", out / "diff.eml", out / "diff.json"
    args = ["diff", "torch-2.11_diff-base", "torch-2.11_diff-all", "--lake", str(lake)]
    assert main([*args, "--format", "html", "-o", str(page), "--eml", str(eml)]) == 0
    assert main([*args, "--format", "json", "-o", str(js)]) == 0
    return {"page": page, "eml": eml, "json": json.loads(js.read_text())}


def test_the_page_shows_the_causes_the_json_has(written):
    r, page = written["json"], read(written["page"].read_text())
    assert page.sections == ["headline", "causes", "steady"]
    assert int(page.metrics["change_ns"]) == r["step_time_ns"]["change_ns"]
    assert int(page.metrics["base_step_ns"]) == r["step_time_ns"]["base"]
    assert int(page.metrics["explained_ns"]) == r["explained_ns"]
    assert int(page.metrics["unexplained_ns"]) == r["unexplained_ns"]
    assert page.metrics["verdict"] == "slower"
    causes = next(t for t in page.tables["causes"] if t.headers[:2] == ["kind", "name"])
    assert [c.text for c in causes.column("kind")] == [c["kind"] for c in r["causes"]]
    assert [c.text for c in causes.column("name")] == [short(c["name"], 120) for c in r["causes"]]
    assert [int(c.value) for c in causes.column("change per step")] == [c["change_ns"] for c in r["causes"]]
    # the chart draws the largest timed causes, its table exactly those
    chart = page.figures["diff_causes"]
    timed = [c for c in r["causes"] if c["change_ns"]][:15]
    assert [c.text for c in chart.column("kind")] == [c["kind"] for c in timed]
    assert [float(c.value) for c in chart.column("change per step")] == pytest.approx(
        [c["change_ns"] / 1e6 for c in timed])
    assert page.images["diff_causes"] == 1
    # the sides' steady state: one column each, the median step as the headline's
    steady = page.tables["steady"][0]
    assert steady.headers == ["", "base", "new"]
    median = next(row for row in steady.rows if row[0].text == "median step")
    assert [round(float(c.value)) for c in median[1:]] == [r["step_time_ns"]["base"], r["step_time_ns"]["new"]]


def test_the_page_is_mailable(written):
    import email
    import email.policy

    msg = email.message_from_bytes(written["eml"].read_bytes(), policy=email.policy.SMTP)
    assert msg["Subject"].startswith("tracelake diff: ")
    kinds = [p.get_content_type() for p in msg.walk()]
    assert "text/plain" in kinds and "text/html" in kinds and "image/png" in kinds
    assert "data:image" not in msg.get_body(("html",)).get_content()


def test_odd_names_are_escaped(lake):
    r = diff("torch-2.11_diff-base", "torch-2.11_diff-all", lake=lake, summaries=True)
    odd = '<script>alert("x")</script>&<b>'
    r["base"] = odd
    r["causes"][0]["name"] = odd
    r["summary"]["base"][0]["main_idle_cause"] = odd
    html = diff_report(r, version=__version__)
    assert "<script>" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(" in html
    assert read(html).tables["causes"][-1].rows[0][1].text == odd


def test_no_html_without_an_output_file(lake, capsys):
    assert main(["diff", "torch-2.11_diff-base", "torch-2.11_diff-all", "--lake", str(lake), "--format", "html"]) == 2
    assert "needs -o" in capsys.readouterr().err


def test_the_index_links_the_run_to_run_diff(lake, tmp_path):
    out = tmp_path / "all.html"
    assert main(["report", "--lake", str(lake), "-o", str(out)]) == 0
    index = out.read_text()
    pages = sorted((tmp_path / "all_files" / "diffs").glob("*.html"))
    assert [p.name for p in pages] == ["torch-2.11_diff-all_h100-" + pages[0].name.split("-")[-1]]
    assert f'href="all_files/diffs/{pages[0].name}"' in index
    page = read(pages[0].read_text())
    expected = diff("torch-2.11_diff-base", "torch-2.11_diff-all", lake=lake)
    assert int(page.metrics["change_ns"]) == expected["step_time_ns"]["change_ns"]


def test_diff_page_in_headless_chromium(written, tmp_path):
    """At 1000 px (a mail client's width): no console errors, no request but the page, nothing
    wider than the page."""
    with chromium() as browser:
        open_checked(browser, written["page"]).close()


def test_memory_cause_is_the_steady_steps_peak(tmp_path):
    """The leaking variant keeps LEAK bytes every step: its step i peaks at BASE - EXTRA + i x LEAK
    + ACTIVATION (the construction of tests/test_memory.py), the steady variant at BASE - EXTRA +
    ACTIVATION. The memory cause takes no step time and carries both peaks."""
    for name, leak in (("leaky", True), ("steady", False)):
        (tmp_path / f"{name}.json").write_text(json.dumps(_training_trace(leak)))
    lake = tmp_path / "lake"
    assert main(["ingest", str(tmp_path / "leaky.json"), str(tmp_path / "steady.json"), "--lake", str(lake), "-q"]) == 0
    from tracelake.lake.database import connect

    con = connect(lake)
    try:
        steady = dict(con.execute("""SELECT t.file_name, list(s.step_index) FROM steady_steps s
                                     JOIN traces t USING (trace_id) GROUP BY ALL""").fetchall())
    finally:
        con.close()

    def peak(i: int, leak: bool) -> int:  # what is allocated at step i's activation
        return BASE + (i * LEAK if leak else 0) - (EXTRA if i else 0) + ACTIVATION

    r = diff("steady", "leaky", lake=lake)
    memory = [c for c in r["causes"] if c["kind"] == "memory"]
    assert len(memory) == 1 and memory[0]["change_ns"] == 0
    assert memory[0]["evidence"]["peak_allocated_bytes"] == [max(peak(i, False) for i in steady["steady.json"]),
                                                            max(peak(i, True) for i in steady["leaky.json"])]
    assert r["causes"][-1] is memory[0]  # after the causes that took time
    same = diff("steady", "steady", lake=lake)
    assert not [c for c in same["causes"] if c["kind"] == "memory"]
