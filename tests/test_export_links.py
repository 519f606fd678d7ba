"""`tracelake report --export` / `run --export`: each page's Perfetto export beside it, and the
page's findings and largest GPU gaps linking to it with their time in it. The time a page prints
is checked against the exported file itself (the event of that finding or gap at that time,
counted from the file's first timestamp, where Perfetto's UI counts from), for the PyTorch and
Nsight samples; the export's own content is tests/test_trace_export.py's."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import page_reader
import pytest
from tracelake.cli.main import main
from tracelake.jobs.report_job import write_reports
from tracelake.lake.database import connect

LINK = re.compile(r'<a href="([^"]+\.trace\.json\.gz)">at ([0-9.]+) s</a>')


@pytest.fixture(scope="module")
def exported_reports(sample_lake, tmp_path_factory) -> Path:
    """The sample lake's pages written with export=True; a page and export of a trace no longer in
    the lake were there before and must go."""
    out = tmp_path_factory.mktemp("exported") / "reports"
    (out / "traces").mkdir(parents=True)
    for name in ("gone.html", "gone.json", "gone.trace.json.gz"):
        (out / "traces" / name).write_text("old")
    con = connect(sample_lake)
    try:
        write_reports(con, out, export=True, jobs=1)
    finally:
        con.close()
    return out / "traces"


def _events(path: Path) -> list[dict]:
    return json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]


def test_each_page_has_its_export_beside_it_and_only_its_own(exported_reports):
    pages = sorted(exported_reports.glob("*.html"))
    assert len(pages) == 4 and not (exported_reports / "gone.trace.json.gz").exists()
    assert not (exported_reports / "gone.html").exists()
    for page in pages:
        hrefs = {m.group(1) for m in LINK.finditer(page.read_text())}
        assert hrefs == {page.stem + ".trace.json.gz"}, page
        assert (exported_reports / (page.stem + ".trace.json.gz")).is_file()


@pytest.mark.parametrize("prefix", ["torch-2.11_resnet50", "nsys-2025.3.1_cnn"])
def test_the_linked_times_are_where_the_findings_and_gaps_are_in_the_file(exported_reports, prefix):
    page = next(exported_reports.glob(prefix + "*.html"))
    events = _events(exported_reports / (page.stem + ".trace.json.gz"))
    timed = [e for e in events if "ts" in e]
    zero = min(e["ts"] for e in timed)  # Perfetto's UI counts time from the first timestamp
    assert [e["name"] for e in timed if e["ts"] == zero and e.get("cat") == "tracelake"] == ["trace start"]
    tables = page_reader.read(page.read_text()).tables

    def at(cell) -> float:  # 'at 0.042216 s' -> µs from the file's zero
        return float(cell.text.split()[1]) * 1e6

    findings = tables["findings"][0]
    assert findings.rows
    for rule, cell in zip(findings.column("rule"), findings.column("in Perfetto"), strict=True):
        if cell.text == "–":
            continue
        marks = [e["ts"] - zero for e in timed if e["name"] == f"finding: {rule.text}"]
        assert any(abs(t - at(cell)) <= 0.5 for t in marks), (rule.text, cell.text)  # printed to the µs
    gaps = next(t for t in tables["idle"] if "in Perfetto" in t.headers)
    assert gaps.rows
    for cause, cell in zip(gaps.column("cause"), gaps.column("in Perfetto"), strict=True):
        idle = [e["ts"] - zero for e in timed if e["name"] == f"GPU idle: {cause.text}"]
        assert any(abs(t - at(cell)) <= 0.5 for t in idle), (cause.text, cell.text)


def test_a_page_rendered_again_without_export_drops_its_link_and_file(exported_reports, sample_lake):
    page = next(exported_reports.glob("torch-2.11_mnist*.html"))
    con = connect(sample_lake)
    try:
        write_reports(con, exported_reports.parent, render_ids={page.stem}, jobs=1)
    finally:
        con.close()
    assert "Perfetto" not in page.read_text() and not LINK.search(page.read_text())
    assert not (exported_reports / (page.stem + ".trace.json.gz")).exists()
    others = [p for p in exported_reports.glob("*.html") if p != page]
    assert all((exported_reports / (p.stem + ".trace.json.gz")).exists() for p in others)  # not rendered again


def test_report_export_writes_the_file_beside_the_page(sample_lake, tmp_path):
    out = tmp_path / "mlp.html"
    assert main(["report", "--lake", str(sample_lake), "--trace", "torch-2.11_mlp", "-o", str(out), "--export"]) == 0
    exported = tmp_path / "mlp.trace.json.gz"
    assert {m.group(1) for m in LINK.finditer(out.read_text())} == {exported.name}
    assert any(e.get("cat") == "kernel" for e in _events(exported))
    plain = tmp_path / "plain.html"
    assert main(["report", "--lake", str(sample_lake), "--trace", "torch-2.11_mlp", "-o", str(plain)]) == 0
    assert "Perfetto" not in plain.read_text() and not LINK.search(plain.read_text())
    assert not (tmp_path / "plain.trace.json.gz").exists()
