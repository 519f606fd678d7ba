"""Fuzzing the ingesters with mutated real traces (hypothesis, bounded example counts): every case
either ingests or fails with TraceError and a one-line message; nothing else escapes."""

from __future__ import annotations

import gzip
import json
import sqlite3
import tempfile
from pathlib import Path

from conftest import DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tracelake.analysis.callctx_build import build as build_callctx
from tracelake.ingest.dispatch import ingest_file
from tracelake.ingest.errors import TraceError

MLP_GZ = (DATA / "torch-2.11_mlp-compiled-inference-fp16_h100.pt.trace.json.gz").read_bytes()
MLP_JSON = gzip.decompress(MLP_GZ)
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
