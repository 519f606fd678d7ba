"""The step rule (sql/analysis/steps.sql) on real traces, against the traces' own ranges read from the
raw JSON: a single ProfilerStep is the step unless the GPU work inside it repeats with a period
that covers most of it, and the ranks of one run are cut by one rule."""

from __future__ import annotations

import gzip
import json
import re
import statistics
from pathlib import Path

import pytest
from conftest import REPO, ingested
from tracelake.analysis.critpath_graph import LIFECYCLE_CALLS

RECORDED = REPO / "tests" / "recorded"
ODD = "torch-2.11_ops-odd-sizes_h100"
DLRM = "dlrm_8rank_v100"
SD35 = "tracelens_mi300x_sd35_xdit_inference_rank0_large"
TIMESFORMER = "tracelens_h100_timesformer_inference_pystack"


def raw_events(path: Path, keep) -> list[dict]:
    """The complete ('X') events of a Kineto JSON file for which keep(event) holds."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    events = doc if isinstance(doc, list) else doc["traceEvents"]
    return [e for e in events if e.get("ph") == "X" and keep(e)]


def is_profiler_step(e: dict) -> bool:
    return e.get("cat") == "user_annotation" and str(e.get("name", "")).startswith("ProfilerStep#")


def rule_and_steps(con, file_name: str) -> tuple[list[tuple], tuple]:
    trace = con.execute("SELECT trace_id FROM traces WHERE file_name = ?", [file_name]).fetchone()[0]
    steps = con.execute("SELECT step_rule, step, wall_ns FROM steps WHERE trace_id = ? ORDER BY step_index",
                        [trace]).fetchall()
    steady = con.execute("SELECT step_rule, steps, warmup_steps, median_step_ns FROM steady_state "
                         "WHERE trace_id = ?", [trace]).fetchone()
    return steps, steady


@pytest.fixture(scope="module")
def recorded_con(tmp_path_factory):
    with ingested(tmp_path_factory, "steps", RECORDED / f"{ODD}.pt.trace.json.gz") as con:
        yield con


def test_one_profiled_step_of_short_repeats_is_the_step(recorded_con):
    # 15.6 ms of operator regions in one ProfilerStep#1; three 50 us periods of a few repeated
    # kernels hold a small part of its kernel time: they were the steps before
    truth, = json.loads((RECORDED / f"{ODD}_steps.json").read_text())[:1]
    assert truth["name"] == "ProfilerStep#1"
    steps, steady = rule_and_steps(recorded_con, f"{ODD}.pt.trace.json.gz")
    assert [(rule, step) for rule, step, _ in steps] == [("profiler_step", "ProfilerStep#1")]
    assert steps[0][2] == pytest.approx(truth["dur_us"] * 1000, abs=1000)
    assert steady[:3] == ("profiler_step", 1, 0) and steady[3] == steps[0][2]


@pytest.mark.corpus
def test_dlrm_ranks_each_one_profiler_step(corpus, corpus_con):
    """8 ranks of one DLRM training run, each profiling one step (ProfilerStep#10, 12.5-19.9 ms):
    each rank's step is that range, by one rule for the run (rank 1 had 15 periods of 18 us)."""
    files = sorted((corpus / "traces" / "pytorch" / DLRM).glob("*.pt.trace.json.gz"))
    assert len(files) == 8
    runs = corpus_con.execute("SELECT count(DISTINCT r.run_id), count(DISTINCT r.trace_id) FROM rank_runs r "
                              "JOIN traces t USING (trace_id) WHERE t.path LIKE ?", [f"%/{DLRM}/%"]).fetchone()
    assert runs == (1, 8)
    for path in files:
        raw, = raw_events(path, is_profiler_step)
        steps, steady = rule_and_steps(corpus_con, path.name)
        assert [(rule, step) for rule, step, _ in steps] == [("profiler_step", raw["name"])], path.name
        assert steps[0][2] == pytest.approx(raw["dur"] * 1000, abs=1000), path.name
        assert steady == ("profiler_step", 1, 0, steps[0][2]), path.name


@pytest.mark.corpus
def test_diffusion_loop_inside_one_profiler_step_keeps_its_periods(corpus, corpus_con):
    """SD3.5 (xDiT) serves one request in one ProfilerStep#3 (1.2 s): its transformer runs 4 times
    (4 denoising steps, '## Call CompiledFxGraph ...' ranges), 250 ms apart on the GPU. The periods
    between them are the steps."""
    path = corpus / "traces" / "pytorch" / f"{SD35}.json.gz"
    calls = sorted(e["ts"] for e in raw_events(path, lambda e: e.get("cat") == "gpu_user_annotation"
                                                and e["name"].startswith("## Call CompiledFxGraph")))
    assert len(calls) == 4
    steps, steady = rule_and_steps(corpus_con, path.name)
    assert {rule for rule, _, _ in steps} == {"periodicity"} and len(steps) == len(calls) - 1
    interval_ns = statistics.median(b - a for a, b in zip(calls, calls[1:])) * 1000
    assert steady[:3] == ("periodicity", 3, 0)
    assert steady[3] == pytest.approx(interval_ns, rel=0.02)


@pytest.mark.corpus
def test_timesformer_layers_inside_one_profiler_step_keep_their_periods(corpus, corpus_con):
    """TimeSformer answers one video in one ProfilerStep#6 (383 ms, 160 ms on the GPU): one forward
    whose 12 encoder layers (12 'modeling_timesformer.py(320): forward' frames) are 91 % of its
    kernel time and run 12.8 ms apart. By the rule (a steady period that covers most of the work)
    the 11 periods between them are the steps: a repeat the GPU work shows cannot be told from a
    loop of requests."""
    path = corpus / "traces" / "pytorch" / f"{TIMESFORMER}.json.gz"
    layers = raw_events(path, lambda e: e.get("cat") == "python_function"
                        and "modeling_timesformer.py(320): forward" in e["name"])
    assert len(layers) == 12
    steps, steady = rule_and_steps(corpus_con, path.name)
    assert {rule for rule, _, _ in steps} == {"periodicity"} and len(steps) == len(layers) - 1
    gpu_step, = raw_events(path, lambda e: e.get("cat") == "gpu_user_annotation"
                           and e["name"].startswith("ProfilerStep#"))
    assert 0.8 * gpu_step["dur"] * 1000 < sum(wall for _, _, wall in steps) < gpu_step["dur"] * 1000


# A hand-built loop without syncs (µs): each ProfilerStep's host range is 200 long and launches
# GEMMs (aten::mm, 4096^3, each on its own correlation id) that run back to back on the GPU, so
# the host runs ahead and the GPU sets the pace. `slow` makes the last GEMM of every step fp32 and
# five times longer: the same FLOPs, a longer step.
STEPS, GEMMS, GEMM_US, N = 6, 4, 1_000, 4096


def ahead_trace(slow: bool = False) -> dict:
    def cpu(cat, name, ts, dur, **args):
        return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": args}

    events, gpu_at, corr = [], 50, 0
    for s in range(STEPS):
        host = 200 * s
        events.append(cpu("user_annotation", f"ProfilerStep#{s}", host, 200))
        for g in range(GEMMS):
            corr += 1
            fp32 = slow and g == GEMMS - 1
            dtype, dur = ("float", 5 * GEMM_US) if fp32 else ("c10::BFloat16", GEMM_US)
            at = host + 10 + 40 * g
            events += [
                cpu("cpu_op", "aten::mm", at, 30, **{"External id": corr, "Input Dims": [[N, N], [N, N]],
                                                      "Input type": [dtype, dtype]}),
                cpu("cuda_runtime", "cudaLaunchKernel", at + 5, 10, correlation=corr, **{"External id": corr}),
                {"ph": "X", "cat": "kernel", "name": f"gemm_{dtype}", "pid": 0, "tid": 7, "ts": gpu_at, "dur": dur,
                 "args": {"device": 0, "stream": 7, "correlation": corr, "External id": corr}},
            ]
            gpu_at += dur
    return {"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}], "traceEvents": events}


@pytest.fixture(scope="module")
def ahead_con(tmp_path_factory):
    root = tmp_path_factory.mktemp("ahead")
    for name, slow in (("ahead-bf16", False), ("ahead-fp32-head", True)):
        (root / f"{name}.json").write_text(json.dumps(ahead_trace(slow)))
    with ingested(tmp_path_factory, "ahead-lake", *sorted(root.glob("*.json"))) as con:
        yield con


def test_host_running_ahead_has_the_gpu_period_as_step_time(ahead_con):
    rows = ahead_con.execute("""SELECT wall_ns, host_wall_ns, step_time_basis, gpu_idle_pct FROM steps s
                                JOIN traces USING (trace_id) WHERE file_name = 'ahead-bf16.json'
                                ORDER BY step_index""").fetchall()
    assert len(rows) == STEPS
    for wall_ns, host_wall_ns, basis, idle_pct in rows[1:]:  # the first starts with the host range
        assert (wall_ns, host_wall_ns, basis, idle_pct) == (GEMMS * GEMM_US * 1000, 200_000, "gpu", 0)
    median, = ahead_con.execute("""SELECT median_step_ns FROM steady_summary JOIN traces USING (trace_id)
                                   WHERE file_name = 'ahead-bf16.json'""").fetchone()
    assert median == GEMMS * GEMM_US * 1000


def test_mfu_falls_when_a_gemm_moves_to_fp32(ahead_con):
    # the same FLOPs in a longer step: MFU against the trace's one peak (bf16: most of the FLOPs) falls
    mfu = dict(ahead_con.execute("""SELECT file_name, median(mfu_pct) FROM mfu JOIN traces USING (trace_id)
                                    GROUP BY ALL""").fetchall())
    flops = 2 * N**3 * GEMMS
    assert mfu["ahead-bf16.json"] == pytest.approx(100 * flops / (GEMMS * GEMM_US * 1e3 * 989.5e3))
    assert mfu["ahead-fp32-head.json"] == pytest.approx(100 * flops / ((GEMMS + 4) * GEMM_US * 1e3 * 989.5e3))


def test_mfu_over_100_pct_is_unreliable_not_a_number(ahead_con):
    # declared against the fp32 peak (67 TFLOP/s), 137 TFLOP/s of bf16 GEMMs would be 205 %: no figure
    ahead_con.execute("SET VARIABLE tracelake_peak = 'fp32'")
    try:
        got = ahead_con.execute("""SELECT DISTINCT peak_tflops, mfu_pct, mfu_unreliable FROM mfu JOIN traces USING (trace_id)
                                   WHERE file_name = 'ahead-bf16.json'""").fetchall()
    finally:
        ahead_con.execute("RESET VARIABLE tracelake_peak")
    assert got == [(67.0, None, "over 100 %")]


@pytest.mark.corpus
def test_mfu_is_never_over_100_pct_on_the_corpus(corpus_con):
    rows = corpus_con.execute("""SELECT trace_id, step, mfu_pct, mfu_unreliable,
                                        100.0 * flops / (wall_ns * peak_tflops * 1e3) AS raw_pct
                                 FROM mfu WHERE flops > 0 AND peak_tflops IS NOT NULL""").fetchall()
    assert len({r[0] for r in rows}) >= 5  # the corpus traces with shapes and a known GPU
    for trace_id, step, pct, why, raw in rows:
        if raw > 100:
            assert (pct, why) == (None, "over 100 %"), (trace_id, step)
        else:
            assert pct == pytest.approx(raw) and why is None, (trace_id, step)
    over, = corpus_con.execute("SELECT count(*) FROM steady_summary WHERE mfu_pct > 100").fetchone()
    assert over == 0


@pytest.mark.corpus
def test_traces_without_steps_get_no_step_advice(corpus_con):
    # dlprof-pytorch-cnn, nvfuser-matmul-test, pytorch-nvtx-demo, vecadd-sampling: no step markers, no periods
    bare = [t for (t,) in corpus_con.execute("SELECT trace_id FROM traces ANTI JOIN steps USING (trace_id)").fetchall()]
    assert len(bare) >= 4
    found = corpus_con.execute("""SELECT rule, evidence, advice FROM findings WHERE list_contains(?, trace_id)""",
                               [bare]).fetchall()
    paths = [r for r in found if r[0] == "critical_path_bound"]
    assert paths and all(e.startswith("No steps were found: over the whole trace") for _, e, _ in paths)
    assert not [r for r in found if "the step" in r[1] + r[2]]
    on_path = corpus_con.execute("""SELECT DISTINCT name FROM critical_path_ops WHERE list_contains(?, trace_id)""",
                                 [bare]).fetchall()
    assert not [n for (n,) in on_path if re.match(LIFECYCLE_CALLS, n)]


@pytest.mark.corpus
def test_a_busy_gpu_is_not_called_host_bound_on_the_corpus(corpus_con):
    """Step time the critical path does not cover goes to the host only as far as the GPU was idle:
    where the GPU is busy 90 % of the steady steps, the headline names GPU work (roofline_h200 and
    timesformer's inference, both GPU-bound, were called cpu-bound when their paths missed work)."""
    rows = corpus_con.execute("""SELECT trace_id, bound_by, gpu_idle_pct FROM steady_summary
                                 WHERE gpu_idle_pct < 10""").fetchall()
    assert len(rows) >= 5
    assert not [r for r in rows if r[1] not in (None, "gpu_compute", "communication", "memcpy", "kernel_to_kernel")]


@pytest.mark.corpus
def test_the_critical_path_finding_agrees_with_the_headline(corpus_con):
    """The finding is 'info' (GPU compute bounds the step, as it should) only where the headline
    (steady_summary.bound_by) says so too; where steps were found, by whatever rule, it speaks of
    their steady steps (the path is cut at them: critical_path_steps), never of the whole trace."""
    rows = corpus_con.execute("""SELECT f.trace_id, f.severity, s.bound_by FROM finding_critical_path f
                                 JOIN steady_summary s USING (trace_id, pid)""").fetchall()
    assert len(rows) >= 20
    assert not [r for r in rows if r[1] == "info" and r[2] != "gpu_compute"]
    whole = corpus_con.execute("""SELECT f.trace_id, f.evidence FROM finding_critical_path f
                                  SEMI JOIN steps USING (trace_id) WHERE f.pid IS NULL""").fetchall()
    assert whole == []
    cut = corpus_con.execute("""SELECT f.evidence, s.steps FROM finding_critical_path f
                                JOIN steady_summary s USING (trace_id, pid)
                                WHERE f.trace_id IN (SELECT trace_id FROM critical_path_steps WHERE is_cut)""").fetchall()
    assert len(cut) >= 8 and all(e.startswith(f"Over {n} steady steps") for e, n in cut)
