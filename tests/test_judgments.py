"""Judgments against programs with one planted bound and its remedy really applied (issue #48).

The truth is tests/recorded/judgments/judgments_truth.json (H100) and judgments_h200_truth.json (H200:
programs that one bound dominates: pageable copies, a slow loader, a sync after every layer): each
program timed with CUDA events and no profiler (record_judgments.py). Every judgment is checked from
both sources: the PyTorch profiler's light recording and the Nsight Systems export of the same program.
"""

import json
import statistics
from pathlib import Path

import pytest
from conftest import ingested
from tracelake.analysis import critpath_whatif

JUDGE = Path(__file__).parent / "recorded" / "judgments"
TRUTH, GPU = {}, {}
for gpu in ("h100", "h200"):
    programs = json.loads((JUDGE / ("judgments_truth.json" if gpu == "h100" else f"judgments_{gpu}_truth.json"))
                          .read_text())["programs"]
    TRUTH.update(programs)
    GPU.update(dict.fromkeys(programs, gpu))
SOURCES = ("kineto", "nsys")


def trace_file(program: str, source: str, setting: str = "light") -> Path:
    if source == "nsys":
        return JUDGE / f"nsys-2025.3.1_judge-{program}_{GPU[program]}.sqlite.gz"
    return JUDGE / f"torch-2.11_judge-{program}-{setting}_{GPU[program]}.pt.trace.json.gz"


def truth_ms(program: str) -> float:
    """What one step of the program costs without a profiler (ms)."""
    return TRUTH[program]["unprofiled_median_ms"]


@pytest.fixture(scope="module")
def judge(tmp_path_factory):
    files = [trace_file(p, s) for p in TRUTH for s in SOURCES]
    files += [trace_file(p, "kineto", "heavy") for p in ("gpu-bound", "launch-bound", "mlp", "mlp-host-syncs")]
    with ingested(tmp_path_factory, "judge", *files) as con:
        yield con


def trace_id(con, program: str, source: str, setting: str = "light") -> str:
    name = trace_file(program, source, setting).name.split(".pt.trace")[0].split(".sqlite")[0]
    [(tid,)] = con.execute("SELECT trace_id FROM traces WHERE trace_id LIKE ? || '-%'", [name]).fetchall()
    return tid


# (planted program, the scenario that models its remedy, the program with the remedy applied)
REMEDIES = [
    ("launch-bound", "CUDA graphs, whole step captured", "launch-bound-graph"),
    ("mlp-loader-stall", "no data-loading time", "mlp"),
    ("mlp-pageable", "pinned copies", "mlp"),
    ("mlp-host-syncs", "no host syncs", "mlp"),
    ("copy-bound", "pinned copies", "copy-bound-pinned"),
    ("loader-bound", "no data-loading time", "loader-bound-remedy"),
    ("sync-bound", "no host syncs", "sync-bound-remedy"),
]
# The scenario finds too little of what the remedy saves (its prediction is right: the path with the
# syncs removed is the remedied step): the step's path leaves out the host's time between top-level
# calls and operators (HTA's rule), which the syncs serialize with the GPU; 0.2-0.4 of 1.5 ms found.
SAVING_GAPS = {"sync-bound"}


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize(("program", "scenario", "remedy"), REMEDIES, ids=[r[0] for r in REMEDIES])
def test_whatif_predicts_the_remedy_really_applied(judge, program, scenario, remedy, source):
    """The scenario's predicted step (the step's critical path with the scenario applied: what the
    report's what-if table shows) is within 25 % of the remedied program's step, timed without a
    profiler."""
    tid = trace_id(judge, program, source)
    [chosen] = [s for s in critpath_whatif.STANDARD_SCENARIOS if s.label == scenario]
    rows = critpath_whatif.whatif(judge, [chosen], [tid])
    saved_ms = statistics.median(rows["saved_ns"].to_list()) / 1e6
    predicted = statistics.median(rows["whatif_ns"].to_list()) / 1e6
    measured = truth_ms(remedy)
    assert predicted == pytest.approx(measured, rel=0.25), (predicted, measured, saved_ms)
    # where the remedy saves more than 10 % of the step, the scenario finds at least half of it
    # (the per-block syncs of mlp-host-syncs cost 1.5 ms of 29.7, which the path does not see yet)
    if truth_ms(program) - measured > 0.1 * measured:
        found = saved_ms > 0.5 * (truth_ms(program) - measured)
        if program in SAVING_GAPS:  # strict: once it is found, the entry must go
            assert not found, "SAVING_GAPS lists a gap that closed"
            pytest.xfail("the path misses the host time the syncs serialize (SAVING_GAPS)")
        assert found, (saved_ms, truth_ms(program), measured)


