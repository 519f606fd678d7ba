"""`tracelake export --format perfetto` (analysis/trace_export.py, sql/analysis/chrome_trace_events.sql):
the file is valid Trace Event Format, as Google's published spec ("Trace Event Format", the
document chrome://tracing and Perfetto's JSON importer follow) defines it; its flows bind to
events of the file; and tracelake reads it back to the same kernels, GPU time and steps as the
original, for a PyTorch and an Nsight Systems sample."""

from __future__ import annotations

import gzip
import json
from collections import Counter

import pytest
from conftest import DATA
from tracelake.analysis.cli import main
from tracelake.analysis.database import connect

SAMPLES = {"pytorch": "torch-2.11_resnet50-train-fp32-pageable_h100.pt.trace.json.gz",
           "nsys": "nsys-2025.3.1_cnn-train-pageable_h100.sqlite.gz"}
# The spec's phases: duration (B/E), complete (X), instant (i, and the legacy I), counter (C),
# async (b/n/e, legacy S/T/p/F), flow (s/t/f), sample (P), object (N/O/D), metadata (M),
# memory dump (V/v), mark (R), clock sync (c), context ((/)).
PHASES = set("BEXiICbneSTpFstfPNODMVvRc()")
TOTALS = """SELECT (SELECT count(*) FROM kernels), (SELECT sum(duration_ns) FROM kernels),
                   (SELECT count(*) FROM gpu_ops), (SELECT sum(duration_ns) FROM gpu_ops),
                   (SELECT count(*) FROM steps), (SELECT sum(wall_ns) FROM steps),
                   (SELECT sum(compute_ns) FROM steps), (SELECT count(*) FROM api_calls)"""


@pytest.fixture(scope="module", params=sorted(SAMPLES))
def exported(request, tmp_path_factory):
    """(original totals, re-ingested totals, the file's JSON, the original lake's analysis counts)."""
    tmp = tmp_path_factory.mktemp(request.param)
    lake, out = tmp / "lake", tmp / f"{request.param}_export.json.gz"
    assert main(["ingest", str(DATA / SAMPLES[request.param]), "--lake", str(lake), "-q"]) == 0
    assert main(["export", "--lake", str(lake), SAMPLES[request.param][:5], "--format", "perfetto", "-o", str(out)]) == 0
    con = connect(lake)
    original = con.execute(TOTALS).fetchall()[0]
    analysis = con.execute("""SELECT (SELECT count(*) FROM steps), (SELECT count(*) FROM findings),
                                     (SELECT count(*) FROM largest_gpu_gaps),
                                     (SELECT count(*) FROM critical_path WHERE weight_ns > 0)""").fetchall()[0]
    con.close()
    again = tmp / "again"
    assert main(["ingest", str(out), "--lake", str(again), "-q"]) == 0
    con = connect(again)
    back = con.execute(TOTALS).fetchall()[0]
    con.close()
    return original, back, json.loads(gzip.decompress(out.read_bytes())), analysis


def test_reingested_export_has_the_same_kernels_gpu_time_and_steps(exported):
    original, back, _, _ = exported
    assert original[0] > 1000 and original[4] >= 3  # the samples have work and steps to compare
    assert back == original


def test_every_event_is_valid_trace_event_format(exported):
    doc = exported[2]
    events = doc["traceEvents"]
    assert isinstance(events, list) and events
    for e in events:
        assert e["ph"] in PHASES, e
        assert isinstance(e["name"], str) and isinstance(e["pid"], int), e
        if e["ph"] == "M":
            assert e["name"] in {"process_name", "thread_name", "process_sort_index", "thread_sort_index",
                                 "process_labels"} and ("name" in e["args"] or "sort_index" in e["args"]), e
            continue
        assert isinstance(e["ts"], (int, float)) and "tid" in e, e
        if e["ph"] == "X":
            assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0, e
        if e["ph"] == "i":
            assert e["s"] in {"g", "p", "t"}, e
        if e["ph"] in "stf":
            assert "id" in e and "cat" in e, e


def test_flows_bind_to_events_of_the_file(exported):
    """Each flow id has one start and one end; the start lies in a slice of its thread (the launch
    call), the end at the start of a slice of its thread (bp 'e': the GPU operation)."""
    events = exported[2]["traceEvents"]
    slices: dict[tuple, list[tuple[float, float]]] = {}
    for e in events:
        if e["ph"] == "X":
            slices.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    flows = [e for e in events if e["ph"] in "sf"]
    assert flows
    phases = Counter((e["cat"], e["id"], e["ph"]) for e in flows)
    assert set(phases.values()) == {1}
    assert {(c, i) for c, i, p in phases if p == "s"} == {(c, i) for c, i, p in phases if p == "f"}
    for e in flows:
        lane = slices.get((e["pid"], e["tid"]), [])
        if e["ph"] == "s":
            assert any(a <= e["ts"] <= b for a, b in lane), e
        else:
            assert e.get("bp") == "e" and any(a == e["ts"] for a, _ in lane), e


def test_the_analysis_tracks_hold_the_lakes_rows(exported):
    steps, findings, gaps, path_edges = exported[3]
    ours = Counter((e["tid"], e["ph"]) for e in exported[2]["traceEvents"] if e.get("cat") == "tracelake")
    assert ours[(1, "X")] == steps and ours[(3, "i")] == findings and ours[(2, "X")] == path_edges
    assert sum(n for (tid, ph), n in ours.items() if tid >= 100) == gaps > 0
    advice = [e["args"]["advice"] for e in exported[2]["traceEvents"] if e["ph"] == "i"]
    assert all(advice) and len(advice) == findings
