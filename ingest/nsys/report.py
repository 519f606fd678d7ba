"""Nsight Systems reports (.nsys-rep, .qdrep): exported to SQLite by the `nsys` on PATH into a
temporary folder, then read as any export; the trace is the report's (its path, size and content
hash, so an unchanged report is not read again). Without `nsys`, one line says what to run."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

import pyarrow as pa

from ..errors import TraceError
from ..identity import file_sha256, make_trace_id
from ..ingest_result import IngestResult
from ..printable import path_text
from .constants import REPORT_SUFFIXES

EXPORT_SECONDS = 3600  # a report of many GB takes minutes to export


def ingest_report(path: str, read_export) -> IngestResult:
    """read_export(sqlite_path) -> IngestResult of the export; the result is made the report's."""
    nsys = shutil.which("nsys")
    if nsys is None:
        raise TraceError(path, "an Nsight Systems report and no `nsys` on PATH to export it: run "
                               f"`nsys export --type sqlite --output {_stem(path)}.sqlite {path}`, then ingest the .sqlite")
    with tempfile.TemporaryDirectory(prefix="tracelake-nsys-") as folder:
        export = os.path.join(folder, _stem(path) + ".sqlite")
        try:
            done = subprocess.run([nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "--output", export,
                                   path], capture_output=True, text=True, timeout=EXPORT_SECONDS, check=False)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise TraceError(path, f"`nsys export` did not run: {e}") from None
        if done.returncode != 0 or not os.path.isfile(export):
            said = (done.stderr or done.stdout).strip().splitlines()
            raise TraceError(path, f"`nsys export --type sqlite` failed (exit {done.returncode})"
                                   + (f": {said[-1][:300]}" if said else ""))
        result = read_export(export)
    return _as_report(result, path)


def _stem(path: str) -> str:
    name = os.path.basename(path)
    return next((name[: -len(s)] for s in REPORT_SUFFIXES if name.endswith(s)), name)


def _as_report(result: IngestResult, path: str) -> IngestResult:
    sha = file_sha256(path)
    row = result.tables["traces"]
    for column, value in (("path", path_text(path)), ("file_name", os.path.basename(path_text(path))),
                          ("file_bytes", os.path.getsize(path)), ("content_sha256", sha)):
        i = row.schema.get_field_index(column)
        row = row.set_column(i, row.schema.field(i), pa.array([value], row.schema.field(i).type))
    return IngestResult(make_trace_id(path, sha), {**result.tables, "traces": row}, result.warnings)
