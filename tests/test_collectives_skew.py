"""Collective transfer time when ranks arrive apart, against CUDA-event timings (issue #31 item 4).

The 2-rank H100 recording (tests/recorded/record_collectives_skew.py; README there): all_reduce,
all_gather, reduce_scatter, all_to_all, a one-way send/recv and a two-way exchange (batched
isend/irecv) of 16, 64 and 128 MiB in bf16 and fp32, four repetitions, rank 1 late before
repetitions 1 (50 ms host sleep) and 2 (~180 us longer GPU spin). Each call is timed with CUDA events
on each rank; the rank that arrives last waits least, so the shortest event time of a call is its
transfer time plus the events' fixed cost (~4 us).

Between two ranks a P2P-based collective has a single pair: nothing moves before both have
arrived, so the last arrival's kernel is the transfer, as for ring collectives (checked here on every
call, skewed and not). With three or more ranks, pairs that have arrived move data first: the
4-rank H200 recording (tests/test_collectives.py) covers that case.
"""

from __future__ import annotations

import json

import pytest
from conftest import REPO

SKEW = REPO / "tests" / "recorded" / "torch-2.11_collectives-skew-2rank_h100x2"
DTYPES = {"bf16": "bfloat16", "fp32": "float32"}
OPERATIONS = {"send_recv": {"send", "recv"}, "exchange": {"send_recv"}}  # else the op itself
BUS_FACTOR_2 = {"all_reduce": 1.0, "all_gather": 0.5, "reduce_scatter": 0.5, "all_to_all": 0.5, "send": 1.0,
                "recv": 1.0}
EVENT_COST_NS = (2_000, 6_000)  # what the events add around the kernel (start/end records, stream waits)


@pytest.fixture(scope="module")
def calls(tmp_path_factory):
    """(truth per rank, instance row) for each issued call, in issue order (barriers aside)."""
    from tracelake.cli.main import main
    from tracelake.lake.database import connect

    lake = tmp_path_factory.mktemp("skew") / "lake"
    files = sorted(str(p) for p in SKEW.glob("rank*.pt.trace.json.gz"))
    assert len(files) == 2
    assert main(["ingest", *files, "--lake", str(lake), "--quiet"]) == 0
    db = connect(lake)
    rows = db.execute("""
        SELECT operation, bytes, dtype, transfer_ns, transfer_basis, busbw_gb_per_s, skew_ns, last_rank,
               wait_ns_by_rank, ranks_matched
        FROM collective_instances WHERE operation <> 'barrier' ORDER BY instance""").fetchall()
    db.close()
    truth = [json.loads((SKEW / f"events_rank{r}.json").read_text())["calls"] for r in range(2)]
    assert len(rows) == len(truth[0]) == 6 * 3 * 2 * 4
    return [(list(per_rank), row) for *per_rank, row in zip(*truth, rows)]


def test_every_call_matched_with_the_sizes_issued(calls):
    for per_rank, (operation, nbytes, dtype, *_, ranks) in calls:
        issued = per_rank[0]
        assert operation in OPERATIONS.get(issued["op"], {issued["op"]}), issued
        assert ranks == 2
        if issued["op"] == "exchange":
            # batch_isend_irecv's record_param_comms carries no sizes: neither bytes nor dtype
            assert (nbytes, dtype) == (None, None)
        else:
            assert (nbytes, dtype) == (issued["size_bytes"], DTYPES[issued["dtype"]]), issued


def test_transfer_time_and_bus_bandwidth_against_cuda_events_skewed_and_not(calls):
    checked = set()
    for per_rank, (operation, nbytes, _, transfer_ns, basis, busbw, *_) in calls:
        issued = per_rank[0]
        event_ns = min(c["event_ms"] for c in per_rank) * 1e6  # the last arrival's event
        assert basis == "last_arrival"  # one pair: nothing moves before both ranks are there
        assert transfer_ns < event_ns, issued  # the kernel never outlasts the events around it
        if event_ns - transfer_ns > 50_000 and issued["op"] == "all_to_all" and issued["rep"] == 1:
            # 16 MiB bf16 after rank 1's sleep: its events span 557 us around a 204 us kernel (the
            # stream sat idle between them); rank 0's events and both kernels end together
            continue
        if event_ns < 60_000:
            # 16 MiB calls take 33-58 us between two H100s (all_to_all, send/recv, all_gather,
            # reduce_scatter): the events' fixed ~4-5 us is 8-14 % of that
            assert EVENT_COST_NS[0] < event_ns - transfer_ns < EVENT_COST_NS[1], issued
            continue
        assert transfer_ns == pytest.approx(event_ns, rel=0.10), issued
        if nbytes is not None:
            assert busbw == pytest.approx(nbytes / event_ns * BUS_FACTOR_2[operation], rel=0.10), issued
        checked.add((issued["op"], issued["dtype"], issued["rep"] > 0))
    # every op and dtype, with and without a planted late rank
    assert len(checked) == 6 * 2 * 2


def test_the_planted_late_rank_arrives_last(calls):
    for per_rank, (*_, skew_ns, last_rank, waits, _) in calls:
        issued = per_rank[0]
        if issued["rep"] == 2:  # rank 1's GPU spin ~180 us longer: it arrives last
            assert last_rank == 1, issued
        if issued["rep"] != 1:
            continue
        assert per_rank[1]["slept_before_s"] == 0.05 and last_rank == 1
        assert skew_ns == pytest.approx(50e6, rel=0.10), issued
        if issued["op"] == "send_recv" and issued["size_bytes"] < 128 << 20:
            # up to 64 MiB the sender pushes into the receiver's buffers and is done without it
            assert per_rank[0]["event_ms"] < 1
            continue
        assert waits[1] == 0 and waits[0] == pytest.approx(50e6, rel=0.10), issued
