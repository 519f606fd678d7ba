"""`tracelake run --executor dask`: the report pages are rendered on the cluster too (a real
LocalCluster of 2 worker processes, no mocks). The pages equal those of the local executor; a
page that fails is listed and the others are written; no temporary file is left; the index page
is written last, by the client."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import DATA
from tracelake.cli.main import main
from tracelake.lake.database import connect

distributed = pytest.importorskip("distributed")  # the optional extra tracelake[dask]

MNIST = DATA / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz"
MLP = DATA / "torch-2.11_mlp-compiled-inference-fp16_h100.pt.trace.json.gz"


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as c:
        yield c


@pytest.fixture(scope="module")
def traces(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("in")
    for f in (MNIST, MLP):
        shutil.copy(f, src / f.name)
    return src


def _run(args, capsys) -> tuple[int, dict]:
    code = main(["run", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def _pages(out: Path) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted((out / "reports" / "traces").iterdir())}


def test_pages_rendered_on_the_cluster_equal_the_local_ones(cluster, traces, tmp_path, capsys):
    code, summary = _run([str(traces), "--out", str(tmp_path / "dask"), "--executor", "dask",
                          "--scheduler", cluster.scheduler_address], capsys)
    assert code == 0 and summary["report_errors"] == []
    assert _workers_rendered(cluster)  # the pages were rendered in the workers' processes
    code, _ = _run([str(traces), "--out", str(tmp_path / "local"), "--jobs", "1"], capsys)
    assert code == 0
    dask_pages, local_pages = _pages(tmp_path / "dask"), _pages(tmp_path / "local")
    assert sorted(dask_pages) == sorted(local_pages) and len(dask_pages) == 4  # 2 pages, 2 index rows
    assert dask_pages == local_pages
    index = (tmp_path / "dask" / "reports" / "index.html").read_text(encoding="utf-8")
    assert all(f'href="traces/{name}"' in index for name in dask_pages if name.endswith(".html"))


def _workers_rendered(cluster) -> bool:
    """Some worker process has imported the renderer (the ingest tasks do not)."""
    def rendered() -> bool:
        import sys
        return "tracelake.reports.render" in sys.modules

    with distributed.Client(cluster.scheduler_address) as client:
        return any(client.run(rendered).values())


def test_a_failing_page_does_not_stop_the_others(cluster, traces, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", str(traces), "--out", str(out), "--no-reports", "-q"]) == 0
    con = connect(out / "lake")
    mnist = con.execute("SELECT trace_id FROM traces WHERE file_name LIKE 'torch-2.11_mnist%'").fetchone()[0]
    con.close()
    # an unreadable calling-context partition: only the page reads it (the index does not)
    (out / "lake" / "callctx_nodes" / f"trace_id={mnist}" / "data.parquet").write_bytes(b"not parquet")
    pages = out / "reports" / "traces"
    pages.mkdir(parents=True)
    (pages / f".{mnist}.html.123.456.tmp").write_text("half a page")  # left by a killed worker
    (pages / f"{mnist}.html").write_text("an old page of other data")
    from tracelake.jobs.report_job import write_reports

    errors: list[dict] = []
    con = connect(out / "lake")
    try:
        index = write_reports(con, out / "reports", executor="dask", scheduler=cluster.scheduler_address,
                              page_errors=errors)
    finally:
        con.close()
    assert [e["trace_id"] for e in errors] == [mnist] and "callctx_nodes" in errors[0]["error"]
    written = sorted(p.name for p in pages.iterdir())
    other = [n for n in written if not n.startswith(mnist)]
    assert len(other) == 2 and not [n for n in written if n.startswith(mnist) or n.startswith(".")]
    html = index.read_text(encoding="utf-8")
    assert f"report page of {mnist}" in html and f'href="traces/{mnist}.html"' not in html
    assert f'href="traces/{other[0].removesuffix(".json").removesuffix(".html")}.html"' in html
