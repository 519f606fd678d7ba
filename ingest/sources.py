"""The trace sources: one package of ingest/ each, and the one list of them that discovery
(discover.py), recognition (dispatch.py) and the run's cost estimate (jobs/run_job.py) read.

A source is a package whose __init__ is small (discovery imports it) and holds:

- NAME: what `traces.source` says of its traces; lake/schema.py lists the same names
  (SOURCE_NAMES: which source fills which column), and tests/test_sources.py checks that the two agree;
- DESCRIPTION: what a file of it is, for the error on a file no source recognizes;
- SUFFIXES: the file names that discovery lists in a folder (a file named on the command line is
  read whatever its name: the content decides);
- sniff(head) -> bool: whether the file's first 64 bytes (a gzip's inflated ones) are this source's;
- read(path, tables=None) -> IngestResult: the file's unified tables (lake/schema.py); tables: the
  only ones wanted (None: all), as `tracelake stats` of a file asks;
- COST_PER_BYTE: {suffix: relative seconds of ingest per byte of file}, so that the run starts
  the costliest files first (a name of no source: 0.3 gzip'd, else 0.2);
- BY_NAME: {format: suffixes} of files the content does not tell (an Nsight report: a container
  only `nsys` opens), recognized by name where no source's sniff knows the head, and read by
  read_by_name(path, tables=None); in a folder such a file is not listed when a file of the same
  stem and one of SUFFIXES lies beside it (its export: read instead). {} for most sources.

docs/ingest.md, "Adding a source", says what else a new source touches.
"""

from __future__ import annotations

from . import kineto, nsys

SOURCES = (nsys, kineto)

_GZIP_COST_PER_BYTE, _COST_PER_BYTE = 0.3, 0.2  # a file named as no source's


def suffixes() -> tuple[str, ...]:
    """Every name that discovery lists: each source's SUFFIXES and BY_NAME suffixes."""
    return tuple(s for source in SOURCES for s in (*source.SUFFIXES, *_by_name(source)))


def _by_name(source) -> tuple[str, ...]:
    return tuple(s for named in source.BY_NAME.values() for s in named)


def cost_per_byte(path: str) -> float:
    """Relative seconds of ingest per byte of the file: its source's COST_PER_BYTE of the first
    suffix it ends with."""
    for source in SOURCES:
        for suffix, cost in source.COST_PER_BYTE.items():
            if path.endswith(suffix):
                return cost
    return _GZIP_COST_PER_BYTE if path.endswith(".gz") else _COST_PER_BYTE
