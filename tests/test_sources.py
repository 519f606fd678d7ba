"""The trace sources are units (ingest/sources.py): each package says how to recognize its files,
their names, their cost and how to read them, and discovery, recognition, the run's cost estimate
and the schema read that one list."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import DATA
from tracelake.ingest import discover, dispatch
from tracelake.ingest.errors import TraceError
from tracelake.ingest.sources import SOURCES, cost_per_byte, suffixes
from tracelake.lake.schema import SOURCE_NAMES, TABLES

UNIT = ("NAME", "DESCRIPTION", "SUFFIXES", "BY_NAME", "COST_PER_BYTE", "sniff", "read")


def test_the_schema_names_the_same_sources():
    assert [s.NAME for s in SOURCES] == list(SOURCE_NAMES)
    (source,) = (c for c in TABLES["traces"].columns if c.name == "source")
    assert all(f"'{name}'" in source.doc for name in SOURCE_NAMES)


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.NAME)
def test_a_source_is_a_unit(source):
    assert all(hasattr(source, attribute) for attribute in UNIT)
    assert not source.BY_NAME or callable(source.read_by_name)
    named = [s for suffixes in source.BY_NAME.values() for s in suffixes]
    assert set(source.COST_PER_BYTE) <= {*source.SUFFIXES, *named}
    assert source.sniff(b"") is False


def _names(source) -> tuple[str, ...]:
    return (*source.SUFFIXES, *(s for named in source.BY_NAME.values() for s in named))


def test_no_two_sources_claim_a_name():
    for a in SOURCES:
        for b in SOURCES:
            if a is not b:
                assert not [(x, y) for x in _names(a) for y in _names(b) if x.endswith(y)], (a.NAME, b.NAME)
    assert len(suffixes()) == len(set(suffixes()))


def test_discovery_lists_each_sources_names():
    assert set(discover.TRACE_SUFFIXES) == {".sqlite", ".sqlite.gz", ".json", ".json.gz", ".nsys-rep", ".qdrep"}
    assert discover.is_trace_name("rank0.pt.trace.json.gz") and not discover.is_trace_name("notes.txt")


@pytest.mark.parametrize("path", sorted(DATA.glob("*.gz")), ids=lambda p: p.name)
def test_each_sample_is_recognized_by_its_content(path):
    fmt, read = dispatch.recognize(str(path))
    assert fmt == ("nsys" if ".sqlite" in path.name else "pytorch")
    assert read is next(s for s in SOURCES if s.NAME == fmt).read


def test_a_report_is_recognized_by_its_name(tmp_path):
    report = tmp_path / "profile.qdrep"
    report.write_bytes(b"QDSTRM, an Nsight report")
    assert dispatch.recognize(str(report))[0] == "nsys-rep"
    other = tmp_path / "profile.bin"
    other.write_bytes(b"QDSTRM, an Nsight report")
    with pytest.raises(TraceError, match="neither an Nsight Systems SQLite export nor a PyTorch profiler JSON trace"):
        dispatch.recognize(str(other))


def test_cost_per_byte_by_name():
    # the run starts the costliest first: a gzip'd PyTorch trace is the dearest per byte
    assert [cost_per_byte(n) for n in ("a.json.gz", "a.sqlite.gz", "a.gz", "a.json", "a.sqlite", "a.nsys-rep", "a")] \
        == [1.0, 0.3, 0.3, 0.2, 0.2, 0.2, 0.2]


def test_recognition_imports_no_reader():
    """Discovery and recognition import each source's small package (and its constants), none of its
    readers."""
    code = ("import sys\nimport tracelake.ingest.dispatch, tracelake.ingest.discover\n"
            "print(sorted(m for m in sys.modules if m.startswith('tracelake.ingest.') and m.count('.') == 3"
            " and not m.endswith('.constants') or m in ('polars', 'msgspec', 'isal')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
