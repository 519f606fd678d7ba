"""HTML reports: self-contained (no JavaScript, no network), sections present, trace strings escaped."""

from __future__ import annotations

import json
import logging
import re
import shutil
from pathlib import Path

import pytest
from browser import chromium, open_checked
from tracelake.cli.main import main
from tracelake.jobs.report_job import write_reports
from tracelake.lake.database import connect


@pytest.fixture(scope="module")
def sample_reports(sample_lake, tmp_path_factory) -> Path:
    """The sample lake's index and pages, rendered once for the tests that read them, by
    `tracelake report` (every trace: the report job's process pool): all.html, all_files/traces/."""
    out = tmp_path_factory.mktemp("reports") / "all.html"
    assert main(["report", "--lake", str(sample_lake), "-o", str(out)]) == 0
    return out


def _pages(index: Path) -> list[Path]:
    return sorted((index.parent / f"{index.stem}_files" / "traces").glob("*.html"))


def test_reports_for_the_sample_lake(sample_reports):
    index = sample_reports
    pages = _pages(index)
    assert len(pages) == 4
    for page in [index, *pages]:
        html = page.read_text()
        assert "<script" not in html.lower()
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", html), "no network resources"
        assert page.stat().st_size < 2_000_000
    resnet = next(p for p in pages if "resnet50" in p.name).read_text()
    # the sample ResNet-50 trace has record_shapes: a roofline too, and chains of memory-bound kernels to fuse
    charts = ("utilization", "time_breakdown", "top_kernels", "memcpy", "idle_gaps", "step_time", "timeline",
              "critical_path", "calling_context", "memory", "roofline", "fusion")
    for section in ("summary", "findings", "utilization", "time_breakdown", "steps", "critical_path", "top_kernels",
                    "operators", "fusion", "memcpy", "idle", "memory", "calling_context", "api"):
        assert f'data-section="{section}"' in resnet, section
    for chart in charts:
        assert f'<figure data-chart="{chart}">' in resnet, chart
    assert "<h3>Largest idle gaps</h3>" in resnet and "<h3>Idle gaps by length</h3>" in resnet
    assert resnet.count('src="data:image/svg+xml;base64,') == len(charts)
    assert "Pageable -&gt; Device" in resnet or "pageable -&gt; device" in resnet  # copies by memory kind
    assert "pageable_copy_in_step" in resnet  # the finding the trace was recorded to show
    assert 'href="all_files/traces/' in index.read_text()


def test_chart_specs_are_valid_vega_lite(sample_con, monkeypatch, caplog):
    """Pages render charts without Altair's schema validation (for speed): validate them here. And
    Vega-Lite compiles each without a warning: a warning means it dropped part of the spec (a sort
    that a layered axis cannot do left the memcpy bars in name order beside a table in time order)."""
    import vl_convert
    from tracelake.jobs.report_job import lake_path
    from tracelake.jobs.report_views import shared_views
    from tracelake.lake import materialize
    from tracelake.lake.scoped import ScopedDatabase
    from tracelake.reports import charts
    from tracelake.reports.render import trace_report

    validated, warned = [], []

    def validating(chart):
        spec = chart.to_dict(validate=True)  # raises SchemaValidationError on an invalid spec
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="vl_convert"):  # where Vega-Lite's warnings go
            vl_convert.vegalite_to_vega(spec)
        warned.extend((spec.get("title"), r.getMessage()) for r in caplog.records)
        validated.append(chart)
        return "<svg xmlns='http://www.w3.org/2000/svg'/>"  # rendering is tested by the other tests

    monkeypatch.setattr(charts, "to_svg", validating)
    db = ScopedDatabase(lake_path(sample_con))  # one, loaded trace after trace, as a report worker does
    try:
        for (trace_id,) in sample_con.sql("SELECT trace_id FROM traces").fetchall():
            con = db.load([trace_id])
            with materialize.ready(con, shared_views()):  # as the report job renders a page
                trace_report(con, trace_id, version="test")
    finally:
        db.close()
    assert len(validated) >= 7 * 2
    assert warned == []


