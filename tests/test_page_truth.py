"""Page truth: the numbers a trace page shows, read back from its HTML as a reader sees them
(tests/page_reader.py), are the numbers of the views they come from and, where one exists, of an
independent witness: NVIDIA's `nsys stats` (the top kernel of every shared Nsight export) and the
ProfilerStep durations in the trace file itself (the median step). Every chart's table holds
exactly the rows the chart draws."""

from __future__ import annotations

import gzip
import statistics
from pathlib import Path

import orjson
import page_reader
import pytest
from conftest import DATA, corpus_files, ids
from nsys_oracle import read_oracle
from tracelake.jobs.report_job import views_frozen
from tracelake.lake.scoped import ScopedDatabase
from tracelake.reports import trace_charts
from tracelake.reports.render import trace_page


def _read(con, trace_id: str) -> page_reader.Page:
    return page_reader.read(trace_page(con, trace_id, version="test").html)


def _read_scoped(db: ScopedDatabase, trace_id: str) -> page_reader.Page:
    """The page as the report job renders it: a database of the trace alone, the views that the
    lake holds derived rows of served from them, the other shared views evaluated once
    (report_job.views_frozen)."""
    con = db.load([trace_id])
    with views_frozen(con, db.lake, [trace_id]):
        return _read(con, trace_id)


@pytest.fixture(scope="module")
def sample_pages(_sample_db) -> dict[str, page_reader.Page]:
    con = _sample_db.cursor()
    return {t: _read(con, t) for (t,) in con.execute("SELECT trace_id FROM traces ORDER BY trace_id").fetchall()}


def _drawn(fig) -> list[tuple]:
    """The rows the chart draws: every dataset of its Vega-Lite spec that carries the table's
    fields (a roofline's roof lines, drawn from the GPU's peaks named in its legend, do not)."""
    fields = [c.field for c in fig.columns]
    if not hasattr(fig.chart, "to_dict"):  # a chart that draws its own SVG: the rows it drew a mark for
        return [tuple(r[f] for f in fields) for r in fig.chart.drawn()]
    spec = fig.chart.to_dict(validate=False)
    out = []
    for records in spec.get("datasets", {}).values():
        if records and all(f in records[0] for f in fields):
            out.extend(tuple(r[f] for f in fields) for r in records)
    return out


def _value(cell: page_reader.Cell, unit: str):
    if unit == "text":
        return None if cell.text == "–" else cell.text
    return None if cell.value in (None, "") else float(cell.value)


def test_every_chart_has_its_numbers_beside_it(sample_pages, _sample_db):
    """Each <figure data-chart> holds one image and a table; the table's rows are the figure's
    rows from the views, and the chart draws exactly those rows, no more, none merged."""
    con = _sample_db.cursor()
    seen = set()
    for trace_id, page in sample_pages.items():
        assert page.figures, trace_id
        for name, table in page.figures.items():
            seen.add(name)
            fig = trace_charts.figure(con, trace_id, name)
            assert page.images[name] == 1, (trace_id, name)
            assert table.headers == [c.header for c in fig.columns]
            assert len(table.rows) == fig.rows.height, (trace_id, name)
            for cells, row in zip(table.rows, fig.rows.iter_rows(named=True)):
                for cell, column in zip(cells, fig.columns):
                    shown, actual = _value(cell, column.unit), row[column.field]
                    if column.unit == "text":
                        assert shown == (None if actual is None else str(actual)), (trace_id, name, column.field)
                    else:
                        assert shown == pytest.approx(actual, rel=1e-9, abs=1e-9) if actual is not None \
                            else shown is None, (trace_id, name, column.field)
            drawn = _drawn(fig)
            rows = [tuple(r[c.field] for c in fig.columns) for r in fig.rows.iter_rows(named=True)]
            assert sorted(map(repr, drawn)) == sorted(map(repr, rows)), (trace_id, name)
    assert {"utilization", "time_breakdown", "top_kernels", "memcpy", "step_time", "critical_path"} <= seen


