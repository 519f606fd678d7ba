"""Record the 2-rank collectives-under-skew traces behind issue #31 item 4 (run under torchrun).

`OUT=dir torchrun --nproc_per_node=2 record_collectives_skew.py`

Every rank issues, in the same order, all_reduce, all_gather_into_tensor, reduce_scatter_tensor,
all_to_all_single, a one-way send/recv (rank 0 sends, rank 1 receives) and a two-way exchange
(batch_isend_irecv: each rank sends its buffer to the other and receives the other's) of 16, 64 and
128 MiB in bf16 and fp32, four repetitions each, under the PyTorch profiler (record_shapes). Before
every call: a barrier (a small NCCL all-reduce), cuda synchronize, then a ~1 ms GPU spin
(torch.cuda._sleep) queued before the start event, so the host has enqueued the call before the
stream reaches it. Each call is timed on the rank's current stream with CUDA events right before
and after it (async_op=False or work.wait(): the current stream waits for NCCL's).

Planted late rank (rank 1): repetition 1: it sleeps SLEEP_S on the host before the call (the
other rank waits ~50 ms); repetition 2: its GPU spin is longer by EXTRA_SPIN_CYCLES (~150-200 us
of skew, the order of the transfer itself); repetitions 0 and 3: no planted skew.

Back-to-back bursts (the witness without the events' fixed cost): after the single calls, each
(op, size, dtype) is also issued BURST_CALLS times back to back between ONE pair of CUDA events
(async_op=True, every work waited on after the last call, no barrier in between), behind a
barrier, a synchronize and a ~10 ms GPU spin so the host has enqueued them all before the stream
reaches the start event (`host_ahead`: the start event had not completed when the host finished
enqueueing). span / BURST_CALLS is the per-call time with the events' ~4-5 us spread over all the
calls. The bursts run twice: once before the profiler starts (`unprofiled_span_ms`) and once under
it, annotated `burst:<op>:<MiB>MiB:<dtype>:x<calls>` (`span_ms`; their calls are in the trace
after the single calls).

`events_rank<r>.json` lists, per call in issue order: op, size_bytes as nccl-tests counts it
(all_reduce/all_to_all/send_recv/exchange: the buffer; all_gather: the output; reduce_scatter: the
input), in/out element counts, dtype, repetition, the skew planted on this rank (host sleep s,
extra spin cycles), the event time in ms and the host wall time of the launch; under "bursts",
per (op, size, dtype) in issue order: calls, span_ms, host_ahead, unprofiled_span_ms,
unprofiled_host_ahead.
"""
import gzip
import json
import os
import shutil
import time
from contextlib import nullcontext

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile, record_function

OUT = os.environ.get("OUT", "/tmp/out")
SIZES_MIB = (16, 64, 128)
DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}
OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv", "exchange")
REPS = 4
SLEEP_S = 0.050
GPU_SPIN_CYCLES = 2_000_000  # about 1 ms
EXTRA_SPIN_CYCLES = 350_000  # about 180 us more on the late rank in repetition 2
LATE_RANK = 1
BURST_CALLS = 12
BURST_SPIN_CYCLES = 20_000_000  # about 10 ms: the host enqueues all BURST_CALLS calls meanwhile


