"""Fuzzing the ingesters with mutated real traces (hypothesis, bounded example counts): every case
either ingests or fails with TraceError and a one-line message; nothing else escapes."""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
import tempfile
from pathlib import Path

from conftest import DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tracelake.analysis.callctx_build import build as build_callctx
from tracelake.ingest.dispatch import ingest_file
from tracelake.ingest.errors import TraceError
from tracelake.ingest.printable import has_control, terminal_text
from tracelake.ingest.reading import LimitExceeded, Limits

MLP_GZ = (DATA / "torch-2.11_mlp-compiled-inference-fp16_h100.pt.trace.json.gz").read_bytes()
MLP_JSON = gzip.decompress(MLP_GZ)
MLP_KERNELS = sum(1 for e in json.loads(MLP_JSON)["traceEvents"] if e.get("cat") == "kernel")  # stdlib count
NSYS_DB = gzip.decompress((DATA / "nsys-2025.3.1_cnn-train-pageable_h100.sqlite.gz").read_bytes())
FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _ingest_bytes(data: bytes, suffix: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"fuzzed{suffix}"
        path.write_bytes(data)
        try:
            result = ingest_file(str(path))
        except TraceError as e:
            assert str(e).startswith(str(path)) and "\n" not in str(e)
            return
        build_callctx(result.tables)  # the derived tables must cope with whatever was ingested


def _flipped(data: bytes, flips: list[tuple[int, int]]) -> bytes:
    out = bytearray(data)
    for at, mask in flips:
        out[at] ^= mask
    return bytes(out)


@FUZZ
@given(st.integers(min_value=0, max_value=len(MLP_JSON)))
def test_truncated_json(cut):
    _ingest_bytes(MLP_JSON[:cut], ".json")


@FUZZ
@given(st.integers(min_value=0, max_value=len(MLP_GZ)))
def test_truncated_gzip(cut):
    _ingest_bytes(MLP_GZ[:cut], ".json.gz")


@FUZZ
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=len(MLP_GZ) - 1), st.integers(1, 255)),
                min_size=1, max_size=8))
def test_byte_flips_in_gzip(flips):
    _ingest_bytes(_flipped(MLP_GZ, flips), ".json.gz")


_ODD_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True),
                        st.text(max_size=20), st.lists(st.integers(), max_size=3), st.just({}))


@FUZZ
@given(st.data())
def test_json_fields_deleted_or_retyped(data):
    doc = json.loads(MLP_JSON)
    events = doc["traceEvents"]
    for _ in range(data.draw(st.integers(1, 20))):
        event = events[data.draw(st.integers(0, len(events) - 1))]
        if not isinstance(event, dict) or not event:
            continue
        key = data.draw(st.sampled_from(sorted(event)))
        if data.draw(st.booleans()):
            del event[key]
        else:
            event[key] = data.draw(_ODD_VALUES)
        args = event.get("args")
        if isinstance(args, dict) and args and data.draw(st.booleans()):
            args[data.draw(st.sampled_from(sorted(args)))] = data.draw(_ODD_VALUES)
    _ingest_bytes(json.dumps(doc, allow_nan=True).encode(), ".json")




@FUZZ
@given(st.data())
def test_sqlite_tables_and_columns_dropped(data):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "db.sqlite"
        path.write_bytes(NSYS_DB)
        con = sqlite3.connect(path)
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for _ in range(data.draw(st.integers(1, 6))):
            table = data.draw(st.sampled_from(tables))
            columns = [r[1] for r in con.execute(f"PRAGMA table_info('{table}')")]
            if not columns:
                continue
            if data.draw(st.booleans()) or len(columns) < 2:
                con.execute(f'DROP TABLE IF EXISTS "{table}"')
                tables.remove(table)
            else:
                column = data.draw(st.sampled_from(columns))
                try:
                    con.execute(f'ALTER TABLE "{table}" DROP COLUMN "{column}"')
                except sqlite3.OperationalError:  # primary key or indexed column: sqlite refuses
                    pass
            if not tables:
                break
        con.commit()
        con.close()
        _ingest_bytes(path.read_bytes(), ".sqlite")


@FUZZ
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=len(NSYS_DB) - 1), st.integers(1, 255)),
                min_size=1, max_size=16))
def test_byte_flips_in_sqlite_pages(flips):
    _ingest_bytes(_flipped(NSYS_DB, flips), ".sqlite")


# --- Hostile inputs by class (issue #23): each class gets its own generator ----------------------

SMALL_TRACE = json.dumps({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.0, "dur": 2.0,
     "args": {"device": 0, "stream": 7, "correlation": 1}}]}).encode()
_UNSAFE = st.sampled_from(["\n", "\r", "\x1b[2J", "\x07", "\x7f", "\x9b", "\u202e", "\t", "\\", "\udcff"])


