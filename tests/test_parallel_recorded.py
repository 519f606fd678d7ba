"""Parallelism goldens (issue #53 items 3, 4 and 7) against the recordings of record_parallel.py: 2 H100s,
12 x Linear(2048) in bf16, batch 8192; DDP with 1 MB buckets (all-reduces overlap the backward) and
1000 MB (one all-reduce after it), FSDP2 with and without explicit forward/backward prefetch, a
2-stage GPipe pipeline of 4 micro-batches. Truth per rank (truth_rank<r>.json): every step timed with
CUDA events, unprofiled and under the profiler (the 3 profiled steps are the traces' ProfilerStep#2-4),
the collectives each step issued (their own times are "unavailable": this torch's Work has no
get_duration), and for the pipeline each micro-batch's forward and backward time (busy) and the rest
of the step (wait).

What the recordings show, and so what these tests can and cannot claim:

- Under the profiler every run is host-bound: a kernel of 25-100 us every 100-200 us, the GPU idle
  for the host for much of the step; the profiled steps are 1.2-2x the unprofiled ones (DDP 1 MB
  buckets: 12.3 against 6.0 ms). So the step-time differences between the variants are mostly host
  time, not communication: the goldens that equate a difference of exposed communication with the
  difference of step time do not hold on these recordings (marked xfail, strict, with the numbers;
  see each reason). What holds is tested beside them: the DDP difference is the GPU's idle for the
  host plus the exposed communication; FSDP's late all-gathers are late because the other rank
  joined them late.
- The pipeline's truth has what the bubble needs (per stage and step: busy and wait), so its bubble
  is tested against the measured one; the theoretical 0.2 is far below both (0.45 and 0.63), since
  the host-bound stages and the optimizer fill the step.
"""

from __future__ import annotations

import json
import statistics

import pytest
from conftest import REPO, ingested

RECORDED = REPO / "tests" / "recorded"
VARIANTS = ("ddp-small-buckets", "ddp-large-buckets", "fsdp2-prefetch", "fsdp2-no-prefetch", "pipeline-gpipe")
TOLERANCE = 0.15  # the issue's: relative


def folder(variant: str):
    return RECORDED / f"torch-2.11_parallel-{variant}-2rank_h100x2"


def truth(variant: str) -> dict[int, dict]:
    return {r: json.loads((folder(variant) / f"truth_rank{r}.json").read_text()) for r in (0, 1)}


def profiled_step_ms(variant: str) -> list[float]:
    """The profiled steps' CUDA-event times of both ranks."""
    return [s["step_ms"] for t in truth(variant).values() for s in t["profiled"]]


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    files = [p for v in VARIANTS for p in sorted(folder(v).glob("rank*.pt.trace.json.gz"))]
    with ingested(tmp_path_factory, "parallel-recorded", *files) as c:
        yield c


def run_of(con, variant: str) -> str:
    (run_id,) = {r[0] for r in con.execute("SELECT run_id FROM rank_runs WHERE run_id LIKE ?",
                                           [f"%/torch-2.11_parallel-{variant}-2rank%"]).fetchall()}
    return run_id


def trace_of(con, variant: str, rank: int) -> str:
    return con.execute("SELECT trace_id FROM rank_runs WHERE run_id = ? AND rank = ?",
                       [run_of(con, variant), rank]).fetchone()[0]


def steady_mean(con, view: str, column: str, variant: str) -> float:
    """The mean of a per-step-and-rank view's column over the run's steady steps of both ranks (ns)."""
    return con.execute(f"""SELECT avg(v.{column}) FROM {view} v JOIN steady_steps s USING (trace_id, pid, step_index)
                           WHERE v.run_id = ?""", [run_of(con, variant)]).fetchone()[0]


# --- DDP: 1 MB buckets (overlapped) against 1000 MB (serialized) ------------------------------------

