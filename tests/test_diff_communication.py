"""`tracelake diff`'s communication causes against recorded truth (issues #30, #31):
tests/recorded/record_diff_comm.py ran a 2-rank step (bf16 GEMMs, then an fp32 all_reduce of the
gradient buffer) on 2 H200s under the PyTorch profiler, and timed every step's all_reduce on both
ranks with CUDA events (events_rank<r>.json). A collective cannot finish before both ranks joined:
per step the shorter all_reduce time of the two ranks is its transfer and each rank's time beyond it
is its wait. Variants: a straggler (the last rank sleeps 4 ms on the host before each step) and a
4x larger all_reduce. The diff's causes are ns per steady step of a rank, so the truth is the mean
over ranks and steps."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

import pytest
from conftest import REPO
from tracelake.analysis import diff_gate, diff_noise
from tracelake.jobs.diff import diff

RECORDED = REPO / "tests" / "recorded"


def run(variant: str):
    return RECORDED / f"torch-2.11_diff-comm-{variant}-2rank_h200x2"


def truth(variant: str) -> dict:
    """Per rank-step means (ns): transfer, wait; and each rank's mean wait."""
    ranks = [json.loads((run(variant) / f"events_rank{r}.json").read_text())["steps"] for r in (0, 1)]
    transfer = [min(a["all_reduce_ms"], b["all_reduce_ms"]) for a, b in zip(*ranks)]
    waits = [[s["all_reduce_ms"] - t for s, t in zip(steps, transfer)] for steps in ranks]
    return {"transfer_ns": statistics.mean(transfer) * 1e6,
            "wait_ns": statistics.mean(w for r in waits for w in r) * 1e6,
            "wait_by_rank_ns": [statistics.mean(r) * 1e6 for r in waits]}


_cache: dict = {}


def diffed(new: str) -> dict:
    if new not in _cache:
        _cache[new] = diff(run("base"), run(new))
    return _cache[new]


def comm(result: dict) -> dict[str, dict]:
    return {c["name"]: c for c in result["causes"] if c["kind"] == "communication"}


def test_a_straggler_is_the_wait_it_caused():
    r, t_base, t_new = diffed("straggler"), truth("base"), truth("straggler")
    assert t_new["wait_by_rank_ns"][0] > 3e6 > t_new["wait_by_rank_ns"][1]  # the plant: rank 0 waits for rank 1
    causes = comm(r)
    wait = causes["wait for rank 1"]
    expected = t_new["wait_ns"] - t_base["wait_ns"]  # ~2.05 ms: rank 0's 4.1 ms over two ranks' steps
    assert abs(wait["change_ns"] - expected) <= 0.10 * expected
    assert wait["evidence"]["arrived_last_pct"][1] >= 90  # the straggler: last at (almost) every collective
    assert wait["evidence"]["mean_skew_ns"][1] > 3e6
    # the largest cause, and the transfer did not move: the time is waiting, not moving bytes
    assert r["causes"][0]["name"] == "wait for rank 1"
    assert abs(causes["all_reduce"]["change_ns"]) < 0.05 * wait["change_ns"]
    assert diff_gate.check(diff_gate.parse("communication:wait* > +1ms"), r).failed
    assert diff_gate.check(diff_gate.parse("communication:all_reduce > +1ms"), r) is None


def test_a_larger_collective_is_transfer_time_by_operation():
    r, t_base, t_new = diffed("big-allreduce"), truth("base"), truth("big-allreduce")
    causes = comm(r)
    ar = causes["all_reduce"]
    expected = t_new["transfer_ns"] - t_base["transfer_ns"]  # ~2.35 ms
    assert abs(ar["change_ns"] - expected) <= 0.10 * expected
    base_bytes, new_bytes = ar["evidence"]["bytes_per_step"]
    assert new_bytes == 4 * base_bytes == 4 * 256 * 2**20
    assert r["causes"][0]["name"] == "all_reduce"
    # nothing waited more: every wait cause is under 0.1 ms
    assert all(abs(c["change_ns"]) < 1e5 for n, c in causes.items() if n.startswith("wait"))
    # the collective's kernels are communication, not a kernel or an operator cause (shapes changed)
    assert not any("AllReduce" in c["name"] or "allreduce" in c["name"] for c in r["causes"] if c["kind"] != "communication")


def test_a_second_recording_moves_no_communication():
    r, t_base, t_new = diffed("base-repeat"), truth("base"), truth("base-repeat")
    assert abs(t_new["transfer_ns"] - t_base["transfer_ns"]) < 0.05e6
    assert all(abs(c["change_ns"]) < 0.05e6 for c in comm(r).values())


def test_a_second_recording_is_within_noise():
    r = diffed("base-repeat")
    assert r["noise"]["verdict"] == "within noise"
    # a step of the run counts once: 2 ranks x 9 steady steps are 9 samples, not 18
    assert r["noise"]["steps"] == [9, 9] and r["steps"]["base"]["steps"] == 18
    # the two recordings differ by ~1 % (the host time between steps), more than the steps vary
    # within each, with p < 0.05: only the run-to-run floor calls it noise
    assert 0.5 < -r["step_time_ns"]["change_pct"] < diff_noise.FLOOR_PCT
    assert abs(r["step_time_ns"]["change_ns"]) > r["noise"]["spread_ns"] and r["noise"]["p_value"] < diff_noise.ALPHA
    assert all(abs(c["change_ns"]) < r["noise"]["spread_ns"] for c in r["causes"] if c["kind"] == "communication")


def test_cli_second_recording_passes_a_step_time_gate():
    # the change is -1.05 %: this condition fires unless the change is within noise
    gate = ["--fail-if", "step_time < -1%", "--fail-if", "step_time > +1%"]
    done = subprocess.run([sys.executable, "-m", "tracelake.cli.main", "diff", run("base"), run("base-repeat"), *gate],
                          cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "within noise" in done.stdout and done.stderr == ""
    # with no run-to-run floor the same pair is a real change, and the gate fires
    done = subprocess.run([sys.executable, "-m", "tracelake.cli.main", "diff", run("base"), run("base-repeat"), *gate,
                           "--noise-floor", "0"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 1 and done.stderr.startswith("FAIL   step_time < -1%")


@pytest.mark.parametrize("variant", ["straggler", "big-allreduce"])
def test_the_causes_explain_the_mean_step(variant):
    r = diffed(variant)
    mean_change = r["steps"]["new"]["mean_ns"] - r["steps"]["base"]["mean_ns"]
    assert abs(r["unexplained_ns"]) < 0.02 * mean_change
