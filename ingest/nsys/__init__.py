"""Nsight Systems: SQLite exports (.sqlite, .sqlite.gz), and reports (.nsys-rep, .qdrep) read through
the `nsys` on PATH. A source unit (ingest/sources.py says what each attribute means):

- reader.py: read-only, introspecting, columnar access to an export (ADBC SQLite driver);
- tables.py: an export -> the unified tables of lake/schema.py (`ingest_nsys`);
- report.py: a report -> its export in a temporary folder, read as the report's trace.

This module stays small: discovery and recognition import it, and only `read` imports the reader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .constants import NAME, REPORT_SUFFIXES, SQLITE_MAGIC

if TYPE_CHECKING:
    from ..ingest_result import IngestResult

__all__ = ["NAME", "DESCRIPTION", "SUFFIXES", "BY_NAME", "COST_PER_BYTE", "sniff", "read", "read_by_name"]

DESCRIPTION = "an Nsight Systems SQLite export"
SUFFIXES = (".sqlite", ".sqlite.gz")
# A report is a container only `nsys` opens: it is recognized by its name, where no source knows its head.
BY_NAME = {"nsys-rep": REPORT_SUFFIXES}
# ../shared/traces on 2 cores: a gzip'd export ~0.15 s per MB, an export ~0.1 (a report: the default)
COST_PER_BYTE = {".sqlite.gz": 0.3, ".sqlite": 0.2}


def sniff(head: bytes) -> bool:
    """Whether a file's first bytes (gzip looked through) are an SQLite database's."""
    return head.startswith(SQLITE_MAGIC)


def read(path: str, tables: set[str] | None = None) -> IngestResult:
    """An export's unified tables (IngestResult); tables: the only ones wanted (None: all)."""
    from .tables import ingest_nsys

    return ingest_nsys(path, tables)


def read_by_name(path: str, tables: set[str] | None = None) -> IngestResult:
    """A report's unified tables: its export, made by `nsys export`, read as the report's trace."""
    from .report import ingest_report
    from .tables import ingest_nsys

    return ingest_report(path, lambda export: ingest_nsys(export, tables))