@pytest.mark.parametrize("variant", ["ddp-small-buckets", "ddp-large-buckets"])
def test_ddp_all_reduces_are_the_buckets_the_run_issued(con, variant):
    """Per rank and profiled step, the all-reduces in the trace are the buckets truth lists, in order
    and with their sizes (1 MB cap: one 8.4 MB bucket per weight and bias; 1000 MB: one bucket)."""
    expected = {(r, s["profiler_step"]): [c["bytes"] for c in s["collectives"]]
                for r, t in truth(variant).items() for s in t["profiled"]}
    got = {(rank, step): sizes for rank, step, sizes in con.execute("""
        SELECT c.rank, s.step, list(c.bytes ORDER BY c.start_ns)
        FROM collectives c
        JOIN steps s ON s.trace_id = c.trace_id AND s.pid = c.pid
                    AND c.launch_start_ns >= s.host_start_ns AND c.launch_start_ns < s.host_end_ns
        WHERE c.run_id = ? AND c.operation = 'all_reduce' GROUP BY ALL""", [run_of(con, variant)]).fetchall()}
    assert got == expected


def test_ddp_large_bucket_runs_after_the_backward_small_ones_inside_it(con):
    """With one 1000 MB bucket the all-reduce starts after the backward's last kernel and compute hides
    none of it; with 1 MB buckets most all-reduces start while the backward still runs (the schedule the
    bucket cap sets: truth's config; the last buckets' start after it, their gradients come last)."""
    assert truth("ddp-large-buckets")[0]["config"]["bucket_cap_mb"] == 1000
    started_inside = dict(con.execute("""
        WITH backward_end AS (
            -- the end of the last compute kernel launched before the optimizer step's range
            SELECT s.trace_id, s.pid, s.step_index, max(o.end_ns) AS end_ns
            FROM steps s
            JOIN annotations a ON a.trace_id = s.trace_id AND a.pid = s.pid AND NOT a.is_gpu
                              AND a.name LIKE 'Optimizer.step#%' AND a.start_ns BETWEEN s.host_start_ns AND s.host_end_ns
            JOIN api_calls l ON l.trace_id = s.trace_id AND l.pid = s.pid AND l.start_ns >= s.host_start_ns
                            AND l.start_ns < a.start_ns
            JOIN gpu_op_class o ON o.trace_id = l.trace_id AND o.pid = l.pid AND o.correlation_id = l.correlation_id
                               AND o.op_class = 'compute'
            GROUP BY ALL
        )
        SELECT r.run_id, avg(CASE WHEN c.start_ns < b.end_ns THEN 1.0 ELSE 0.0 END)
        FROM collectives c
        JOIN rank_runs r USING (trace_id)
        JOIN steps s ON s.trace_id = c.trace_id AND s.pid = c.pid
                    AND c.launch_start_ns >= s.host_start_ns AND c.launch_start_ns < s.host_end_ns
        JOIN backward_end b ON b.trace_id = s.trace_id AND b.pid = s.pid AND b.step_index = s.step_index
        WHERE c.operation = 'all_reduce' GROUP BY ALL""").fetchall())
    assert started_inside[run_of(con, "ddp-large-buckets")] == 0
    assert started_inside[run_of(con, "ddp-small-buckets")] > 0.5
    hidden = con.execute("SELECT max(overlapped_ns) FROM comm_overlap WHERE run_id = ?",
                         [run_of(con, "ddp-large-buckets")]).fetchone()[0]
    assert hidden == 0


@pytest.mark.xfail(strict=True, reason=(
    "Does not hold on these recordings. Truth's profiled step medians: 7.17 ms with 1000 MB buckets, "
    "12.33 ms with 1 MB (the overlapped variant is 5.2 ms slower under the profiler; unprofiled the two "
    "are within 0.1 ms: 6.08 and 5.99). The exposed communication per step and rank is 0.78 and 2.87 ms: "
    "a difference of -2.1 ms against -5.2 ms. The 12 buckets' hooks cost host time that the profiler "
    "inflates, the GPU idles for the host (test below), and each small all-reduce also waits for the "
    "other rank's host, which comm_overlap counts as exposed."))
def test_ddp_exposed_communication_difference_is_the_step_time_difference(con):
    exposed = {v: steady_mean(con, "comm_overlap", "exposed_ns", v) / 1e6 for v in ("ddp-large-buckets", "ddp-small-buckets")}
    step = {v: statistics.median(profiled_step_ms(v)) for v in exposed}
    d_exposed = exposed["ddp-large-buckets"] - exposed["ddp-small-buckets"]
    d_step = step["ddp-large-buckets"] - step["ddp-small-buckets"]
    assert abs(d_exposed - d_step) <= TOLERANCE * abs(d_step)


