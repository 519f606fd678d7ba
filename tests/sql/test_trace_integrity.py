"""sql/analysis/trace_integrity.sql: per trace and check, whether its numbers can be taken as fact."""

from __future__ import annotations

import json

from .conftest import given, load_sql, rows

API = ["trace_id", "pid", "tid", "start_ns", "end_ns", "duration_ns", "correlation_id", "name", "api"]
KERNEL = ["trace_id", "pid", "tid", "device_id", "stream_id", "start_ns", "end_ns", "duration_ns", "correlation_id",
          "name"]
ANNOTATION = ["trace_id", "annotation_id", "pid", "tid", "start_ns", "end_ns", "name", "kind", "is_gpu"]


def _kernel(trace, pid, start, end, corr, name="gemm"):
    return (trace, pid, 11, 0, 7, start, end, end - start, corr, name)


def _call(trace, start, corr):
    return (trace, 1, 11, start, start + 50, 50, corr, "cudaLaunchKernel", "runtime")


def _checks(con, trace: str) -> dict[str, tuple]:
    return {c: (p, d, a) for c, p, d, a in rows(con, """SELECT check_name, passed, detail, affected
                                                         FROM trace_integrity WHERE trace_id = ?""", [trace])}


def test_each_check_passes_on_a_sound_trace_and_fires_on_its_fault(con):
    given(con, "traces", ["trace_id", "end_ns", "metadata_json"], [
        ("good", 100_000, "{}"),
        ("bad", 100_000, json.dumps({"unanalysed_device_events": {"npu_op": 5, "dsp_op": 2}})),
    ])
    given(con, "api_calls", API, [_call("good", 500, 1), _call("good", 2_500, 2),
                                  _call("bad", 500, 1), _call("bad", 5_000, 2), _call("bad", 9_000, 3),
                                  _call("bad", 20_000, 4)])
    given(con, "kernels", KERNEL, [
        _kernel("good", 1, 1_000, 2_000, 1), _kernel("good", 1, 3_000, 4_000, 2),
        _kernel("bad", None, 100, 400, None),    # no process, and before the first call
        _kernel("bad", 1, 4_000, 4_500, 2),       # starts before its call (5_000)
        _kernel("bad", 1, 9_100, 9_400, 3),       # launched in the first step below
        _kernel("bad", 1, 20_100, 60_000, 4),     # launched after the steps: outside them
    ])
    given(con, "annotations", ANNOTATION, [
        ("good", 1, 1, 11, 0, 2_200, "ProfilerStep#1", "user_annotation", False),
        ("good", 2, 1, 11, 2_200, 4_200, "ProfilerStep#2", "user_annotation", False),
        ("bad", 1, 1, 11, 9_000, 9_500, "ProfilerStep#1", "user_annotation", False),
        ("bad", 2, 1, 11, 9_500, 10_000, "ProfilerStep#2", "user_annotation", False),
    ])
    load_sql(con, "analysis/trace_integrity.sql")
    good = _checks(con, "good")
    assert good == {c: (True, None, None) for c in ("device_work_analysed", "gpu_work_has_ids", "gpu_work_in_window",
                                                   "steps_cover_gpu_work", "step_rule_agrees", "clocks_line_up")}
    bad = _checks(con, "bad")
    assert bad["device_work_analysed"] == (False, "device events of categories not analysed: npu_op (5), dsp_op (2)", 7)
    assert bad["gpu_work_has_ids"] == (False, "1 of 4 GPU operations have no process or device", 1)
    assert bad["gpu_work_in_window"] == (False, "1 GPU operations start before the first API call", 1)
    # the steps hold 300 ns of 500 + 300 + 39_900 ns busy (the pid-less kernel counts in no process)
    busy = 500 + 300 + 39_900
    assert bad["steps_cover_gpu_work"][0] is False
    assert bad["steps_cover_gpu_work"][2] == round(100 - 100 * 300 / busy, 1)
    assert bad["clocks_line_up"] == (False, "1 of 3 kernels start before the call that launched them", 1)
    assert bad["step_rule_agrees"] == (True, None, None)


def test_periods_inside_an_annotated_step_disagree_with_it(con):
    given(con, "traces", ["trace_id", "end_ns", "metadata_json"], [("t", 500_000, "{}")])
    given(con, "annotations", ANNOTATION, [("t", 1, 1, 11, 0, 474_000, "ProfilerStep#1", "user_annotation", False)])
    given(con, "kernels", KERNEL, [_kernel("t", 1, 1_000 + i * 16_000 + d, 6_000 + i * 16_000 + d, None, name)
                                   for i in range(28) for d, name in ((0, "attn"), (6_000, "mlp"))])
    load_sql(con, "analysis/trace_integrity.sql")
    passed, detail, steps = _checks(con, "t")["step_rule_agrees"]
    assert passed is False and steps >= 3
    assert detail == f"{int(steps)} steps found by periodicity inside 1 annotated step range(s) such as 'ProfilerStep#1'"
