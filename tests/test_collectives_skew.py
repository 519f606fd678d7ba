"""Collective transfer time when ranks arrive apart, against CUDA-event timings (issue #31 item 4).

The 2-rank H200 recording (tests/recorded/record_collectives_skew.py; README there): all_reduce,
all_gather, reduce_scatter, all_to_all, a one-way send/recv and a two-way exchange (batched
isend/irecv) of 16, 64 and 128 MiB in bf16 and fp32. Single calls, four repetitions each, a barrier
before every call, rank 1 late before repetitions 1 (50 ms host sleep) and 2 (~180 us longer GPU
spin), each timed with CUDA events on each rank. Then, per (op, size, dtype), a burst of 12 calls
back to back between one pair of events: span / 12 is the per-call time with the events' fixed
~4-5 us (8-14 % of a 16 MiB call) spread over the burst, the way nccl-tests times a size.

The burst calls are in the trace too: their transfer time and busbw must match the burst's
per-call time within 10 % for every op, dtype and size, 16 MiB included. P2P-based collectives
need the definition of collective_instance_ranks: the early rank pushes its data ahead, so the
last arrival's kernel alone is up to 30 % short at 16 MiB.
"""

from __future__ import annotations

import json
import statistics

import pytest
from conftest import REPO

SKEW = REPO / "tests" / "recorded" / "torch-2.11_collectives-skew-2rank_h200x2"
DTYPES = {"bf16": "bfloat16", "fp32": "float32"}
OPERATIONS = {"send_recv": {"send", "recv"}, "exchange": {"send_recv"}}  # else the op itself
BUS_FACTOR_2 = {"all_reduce": 1.0, "all_gather": 0.5, "reduce_scatter": 0.5, "all_to_all": 0.5, "send": 1.0,
                "recv": 1.0, "send_recv": 1.0}
EVENT_COST_NS = (2_000, 6_000)  # what the events add around the kernel (start/end records, stream waits)
P2P = {"all_to_all", "send_recv", "exchange"}


def _truth(rank):
    return json.loads((SKEW / f"events_rank{rank}.json").read_text())


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    from tracelake.cli.main import main

    lake = tmp_path_factory.mktemp("skew") / "lake"
    files = sorted(str(p) for p in SKEW.glob("rank*.pt.trace.json.gz"))
    assert len(files) == 2
    assert main(["ingest", *files, "--lake", str(lake), "--quiet"]) == 0
    return lake


@pytest.fixture(scope="module")
def instances(lake):
    """(single calls, bursts): single = [(truth per rank, row)], bursts = [(truth per rank, rows)]."""
    from tracelake.lake.database import connect

    db = connect(lake)
    rows = db.execute("""
        SELECT operation, bytes, dtype, transfer_ns, transfer_basis, busbw_gb_per_s, skew_ns, last_rank,
               wait_ns_by_rank, ranks_matched
        FROM collective_instances WHERE operation <> 'barrier' ORDER BY instance""").fetchall()
    db.close()
    truth = [_truth(r) for r in range(2)]
    calls, bursts, n = [t["calls"] for t in truth], [t["bursts"] for t in truth], truth[0]["burst_calls"]
    assert len(rows) == len(calls[0]) + len(bursts[0]) * n == 6 * 3 * 2 * (4 + n)
    single = [(list(per_rank), row) for *per_rank, row in zip(*calls, rows)]
    burst_rows = rows[len(single):]
    grouped = [(list(per_rank), burst_rows[i * n:(i + 1) * n]) for i, per_rank in enumerate(zip(*bursts))]
    return single, grouped


def _witness_ns(per_rank):
    """A burst's per-call time: the shorter span of the two ranks (the later start) / calls."""
    assert all(b["host_ahead"] for b in per_rank)  # the stream never waited for the host
    return min(b["span_ms"] for b in per_rank) / per_rank[0]["calls"] * 1e6


def test_every_call_matched_with_the_sizes_issued(instances):
    single, bursts = instances
    issued_rows = [(per_rank[0], row) for per_rank, row in single]
    issued_rows += [(per_rank[0], row) for per_rank, rows in bursts for row in rows]
    for issued, (operation, nbytes, dtype, *_, ranks) in issued_rows:
        assert operation in OPERATIONS.get(issued["op"], {issued["op"]}), issued
        assert ranks == 2
        # batch_isend_irecv's sizes come from its send / recv records (collectives p2p_batches)
        assert (nbytes, dtype) == (issued["size_bytes"], DTYPES[issued["dtype"]]), issued