def test_charts_load_nothing_from_outside_the_page():
    """A chart's rows are inline; vl-convert is told to refuse any URL, so a spec that names one
    fails instead of fetching it."""
    import altair as alt
    from tracelake.reports import charts

    with pytest.raises(PermissionError, match="not allowed"):
        charts.to_svg(alt.Chart(alt.UrlData("https://example.com/rows.csv")).mark_bar().encode(x="a:Q"))


def test_index_rows_kept_beside_pages_equal_the_index_query(sample_con, sample_reports, tmp_path):
    """The index reads each trace's row from the JSON written with its page (computed from the
    page's own sections in a scoped database); it must equal the whole-lake index query."""
    from tracelake.reports.data import INDEX_COLUMNS, index_rows

    shutil.copytree(sample_reports.parent / "all_files", tmp_path / "reports")  # changed below
    expected = {r["trace_id"]: r for r in index_rows(sample_con)}
    kept = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "reports" / "traces").glob("*.json")}
    assert kept.keys() == expected.keys()
    for trace_id, row in expected.items():
        assert set(row) == set(INDEX_COLUMNS)  # else every kept row would be ignored as stale
        assert kept[trace_id].keys() == row.keys()
        for column, value in row.items():
            got = kept[trace_id][column]
            assert got == value or (isinstance(value, float) and abs(got - value) < 1e-9), (trace_id, column)
    # a lost row is queried again, and the page re-rendered on the next run
    lost = next(iter(kept))
    (tmp_path / "reports" / "traces" / f"{lost}.json").unlink()
    # and the page of a trace no longer in the lake (its file changed or was pruned) is removed
    gone = tmp_path / "reports" / "traces" / "deleted-0123456789.html"
    gone.write_text("old page")
    gone.with_suffix(".json").write_text("{}")
    index = write_reports(sample_con, tmp_path / "reports", render_ids=set())
    assert (tmp_path / "reports" / "traces" / f"{lost}.json").exists()
    assert not gone.exists() and not gone.with_suffix(".json").exists()
    assert index.read_text().count('href="traces/') == len(expected)


def test_untrusted_names_are_escaped(tmp_path):
    evil = ['<script>alert("x")</script>', "<img src=x onerror=alert(1)>", "it's \"quoted\" & <b>bold</b>",
            "void very::long::templated::kernel<" + "T, " * 200 + "U>(int)"]
    events = []
    for i, name in enumerate(evil):
        events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": 100.0 + 10 * i, "dur": 5.0,
                       "args": {"device": 0, "stream": 7, "correlation": i + 1}})
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": 99.0 + 10 * i, "dur": 1.0, "args": {"correlation": i + 1}})
        events.append({"ph": "X", "cat": "user_annotation", "name": evil[i], "pid": 1, "tid": 1,
                       "ts": 98.0 + 10 * i, "dur": 3.0, "args": {}})
    trace = tmp_path / "evil.json"
    trace.write_text(json.dumps({"traceEvents": events}))
    lake = tmp_path / "lake"
    assert main(["ingest", str(trace), "--lake", str(lake), "-q"]) == 0
    con = connect(lake)
    index = write_reports(con, tmp_path / "reports")
    con.close()
    html = next((tmp_path / "reports" / "traces").glob("*.html")).read_text() + index.read_text()
    assert "<script" not in html and "<img src=x" not in html and "<b>bold" not in html
    assert "&lt;script&gt;" in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "…" in html  # the long template name is shortened in the table ...
    assert "U&gt;(int)" in html  # ... and complete in its title attribute


