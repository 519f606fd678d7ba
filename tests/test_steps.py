"""The step rule (sql/analysis/steps.sql) on real traces, against the traces' own ranges read from the
raw JSON: a single ProfilerStep is the step unless the GPU work inside it repeats with a period
that covers most of it, and the ranks of one run are cut by one rule."""

from __future__ import annotations

import gzip
import json
import statistics
from pathlib import Path

import pytest
from conftest import REPO, ingested

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