def test_top_kernels_chart_is_one_bar_per_kernel(sample_pages, _sample_db):
    """The bars are kernel_summary's top 12 in order, with their total time; labels never collide
    (Vega-Lite would sum two kernels whose shortened labels are equal into one bar)."""
    con = _sample_db.cursor()
    for trace_id, page in sample_pages.items():
        truth = con.execute("""SELECT name, total_ns FROM kernel_summary WHERE trace_id = ?
                               ORDER BY total_ns DESC, name, instances, max_ns LIMIT 12""", [trace_id]).fetchall()
        table = page.figures["top_kernels"]
        assert [c.text for c in table.column("kernel")] == [n for n, _ in truth]
        assert [round(float(c.value) * 1e6) for c in table.column("total time")] == [ns for _, ns in truth]
        spec = trace_charts.top_kernels(con, trace_id).to_dict(validate=False)
        labels = [r["kernel"] for records in spec["datasets"].values() for r in records]
        assert len(set(labels)) == len(truth), trace_id
        first = page.tables["top_kernels"][0]
        assert first.rows[0][3].value == str(truth[0][1])  # the table's top row: the top kernel's total


def _steady_truth(con, trace_id: str) -> dict | None:
    """From the steps view itself: the steady steps (after steady_state's warm-up count) of the
    trace's lowest process with steps, their median wall time, GPU idle share and median MFU."""
    window = con.execute("""SELECT pid, warmup_steps FROM steady_state WHERE trace_id = ? AND steps > 0
                            ORDER BY pid LIMIT 1""", [trace_id]).fetchall()
    if not window:
        return None
    pid, warmup = window[0]
    steps = con.execute("""SELECT start_ns, wall_ns, gpu_idle_ns FROM steps WHERE trace_id = ? AND pid = ?
                           ORDER BY step_index""", [trace_id, pid]).fetchall()[warmup:]
    mfu = dict(con.execute("SELECT start_ns, mfu_pct FROM mfu WHERE trace_id = ? AND pid = ?", [trace_id, pid])
               .fetchall())
    mfus = [mfu[s] for s, _, _ in steps if mfu.get(s) is not None]
    return {"pid": pid, "warmup": warmup, "walls": [w for _, w, _ in steps],
            "median_step_ns": statistics.median(w for _, w, _ in steps),
            "gpu_idle_pct": 100.0 * sum(i for _, _, i in steps) / sum(w for _, w, _ in steps),
            "mfu_pct": statistics.median(mfus) if mfus else None}


def test_summary_describes_the_steady_steps(sample_pages, _sample_db):
    """Median step, GPU idle and MFU atop the page are those of the steady steps (start-up and
    warm-up left out), recomputed here from the steps and mfu views."""
    con = _sample_db.cursor()
    checked = 0
    for trace_id, page in sample_pages.items():
        assert page.sections[0] == "summary", trace_id
        truth = _steady_truth(con, trace_id)
        if truth is None:
            # without steps: idle over the trace's span, not the GPU's active range
            whole = con.execute("""SELECT avg(100.0 * (t.duration_ns - b.busy_ns) / t.duration_ns)
                                   FROM temporal_breakdown b JOIN traces t USING (trace_id)
                                   WHERE trace_id = ?""", [trace_id]).fetchone()[0]
            assert float(page.metrics["gpu_idle_pct"]) == pytest.approx(whole)
            continue
        checked += 1
        assert float(page.metrics["median_step_ns"]) == pytest.approx(truth["median_step_ns"])
        assert float(page.metrics["gpu_idle_pct"]) == pytest.approx(truth["gpu_idle_pct"])
        if truth["mfu_pct"] is None:
            assert page.metrics["mfu_pct"] == ""
        else:
            assert float(page.metrics["mfu_pct"]) == pytest.approx(truth["mfu_pct"])
        steady_bars = {c.text for c in page.figures["step_time"].column("step")}
        assert len(steady_bars) == min(len(truth["walls"]), 60), trace_id  # the chart: steady steps only
    assert checked >= 3


