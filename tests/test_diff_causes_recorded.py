"""Golden tests of `tracelake diff`'s verdict and causes (issue #49, item 5) on programs with one
planted cause each, recorded under both profilers (tests/recorded/judgments/, record_judgments.py):
the truth is what each cause costs a step without any profiler, the difference of the programs'
`unprofiled_median_ms` (CUDA events, judgments_truth.json). For every variant against `mlp`, from
the PyTorch profiler's light recording and from the Nsight export: the verdict is slower, the
largest cause is of the planted kind, and its change is within 25 % of the cost; `mlp` against a
second recording of itself is not a real change. The 2-rank straggler pair (record_diff_comm.py)
is checked against its per-step all_reduce events."""

from __future__ import annotations

import json
import statistics

import pytest
from conftest import REPO
from tracelake.analysis import diff_noise
from tracelake.jobs.diff import diff
from tracelake.jobs.ingest_job import ingest_paths

RECORDED = REPO / "tests" / "recorded"
JUDGE = RECORDED / "judgments"
TRUTH = json.loads((JUDGE / "judgments_truth.json").read_text())["programs"]
PREFIX = {"kineto": "torch-2.11_judge-{}-light_h100", "nsys": "nsys-2025.3.1_judge-{}_h100"}
FILES = {"kineto": "{}.pt.trace.json.gz", "nsys": "{}.sqlite.gz"}

# planted variant -> the cause kind it must be reported as, per source. A sleep outside any range is
# an OS-runtime call in the Nsight export (clock_nanosleep) and, in a PyTorch trace, time in which the
# launching thread ran no operator before the step's GPU work.
PLANTED = {
    "mlp-loader-stall": {"kineto": "data_loading", "nsys": "data_loading"},
    "mlp-host-sleep": {"kineto": "host_idle", "nsys": "host_sleep"},
    "mlp-host-syncs": {"kineto": "sync", "nsys": "sync"},
    "mlp-pageable": {"kineto": "memcpy", "nsys": "memcpy"},
    "mlp-slow-kernel": {"kineto": "kernel", "nsys": "kernel"},
    "mlp-fp32-head": {"kineto": "precision", "nsys": "precision"},
}
PROGRAMS = ["mlp", "mlp-repeat", *PLANTED]


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    where = tmp_path_factory.mktemp("diff-causes") / "lake"
    files = [JUDGE / FILES[s].format(PREFIX[s].format(p)) for s in PREFIX for p in PROGRAMS]
    outcomes = ingest_paths([str(f) for f in files], where)
    assert all(o.status == "ok" for o in outcomes)
    return where


_cache: dict = {}


def diffed(lake, source: str, new: str) -> dict:
    if (source, new) not in _cache:
        _cache[source, new] = diff(PREFIX[source].format("mlp") + "-", PREFIX[source].format(new) + "-", lake=lake)
    return _cache[source, new]


def cost_ns(variant: str) -> float:
    """What the planted cause costs a step without a profiler (ns)."""
    return (TRUTH[variant]["unprofiled_median_ms"] - TRUTH["mlp"]["unprofiled_median_ms"]) * 1e6


# Known gaps, each strict: the test fails once the gap closes, so the mark must go with it.
KNOWN_GAPS = {
    ("mlp-host-sleep", "nsys"): "two of its five steps ran 15 ms longer under Nsight (46.8 ms against 31.5): their "
                                "host_wait idle (+5.6 ms per step on the mean) tops the sleep's +3.3 ms",
    ("mlp-host-syncs", "nsys"): "the sync cause holds half of the +1.5 ms: the .sum() kernel and late launches "
                                "after short kernel_wait gaps are counted apart",
}


@pytest.mark.parametrize("source", PREFIX)
@pytest.mark.parametrize("variant", PLANTED)
def test_planted_cause_is_the_largest_with_its_cost(lake, source, variant, request):
    if (variant, source) in KNOWN_GAPS:
        request.applymarker(pytest.mark.xfail(reason=KNOWN_GAPS[variant, source], strict=True))
    r = diffed(lake, source, variant)
    assert r["noise"]["verdict"] == "slower", r["noise"]["why"]
    top = max(r["causes"], key=lambda c: c["change_ns"])
    listing = [(c["kind"], c["name"][:40], c["change_ns"]) for c in r["causes"][:5]]
    assert top["kind"] == PLANTED[variant][source], listing
    assert top["change_ns"] == pytest.approx(cost_ns(variant), rel=0.25), listing


@pytest.mark.parametrize("source", PREFIX)
def test_a_second_recording_is_no_real_change(lake, source):
    assert not diff_noise.real(diffed(lake, source, "mlp-repeat")["noise"])


def straggler_wait_ns(variant: str) -> float:
    """The mean per rank-step time a rank waited in the all_reduce for the other (ns), from the
    events of both ranks: the shorter all_reduce of a step is its transfer."""
    folder = RECORDED / f"torch-2.11_diff-comm-{variant}-2rank_h200x2"
    ranks = [json.loads((folder / f"events_rank{r}.json").read_text())["steps"] for r in (0, 1)]
    waits = [abs(a["all_reduce_ms"] - b["all_reduce_ms"]) / 2 for a, b in zip(*ranks)]
    return statistics.mean(waits) * 1e6


def test_a_straggler_rank_is_the_largest_cause():
    r = diff(RECORDED / "torch-2.11_diff-comm-base-2rank_h200x2", RECORDED / "torch-2.11_diff-comm-straggler-2rank_h200x2")
    assert r["noise"]["verdict"] == "slower", r["noise"]["why"]
    top = max(r["causes"], key=lambda c: c["change_ns"])
    assert (top["kind"], top["name"]) == ("communication", "wait for rank 1")
    expected = straggler_wait_ns("straggler") - straggler_wait_ns("base")
    assert top["change_ns"] == pytest.approx(expected, rel=0.25)