def save_trace(path):
    with open(path, "rb") as f, gzip.open(path + ".gz", "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.remove(path)


def one_call(op, size_bytes, dtype, rank, world):
    """(launch, in_elems, out_elems) for one call whose nccl-tests size is size_bytes."""
    elem = torch.tensor([], dtype=dtype).element_size()
    n = size_bytes // elem
    if op == "all_reduce":
        buf = torch.ones(n, dtype=dtype, device="cuda")
        return (lambda: dist.all_reduce(buf)), n, n
    if op == "all_gather":
        out = torch.empty(n, dtype=dtype, device="cuda")
        inp = torch.ones(n // world, dtype=dtype, device="cuda")
        return (lambda: dist.all_gather_into_tensor(out, inp)), n // world, n
    if op == "reduce_scatter":
        inp = torch.ones(n, dtype=dtype, device="cuda")
        out = torch.empty(n // world, dtype=dtype, device="cuda")
        return (lambda: dist.reduce_scatter_tensor(out, inp)), n, n // world
    if op == "all_to_all":
        inp = torch.ones(n, dtype=dtype, device="cuda")
        out = torch.empty(n, dtype=dtype, device="cuda")
        return (lambda: dist.all_to_all_single(out, inp)), n, n
    if op == "send_recv":
        buf = torch.ones(n, dtype=dtype, device="cuda")
        if rank == 0:
            return (lambda: dist.send(buf, 1)), n, 0
        return (lambda: dist.recv(buf, 0)), 0, n
    if op == "exchange":
        inp = torch.ones(n, dtype=dtype, device="cuda")
        out = torch.empty(n, dtype=dtype, device="cuda")
        peer = 1 - rank

        def launch():
            works = dist.batch_isend_irecv([dist.P2POp(dist.isend, inp, peer), dist.P2POp(dist.irecv, out, peer)])
            for w in works:
                w.wait()
        return launch, n, n
    raise ValueError(op)


def one_async_call(op, size_bytes, dtype, rank, world):
    """launch() -> the works of one call issued with async_op=True (waited on after the burst)."""
    elem = torch.tensor([], dtype=dtype).element_size()
    n = size_bytes // elem
    if op == "all_reduce":
        buf = torch.ones(n, dtype=dtype, device="cuda")
        return lambda: [dist.all_reduce(buf, async_op=True)]
    if op == "all_gather":
        out = torch.empty(n, dtype=dtype, device="cuda")
        inp = torch.ones(n // world, dtype=dtype, device="cuda")
        return lambda: [dist.all_gather_into_tensor(out, inp, async_op=True)]
    if op == "reduce_scatter":
        inp = torch.ones(n, dtype=dtype, device="cuda")
        out = torch.empty(n // world, dtype=dtype, device="cuda")
        return lambda: [dist.reduce_scatter_tensor(out, inp, async_op=True)]
    if op == "all_to_all":
        inp = torch.ones(n, dtype=dtype, device="cuda")
        out = torch.empty(n, dtype=dtype, device="cuda")
        return lambda: [dist.all_to_all_single(out, inp, async_op=True)]
    if op == "send_recv":
        buf = torch.ones(n, dtype=dtype, device="cuda")
        if rank == 0:
            return lambda: [dist.isend(buf, 1)]
        return lambda: [dist.irecv(buf, 0)]
    if op == "exchange":
        inp = torch.ones(n, dtype=dtype, device="cuda")
        out = torch.empty(n, dtype=dtype, device="cuda")
        peer = 1 - rank
        return lambda: dist.batch_isend_irecv([dist.P2POp(dist.isend, inp, peer), dist.P2POp(dist.irecv, out, peer)])
    raise ValueError(op)


def bursts(calls, rank, world, annotate):
    """(span_ms, host_ahead) per (op, MiB, dtype): BURST_CALLS calls between one pair of events."""
    pending = []
    for op, mib, dt in calls:
        launch = one_async_call(op, mib << 20, DTYPES[dt], rank, world)
        dist.barrier()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(BURST_SPIN_CYCLES)
        with record_function(f"burst:{op}:{mib}MiB:{dt}:x{BURST_CALLS}") if annotate else nullcontext():
            start.record()
            works = [w for _ in range(BURST_CALLS) for w in launch()]
            ahead = not start.query()  # the stream had not reached the start event yet
            for w in works:
                w.wait()
            end.record()
        pending.append((start, end, ahead))
    torch.cuda.synchronize()
    return [(start.elapsed_time(end), ahead) for start, end, ahead in pending]


def main(rank, world, run_dir):
    calls = [(op, mib, dt) for op in OPS for mib in SIZES_MIB for dt in DTYPES]
    for op, mib, dt in calls:  # warm-up: communicators (the P2P ones too) and buffers, outside the profiler
        launch, _, _ = one_call(op, mib << 20, DTYPES[dt], rank, world)
        launch()
    torch.cuda.synchronize()
    unprofiled = bursts(calls, rank, world, annotate=False)
    dist.barrier()
    rows, pending = [], []
    path = f"{run_dir}/rank{rank}.pt.trace.json"
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        for op, mib, dt in calls:
            launch, n_in, n_out = one_call(op, mib << 20, DTYPES[dt], rank, world)
            for rep in range(REPS):
                dist.barrier()
                torch.cuda.synchronize()
                late = rank == LATE_RANK
                sleep_s = SLEEP_S if late and rep == 1 else 0
                extra = EXTRA_SPIN_CYCLES if late and rep == 2 else 0
                if sleep_s:
                    time.sleep(sleep_s)
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                torch.cuda._sleep(GPU_SPIN_CYCLES + extra)
                with record_function(f"call:{op}:{mib}MiB:{dt}:rep{rep}"):
                    t_host = time.time_ns()
                    start.record()
                    launch()
                    end.record()
                pending.append((start, end))
                rows.append({"op": op, "size_bytes": mib << 20, "size_mib": mib, "dtype": dt,
                             "in_elems": n_in, "out_elems": n_out, "rep": rep,
                             "slept_before_s": sleep_s, "extra_spin_cycles": extra,
                             "launch_host_unix_ns": t_host})
        torch.cuda.synchronize()
        for row, (start, end) in zip(rows, pending):
            row["event_ms"] = start.elapsed_time(end)
        profiled = bursts(calls, rank, world, annotate=True)
    burst_rows = [{"op": op, "size_bytes": mib << 20, "size_mib": mib, "dtype": dt, "calls": BURST_CALLS,
                   "span_ms": span, "host_ahead": ahead, "unprofiled_span_ms": uspan,
                   "unprofiled_host_ahead": uahead}
                  for (op, mib, dt), (span, ahead), (uspan, uahead) in zip(calls, profiled, unprofiled)]
    prof.export_chrome_trace(path)
    save_trace(path)
    with open(f"{run_dir}/events_rank{rank}.json", "w") as f:
        json.dump({"rank": rank, "world_size": world, "late_rank": LATE_RANK, "sleep_s": SLEEP_S,
                   "extra_spin_cycles": EXTRA_SPIN_CYCLES, "device": torch.cuda.get_device_name(),
                   "torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
                   "burst_calls": BURST_CALLS, "burst_spin_cycles": BURST_SPIN_CYCLES,
                   "calls": rows, "bursts": burst_rows}, f, indent=1)


if __name__ == "__main__":
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(rank)
    gpu = "h100" if "H100" in torch.cuda.get_device_name() else "h200"
    run_dir = f"{OUT}/torch-2.11_collectives-skew-{world}rank_{gpu}x{world}"
    os.makedirs(run_dir, exist_ok=True)
    main(rank, world, run_dir)
    dist.barrier()
    dist.destroy_process_group()
