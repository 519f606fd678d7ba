"""Test tiers. The repo tier uses tests/data only. The corpus tier (marker `corpus`) reads
../shared/traces and ../shared/oracles: it runs when TRACELAKE_CORPUS names that folder (then a
missing corpus is an error) or when ../shared exists beside the checkout; otherwise it is skipped
with one line saying so."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
SAMPLE_FILES = sorted(p for p in DATA.iterdir() if p.is_file())


def _corpus_root() -> tuple[Path | None, str]:
    env = os.environ.get("TRACELAKE_CORPUS")
    if env:
        root = (REPO / env).resolve() if not os.path.isabs(env) else Path(env)
        if not (root / "traces").is_dir() or not (root / "oracles").is_dir():
            raise pytest.UsageError(f"TRACELAKE_CORPUS={env}: no traces/ and oracles/ under {root}")
        return root, f"corpus tier: {root}"
    default = REPO.parent / "shared"
    if (default / "traces").is_dir():
        return default, f"corpus tier: {default}"
    return None, "corpus tier did not run: no ../shared beside the checkout and TRACELAKE_CORPUS is unset"


CORPUS, CORPUS_STATUS = None, ""


def pytest_configure(config):
    global CORPUS, CORPUS_STATUS
    CORPUS, CORPUS_STATUS = _corpus_root()


def pytest_collection_modifyitems(config, items):
    if CORPUS is None:
        skip = pytest.mark.skip(reason=CORPUS_STATUS)
        for item in items:
            if "corpus" in item.keywords:
                item.add_marker(skip)


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(CORPUS_STATUS)


def corpus_files(kind: str) -> list[Path]:
    """Trace files of ../shared/traces/<kind> (for parametrize; empty without a corpus)."""
    if CORPUS is None:
        return []
    base = CORPUS / "traces" / kind
    return sorted(p for p in base.rglob("*") if p.is_file() and p.name != "PROVENANCE.md")


def ids(paths):
    return [p.name for p in paths]


@contextlib.contextmanager
def ingested(tmp_path_factory, name: str, *files: Path | str):
    """A read-only connection to a new lake that `tracelake ingest` made of `files` and `relink`
    derived, closed after the `with` block: what a module fixture of recorded traces yields. Derived
    as `tracelake run` leaves a lake: over the base tables of a lake of one trace a query of
    `findings` evaluates every rule's views again (125 s of CPU for the Nsight sample, against
    6 s to derive them all and 0.5 s to read them)."""
    from tracelake.cli.main import main
    from tracelake.lake.database import connect

    lake = tmp_path_factory.mktemp(name) / "lake"
    assert main(["ingest", *map(str, files), "--lake", str(lake), "--quiet"]) == 0
    assert main(["relink", "--lake", str(lake)]) == 0
    con = connect(lake)
    try:
        yield con
    finally:
        con.close()


def rendered_page(con, trace_id: str, links: dict[str, str] | None = None, **kwargs):
    """The trace page (reports.render.trace_page) rendered as the report job renders it: in a
    database of the trace's run alone, the views its sections share evaluated once (frozen).
    Rendered on a lake's whole database instead, every section evaluates the views under it again
    (100 s for the GPU-metrics export's page against 3 s)."""
    from tracelake.jobs.report_job import lake_path, trace_scopes, views_frozen
    from tracelake.lake.scoped import connect_scoped
    from tracelake.reports.render import trace_page

    (scope,) = trace_scopes(con, [trace_id])
    scoped = connect_scoped(lake_path(con), list(scope))
    try:
        with views_frozen(scoped, lake_path(con), list(scope)):
            return trace_page(scoped, trace_id, links, version="test", **kwargs)
    finally:
        scoped.close()


@pytest.fixture(scope="session")
def corpus() -> Path:
    if CORPUS is None:
        pytest.skip(CORPUS_STATUS)
    return CORPUS


@pytest.fixture(scope="session")
def sample_lake(tmp_path_factory) -> Path:
    from tracelake.cli.main import main

    lake = tmp_path_factory.mktemp("sample") / "lake"
    assert main(["ingest", str(DATA), "--lake", str(lake), "--quiet"]) == 0
    # A lake of 4 traces is not derived at ingest (lake/materialize.kept_views); `relink` derives it, so
    # that the tests see the views served from derived tables, as in the lakes `tracelake run` writes.
    assert main(["relink", "--lake", str(lake)]) == 0
    return lake


@pytest.fixture(scope="session")
def corpus_lake(corpus, tmp_path_factory) -> Path:
    from tracelake.cli.main import main

    lake = tmp_path_factory.mktemp("corpus") / "lake"
    assert main(["ingest", str(corpus / "traces"), "--lake", str(lake), "--quiet"]) == 0
    return lake


@pytest.fixture(scope="session")
def _sample_db(sample_lake):
    from tracelake.lake.database import connect

    con = connect(sample_lake)
    yield con
    con.close()


@pytest.fixture
def sample_con(_sample_db):
    """A cursor of its own per test: a result one test leaves unfetched cannot block the next."""
    cursor = _sample_db.cursor()
    yield cursor
    cursor.close()


@pytest.fixture(scope="session")
def _corpus_db(corpus_lake):
    from tracelake.lake.database import connect

    con = connect(corpus_lake)
    yield con
    con.close()


@pytest.fixture
def corpus_con(_corpus_db):
    cursor = _corpus_db.cursor()
    yield cursor
    cursor.close()
