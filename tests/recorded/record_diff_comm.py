"""Record the communication diff pairs of issue #30 (run under torchrun on 2 GPUs).

`OUT=dir torchrun --nproc_per_node=2 record_diff_comm.py`

A training-like step per rank: COMPUTE_REPS bf16 4096^3 GEMMs (the "forward/backward"), then one
dist.all_reduce of a GRAD_MIB fp32 gradient buffer, under the PyTorch profiler (record_shapes;
schedule wait 0, warm-up 1, active STEPS, so ProfilerStep#N ranges are the steps). Variants, each
a trace per rank in `torch-2.11_diff-comm-<variant>-2rank_<gpu>x2/`:

- base, base-repeat: as above (a second recording of the same program, for the noise test);
- straggler: the last rank sleeps STRAGGLER_S on the host at the start of every step, before it
  launches its GEMMs, so its all_reduce starts late and the other rank waits for it;
- big-allreduce: the gradient buffer is BIG_GRAD_MIB instead of GRAD_MIB (longer transfer).

Truth, `events_<variant>_rank<r>.json`: per step the CUDA-event time of the whole step's GPU work
(an event before the first GEMM, one after the all_reduce) and of the all_reduce alone (events
right before and after it on the current stream; async_op=False, so the current stream waits for
NCCL's; the GEMMs are still running when it is enqueued, so the start event holds no host
latency). A collective cannot finish before both ranks joined: across ranks, the shorter
all_reduce time of a step is its transfer, and each rank's time beyond it is its wait.
"""
import gzip
import json
import os
import shutil
import time

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile, record_function, schedule

OUT = os.environ.get("OUT", "/tmp/out")
STEPS = 10
COMPUTE_REPS = 8
GRAD_MIB = 256
BIG_GRAD_MIB = 1024
STRAGGLER_S = 0.004
VARIANTS = ("base", "base-repeat", "straggler", "big-allreduce")


def save_trace(path):
    with open(path, "rb") as f, gzip.open(path + ".gz", "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.remove(path)


def record(variant, rank, world, gpu):
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    c = torch.empty_like(a)
    mib = BIG_GRAD_MIB if variant == "big-allreduce" else GRAD_MIB
    grad = torch.ones(mib * (1 << 20) // 4, device="cuda", dtype=torch.float32)
    late = variant == "straggler" and rank == world - 1
    rows = []

    def step(i, timed):
        if late:
            t0 = time.perf_counter()
            time.sleep(STRAGGLER_S)
            slept = time.perf_counter() - t0
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
        ev[0].record()
        with record_function("compute"):
            for _ in range(COMPUTE_REPS):
                torch.mm(a, b, out=c)
        ev[1].record()
        with record_function("allreduce_grad"):
            dist.all_reduce(grad)
        ev[2].record()
        if timed:
            ev[2].synchronize()
            rows.append({"step": i, "step_gpu_ms": ev[0].elapsed_time(ev[2]),
                         "all_reduce_ms": ev[1].elapsed_time(ev[2]), "compute_ms": ev[0].elapsed_time(ev[1]),
                         "slept_ms": 1e3 * slept if late else 0.0})

    for _ in range(3):  # warm-up outside the profiler: NCCL communicators, cuBLAS
        step(-1, False)
    torch.cuda.synchronize()
    dist.barrier()
    run_dir = f"{OUT}/torch-2.11_diff-comm-{variant}-{world}rank_{gpu}x{world}"
    os.makedirs(run_dir, exist_ok=True)
    path = f"{run_dir}/rank{rank}.pt.trace.json"
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=0, warmup=1, active=STEPS),
                 on_trace_ready=lambda p: p.export_chrome_trace(path), record_shapes=True) as prof:
        for i in range(STEPS + 1):
            step(i - 1, i > 0)  # step -1 is the profiler's warm-up
            prof.step()
    save_trace(path)
    with open(f"{run_dir}/events_rank{rank}.json", "w") as f:
        json.dump({"variant": variant, "rank": rank, "world": world, "grad_bytes": grad.numel() * 4,
                   "compute": f"{COMPUTE_REPS} x bf16 4096^3 mm", "straggler_sleep_s": STRAGGLER_S if late else 0,
                   "torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
                   "device": torch.cuda.get_device_name(), "steps": rows}, f, indent=1)
    dist.barrier()


if __name__ == "__main__":
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(rank)
    gpu = "h100" if "H100" in torch.cuda.get_device_name() else "h200"
    for v in VARIANTS:
        record(v, rank, world, gpu)
        print(rank, v, "done", flush=True)
    dist.barrier()
    dist.destroy_process_group()