def _profiler_steps_ns(path: Path) -> list[int]:
    """The ProfilerStep#N ranges of the trace file, in order: their durations in ns (Kineto writes
    microseconds with three decimals)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        events = orjson.loads(f.read())
    events = events["traceEvents"] if isinstance(events, dict) else events
    steps = [e for e in events if e.get("ph") == "X" and e.get("cat") == "user_annotation"
             and str(e.get("name", "")).startswith("ProfilerStep#")]
    return [round(float(e["dur"]) * 1000) for e in sorted(steps, key=lambda e: float(e["ts"]))]


def _assert_median_step_is_the_profiler_steps(con, page: page_reader.Page, trace_id: str, path: Path) -> bool:
    rule = con.execute("""SELECT step_rule, warmup_steps FROM steady_state WHERE trace_id = ? AND steps > 0
                          ORDER BY pid LIMIT 1""", [trace_id]).fetchall()
    if not rule or rule[0][0] != "profiler_step":
        return False
    durations = _profiler_steps_ns(path)[rule[0][1]:]
    # the file's ProfilerStep ranges are the host's: the page's step time where the host defines it,
    # else the host range shown beside a GPU-defined step time
    gpu_defined, host_ns = con.execute("""SELECT (SELECT count(*) FROM steady_steps s WHERE s.trace_id = m.trace_id
                                                AND s.pid = m.pid AND s.step_time_basis = 'gpu'), median_host_step_ns
                                        FROM steady_summary m WHERE trace_id = ? ORDER BY pid LIMIT 1""",
                                     [trace_id]).fetchone()
    shown = page.metrics["median_step_ns"] if gpu_defined == 0 else host_ns
    assert float(shown) == pytest.approx(statistics.median(durations), abs=2), path.name
    return True


def test_median_step_is_the_profiler_steps_of_the_file(sample_pages, _sample_db):
    con = _sample_db.cursor()
    files = {r[0]: DATA / r[1] for r in con.execute("SELECT trace_id, file_name FROM traces").fetchall()}
    checked = [t for t, page in sample_pages.items() if files[t].name.endswith(".json.gz")
               and _assert_median_step_is_the_profiler_steps(con, page, t, files[t])]
    assert len(checked) >= 2


@pytest.mark.corpus
@pytest.mark.parametrize("export", corpus_files("nsys"), ids=ids(corpus_files("nsys")))
def test_top_kernel_is_nvidias_on_every_shared_export(export, corpus, corpus_lake, _corpus_db):
    """The page's first kernel row: NVIDIA's cuda_gpu_kern_sum top row (name and total time)."""
    oracle = read_oracle(corpus / "oracles" / "nsys-stats" / export.name.split(".sqlite")[0] / "cuda_gpu_kern_sum.csv")
    [(trace_id,)] = _corpus_db.cursor().execute("SELECT trace_id FROM traces WHERE file_name = ?",
                                                 [export.name]).fetchall()
    db = ScopedDatabase(corpus_lake)
    try:
        page = _read_scoped(db, trace_id)
    finally:
        db.close()
    if not oracle:
        assert "top_kernels" not in page.sections
        return
    top = max(oracle, key=lambda r: int(r["Total Time (ns)"]))
    table = page.tables["top_kernels"][0]
    assert table.rows[0][1].text.rstrip("…") and top["Name"].startswith(table.rows[0][1].text.rstrip("…"))
    assert int(table.rows[0][3].value) == int(top["Total Time (ns)"])
    assert page.figures["top_kernels"].rows[0][1].text == top["Name"]  # the chart's table: the full name


@pytest.mark.corpus
def test_median_step_on_corpus_pytorch_traces(corpus, corpus_lake, _corpus_db):
    """Every shared PyTorch trace whose steps are its ProfilerStep ranges: the page's median step
    is the median of those ranges' durations after the warm-up ones."""
    con = _corpus_db.cursor()
    traces = con.execute("""SELECT t.trace_id, t.file_name, t.file_bytes FROM traces t
                            JOIN steady_state s USING (trace_id)
                            WHERE t.source = 'pytorch' AND s.step_rule = 'profiler_step' AND t.file_bytes < 30e6
                            ORDER BY t.file_name""").fetchall()
    paths = {p.name: p for p in corpus_files("pytorch")}
    db = ScopedDatabase(corpus_lake)
    checked = 0
    try:
        for trace_id, name, _ in traces:
            if name not in paths:
                continue
            page = _read_scoped(db, trace_id)
            checked += _assert_median_step_is_the_profiler_steps(db.con, page, trace_id, paths[name])
    finally:
        db.close()
    assert checked >= 3
