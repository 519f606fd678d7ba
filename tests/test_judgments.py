"""Judgments against programs with one planted bound and its remedy really applied (issue #48).

The truth is tests/recorded/judgments/judgments_truth.json: each program timed with CUDA events and
no profiler (record_judgments.py). Every judgment is checked from both sources: the PyTorch
profiler's light recording and the Nsight Systems export of the same program.
"""

import json
import statistics
from pathlib import Path

import pytest
from conftest import ingested
from tracelake.analysis import critpath_whatif

JUDGE = Path(__file__).parent / "recorded" / "judgments"
TRUTH = json.loads((JUDGE / "judgments_truth.json").read_text())["programs"]
SOURCES = ("kineto", "nsys")


def trace_file(program: str, source: str, setting: str = "light") -> Path:
    if source == "nsys":
        return JUDGE / f"nsys-2025.3.1_judge-{program}_h100.sqlite.gz"
    return JUDGE / f"torch-2.11_judge-{program}-{setting}_h100.pt.trace.json.gz"


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


def median_step_ms(con, tid: str) -> float:
    [(ns,)] = con.execute("SELECT median_step_ns FROM steady_summary WHERE trace_id = ?", [tid]).fetchall()
    return ns / 1e6


# (planted program, the scenario that models its remedy, the program with the remedy applied)
REMEDIES = [
    ("launch-bound", "CUDA graphs, whole step captured", "launch-bound-graph"),
    ("mlp-loader-stall", "no data-loading time", "mlp"),
    ("mlp-pageable", "pinned copies", "mlp"),
    ("mlp-host-syncs", "no host syncs", "mlp"),
]


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
        assert saved_ms > 0.5 * (truth_ms(program) - measured), (saved_ms, truth_ms(program), measured)


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