def test_ddp_step_time_difference_is_host_idle_plus_exposed_communication(con):
    """What the profiled difference is made of: the GPU's extra idle (waiting for the host's launches)
    plus the extra exposed communication, within 15 % of truth's difference of the step medians.
    The idle is the larger part: the golden above fails on it."""
    parts = {}
    for v in ("ddp-large-buckets", "ddp-small-buckets"):
        idle = con.execute("""SELECT avg(s.gpu_idle_ns) FROM steps s JOIN steady_steps USING (trace_id, pid, step_index)
                              JOIN rank_runs r USING (trace_id) WHERE r.run_id = ?""", [run_of(con, v)]).fetchone()[0]
        parts[v] = (idle / 1e6, steady_mean(con, "comm_overlap", "exposed_ns", v) / 1e6,
                    statistics.median(profiled_step_ms(v)))
    (idle_l, exp_l, step_l), (idle_s, exp_s, step_s) = parts["ddp-large-buckets"], parts["ddp-small-buckets"]
    d_idle, d_exposed, d_step = idle_s - idle_l, exp_s - exp_l, step_s - step_l
    assert abs((d_idle + d_exposed) - d_step) <= TOLERANCE * abs(d_step)
    assert d_idle > d_exposed > 0


# --- FSDP2: prefetch against no prefetch ---------------------------------------------------------------

@pytest.mark.parametrize("variant", ["fsdp2-prefetch", "fsdp2-no-prefetch"])
def test_fsdp_forward_prefetch_is_seen_as_configured(con, variant):
    """Every unit but the first has its forward all-gather issued by the previous unit's prefetch when
    the run set set_modules_to_forward_prefetch (truth's explicit_prefetch), none otherwise; each step
    gathers every one of the 12 units once in the forward and once in the backward."""
    explicit = truth(variant)[0]["config"]["explicit_prefetch"]
    rows = con.execute("""SELECT rank, step, count(*) FILTER (WHERE pass = 'forward'), count(*) FILTER (WHERE pass = 'backward'),
                                 count(*) FILTER (WHERE pass = 'forward' AND prefetched),
                                 count(DISTINCT unit) FILTER (WHERE pass = 'forward')
                          FROM fsdp_prefetch WHERE run_id = ? GROUP BY ALL""", [run_of(con, variant)]).fetchall()
    assert len(rows) == 6  # 2 ranks x 3 profiled steps
    blocks = 12  # record_parallel.BLOCKS: fully_shard on each
    for rank, step, forward, backward, prefetched, units in rows:
        assert (forward, backward, units) == (blocks, blocks, blocks), (rank, step)
        assert prefetched == (blocks - 1 if explicit else 0), (rank, step)


def forward_wait_ms(con, variant: str) -> float:
    """The forward all-gathers' wait per steady step on the rank that waited most."""
    return con.execute("""SELECT max(w) FROM (SELECT f.rank, avg(f.forward_wait_ns) / 1e6 AS w FROM fsdp_prefetch_steps f
                          JOIN steady_steps s USING (trace_id, pid, step_index) WHERE f.run_id = ? GROUP BY f.rank)""",
                       [run_of(con, variant)]).fetchone()[0]


def test_fsdp_without_prefetch_forward_all_gathers_are_late(con):
    """Without forward prefetch each unit's all-gather is issued when the unit starts, and the compute
    stream waits for it: the forward waits (on the rank that waits) cost at least 10 % of the step;
    with prefetch issuing it one unit earlier, a third of that or less."""
    late, prefetched = forward_wait_ms(con, "fsdp2-no-prefetch"), forward_wait_ms(con, "fsdp2-prefetch")
    assert late >= 0.10 * statistics.median(profiled_step_ms("fsdp2-no-prefetch"))
    assert prefetched <= late / 3


