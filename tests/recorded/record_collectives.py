"""Record the multi-GPU PyTorch traces behind issue #18's golden tests (run under torchrun).

`OUT=dir torchrun --nproc_per_node=N record_collectives.py collectives|ddp`

collectives: every rank issues, in the same order, all_reduce, all_gather_into_tensor,
reduce_scatter_tensor, all_to_all_single and broadcast of 1, 16 and 128 MiB in bf16 and fp32, three
times each, under the PyTorch profiler (record_shapes: the record_param_comms args). Each call is
timed on the rank's current stream with CUDA events placed right before and after it (as nccl-tests
times on its stream); async_op=False, so the current stream waits for NCCL's. A ~1 ms GPU spin
(torch.cuda._sleep) is queued before the start event, so the host has enqueued the call before the
stream reaches it and the event time holds no host launch latency. Before repetition 1
of every call the last rank sleeps SLEEP_S on the host, so the others wait for it. A barrier (a
small NCCL all-reduce) precedes every call so arrivals are aligned otherwise.

`events_rank<r>.json` lists, per call in issue order: op, size_bytes as nccl-tests counts it
(all_reduce/broadcast/all_to_all: the buffer; all_gather: the output; reduce_scatter: the input),
in/out element counts, dtype, repetition, whether this rank slept before it, the event time in ms
and the host wall time of the launch. Barriers are not listed but appear in the trace.

ddp: a 4-layer transformer trained with DistributedDataParallel (bucket_cap_mb=25), bf16 autocast,
3 profiled steps; the last rank sleeps 20 ms per step after the optimizer (a straggler).
"""
import gzip
import json
import os
import shutil
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function, schedule

OUT = os.environ.get("OUT", "/tmp/out")
SIZES_MIB = (1, 16, 128)
DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}
REPS = 3
SLEEP_S = 0.050
GPU_SPIN_CYCLES = 2_000_000  # about 1 ms at H200 clocks


def save_trace(path):
    with open(path, "rb") as f, gzip.open(path + ".gz", "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.remove(path)


def one_call(op, size_bytes, dtype, world):
    """(launch, in_elems, out_elems) for one collective whose nccl-tests size is size_bytes."""
    elem = torch.tensor([], dtype=dtype).element_size()
    n = size_bytes // elem
    if op == "all_reduce":
        buf = torch.ones(n, dtype=dtype, device="cuda")
        return (lambda: dist.all_reduce(buf)), n, n
    if op == "broadcast":
        buf = torch.ones(n, dtype=dtype, device="cuda")
        return (lambda: dist.broadcast(buf, src=0)), n, n
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
    raise ValueError(op)


def collectives(rank, world, run_dir):
    ops = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast")
    calls = [(op, mib, dt) for op in ops for mib in SIZES_MIB for dt in DTYPES]
    for op, mib, dt in calls:  # warm-up: NCCL communicators and buffers, outside the profiler
        launch, _, _ = one_call(op, mib << 20, DTYPES[dt], world)
        launch()
    torch.cuda.synchronize()
    dist.barrier()
    rows, pending = [], []
    path = f"{run_dir}/rank{rank}.pt.trace.json"
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        for op, mib, dt in calls:
            launch, n_in, n_out = one_call(op, mib << 20, DTYPES[dt], world)
            for rep in range(REPS):
                dist.barrier()
                torch.cuda.synchronize()
                slept = rep == 1 and rank == world - 1
                if slept:
                    time.sleep(SLEEP_S)
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                torch.cuda._sleep(GPU_SPIN_CYCLES)  # the stream is busy while the host enqueues the call,
                # so the events time the GPU work, not the host's launch latency
                with record_function(f"call:{op}:{mib}MiB:{dt}:rep{rep}"):
                    t_host = time.time_ns()
                    start.record()
                    launch()
                    end.record()
                pending.append((start, end))
                rows.append({"op": op, "size_bytes": mib << 20, "size_mib": mib, "dtype": dt,
                             "in_elems": n_in, "out_elems": n_out, "rep": rep, "slept_before_s": SLEEP_S if slept else 0,
                             "launch_host_unix_ns": t_host})
        torch.cuda.synchronize()
    for row, (start, end) in zip(rows, pending):
        row["event_ms"] = start.elapsed_time(end)
    prof.export_chrome_trace(path)
    save_trace(path)
    with open(f"{run_dir}/events_rank{rank}.json", "w") as f:
        json.dump({"rank": rank, "world_size": world, "sleeping_rank": world - 1, "sleep_s": SLEEP_S,
                   "device": torch.cuda.get_device_name(), "calls": rows}, f, indent=1)


class Block(nn.Module):
    def __init__(self, d=1024, heads=16):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


def ddp(rank, world, run_dir):
    torch.manual_seed(0)
    model = nn.Sequential(*[Block() for _ in range(4)], nn.Linear(1024, 1000)).cuda()
    model = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=25)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(16, 256, 1024, device="cuda")
    y = torch.randint(0, 1000, (16, 256), device="cuda")

    def step(i):
        with record_function("forward"), torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x).flatten(0, 1).float(), y.flatten())
        with record_function("backward"):
            loss.backward()
        with record_function("optimizer"):
            opt.step()
            opt.zero_grad(set_to_none=True)
        if rank == world - 1:
            time.sleep(0.020)

    step(0)
    torch.cuda.synchronize()
    path = f"{run_dir}/rank{rank}.pt.trace.json"
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=schedule(wait=0, warmup=1, active=3),
                 on_trace_ready=lambda p: p.export_chrome_trace(path), record_shapes=True, with_stack=False,
                 profile_memory=True) as prof:
        for i in range(4):
            step(i)
            prof.step()
    save_trace(path)


if __name__ == "__main__":
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(rank)
    gpu = "h100" if "H100" in torch.cuda.get_device_name() else "h200"
    what = sys.argv[1]
    run_dir = f"{OUT}/torch-2.11_{what}-{world}rank_{gpu}x{world}"
    os.makedirs(run_dir, exist_ok=True)
    {"collectives": collectives, "ddp": ddp}[what](rank, world, run_dir)
    dist.barrier()
    dist.destroy_process_group()