def test_pinned_rate_of_a_pageable_copy_is_the_links(judge):
    """The pinned copy of the pageable program's 64 MiB input takes about what the remedied program's
    pinned copy took (mlp: 64 MiB HtoD in ~1.23 ms)."""
    pageable = trace_id(judge, "mlp-pageable", "nsys")
    pinned = trace_id(judge, "mlp", "nsys")
    [(predicted,)] = judge.execute("SELECT median(pinned_ns) FROM memcpy_pinned_rates WHERE trace_id = ?",
                                   [pageable]).fetchall()
    [(measured,)] = judge.execute("SELECT median(duration_ns) FROM memcpy WHERE trace_id = ? AND copy_kind = 'HtoD' "
                                  "AND bytes = 67108864", [pinned]).fetchall()
    assert predicted == pytest.approx(measured, rel=0.15)


_STEADY: dict = {}


def steady(con, tid: str) -> dict:
    """The trace's steady_summary row (the view read once for every trace of the module's lake)."""
    if not _STEADY:
        _STEADY.update({r["trace_id"]: r for r in con.sql("SELECT * FROM steady_summary").pl().to_dicts()})
    return _STEADY[tid]


RECORDINGS = [(p, s) for p in TRUTH for s in SOURCES] + [
    (p, "kineto-heavy") for p in ("gpu-bound", "launch-bound", "mlp", "mlp-host-syncs")]


def recording_id(con, program: str, source: str) -> str:
    return trace_id(con, program, "kineto", "heavy") if source == "kineto-heavy" else trace_id(con, program, source)


def profiled_truth_ms(program: str, source: str) -> float:
    """The program's step time measured (CUDA events, the GPU's period) while that profiler ran."""
    key = {"kineto": "kineto_light", "kineto-heavy": "kineto_heavy", "nsys": "nsys"}[source]
    return TRUTH[program][key]["gpu_period_ms"]


@pytest.mark.parametrize(("program", "source"), RECORDINGS, ids=[f"{p}-{s}" for p, s in RECORDINGS])
def test_step_time_is_what_an_iteration_costs(judge, program, source):
    """The median steady step is the program's own step while the profiler ran (within 10 %),
    whether the host runs ahead (gpu-bound: host range ~2 ms of a 19 ms step), waits for the GPU
    each step (mlp) or replays a CUDA graph; and without the profiler's own cost it is the step
    timed without any profiler (within 25 %)."""
    s = steady(judge, recording_id(judge, program, source))
    assert s["median_step_ns"] / 1e6 == pytest.approx(profiled_truth_ms(program, source), rel=0.10)
    assert s["est_step_without_profiler_ns"] / 1e6 == pytest.approx(truth_ms(program), rel=0.25)


def test_the_page_says_which_range_the_step_time_is(judge):
    s = steady(judge, trace_id(judge, "gpu-bound", "kineto"))
    assert s["step_time_basis"] == "gpu" and s["median_host_step_ns"] < 0.2 * s["median_step_ns"]
    s = steady(judge, trace_id(judge, "mlp", "nsys"))
    assert s["step_time_basis"] == "host"


@pytest.mark.parametrize("source", ["kineto", "kineto-heavy", "nsys"])
def test_profiler_overhead_is_flagged_where_it_inflates_the_step(judge, source):
    """The launch-bound step is 2.12 ms without a profiler, 2.8 ms under Kineto (light), 4.5 ms with
    stacks and memory, 3.8 ms under Nsight: a finding says so. The GPU-bound steps hide the cost."""
    flagged = {r[0] for r in judge.execute("SELECT trace_id FROM findings WHERE rule = 'profiler_overhead'").fetchall()}
    assert recording_id(judge, "launch-bound", source) in flagged
    for program in ("gpu-bound", "mlp"):
        assert recording_id(judge, program, source) not in flagged


# what bounds each program's step: the GPU's compute where the GPU runs back to back, the host
# (CPU and launches) where it launches faster than it can, the copies, the loader, and the syncs
# where host and GPU take turns (the GPU busy 54-65 % of sync-bound's step, idle after each sync)
BOUNDS = {"gpu-bound": "gpu_compute", "gpu-bound-fp32-head": "gpu_compute", "launch-bound": "cpu",
          "mlp": "gpu_compute", "mlp-slow-kernel": "gpu_compute", "mlp-fp32-head": "gpu_compute",
          "copy-bound": "memcpy", "copy-bound-pinned": "memcpy", "loader-bound": "data_loading",
          "loader-bound-remedy": "gpu_compute", "sync-bound": "sync_wait"}


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("program", BOUNDS)
def test_bound_by_names_the_planted_bound(judge, program, source):
    assert steady(judge, trace_id(judge, program, source))["bound_by"] == BOUNDS[program]


