"""GPU memory views (issue #20): timeline, allocations, peaks, what is live at the peak, operator
memory, and the memory findings.

Witnesses: a hand-built trace whose every number is chosen here; the allocator's own running totals
('Total Allocated' on each [memory] event), which the time order of events must replay; the Nsight
export's SQLite tables read directly; and, when recorded, torch.cuda's own peak and end figures
(tests/golden/memory)."""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import pytest
from conftest import DATA
from tracelake.cli.main import main
from tracelake.lake.database import connect

MIB = 1 << 20
BASE = 1024 * MIB  # allocated before the trace: parameters and optimizer state
STEPS = 5
LEAK = 8 * MIB  # kept every step by the leaking variant
ACTIVATION = 64 * MIB
EXTRA = 4 * MIB  # a before-trace block freed in the first step


class _Trace:
    """A Kineto trace written event by event; [memory] events carry the running totals."""

    def __init__(self):
        self.events: list[dict] = []
        self.allocated = BASE
        self.reserved = 2048 * MIB

    def op(self, name: str, ts: float, dur: float, cat: str = "cpu_op", tid: int = 1):
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur,
                            "args": {}})

    def memory(self, ts: float, addr: int, size: int, tid: int = 1):
        self.allocated += size
        self.events.append({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1,
                            "tid": tid, "ts": ts,
                            "args": {"Total Reserved": self.reserved, "Total Allocated": self.allocated,
                                     "Bytes": size, "Addr": addr, "Device Id": 0, "Device Type": 1}})


