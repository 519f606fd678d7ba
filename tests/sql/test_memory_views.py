"""sql/analysis/memory_*.sql and operator_memory.sql on literal rows: the allocator's totals vs the
Nsight running sum, pairing, step peaks (including a peak carried into the step), what is live at
the peak, and tb-profiler's self/total operator memory."""

from __future__ import annotations

from .conftest import given, load_sql, rows

EVENT = ["trace_id", "event_id", "ts_ns", "pid", "device_type", "device_id", "address", "bytes",
         "total_allocated_bytes", "total_reserved_bytes", "mem_kind"]
CONTEXT = ["trace_id", "event_id", "context_id"]
BLOCK = ["trace_id", "pid", "device_type", "device_id", "address", "mem_kind", "bytes", "status", "alloc_event_id",
         "free_event_id", "alloc_ns", "free_ns", "alloc_context_id", "free_context_id"]
CALL = ["trace_id", "context_id", "operator", "operator_stack", "call_stack", "nvtx_path", "category"]
ANNOTATION = ["trace_id", "annotation_id", "pid", "tid", "start_ns", "end_ns", "name", "kind", "is_gpu"]


def test_empty(con):
    for path in ("analysis/memory_timeline.sql", "analysis/memory_peak_live.sql", "analysis/operator_memory.sql"):
        load_sql(con, path)
    for view in ("memory_timeline", "memory_peaks", "memory_allocations", "memory_peak_breakdown", "operator_memory"):
        assert rows(con, f"SELECT * FROM {view}") == []


def test_timeline_takes_pytorch_totals_and_sums_nsys_device_events(con):
    given(con, "memory_events", EVENT, [
        ("p", 0, 10, 1, "cuda", 0, 0xA, 100, 1_100, 2_000, None),  # the allocator's totals, absolute
        ("p", 1, 20, 1, "cuda", 0, 0xA, -100, 1_000, 2_000, None),
        ("n", 0, 10, 2, "cuda", 0, 0xB, 100, None, None, "device"),
        ("n", 1, 15, 2, "cuda", 0, 0xC, 50, None, None, "pinned"),  # host memory: left out
        ("n", 2, 20, 2, "cuda", 0, 0xB, -40, None, None, "device"),
    ])
    load_sql(con, "analysis/memory_timeline.sql")
    assert rows(con, """SELECT trace_id, source, event_id, delta_bytes, allocated_bytes, reserved_bytes
                        FROM memory_timeline ORDER BY trace_id, event_id""") == [
        ("n", "cuda_memory_usage_events", 0, 100, 100, None),
        ("n", "cuda_memory_usage_events", 2, -40, 60, None),
        ("p", "pytorch_allocator", 0, 100, 1_100, 2_000),
        ("p", "pytorch_allocator", 1, -100, 1_000, 2_000),
    ]


def _two_steps(con):
    given(con, "traces", ["trace_id", "source", "end_ns"], [("t", "pytorch", 1_000)])
    given(con, "annotations", ANNOTATION, [
        ("t", 1, 1, 11, 0, 100, "ProfilerStep#1", "user_annotation", False),
        ("t", 2, 1, 11, 100, 200, "ProfilerStep#2", "user_annotation", False),
    ])
    # 500 bytes from before the trace; step 1 allocates A (300) and B (100), frees A; step 2 frees B
    given(con, "memory_events", EVENT, [
        ("t", 0, 10, 1, "cuda", 0, 0xA, 300, 800, 1_000, None),
        ("t", 1, 20, 1, "cuda", 0, 0xB, 100, 900, 1_000, None),
        ("t", 2, 30, 1, "cuda", 0, 0xA, -300, 600, 1_000, None),
        ("t", 3, 150, 1, "cuda", 0, 0xB, -100, 500, 1_000, None),
    ])
    given(con, "memory_context", CONTEXT, [("t", 0, 0), ("t", 1, 1), ("t", 2, 2), ("t", 3, 2)])
    given(con, "memory_blocks", BLOCK, [
        ("t", 1, "cuda", 0, 0xA, None, 300, "freed", 0, 2, 10, 30, 0, 2),
        ("t", 1, "cuda", 0, 0xB, None, 100, "freed", 1, 3, 20, 150, 1, 2),
    ])
    given(con, "memory_call_contexts", CALL, [
        ("t", 0, "aten::mm", ["aten::linear", "aten::mm"], "f.py(1): fwd > aten::linear > aten::mm", None, "forward"),
        ("t", 1, "aten::empty", ["aten::empty"], "f.py(2): bwd > aten::empty", None, "backward"),
        ("t", 2, None, None, "f.py(3): step", None, "other"),
    ])


def test_peaks_count_the_level_carried_into_the_step(con):
    _two_steps(con)
    load_sql(con, "analysis/memory_peaks.sql")
    assert rows(con, """SELECT step, peak_allocated_bytes, peak_at_ns, peak_event_id, allocated_at_start_bytes,
                               allocated_at_end_bytes, allocations FROM memory_peaks ORDER BY step_index""") == [
        ("ProfilerStep#1", 900, 20, 1, 500, 600, 2),
        ("ProfilerStep#2", 600, 100, 2, 600, 500, 0),  # nothing rises in step 2: its peak is its start
    ]


def test_allocations_and_what_is_live_at_the_peak(con):
    _two_steps(con)
    load_sql(con, "analysis/memory_peak_live.sql")
    assert rows(con, """SELECT address, bytes, status, lifetime_ns, alloc_operator, free_call_stack, category
                        FROM memory_allocations ORDER BY alloc_event_id""") == [
        (0xA, 300, "freed", 20, "aten::mm", "f.py(3): step", "forward"),
        (0xB, 100, "freed", 130, "aten::empty", "f.py(3): step", "backward"),
    ]
    assert rows(con, """SELECT step_index, grouping, key, live_bytes, blocks FROM memory_peak_breakdown
                        WHERE grouping <> 'call_stack' ORDER BY step_index, grouping, live_bytes DESC""") == [
        (0, "category", "(allocated before the trace)", 500, 0),
        (0, "category", "forward", 300, 1),
        (0, "category", "backward", 100, 1),
        (0, "operator", "(allocated before the trace)", 500, 0),
        (0, "operator", "aten::mm", 300, 1),
        (0, "operator", "aten::empty", 100, 1),
        (1, "category", "(allocated before the trace)", 500, 0),
        (1, "category", "backward", 100, 1),
        (1, "operator", "(allocated before the trace)", 500, 0),
        (1, "operator", "aten::empty", 100, 1),
    ]


def test_operator_memory_self_and_total(con):
    _two_steps(con)
    given(con, "cpu_ops", ["trace_id", "op_id", "pid", "tid", "start_ns", "end_ns", "name"], [
        ("t", 1, 1, 11, 5, 25, "aten::linear"), ("t", 2, 1, 11, 6, 24, "aten::mm")])
    load_sql(con, "analysis/operator_memory.sql")
    assert rows(con, """SELECT operator, calls, increase_bytes, self_increase_bytes, allocations, self_allocations,
                               allocated_bytes, self_allocated_bytes FROM operator_memory ORDER BY operator""") == [
        ("aten::empty", None, 100, 100, 1, 1, 100, 100),
        ("aten::linear", 1, 300, 0, 1, 0, 300, 0),  # its child aten::mm allocated
        ("aten::mm", 1, 300, 300, 1, 1, 300, 300),
    ]