@pytest.mark.xfail(strict=True, reason=(
    "Does not hold on these recordings. The exposed all-gather wait per step and rank is 9.9 ms without "
    "prefetch and 5.3 ms with it (4.6 ms less), but truth's profiled step medians are 62.7 and 63.1 ms "
    "(-0.4 ms; means 63.6 and 61.2 ms): the 3 profiled steps with prefetch spread from 49 to 72 ms, so "
    "the difference is within the steps' own noise. All of the wait is on rank 0 and is rank 1 joining "
    "the all-gathers late (test below): under the profiler rank 1's host sets the pace, and the "
    "compute stream of rank 1, the rank that holds the step, never waits for an all-gather in either "
    "variant. Unprofiled, prefetch saves 7.0 ms (46.1 against 39.1 ms), which no trace here measures."))
def test_fsdp_exposed_all_gather_wait_difference_is_the_step_time_difference(con):
    wait = {v: steady_mean(con, "fsdp_prefetch_steps", "wait_ns", v) / 1e6 for v in ("fsdp2-no-prefetch", "fsdp2-prefetch")}
    step = {v: statistics.median(profiled_step_ms(v)) for v in wait}
    d_wait = wait["fsdp2-no-prefetch"] - wait["fsdp2-prefetch"]
    d_step = step["fsdp2-no-prefetch"] - step["fsdp2-prefetch"]
    assert abs(d_wait - d_step) <= TOLERANCE * abs(d_step)


@pytest.mark.parametrize("variant", ["fsdp2-prefetch", "fsdp2-no-prefetch"])
def test_fsdp_late_all_gathers_waited_for_the_other_rank(con, variant):
    """Most of the compute stream's wait is the all-gathers' own wait for the other rank to join
    (rank clocks aligned: collective_instance_ranks), and the late_prefetch finding says so instead of
    advising more prefetch; the rank that was waited for hardly waits itself, and is the run's
    straggler (collective_straggler, on the aligned clocks of collective_waits)."""
    per_rank = dict((r, (w, p)) for r, w, p in con.execute(
        """SELECT f.rank, sum(f.wait_ns), sum(f.peer_wait_ns) FROM fsdp_prefetch_steps f
           JOIN steady_steps s USING (trace_id, pid, step_index) WHERE f.run_id = ? GROUP BY f.rank""",
        [run_of(con, variant)]).fetchall())
    waiting = max(per_rank, key=lambda r: per_rank[r][0])
    wait, peer = per_rank[waiting]
    assert peer >= 0.5 * wait
    assert per_rank[1 - waiting][0] <= 0.1 * wait
    (evidence, advice), = con.execute("SELECT evidence, advice FROM findings WHERE rule = 'late_prefetch' AND trace_id = ?",
                                      [trace_of(con, variant, waiting)]).fetchall()
    assert f"rank {waiting} waiting" in evidence and "another rank joins them late" in advice
    straggler = con.execute("""SELECT r.rank FROM findings f JOIN rank_runs r USING (trace_id)
                               WHERE f.rule = 'collective_straggler' AND r.run_id = ?""", [run_of(con, variant)]).fetchall()
    assert straggler == [(1 - waiting,)]


# --- Pipeline: GPipe, 2 stages, 4 micro-batches ---------------------------------------------------------

def pipeline_rows(con) -> dict[tuple[int, str], dict]:
    cols = ["stage", "rank", "step", "stages", "microbatches", "wall_ns", "busy_ns", "bubble_ns", "theoretical_bubble_pct",
            "is_holding"]
    rows = con.execute(f"SELECT {', '.join(cols)} FROM pipeline_bubbles WHERE run_id = ?",
                       [run_of(con, "pipeline-gpipe")]).fetchall()
    return {(r[1], r[2]): dict(zip(cols, r)) for r in rows}


def test_pipeline_schedule_is_the_recorded_one(con):
    """p from the pipeline group (2 ranks), m counted from the forward ranges (4 per step and stage):
    the theoretical bubble is truth's (p - 1) / (m + p - 1) = 0.2; stage = rank."""
    config = truth("pipeline-gpipe")[0]["config"]
    rows = pipeline_rows(con)
    assert len(rows) == 2 * 3  # 2 stages x 3 profiled steps
    for (rank, _step), r in rows.items():
        assert (r["stage"], r["stages"], r["microbatches"]) == (rank, config["stages"], config["microbatches"])
        assert r["theoretical_bubble_pct"] == pytest.approx(100 * config["theoretical_bubble"])