def _training_trace(leak: bool) -> dict:
    """STEPS steps of 1000 µs: forward allocates an activation (freed in the backward), the optimizer
    step allocates a temporary via aten::to > aten::_to_copy > aten::empty_strided (freed at once),
    and, when leaking, aten::cat inside the optimizer step keeps LEAK bytes every step."""
    t = _Trace()
    for i in range(STEPS):
        s = 1000.0 * i
        t.op(f"ProfilerStep#{i}", s, 990, cat="user_annotation")
        t.op("forward", s + 10, 300, cat="user_annotation")
        t.op("aten::mul", s + 20, 50)
        t.memory(s + 30, 0x10000 + i, ACTIVATION)
        if i == 0:  # a block from before the trace, freed here
            t.memory(s + 80, 0x90000, -EXTRA)
        t.op("backward", s + 400, 300, cat="user_annotation")
        t.op("aten::mul_backward", s + 410, 50)
        t.memory(s + 420, 0x10000 + i, -ACTIVATION)
        t.op("Optimizer.step#SGD.step", s + 800, 150)
        t.op("aten::to", s + 810, 40)
        t.op("aten::_to_copy", s + 812, 30)
        t.op("aten::empty_strided", s + 814, 5)
        t.memory(s + 815, 0x20000 + i, 2 * MIB)
        t.memory(s + 830, 0x20000 + i, -2 * MIB)  # inside aten::_to_copy, outside aten::empty_strided
        if leak:
            t.op("aten::cat", s + 860, 20)
            t.memory(s + 865, 0x30000 + i, LEAK)
    return {"schemaVersion": 1, "traceEvents": t.events}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A lake with the leaking and the steady variant of the hand-built trace."""
    root = tmp_path_factory.mktemp("memory")
    for name, leak in (("leaky", True), ("steady", False)):
        (root / f"{name}.json").write_text(json.dumps(_training_trace(leak)))
    lake = root / "lake"
    assert main(["ingest", str(root / "leaky.json"), str(root / "steady.json"), "--lake", str(lake), "-q"]) == 0
    con = connect(lake)
    yield con
    con.close()


def _trace_id(con, stem: str) -> str:
    return con.execute("SELECT trace_id FROM traces WHERE file_name = ?", [f"{stem}.json"]).fetchone()[0]


def test_peaks_of_a_hand_built_trace(built):
    leaky = _trace_id(built, "leaky")
    rows = built.execute("""SELECT step_index, peak_allocated_bytes, peak_reserved_bytes, peak_at_ns,
                                   allocated_at_start_bytes, allocated_at_end_bytes, allocations
                            FROM memory_peaks WHERE trace_id = ? AND device_type = 'cuda' ORDER BY step_index""",
                         [leaky]).fetchall()
    assert len(rows) == STEPS
    for i, (step, peak, reserved, at_ns, start, end, allocations) in enumerate(rows):
        carried = BASE + i * LEAK - (EXTRA if i else 0)
        assert step == i
        assert start == carried
        assert peak == carried + ACTIVATION  # the activation is the step's high point ...
        assert at_ns == (1000 * i + 30) * 1000  # ... reached when it was allocated
        assert reserved == 2048 * MIB
        assert end == carried + LEAK - (EXTRA if i == 0 else 0)
        assert allocations == 3


def test_allocations_pair_alloc_and_free(built):
    leaky = _trace_id(built, "leaky")
    by_status = dict(built.execute("""SELECT status, count(*) FROM memory_allocations WHERE trace_id = ?
                                      GROUP BY status""", [leaky]).fetchall())
    assert by_status == {"freed": 2 * STEPS, "never_freed": STEPS, "alive_before_trace": 1}
    temp = built.execute("""SELECT bytes, lifetime_ns, alloc_operator, free_operator, category, alloc_nvtx_path
                            FROM memory_allocations WHERE trace_id = ? AND bytes = ? ORDER BY alloc_ns LIMIT 1""",
                         [leaky, 2 * MIB]).fetchone()
    assert temp == (2 * MIB, 15_000, "aten::empty_strided", "aten::_to_copy", "optimizer", "ProfilerStep#0")
    act = built.execute("""SELECT alloc_operator, free_operator, category, lifetime_ns FROM memory_allocations
                           WHERE trace_id = ? AND bytes = ? ORDER BY alloc_ns LIMIT 1""",
                        [leaky, ACTIVATION]).fetchone()
    assert act == ("aten::mul", "aten::mul_backward", "forward", 390_000)
    before = built.execute("""SELECT bytes, free_ns, category FROM memory_allocations
                              WHERE trace_id = ? AND status = 'alive_before_trace'""", [leaky]).fetchall()
    assert before == [(EXTRA, 80_000, "before trace")]


def test_what_is_live_at_the_peak(built):
    leaky = _trace_id(built, "leaky")
    last = STEPS - 1
    rows = dict(built.execute("""SELECT key, live_bytes FROM memory_peak_breakdown
                                 WHERE trace_id = ? AND step_index = ? AND grouping = 'operator'""",
                              [leaky, last]).fetchall())
    # at the last step's peak: the activation, the LEAK kept by each earlier step, and what came before
    assert rows == {"aten::mul": ACTIVATION, "aten::cat": last * LEAK, "(allocated before the trace)": BASE - EXTRA}
    categories = dict(built.execute("""SELECT key, live_bytes FROM memory_peak_breakdown
                                       WHERE trace_id = ? AND step_index = ? AND grouping = 'category'""",
                                    [leaky, last]).fetchall())
    assert categories == {"forward": ACTIVATION, "optimizer": last * LEAK, "(allocated before the trace)": BASE - EXTRA}
    # every grouping accounts for the whole peak
    totals = built.execute("""SELECT grouping, sum(live_bytes), any_value(peak_allocated_bytes)
                              FROM memory_peak_breakdown WHERE trace_id = ? GROUP BY grouping, step_index""",
                           [leaky]).fetchall()
    assert totals and all(total == peak for _, total, peak in totals)


def test_operator_memory_self_and_total(built):
    steady = _trace_id(built, "steady")
    rows = {r[0]: r[1:] for r in built.execute(
        """SELECT operator, calls, increase_bytes, self_increase_bytes, allocations, self_allocations,
                  allocated_bytes, self_allocated_bytes
           FROM operator_memory WHERE trace_id = ?""", [steady]).fetchall()}
    # the temporary: allocated in aten::empty_strided, freed in its parent aten::_to_copy
    assert rows["aten::empty_strided"] == (STEPS, STEPS * 2 * MIB, STEPS * 2 * MIB, STEPS, STEPS,
                                           STEPS * 2 * MIB, STEPS * 2 * MIB)
    assert rows["aten::_to_copy"] == (STEPS, 0, -STEPS * 2 * MIB, STEPS, 0, STEPS * 2 * MIB, 0)
    assert rows["aten::to"] == (STEPS, 0, 0, STEPS, 0, STEPS * 2 * MIB, 0)
    assert rows["aten::mul"][1:] == (STEPS * ACTIVATION, STEPS * ACTIVATION, STEPS, STEPS,
                                     STEPS * ACTIVATION, STEPS * ACTIVATION)


def test_a_leak_is_found_and_a_steady_trace_is_not(built):
    found = built.execute("""SELECT trace_id, device_id, evidence FROM findings
                             WHERE rule = 'memory_growth'""").fetchall()
    assert [(t, d) for t, d, _ in found] == [(_trace_id(built, "leaky"), 0)]
    evidence = found[0][2]
    assert "8.00 MiB per step" in evidence and "aten::cat" in evidence
    assert f"{(STEPS - 1) * LEAK / MIB:.1f} MiB allocated in these steps is never freed" in evidence


def test_timeline_replays_the_allocator_totals(sample_con):
    """Time order (event_id) must replay the allocator's running totals: each event's total is the
    previous total plus its size (the file interleaves threads out of order)."""
    rows = sample_con.execute("""
        WITH e AS (SELECT trace_id, device_type, total_allocated_bytes AS total, bytes,
                          lag(total_allocated_bytes) OVER (PARTITION BY trace_id, pid, device_type, device_id
                                                           ORDER BY event_id) AS before
                   FROM memory_events WHERE total_allocated_bytes IS NOT NULL)
        SELECT count(*), count(*) FILTER (WHERE before + bytes <> total) FROM e WHERE before IS NOT NULL""").fetchone()
    assert rows[0] > 1000 and rows[1] == 0


def test_nsys_timeline_totals_match_the_cudamalloc_sizes(sample_con, tmp_path):
    path = DATA / "nsys-2025.3.1_cnn-train-pageable_h100.sqlite.gz"
    raw = tmp_path / "export.sqlite"
    raw.write_bytes(gzip.decompress(path.read_bytes()))
    db = sqlite3.connect(raw)
    # device memory the traced cudaMalloc / cudaFree calls allocated and freed, by correlation id
    malloc, free = db.execute("""
        SELECT sum(m.bytes) FILTER (WHERE s.value LIKE 'cudaMalloc%' AND m.memoryOperationType = 0),
               coalesce(sum(m.bytes) FILTER (WHERE s.value LIKE 'cudaFree%' AND m.memoryOperationType = 1), 0)
        FROM CUDA_GPU_MEMORY_USAGE_EVENTS m
        JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = m.correlationId
        JOIN StringIds s ON s.id = r.nameId
        WHERE m.memKind = 2""").fetchone()
    n_malloc = db.execute("""SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId
                             WHERE s.value LIKE 'cudaMalloc%'""").fetchone()[0]
    db.close()
    trace = sample_con.execute("SELECT trace_id FROM traces WHERE file_name = ?", [path.name]).fetchone()[0]
    end, peak, source = sample_con.execute("""SELECT allocated_at_end_bytes, peak_allocated_bytes, source
                                              FROM memory_summary WHERE trace_id = ?""", [trace]).fetchone()
    assert source == "cuda_memory_usage_events"
    assert end == malloc - free and peak == malloc and malloc > 700 * MIB
    allocs = sample_con.execute("""SELECT count(*), sum(bytes) FROM memory_allocations
                                   WHERE trace_id = ? AND status = 'never_freed'""", [trace]).fetchone()
    assert allocs == (n_malloc, malloc)  # every cudaMalloc a block, none freed in this run


@pytest.mark.corpus
def test_nsys_export_without_memory_events_says_so(corpus_con, corpus):
    name = "nsys-2025.3.1_resnet50-train-nvtx_h100.sqlite"
    db = sqlite3.connect(corpus / "traces" / "nsys" / name)
    n_malloc = db.execute("""SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId
                             WHERE s.value LIKE 'cudaMalloc%'""").fetchone()[0]
    db.close()
    source, events, note = corpus_con.execute("""
        SELECT s.source, s.events, s.note FROM memory_sources s JOIN traces t USING (trace_id)
        WHERE t.file_name = ?""", [name]).fetchone()
    assert (source, events) == (None, 0)
    assert "--cuda-memory-usage=true" in note and f"{n_malloc} cudaMalloc" in note


RECORDED = Path(__file__).parent / "recorded"
GOLDEN = ["torch-2.11_gpt-train-bf16-sdpa_h100", "torch-2.11_resnet50-train-bf16-channels-last-shapes_h100"]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    lake = tmp_path_factory.mktemp("recorded") / "lake"
    traces = [str(RECORDED / f"{name}.pt.trace.json.gz") for name in GOLDEN]
    assert main(["ingest", *traces, "--lake", str(lake), "-q"]) == 0
    con = connect(lake)
    yield con
    con.close()


@pytest.mark.parametrize("name", GOLDEN)
def test_step_peaks_equal_the_allocators_own(recorded, name):
    """torch.cuda.max_memory_allocated() / max_memory_reserved() per profiled step, peak statistics
    reset at its start, recorded by the script that made the trace (tests/recorded/README.md)."""
    truth = json.loads((RECORDED / f"{name}_memory.json").read_text())
    ours = {step: (allocated, reserved) for step, allocated, reserved in recorded.execute("""
        SELECT p.step, p.peak_allocated_bytes, p.peak_reserved_bytes FROM memory_peaks p JOIN traces t USING (trace_id)
        WHERE t.file_name = ? AND p.device_type = 'cuda'""", [f"{name}.pt.trace.json.gz"]).fetchall()}
    profiled = [s for s in truth["steps"] if s["profiled"]]
    assert len(ours) == len(profiled) >= 2
    for s in profiled:
        allocated, reserved = ours[f"ProfilerStep#{s['profiler_step']}"]
        assert allocated == pytest.approx(s["max_memory_allocated_bytes"], rel=0.01)
        assert reserved == pytest.approx(s["max_memory_reserved_bytes"], rel=0.01)


@pytest.mark.parametrize("name", GOLDEN)
def test_allocated_at_the_end_equals_the_snapshot(recorded, name):
    truth = json.loads((RECORDED / f"{name}_memory.json").read_text())
    end, reserved = recorded.execute("""
        SELECT s.allocated_at_end_bytes, s.reserved_at_end_bytes FROM memory_summary s JOIN traces t USING (trace_id)
        WHERE t.file_name = ? AND s.device_type = 'cuda'""", [f"{name}.pt.trace.json.gz"]).fetchone()
    assert end == truth["snapshot_allocated_bytes"] == truth["steps"][-1]["memory_allocated_at_step_end_bytes"]
    assert reserved == truth["snapshot_reserved_bytes"]


def test_report_shows_the_peaks_and_what_held_them(recorded):
    from conftest import rendered_page

    name = GOLDEN[0]
    truth = json.loads((RECORDED / f"{name}_memory.json").read_text())
    trace = recorded.execute("SELECT trace_id FROM traces WHERE file_name = ?", [f"{name}.pt.trace.json.gz"]).fetchone()[0]
    html = rendered_page(recorded.cursor(), trace).html
    section = html[html.index("<h2>GPU memory</h2>"):]
    assert section.count('src="data:image/svg+xml;base64,') >= 1  # memory over time
    peak = f"{truth['steps'][1]['max_memory_allocated_bytes'] / 2**30:.2f} GiB"
    assert section.count(f'<td class="n">{peak}</td>') == 3  # the peak table: one row per profiled step
    assert "What held the memory at the highest peak (ProfilerStep#" in section
    before = f"{truth['snapshot_allocated_bytes'] / 2**30:.2f} GiB"
    assert "(allocated before the trace)" in section and before in section


@pytest.mark.corpus
def test_corpus_memory_is_consistent(corpus_con):
    """On every corpus trace with allocator events: time order replays the allocator's own totals,
    each grouping of what was live at a peak adds up to the peak, and every block is counted once."""
    replay = corpus_con.execute("""
        WITH e AS (SELECT trace_id, total_allocated_bytes AS total, bytes,
                          lag(total_allocated_bytes) OVER (PARTITION BY trace_id, pid, device_type, device_id
                                                           ORDER BY event_id) AS before
                   FROM memory_events WHERE total_allocated_bytes IS NOT NULL)
        SELECT count(DISTINCT trace_id), count(*) FILTER (WHERE before + bytes <> total) FROM e""").fetchone()
    assert replay[0] >= 8 and replay[1] == 0
    sums = corpus_con.execute("""
        SELECT count(*), count(*) FILTER (WHERE total <> peak) FROM (
            SELECT sum(live_bytes) AS total, any_value(peak_allocated_bytes) AS peak FROM memory_peak_breakdown
            GROUP BY trace_id, pid, device_type, device_id, step_index, grouping)""").fetchone()
    assert sums[0] > 100 and sums[1] == 0
    blocks = corpus_con.execute("""
        SELECT count(*) FILTER (WHERE n > 1) FROM (
            SELECT count(*) AS n FROM memory_allocations GROUP BY trace_id, coalesce(alloc_event_id, -free_event_id))""")
    assert blocks.fetchone()[0] == 0


def test_blocks_pair_each_allocation_with_the_next_event_at_its_address():
    import polars as pl
    from tracelake.analysis.memory_context import blocks

    events = pl.DataFrame({
        "event_id": [0, 1, 2, 3, 4, 5, 6],
        "ts_ns": [0, 10, 20, 30, 40, 50, 60],
        "context_id": [0, 1, 2, 3, 4, 5, 6],
        "mem_kind": [None] * 7,
        "pid": [1] * 7, "device_type": ["cuda"] * 7,
        "device_id": [0, 0, 0, 0, 1, 0, 0],
        "address": [0xA, 0xB, 0xA, 0xB, 0xA, None, 0xC],
        "bytes": [8, 4, -8, 4, -16, 2, -32],
    }, schema_overrides={"mem_kind": pl.String})
    got = blocks(events).select("device_id", "address", "bytes", "status", "alloc_event_id", "free_event_id",
                                "free_ns", "alloc_context_id", "free_context_id").rows()
    assert got == [
        (0, 0xA, 8, "freed", 0, 2, 20, 0, 2),
        (0, 0xB, 4, "free_missing", 1, None, None, 1, None),  # allocated again at 0xB before a free
        (0, 0xB, 4, "never_freed", 3, None, None, 3, None),
        (1, 0xA, 16, "alive_before_trace", None, 4, 40, None, 4),  # same address, other device
        (0, 0xC, 32, "alive_before_trace", None, 6, 60, None, 6),  # no address: no block for event 5
    ]
