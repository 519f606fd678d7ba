"""The diff page (`tracelake diff --format html`, issue #30 item 4) and the memory-peak cause.

The page is a sequence of section units (reports/diff_sections). It is read back as a reader sees
it (tests/page_reader.py) and compared with the JSON object of the same diff and with the CUDA-event
truth of the recording: the recorded pair base vs all (tests/recorded/record_diff.py: four planted
causes, diff_h100_truth.json). The memory cause is checked on the hand-built traces of
tests/test_memory.py, whose every allocation, and so every step's peak, is chosen there."""

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
TRUTH = json.loads((RECORDED / "diff_h100_truth.json").read_text())["torch"]
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


def truth_change_ns(key: str) -> float:
    return (TRUTH["all"][key + "_median"] - TRUTH["base"][key + "_median"]) * 1e6


def test_the_page_is_the_diff_sections(written):
    from tracelake.jobs.diff import PAGE_VIEWS
    from tracelake.reports.diff_sections import DIFF_SECTIONS, views

    page = read(written["page"].read_text())
    # the kinds the diff has causes of, in DIFF_SECTIONS order: no communication, no memory events
    assert page.sections == ["step_time", "causes", "kernels", "precision", "syncs_idle", "memcpy", "steady"]
    assert [s.NAME for s in DIFF_SECTIONS if s.NAME in page.sections] == page.sections
    assert tuple(views()) == PAGE_VIEWS  # what the command evaluates for the page


def test_the_step_time_is_the_json_and_the_events(written):
    r, page = written["json"], read(written["page"].read_text())
    assert int(page.metrics["change_ns"]) == r["step_time_ns"]["change_ns"]
    assert int(page.metrics["base_step_ns"]) == r["step_time_ns"]["base"]
    assert int(page.metrics["new_step_ns"]) == r["step_time_ns"]["new"]
    assert float(page.metrics["change_pct"]) == r["step_time_ns"]["change_pct"]
    assert page.metrics["verdict"] == "slower"
    stats = page.tables["step_time"][0]
    for label, key in (("median", "median_ns"), ("p90", "p90_ns"), ("interquartile range (spread)", "iqr_ns")):
        row = next(row for row in stats.rows if row[0].text == label)
        assert [int(c.value) for c in row[1:]] == [r["steps"]["base"][key], r["steps"]["new"][key],
                                                   r["steps"]["new"][key] - r["steps"]["base"][key]]
    # the events at the steps' boundaries, inside the recorded steps: within 10 %
    expected = truth_change_ns("step_ms")
    assert abs(int(page.metrics["change_ns"]) - expected) <= 0.10 * expected


def test_the_causes_section_is_the_json(written):
    r, page = written["json"], read(written["page"].read_text())
    assert int(page.metrics["explained_ns"]) == r["explained_ns"]
    assert int(page.metrics["unexplained_ns"]) == r["unexplained_ns"]
    causes = next(t for t in page.tables["causes"] if t.headers[:3] == ["#", "kind", "name"])
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


KIND_SECTIONS = {"kernels": ("kernel", "operator"), "precision": ("precision",),
                 "syncs_idle": ("data_loading", "sync", "host_sleep", "host_blocking", "host_idle", "idle"),
                 "memcpy": ("memcpy",)}


@pytest.mark.parametrize("section", KIND_SECTIONS)
def test_each_kind_section_is_its_causes(written, section):
    r, page = written["json"], read(written["page"].read_text())
    mine = [(i, c) for i, c in enumerate(r["causes"], 1) if c["kind"] in KIND_SECTIONS[section] and c["change_ns"]]
    table = page.tables[section][0]
    assert [int(c.text) for c in table.column("#")] == [i for i, _ in mine]
    assert [int(c.value) for c in table.column("change per step")] == [c["change_ns"] for _, c in mine]
    assert [int(c.value) for c in table.column("base")] == [c["evidence"]["base_ns_per_step"] for _, c in mine]
    assert [int(c.value) for c in table.column("new")] == [c["evidence"]["new_ns_per_step"] for _, c in mine]
    # the chart: a bar per cause and side, its table exactly those bars
    chart = page.figures[f"diff_{section}"]
    charted = mine[:12]
    assert [c.text for c in chart.column("name")] == [c["name"] for _, c in charted for _side in (0, 1)]
    assert [c.text for c in chart.column("side")] == ["base", "new"] * len(charted)
    assert [float(c.value) for c in chart.column("per step")] == pytest.approx(
        [c["evidence"][f"{side}_ns_per_step"] / 1e6 for _, c in charted for side in ("base", "new")])
    assert page.images[f"diff_{section}"] == 1


@pytest.mark.parametrize("section, name, key", [("precision", "aten::mm", "gemm_ms"),
                                                ("memcpy", "Memcpy HtoD", "copy_ms"),
                                                ("syncs_idle", "cudaStreamSynchronize", "drain_ms")])
def test_the_planted_causes_read_as_the_events(written, section, name, key):
    """Each planted cause, in its kind's section, costs about what the CUDA events measured (the
    GEMM: slower and fp32 at once; the host sync: the GPU's drain before the optimizer)."""
    table = read(written["page"].read_text()).tables[section][0]
    row = next(row for row in table.rows if row[2].text == name)
    assert int(row[3].value) == pytest.approx(truth_change_ns(key), rel=0.25)


def test_the_sides_steady_state(written):
    r, page = written["json"], read(written["page"].read_text())
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
    assert read(html).tables["causes"][-1].rows[0][2].text == odd


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
    # the page's memory section shows both peaks and the change
    page = read(diff_report(r, version=__version__))
    assert "memory" in page.sections
    row = page.tables["memory"][0].rows[0]
    assert [int(c.value) for c in row[1:]] == [*memory[0]["evidence"]["peak_allocated_bytes"],
                                              memory[0]["evidence"]["change_bytes"]]
    same = diff("steady", "steady", lake=lake)
    assert not [c for c in same["causes"] if c["kind"] == "memory"]


def test_the_kind_charts_are_valid_vega_lite(written):
    """The charts of the kind sections against Vega-Lite's schema (rendering skips the validation)."""
    from tracelake.reports.diff_page import DiffPage
    from tracelake.reports.diff_sections import kinds

    built = [s.build(DiffPage(written["json"])) for s in kinds.SECTIONS]
    assert sum(b is not None for b in built) == 4
    for b in built:
        if b is not None:
            b["figure"].chart.to_dict()  # raises on a spec the schema rejects