@FUZZ
@given(st.lists(st.one_of(st.characters(max_codepoint=0x2FFF, exclude_categories=["Cs"]), _UNSAFE), max_size=30))
def test_terminal_text_never_lets_a_control_character_through(parts):
    text = "".join(parts)
    shown = terminal_text(text)
    shown.encode("utf-8")  # printable on any UTF-8 terminal, surrogates included
    assert not has_control(shown) and "\n" not in shown
    if not has_control(text) and "\\" not in text and text.isprintable():
        assert shown == text


@settings(max_examples=15, deadline=None)
@given(st.binary(min_size=1, max_size=24).filter(lambda b: b"/" not in b and b"\0" not in b and b not in (b".", b"..")))
def test_any_file_name_is_ingested_and_shown_safely(name):
    from tracelake.jobs.ingest_job import ingest_one

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(os.fsencode(tmp), name + b".json")
        with open(path, "wb") as f:
            f.write(SMALL_TRACE)
        outcome = ingest_one(os.fsdecode(path), Path(tmp) / "lake")
        assert outcome.status == "ok", outcome.error
        outcome.path.encode("utf-8")  # stored and written as UTF-8 text
        assert not has_control(terminal_text(outcome.path))


@settings(max_examples=15, deadline=None)
@given(st.booleans(), st.text(alphabet=" \t\r\n", max_size=4), st.booleans())
def test_bom_and_leading_whitespace_are_accepted(bom, blank, packed):
    data = (b"\xef\xbb\xbf" if bom else b"") + blank.encode() + MLP_JSON
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / ("t.json.gz" if packed else "t.json")
        path.write_bytes(gzip.compress(data, 1) if packed else data)
        assert ingest_file(str(path)).tables["kernels"].num_rows == MLP_KERNELS


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 48), st.integers(64, 4096), st.integers(1, 400))
def test_inflation_is_allowed_exactly_up_to_the_limits(blank_blocks, limit_kib, ratio):
    """Ingest succeeds exactly when the inflated text fits the limits; else LimitExceeded."""
    blank = gzip.compress(b" " * (16 << 10), 9)
    data = gzip.compress(b'{"traceEvents": [', 9) + blank * blank_blocks + gzip.compress(SMALL_TRACE[17:], 9)
    limits = Limits(max_inflated_bytes=limit_kib << 10, max_inflate_ratio=ratio, ratio_floor_bytes=0)
    inflated = len(gzip.decompress(data))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "b.json.gz"
        path.write_bytes(data)
        try:
            ingest_file(str(path), limits)
            fits = True
        except LimitExceeded:
            fits = False
    assert fits == (inflated <= min(limit_kib << 10, ratio * len(data)))


def _nsys_counts(path: Path) -> tuple[int, int]:
    con = sqlite3.connect(path)
    try:
        return con.execute('SELECT count(*), coalesce(sum("end" - start), 0) FROM CUPTI_ACTIVITY_KIND_KERNEL '
                           'WHERE "end" >= start').fetchone()
    finally:
        con.close()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 3), st.booleans(), st.integers(0, 20),
       st.lists(st.text(st.characters(exclude_characters="\x00", exclude_categories=("Cs",)), min_size=1, max_size=12),
                    max_size=3))
def test_nsys_integrity_never_multiplies_or_keeps_reversed_rows(copies, altered, reversed_rows, odd_tables):
    """Repeated StringIds (same or other text), rows ending before they start and extra tables with
    any name: kernels and their GPU time are what sqlite3 counts on the valid rows, no more."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "db.sqlite"
        path.write_bytes(NSYS_DB)
        con = sqlite3.connect(path)
        if copies:
            con.execute("CREATE TABLE s AS SELECT * FROM StringIds")
            for i in range(copies):
                con.execute("INSERT INTO s SELECT id, value || ? FROM StringIds", [f" #{i}" if altered else ""])
            con.execute("DROP TABLE StringIds")
            con.execute("ALTER TABLE s RENAME TO StringIds")
        con.execute('UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = start - 1 WHERE rowid IN '
                    "(SELECT rowid FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY rowid DESC LIMIT ?)", [reversed_rows])
        for name in odd_tables:
            con.execute(f'CREATE TABLE IF NOT EXISTS "{name.replace(chr(34), chr(34) * 2)}" (x)')
        con.commit()
        con.close()
        rows, gpu_ns = _nsys_counts(path)
        result = ingest_file(str(path))
    kernels = result.tables["kernels"]
    assert kernels.num_rows == rows and sum(kernels.column("duration_ns").to_pylist()) == gpu_ns
    assert any("repeat an id" in w for w in result.warnings) == bool(copies)
    assert any("end before start" in w for w in result.warnings) == bool(reversed_rows)
