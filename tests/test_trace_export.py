"""`tracelake export --format perfetto` (jobs/trace_export.py, sql/analysis/chrome_trace_events.sql):
the file is valid Trace Event Format, as Google's published spec ("Trace Event Format", the
document chrome://tracing and Perfetto's JSON importer follow) defines it; its flows bind to
events of the file; and tracelake reads it back to the same kernels, GPU time and steps as the
original, for a PyTorch and an Nsight Systems sample."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import DATA
from tracelake.cli.main import main
from tracelake.lake.database import connect

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
    assert main(["relink", "--lake", str(lake)]) == 0  # derived as `tracelake run` leaves it (conftest.ingested)
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


# `tracelake export` of a distributed run (jobs/run_export.py): all ranks in one file, the
# ranks' processes apart, each collective instance a flow through its ranks' kernels. Truth: the
# raw rank files (their kernels, read here as JSON) and collective_instances.
RUNS = {"collectives": Path(__file__).parent / "recorded" / "torch-2.11_collectives-4rank_h200x4",
        "ddp": Path(__file__).parent / "recorded" / "torch-2.11_ddp-4rank_h200x4"}


@pytest.fixture(scope="module", params=sorted(RUNS))
def run_export(request, tmp_path_factory):
    """(the file's events, collective instances with their ranks matched (ranks_matched > 1),
    the raw files' kernels per rank and GPU, the re-ingested file's kernels per GPU)."""
    tmp = tmp_path_factory.mktemp("run_" + request.param)
    ranks = sorted(RUNS[request.param].glob("rank*.pt.trace.json.gz"))
    lake, out = tmp / "lake", tmp / "run.json.gz"
    assert main(["ingest", *map(str, ranks), "--lake", str(lake), "-q"]) == 0
    if request.param == "ddp":  # from the lake, the run named by a trace id of one of its ranks
        assert main(["export", "--lake", str(lake), "--run", "rank0", "-o", str(out)]) == 0
    else:  # from the rank files
        assert main(["export", *map(str, ranks), "-o", str(out)]) == 0
    con = connect(lake)
    instances = dict(con.execute("SELECT instance, ranks_matched FROM collective_instances WHERE ranks_matched > 1")
                     .fetchall())
    con.close()
    raw = {}
    for path in ranks:
        doc = json.loads(gzip.decompress(path.read_bytes()))
        kernels = [e for e in doc["traceEvents"] if e.get("cat") == "kernel"]
        raw[doc["distributedInfo"]["rank"]] = (len(kernels), {e["args"]["device"] for e in kernels})
    again = tmp / "again"
    assert main(["ingest", str(out), "--lake", str(again), "-q"]) == 0
    con = connect(again)
    back = dict(con.execute("SELECT device_id, count(*) FROM kernels GROUP BY ALL").fetchall())
    con.close()
    return json.loads(gzip.decompress(out.read_bytes()))["traceEvents"], instances, raw, back


def _process_names(events) -> dict[int, str]:
    names = [(e["pid"], e["args"]["name"]) for e in events if e["ph"] == "M" and e["name"] == "process_name"]
    assert len(names) == len(dict(names))  # one name a process
    return dict(names)


def test_run_events_are_valid_and_each_process_is_of_one_rank(run_export):
    events, _, raw, _ = run_export
    names = _process_names(events)
    for e in events:
        assert e["ph"] in PHASES and isinstance(e["pid"], int), e
        assert names[e["pid"]].startswith("rank "), e  # every event is on a named process of a rank
    rank_of = {pid: int(name.split()[1]) for pid, name in names.items()}
    assert set(rank_of.values()) == set(raw)
    for r in raw:  # each rank: its host process, its GPU and its analysis process, none shared
        assert sorted(n.split(" · ")[1].split()[0] for p, n in names.items() if rank_of[p] == r) == \
            ["GPU", "process", "tracelake"]


def test_per_rank_kernel_counts_round_trip(run_export):
    events, _, raw, back = run_export
    rank_of = {pid: int(name.split()[1]) for pid, name in _process_names(events).items()}
    exported = Counter(rank_of[e["pid"]] for e in events if e.get("cat") == "kernel")
    assert exported == {r: n for r, (n, _) in raw.items()}
    # re-ingested: the same kernels on each rank's GPU (each rank of these runs had its own GPU)
    assert all(len(devices) == 1 for _, devices in raw.values())
    assert back == {next(iter(devices)): n for n, devices in raw.values()}


def test_every_run_flow_binds_to_a_slice_of_the_file(run_export):
    """Each flow (launches and collectives): one 's', one 'f', any 't' between them in time;
    's' and 't' inside a slice of their thread, 'f' (bp 'e') at the start of one."""
    events = run_export[0]
    slices: dict[tuple, list[tuple[float, float]]] = {}
    for e in events:
        if e["ph"] == "X":
            slices.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    chains: dict[tuple, list[dict]] = {}
    for e in events:
        if e["ph"] in "stf":
            chains.setdefault((e["cat"], e["name"], e["id"]), []).append(e)
    assert {cat for cat, _, _ in chains} == {"ac2g", "collective"}
    for chain in chains.values():
        chain.sort(key=lambda e: e["ts"])
        assert chain[0]["ph"] == "s" and chain[-1]["ph"] == "f" and all(e["ph"] == "t" for e in chain[1:-1]), chain
        for e in chain:
            lane = slices.get((e["pid"], e["tid"]), [])
            if e["ph"] == "f":
                assert e.get("bp") == "e" and any(a == e["ts"] for a, _ in lane), e
            else:
                assert any(a <= e["ts"] <= b for a, b in lane), e


def test_one_flow_chain_per_collective_instance_through_its_ranks_kernels(run_export):
    events, instances, _, _ = run_export
    names = _process_names(events)
    kernels = {(e["pid"], e["tid"], e["ts"]): e["name"] for e in events if e.get("cat") == "kernel"}
    chains: dict[int, list[dict]] = {}
    for e in events:
        if e.get("cat") == "collective":
            chains.setdefault(e["id"], []).append(e)
    assert instances and len(chains) == len(instances)
    for instance, chain in chains.items():
        assert len(chain) == instances[instance]
        ranks = [names[e["pid"]].split(" · ")[0] for e in chain]
        assert len(set(ranks)) == len(ranks)  # one hop on each rank
        assert all("GPU" in names[e["pid"]] for e in chain)
        assert all("nccl" in kernels[(e["pid"], e["tid"], e["ts"])].lower() for e in chain)  # a comm kernel


def test_the_same_trace_gives_the_same_bytes(tmp_path):
    """Events of equal timestamps came out in DuckDB's order of the moment, and the gzip header held
    the time of writing: two exports of one trace differed (3 of 3 exports of the PyTorch sample).
    A file and a run, whose collectives include a send matched with its recv."""
    skew = sorted(map(str, (Path(__file__).parent / "recorded" / "torch-2.11_collectives-skew-2rank_h200x2")
                      .glob("rank*.pt.trace.json.gz")))
    for name, inputs in (("file", [str(DATA / SAMPLES["pytorch"])]), ("run", skew)):
        outs = [tmp_path / f"{name}{i}.json.gz" for i in range(3)]
        for out in outs:
            assert main(["export", *inputs, "-o", str(out)]) == 0
        assert len({out.read_bytes() for out in outs}) == 1, name