def test_back_to_back_calls_against_the_per_call_time_of_their_burst(instances):
    """Every op, dtype and size: the median call of a burst within 10 % of span / calls."""
    checked = set()
    for per_rank, rows in instances[1]:
        issued, witness_ns = per_rank[0], _witness_ns(per_rank)
        transfer_ns = statistics.median(row[3] for row in rows)
        busbw = statistics.median(row[5] for row in rows)
        assert transfer_ns == pytest.approx(witness_ns, rel=0.10), issued
        bus_factor = BUS_FACTOR_2[rows[0][0]]
        assert busbw == pytest.approx(issued["size_bytes"] / witness_ns * bus_factor, rel=0.10), issued
        checked.add((issued["op"], issued["dtype"], issued["size_mib"]))
    assert len(checked) == 6 * 2 * 3


def test_the_profiler_does_not_change_the_bursts(instances):
    for per_rank, _ in instances[1]:
        unprofiled = min(b["unprofiled_span_ms"] for b in per_rank)
        assert min(b["span_ms"] for b in per_rank) == pytest.approx(unprofiled, rel=0.10), per_rank[0]


def test_last_arrival_alone_is_short_for_p2p_collectives(instances):
    """Why the definition is needed: at 16 MiB the all-to-all's last arrival's kernel is ~25 % short."""
    for per_rank, rows in instances[1]:
        issued = per_rank[0]
        if issued["op"] == "all_to_all" and issued["size_mib"] == 16:
            assert {row[4] for row in rows} == {"to_last_end"}, issued


def test_single_calls_against_their_events_and_the_burst(instances):
    """A single call's own events where they show it slow, else the burst's per-call time (10 %)."""
    single, bursts = instances
    witness = {(b[0]["op"], b[0]["size_mib"], b[0]["dtype"]): _witness_ns(b) for b, _ in bursts}
    checked = set()
    for per_rank, (operation, nbytes, _, transfer_ns, basis, busbw, *_) in single:
        issued = per_rank[0]
        event_ns = min(c["event_ms"] for c in per_rank) * 1e6  # the last arrival's events
        steady_ns = witness[(issued["op"], issued["size_mib"], issued["dtype"])]
        if issued["op"] not in P2P:
            assert basis == "last_arrival"  # ring: nothing moves before both ranks are there
            assert EVENT_COST_NS[0] < event_ns - transfer_ns < EVENT_COST_NS[1], issued
        if event_ns - EVENT_COST_NS[1] > 1.10 * steady_ns:
            # the first call after the profiler starts, and most after rank 1's 50 ms sleep, are
            # 35-170 us slower on both ranks (events and kernels, every op): their events are the truth
            assert transfer_ns == pytest.approx(event_ns, rel=0.10), issued
            continue
        tolerance = 0.10 if issued["op"] not in P2P or issued["size_mib"] > 16 else 0.16
        assert transfer_ns == pytest.approx(steady_ns, rel=tolerance), issued
        assert busbw == pytest.approx(nbytes / transfer_ns * BUS_FACTOR_2[operation], rel=1e-9), issued
        checked.add((issued["op"], issued["dtype"], issued["rep"] > 0))
    assert len(checked) == 6 * 2 * 2


def test_the_planted_late_rank_arrives_last(instances):
    for per_rank, (*_, skew_ns, last_rank, waits, _) in instances[0]:
        issued = per_rank[0]
        if issued["rep"] != 1:
            continue
        assert per_rank[1]["slept_before_s"] == 0.05 and last_rank == 1
        assert skew_ns == pytest.approx(50e6, rel=0.10), issued
        if issued["op"] == "send_recv" and issued["size_bytes"] < 128 << 20:
            # up to 64 MiB the sender pushes into the receiver's buffers and is done without it
            assert per_rank[0]["event_ms"] < 1
            continue
        assert waits[1] == 0 and waits[0] == pytest.approx(50e6, rel=0.10), issued


def test_collectives_are_the_same_every_time(lake):
    """A send matched with its recv is one collective of two operations: which one named it was
    left to DuckDB's mode() (a tie), so the collective and the low-bandwidth finding about it
    changed from one evaluation to the next (1 in 6 evaluations of this lake)."""
    from tracelake.lake.database import connect

    db = connect(lake)
    seen = {db.execute("""
        SELECT md5(string_agg(concat_ws('|', instance, operation, dtype, bytes, last_rank, transfer_ns, seq),
                              ';' ORDER BY instance))
        FROM collective_instances""").fetchone()[0] for _ in range(24)}
    mixed = db.execute("""SELECT count(*) FROM (SELECT instance FROM collective_instance_ranks
                          GROUP BY run_id, instance HAVING count(DISTINCT operation) > 1)""").fetchone()[0]
    db.close()
    assert mixed > 0  # the tie this test is about is in the recording
    assert len(seen) == 1
