"""Whether a batch run's reports are current: OUTDIR/reports/.lake_state says from what they were
written (this version, the lake's database and traces, the run's files and their outcomes, --export),
and an unchanged re-run of `tracelake run` whose state equals it writes no report. Rendering the index
and the diff pages again, which read views over the whole lake, took 4.5 s of the 6.3 s re-run of 25
unchanged corpus files. Kept apart from jobs/report_job.py, which imports the chart libraries (~1.5 s):
a re-run that writes no report does not load them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..lake import database, layout
from ..lake.version import __version__

STAMP = ".lake_state"


def _state(out: Path, files: list[dict], export: bool) -> str:
    lake = out / "lake"
    inputs = sorted((f["path"], f["trace_id"] or "", f["error"] or "") for f in files)
    return hashlib.sha256(json.dumps([__version__, database.recorded(lake / database.DB_FILE), export, inputs,
                                      sorted(layout.complete_trace_ids(lake))]).encode()).hexdigest()


def current(out: str | Path, files: list[dict], export: bool = False) -> bool:
    """The run's reports were written from this state, and the index and every trace's page are there."""
    out = Path(out)
    reports = out / "reports"
    try:
        stamp = (reports / STAMP).read_text()
    except OSError:
        return False
    pages = {f["trace_id"] for f in files if f["status"] in ("ok", "unchanged", "alias")}
    return (stamp == _state(out, files, export) and (reports / "index.html").exists()
            and all((reports / "traces" / f"{t}.html").exists() for t in pages))


def clear(out: str | Path) -> None:
    """Before the reports are written: none is current until they all are."""
    (Path(out) / "reports" / STAMP).unlink(missing_ok=True)


def record(out: str | Path, files: list[dict], export: bool = False) -> None:
    """After the reports were written without a page's error."""
    out = Path(out)
    (out / "reports").mkdir(parents=True, exist_ok=True)
    (out / "reports" / STAMP).write_text(_state(out, files, export))