def test_pipeline_bubble_per_stage_is_the_measured_one(con):
    """Per stage over the profiled steps, the bubble's share of the steps is within 15 % of truth's:
    the step's time outside the micro-batches' forward and backward, as CUDA events around the stage
    module's forward and around its backward measured it (wait_ms / step_ms, summed over the steps).
    Truth's events start and stop at the hooks, a little before the first and after the last operator
    this view counts from, so the view's bubble runs 5-7 % high per stage (up to 21 % in one step: one
    step's events fall 0.1-0.4 ms per micro-batch outside its operators)."""
    rows = pipeline_rows(con)
    for rank, t in truth("pipeline-gpipe").items():
        steps = t["profiled"]
        measured = sum(s["stage"]["wait_ms"] for s in steps) / sum(s["step_ms"] for s in steps)
        ours = [rows[(rank, s["profiler_step"])] for s in steps]
        bubble = sum(r["bubble_ns"] for r in ours) / sum(r["wall_ns"] for r in ours)
        assert abs(bubble - measured) <= TOLERANCE * measured, (rank, bubble, measured)
        assert measured > 2 * t["config"]["theoretical_bubble"]  # why the theoretical 0.2 is not the test


def test_pipeline_holding_stage_is_the_busiest_by_truth(con):
    """In each profiled step the stage that holds the others up is the one truth timed busiest
    (stage 1, its backward and loss, in two steps; stage 0 in the third)."""
    rows = pipeline_rows(con)
    t = truth("pipeline-gpipe")
    for i, step in enumerate(s["profiler_step"] for s in t[0]["profiled"]):
        busiest = max((0, 1), key=lambda r: t[r]["profiled"][i]["stage"]["busy_ms"])
        assert [r for r in (0, 1) if rows[(r, step)]["is_holding"]] == [busiest], step


# --- The page -------------------------------------------------------------------------------------------

def section_tables(con, variant: str):
    import page_reader
    from conftest import rendered_page

    page = page_reader.read(rendered_page(con, trace_of(con, variant, 0)).html)
    return page.tables["parallelism"]


def test_page_shows_the_pipeline_bubbles_of_the_view(con):
    """The parallelism section's per-stage table: the bubble's share of the steady steps, the busy time
    and the theoretical bubble, as pipeline_bubbles has them; and one row per stage and step."""
    expected = con.execute("""SELECT b.stage, 100.0 * sum(b.bubble_ns) / sum(b.wall_ns), avg(b.busy_ns),
                                     avg(b.theoretical_bubble_pct)
                              FROM pipeline_bubbles b JOIN steady_steps s USING (trace_id, pid, step_index)
                              WHERE b.run_id = ? GROUP BY b.stage ORDER BY b.stage""",
                           [run_of(con, "pipeline-gpipe")]).fetchall()
    tables = section_tables(con, "pipeline-gpipe")
    stages = next(t for t in tables if "theoretical" in t.headers)
    shown = [(int(r[0].text), float(c1.value), float(c2.value), float(c3.value))
             for r, c1, c2, c3 in zip(stages.rows, stages.column("bubble of the step"), stages.column("busy"),
                                      stages.column("theoretical"))]
    assert shown == [pytest.approx(e) for e in expected]
    per_step = next(t for t in tables if "holds" in t.headers)
    assert len(per_step.rows) == 6


def test_page_shows_the_fsdp_waits_of_the_view(con):
    expected = con.execute("""SELECT f.rank, avg(f.wait_ns), avg(f.forward_wait_ns), avg(f.prefetched)
                              FROM fsdp_prefetch_steps f JOIN steady_steps s USING (trace_id, pid, step_index)
                              WHERE f.run_id = ? GROUP BY f.rank ORDER BY f.rank""",
                           [run_of(con, "fsdp2-no-prefetch")]).fetchall()
    fsdp = next(t for t in section_tables(con, "fsdp2-no-prefetch") if "in the forward" in t.headers)
    shown = [(int(r[0].text), float(a.value), float(b.value), float(c.value))
             for r, a, b, c in zip(fsdp.rows, fsdp.column("compute waited per step"), fsdp.column("in the forward"),
                                   fsdp.column("prefetched"))]
    assert shown == [pytest.approx(e) for e in expected]