@pytest.mark.parametrize(("program", "source"), RECORDINGS, ids=[f"{p}-{s}" for p, s in RECORDINGS])
def test_bound_agrees_with_the_idle_causes(judge, program, source):
    """Where the GPU is idle most of the step for the host (host_wait), the host bounds the step."""
    s = steady(judge, recording_id(judge, program, source))
    if s["gpu_idle_pct"] > 50 and s["main_idle_cause"] == "host_wait":
        assert s["bound_by"] in ("cpu", "launch_overhead", "data_loading", "sync_wait", "memcpy")
    if s["bound_by"] == "gpu_compute":
        assert s["gpu_idle_pct"] < 50
    if s["gpu_idle_pct"] < 10:  # the GPU busy nearly all the step: the host does not bound it
        assert s["bound_by"] in ("gpu_compute", "communication", "memcpy", "kernel_to_kernel")


# FLOPs per step (FlopCounterMode) / (step without a profiler x the H100 SXM's dense bf16 peak)
H100_BF16_TFLOPS = 989.4


@pytest.mark.parametrize("program", ["gpu-bound", "mlp"])
def test_mfu_against_the_intended_precision(judge, program):
    """Kineto heavy records shapes, so MFU is modelled: within 10 % of FlopCounterMode's FLOPs over
    the unprofiled step at the bf16 peak (the model's precision)."""
    s = steady(judge, trace_id(judge, program, "kineto", "heavy"))
    truth = 100 * TRUTH[program]["flop_counter_per_step"] / (truth_ms(program) * 1e-3 * H100_BF16_TFLOPS * 1e12)
    assert s["mfu_pct"] == pytest.approx(truth, rel=0.10)
    assert s["mfu_pct"] <= 100


COMM = Path(__file__).parent / "recorded"


@pytest.fixture(scope="module")
def comm(tmp_path_factory):
    runs = [COMM / f"torch-2.11_diff-comm-{v}-2rank_h200x2" for v in ("base", "big-allreduce")]
    with ingested(tmp_path_factory, "comm", *runs) as con:
        yield con


@pytest.mark.parametrize("variant", ["base", "big-allreduce"])
def test_bound_by_communication_where_the_all_reduce_is_the_longer(comm, variant):
    """2 ranks, per step 8 bf16 GEMMs then an fp32 all_reduce (256 MiB, or 1 GiB): the step is bound by
    whichever of the two the CUDA events measured longer, and its step time is theirs (within 10 %)."""
    run = COMM / f"torch-2.11_diff-comm-{variant}-2rank_h200x2"
    for rank in (0, 1):
        truth = json.loads((run / f"events_rank{rank}.json").read_text())["steps"]
        all_reduce = statistics.median(s["all_reduce_ms"] for s in truth)
        compute = statistics.median(s["compute_ms"] for s in truth)
        step = statistics.median(s["step_gpu_ms"] for s in truth)
        [(bound, step_ns)] = comm.execute(
            "SELECT bound_by, median_step_ns FROM steady_summary s JOIN traces t USING (trace_id) "
            "WHERE t.path LIKE ? AND t.rank = ?", [f"%{run.name}/rank{rank}%", rank]).fetchall()
        assert bound == ("communication" if all_reduce > compute else "gpu_compute"), (rank, all_reduce, compute)
        assert step_ns / 1e6 == pytest.approx(step, rel=0.10)


def test_a_host_wait_costs_the_gpu_idle_inside_it(judge):
    """mlp ends each step with loss.item(): the host waits ~13 ms of a 28 ms step, most of it while the
    GPU still runs the backward: the findings' cost is the GPU idle inside the waits, not their length,
    and the page's "costs the most time" table is the view's top rows by that cost."""
    from conftest import rendered_page

    tid = trace_id(judge, "mlp", "kineto")
    [(total, cost)] = judge.execute("SELECT total_ns, cost_ns FROM findings_by_rule WHERE trace_id = ? "
                                    "AND rule = 'host_sync_in_step'", [tid]).fetchall()
    assert cost < 0.5 * total
    top = judge.execute("SELECT rule, cost_ns FROM findings_by_rule WHERE trace_id = ? "
                        "ORDER BY cost_ns DESC NULLS LAST, rule LIMIT 3", [tid]).fetchall()
    html = rendered_page(judge, tid).html
    table = html[html.index('<table class="top-findings">'):]
    table = table[:table.index("</table>")]
    from tracelake.reports.theme import ms
    for rule, cost_ns in top:
        assert f'{rule.replace("_", " ")}</td><td class="n">{ms(cost_ns)}</td>' in table


def test_the_page_says_when_syncs_bound_the_step(judge):
    """The sync-bound step's card: bound by sync wait, with the GPU's idle share after the syncs
    (steady_summary.bound_by_pct of the step, not of the critical path)."""
    from conftest import rendered_page
    from tracelake.reports.theme import pct

    for source in SOURCES:
        tid = trace_id(judge, "sync-bound", source)
        s = steady(judge, tid)
        assert (s["bound_by"], s["bound_by_basis"]) == ("sync_wait", "gpu_idle")
        html = rendered_page(judge, tid).html
        card = html[html.index('data-metric="bound_by"'):]
        card = card[:card.index("</div></div>")]
        assert ">sync wait<" in card
        assert f"the GPU waits {pct(s['bound_by_pct'])} of the step after host syncs" in card
