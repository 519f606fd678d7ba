"""A Python analysis that fails on a trace (the calling context, the critical path) costs the trace
that analysis, said in one warning line, never its data: the file is ingested, its kernels are in
the lake. Exceptions come with any message: several lines, or none at all (a bare `assert`)."""

from __future__ import annotations

import duckdb
import pytest
from conftest import DATA
from tracelake.analysis import callctx_build, critpath_build
from tracelake.jobs.ingest_job import ingest_one
from tracelake.lake.database import update_database

MLP = DATA / "torch-2.11_mlp-compiled-inference-fp16_h100.pt.trace.json.gz"


def _fails(error: Exception):
    def build(*args, **kwargs):
        raise error
    return build


@pytest.mark.parametrize("error, said", [
    (AssertionError(), "AssertionError"),
    (ValueError(""), "ValueError"),
    (ValueError("no such node\nTraceback, second line"), "ValueError: no such node"),
])
@pytest.mark.parametrize("module, what", [(callctx_build, "calling context"), (critpath_build, "critical path")])
def test_a_failed_analysis_costs_the_trace_that_analysis_only(tmp_path, monkeypatch, module, what, error, said):
    monkeypatch.setattr(module, "build", _fails(error))
    outcome = ingest_one(str(MLP), tmp_path / "lake")
    assert outcome.status == "ok", outcome.error
    [warning] = [w for w in outcome.warnings if "not built" in w]
    assert warning.startswith(f"{what} not built: {said}")
    assert "\n" not in warning and "second line" not in warning
    con = duckdb.connect(str(update_database(tmp_path / "lake")), read_only=True)
    assert con.execute("SELECT count(*) FROM kernels").fetchone()[0] > 0