def test_report_as_email_sent_through_a_real_smtp_server(sample_lake, tmp_path, capsys):
    import email
    from email import policy

    from aiosmtpd.controller import Controller
    from aiosmtpd.handlers import Message

    received = []

    class Keep(Message):
        def handle_message(self, message):
            received.append(message)

    html, eml = tmp_path / "r.html", tmp_path / "r.eml"
    assert main(["report", "--lake", str(sample_lake), "--trace", "torch-2.11_resnet50", "-o", str(html),
                 "--eml", str(eml)]) == 0
    import socket

    with socket.socket() as probe:  # a free loopback port for the test's own SMTP server
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(Keep(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        assert main(["mail", str(eml), "--smtp", f"127.0.0.1:{port}", "--from", "perf@example.com",
                     "--to", "team@example.com"]) == 0
    finally:
        controller.stop()
    assert len(received) == 1
    msg = email.message_from_bytes(received[0].as_bytes(), policy=policy.default)
    assert msg["To"] == "team@example.com" and msg.get_content_type() == "multipart/alternative"
    written = email.message_from_bytes(eml.read_bytes(), policy=policy.default)
    assert msg["Date"] and msg["Message-ID"] and msg["Message-ID"] != written["Message-ID"]  # a new message each send
    text = msg.get_body(("plain",)).get_content()
    assert "Findings" in text and "pageable_copy_in_step" in text
    body = msg.get_body(("html",))
    page = body.get_content()
    cids = re.findall(r'src="cid:([^"]+)"', page)
    images = [p for p in msg.walk() if p.get_content_type() == "image/png"]
    assert len(cids) == len(images) >= 4 and "data:image" not in page
    assert {p["Content-ID"].strip("<>") for p in images} == set(cids)
    assert eml.stat().st_size < 3_000_000  # 2.30 MB before each chart carried its table (2.61 MB after)


def test_report_command_writes_an_index_linking_its_pages(sample_reports):
    links = re.findall(r'href="([^"]+)"', sample_reports.read_text())
    assert len(links) == 4 and all(link.startswith("all_files/traces/") for link in links)
    assert all((sample_reports.parent / link).exists() for link in links)


def test_report_in_headless_chromium(sample_reports, tmp_path):
    """Debian's chromium (installed by .ci/run) opens the index and the trace pages at 1000 px, a
    mail client's width: no console errors, no request but the page itself, nothing wider than
    the page (no horizontal scrolling, no section wider than its box), and a full-page screenshot
    kept for a look."""
    import os

    pages = [sample_reports, *_pages(sample_reports)]
    shots = Path(os.environ.get("TRACELAKE_SCREENSHOTS", tmp_path / "screenshots"))
    shots.mkdir(parents=True, exist_ok=True)
    with chromium() as browser:
        for page_path in pages:
            page = open_checked(browser, page_path)
            shot = shots / (page_path.stem + ".png")
            page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 10_000
            page.close()


def test_multi_rank_runs_get_a_per_rank_section(corpus_con, tmp_path):
    """The 2-rank DDP recordings: the PyTorch run (one file per rank) and the Nsight export (two
    processes in one file). Each rank's page lists both ranks, the other rank's page linked."""
    from tracelake.jobs.report_job import lake_path, trace_scopes, views_frozen
    from tracelake.lake.scoped import connect_scoped
    from tracelake.reports import data
    from tracelake.reports.render import trace_report

    ids = [r[0] for r in corpus_con.sql("""SELECT trace_id FROM traces WHERE path LIKE '%gpt2-ddp-2rank%'
                                           ORDER BY file_name""").fetchall()]
    torch_ids = [t for t in ids if t.startswith("rank")]
    nsys_id = next(t for t in ids if t.startswith("nsys"))
    scopes = trace_scopes(corpus_con, ids)
    assert tuple(sorted(torch_ids)) in scopes and (nsys_id,) in scopes
    for scope in scopes:
        scoped = connect_scoped(lake_path(corpus_con), list(scope))
        try:
            rows = data.rank_rows(scoped, scope[0])
            assert [r["rank"] for r in rows] == [0, 1]
            assert all(r["communication_ns"] > 0 and r["median_step_ns"] > 0 for r in rows)
            # one rank arrives last at most collectives: the straggler the findings name too
            assert max(r["arrived_last"] for r in rows) > min(r["arrived_last"] for r in rows)
            if len(scope) == 2:
                with views_frozen(scoped, lake_path(corpus_con), list(scope)):  # as the report job renders a page
                    html = trace_report(scoped, scope[0], {t: f"{t}.html" for t in scope}, version="test")
                assert "<h2>Ranks of this run</h2>" in html and f'href="{scope[1]}.html"' in html
        finally:
            scoped.close()
    # re-rendering one rank's page re-renders its sibling's too (their per-rank tables agree)
    from tracelake.jobs.report_job import write_reports

    write_reports(corpus_con, tmp_path / "r", trace_ids=torch_ids)
    pages = {t: tmp_path / "r" / "traces" / f"{t}.html" for t in torch_ids}
    for page in pages.values():
        page.write_text("stale")
    write_reports(corpus_con, tmp_path / "r", trace_ids=torch_ids, render_ids={torch_ids[0]})
    assert all(page.read_text() != "stale" for page in pages.values())


@pytest.mark.parametrize("apart_s", [30, 1800, 3 * 86400, 40 * 86400])
def test_run_history_axis_labels_never_repeat(apart_s):
    """The index's history chart labels its time axis as precisely as its ticks: runs minutes apart
    read '18:51' under two ticks 30 s apart with a minute's format."""
    from datetime import UTC, datetime, timedelta

    import polars as pl
    from tracelake.reports import charts

    start = datetime(2026, 11, 21, 18, 50, 40, tzinfo=UTC)
    frame = pl.DataFrame({"workload": ["a", "a", "b", "b"], "run": ["1", "2", "3", "4"],
                          "started": [start + timedelta(seconds=apart_s * i) for i in range(4)],
                          "step_ms": [60.0, 21.0, 3.2, 5.1], "idle_pct": [63.0, 87.0, 85.0, 67.0]})
    svg = charts.to_svg(charts.run_history(frame))
    labels = re.findall(r">(\d{4}-\d\d-\d\d[^<]*)</text>", svg)
    assert len(labels) >= 4  # two charts, at least two ticks each
    per_chart = labels[: len(labels) // 2]
    assert len(per_chart) == len(set(per_chart)), per_chart


def test_step_charts_draw_a_bar_per_step_when_steps_share_a_name(tmp_path):
    """record_function steps are all 'iteration': the step-time and critical-path charts put their
    bars on the step's name, so 20 steps drew one bar as tall as all of them (6.8 ms beside a table
    of 0.2-0.6 ms steps). Each step is its own bar, labelled with its index where names repeat."""
    import polars as pl
    from tracelake.lake.database import connect
    from tracelake.reports import charts
    from tracelake.reports.sections import critical_path

    trace = Path(__file__).parent / "recorded" / "torch-2.11_graphs-eager-inference_h100.pt.trace.json.gz"
    assert main(["ingest", str(trace), "--lake", str(tmp_path / "lake"), "-q"]) == 0
    con = connect(tmp_path / "lake")
    rows = con.sql("""SELECT c.*, p.phase FROM critical_path_first_steps c
                      LEFT JOIN step_phases p USING (trace_id, pid, step_index) ORDER BY c.step_index""").pl()
    con.close()
    frame = critical_path.chart_rows(rows)
    steps = frame["step_index"].n_unique()
    assert steps >= 10 and frame["step"].n_unique() == 1  # many steps, one name
    for chart in (charts.critical_path(frame),
                  charts.step_breakdown(frame.rename({"class": "category"}).with_columns(pl.lit("compute").alias("category")))):
        labels = set(re.findall(r">(iteration #\d+)</text>", charts.to_svg(chart)))
        assert len(labels) == steps, sorted(labels)
