"""Record the programs behind the judgment tests (issues #48 and #49): one planted bound each, its
remedy really applied, timed without any profiler, and recorded under the PyTorch profiler (light
and heavy settings) and Nsight Systems.

Programs (`PROGRAMS`; each a training or inference step on one GPU):

- gpu-bound            4 x Linear 8192 (bf16 weights), batch 8192, SGD; no host sync in the loop, so
                       the host runs ahead of the GPU (the well-written loop; step time is the GPU's);
- gpu-bound-fp32-head  the same with its last layer in fp32, TF32 off: the same FLOPs take longer;
- launch-bound         inference of 48 x (Linear 512 + ReLU), batch 32, eager: the host's launches
                       bound the step;
- launch-bound-graph   the remedy: the same step captured once in a torch.cuda.CUDAGraph and replayed;
- mlp                  the base of the pairs: 8 blocks of Linear 2048 -> 8192 -> 2048 (bf16 autocast),
                       batch 8192, a `data_load` range that takes a ready batch, a pinned non_blocking
                       input copy (64 MiB), 0.3 ms of host work per block (Python overhead the host
                       hides while the GPU is busy), a planted 4096^3 bf16 GEMM, a 2048 -> 4096 head,
                       SGD, `loss.item()` at the step's end (logging); the GPU's work is longer than the
                       host's, so every planted cause below costs the step its full amount;
- mlp-repeat           the same program recorded again (the noise between two recordings);
- mlp-loader-stall     4 ms of host sleep inside the `data_load` range (a loader stall);
- mlp-host-sleep       4 ms of host sleep at the step's start, outside any range;
- mlp-host-syncs       `.item()` after every block: the GPU drains and waits for the host 8 times;
- mlp-pageable         the input copied from pageable memory (the remedy is `mlp`'s pinned copy);
- mlp-slow-kernel      the planted GEMM with K = 65536 instead of 4096;
- mlp-fp32-head        the head in fp32 with TF32 off (the precision changed for one operator).

- sync-bound           inference of 32 x (Linear 4096 + ReLU) in bf16, batch 2048, `.item()` of a sum after
                       every layer (a per-layer check on the host): the host waits for the layer's ~0.1 ms
                       on the GPU, then the GPU waits while the host sees the value and launches the next
                       layer; the syncs serialize host and GPU, and bound the step;
- sync-bound-remedy    the remedy: the per-layer sums kept on the GPU, one `.tolist()` at the step's end;
- copy-bound           a 256 MiB input copied from pageable memory each step, then 4 x Linear 4096 (bf16,
                       batch 4096, inference) on a slice of it: the copy bounds the step;
- copy-bound-pinned    the remedy: the same input pinned, copied non_blocking;
- loader-bound         4 x Linear 4096 training (bf16, batch 4096), a `data_load` range that sleeps 8 ms
                       (a loader slower than the GPU's step); the loader bounds the step;
- loader-bound-remedy  the remedy: the batch is ready, `data_load` takes it without waiting.

Remedies: `mlp` is the remedy of the loader stall, the host sleep, the host syncs and the pageable
copy; `launch-bound-graph` of `launch-bound`.

Usage on the GPU machine: `OUT=dir python3 record_judgments.py torch` runs every program (or those
named in $PROGRAMS, space-separated, with the truth written to $TRUTH_FILE) without a
profiler (the truth), then records it under the PyTorch profiler: light (`activities` CPU and CUDA
only) for every program, heavy (record_shapes, with_stack, profile_memory, CUDA sync events) for those
in `HEAVY`. `OUT=dir python3 record_judgments.py nsys NAME` runs one program for
`nsys profile --capture-range=cudaProfilerApi` (steps as NVTX ranges `step N`).

Truth (`$OUT/judgments_truth.json`, per program and setting):
- unprofiled, unprofiled_after (before and after the profiled runs): `step_ms` = wall time of TIMED
  steps / TIMED (host clock, synchronized before and after: what an iteration costs),
  `gpu_period_ms` = the median interval between CUDA events recorded at each step's start (the GPU's
  period), `steps_ms` the per-step event intervals; `unprofiled_median_ms` = the median of both
  runs' per-step intervals (the number the tests compare with);
- kineto_light / kineto_heavy / nsys: the same two numbers for the recorded steps, measured while the
  profiler ran (the profiled program's own cost; the trace's recorded steps are exactly these);
- flops_per_step: the model's matmul FLOPs per step (2 m n k per GEMM, backward twice the forward).
"""
import gzip
import json
import os
import shutil
import sys
import time

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, record_function, schedule

OUT = os.environ.get("OUT", "/tmp/out")
GPU = "h100" if "H100" in torch.cuda.get_device_name() else "h200"
WARMUP, TIMED, ACTIVE = 15, 40, 5
HEAVY = {"gpu-bound", "launch-bound", "mlp", "mlp-host-syncs"}


def spin(seconds):
    t = time.perf_counter()
    while time.perf_counter() - t < seconds:
        pass


class nvtx_range:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        torch.cuda.nvtx.range_push(self.name)

    def __exit__(self, *exc):
        torch.cuda.nvtx.range_pop()


def no_range(name):
    return nullcontext()


class nullcontext:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


# ---- programs: each make_<kind>(variant) returns (step(annotate), flops_per_step)

def make_gpu_bound(variant):
    torch.backends.cuda.matmul.allow_tf32 = False
    d, batch, layers = 8192, 8192, 4
    model = nn.Sequential(*[nn.Linear(d, d, bias=False) for _ in range(layers)]).cuda()
    model[:-1].to(torch.bfloat16)
    fp32_head = variant == "gpu-bound-fp32-head"
    if not fp32_head:
        model[-1].to(torch.bfloat16)
    opt = torch.optim.SGD(model.parameters(), lr=1e-6, foreach=True)
    x = torch.randn(batch, d, device="cuda", dtype=torch.bfloat16)

    def step(annotate):
        h = model[:-1](x)
        h = h.float() if fp32_head else h
        loss = model[-1](h).float().pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    # forward, weight gradient of every layer, input gradient of all but the first (x needs none)
    return step, 2 * batch * d * d * (3 * layers - 1)


def make_launch_bound(variant):
    layers, width, batch = 48, 512, 32
    model = nn.Sequential(*[m for _ in range(layers) for m in (nn.Linear(width, width), nn.ReLU())]).cuda().eval()
    x = torch.randn(batch, width, device="cuda")
    flops = 2 * batch * width * width * layers
    if variant == "launch-bound":
        def step(annotate):
            with torch.no_grad():
                model(x)
        return step, flops
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        for _ in range(3):
            model(x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), torch.no_grad():
        model(x)

    def step(annotate):
        graph.replay()

    return step, flops


def make_mlp(variant):
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    blocks, d, hidden, batch, head = 8, 2048, 8192, 8192, 4096
    body = nn.ModuleList([nn.Sequential(nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, d)) for _ in range(blocks)])
    body = body.cuda()
    lm_head = nn.Linear(d, head).cuda()
    params = list(body.parameters()) + list(lm_head.parameters())
    opt = torch.optim.SGD(params, lr=1e-5, foreach=True)
    host = torch.randn(batch, d)  # 64 MiB fp32
    if variant != "mlp-pageable":
        host = host.pin_memory()
    k = 65536 if variant == "mlp-slow-kernel" else 4096
    ga = torch.randn(4096, k, device="cuda", dtype=torch.bfloat16)
    gb = torch.randn(k, 4096, device="cuda", dtype=torch.bfloat16)
    fp32_head = variant == "mlp-fp32-head"
    # as gpu-bound's; the first block's first Linear needs no input gradient; the planted GEMM no backward
    flops = 2 * batch * d * hidden * (3 * 2 * blocks - 1) + 3 * 2 * batch * d * head + 2 * 4096 * k * 4096

    def step(annotate):
        if variant == "mlp-host-sleep":
            time.sleep(0.004)
        with annotate("data_load"):
            if variant == "mlp-loader-stall":
                time.sleep(0.004)
            batch_host = host
        x = batch_host.to("cuda", non_blocking=variant != "mlp-pageable")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = x
            for block in body:
                h = h + block(h)
                spin(0.0003)
                if variant == "mlp-host-syncs":
                    h.sum().item()
            torch.mm(ga, gb)
        if fp32_head:
            out = lm_head(h.float())
        else:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = lm_head(h)
        loss = out.float().pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        loss.item()

    return step, flops


def make_sync_bound(variant):
    layers, width, batch = 32, 4096, 2048
    model = nn.Sequential(*[m for _ in range(layers) for m in (nn.Linear(width, width), nn.ReLU())]).cuda()
    model = model.to(torch.bfloat16).eval()
    x = torch.randn(batch, width, device="cuda", dtype=torch.bfloat16)
    flops = 2 * batch * width * width * layers

    def step(annotate):
        h, checks = x, []
        with torch.no_grad():
            for i in range(0, len(model), 2):
                h = model[i + 1](model[i](h))
                if variant == "sync-bound":
                    checks.append(h.sum().item())
                else:
                    checks.append(h.sum())
            if variant != "sync-bound":
                checks = torch.stack(checks).tolist()
        return checks

    return step, flops


def make_copy_bound(variant):
    rows, width, layers = 16384, 4096, 4  # 16384 x 4096 fp32: 256 MiB
    host = torch.randn(rows, width)
    if variant == "copy-bound-pinned":
        host = host.pin_memory()
    model = nn.Sequential(*[nn.Linear(width, width, bias=False) for _ in range(layers)]).cuda().to(torch.bfloat16).eval()
    flops = 2 * 4096 * width * width * layers

    def step(annotate):
        x = host.to("cuda", non_blocking=variant == "copy-bound-pinned")
        with torch.no_grad():
            model(x[:4096].to(torch.bfloat16))

    return step, flops


def make_loader_bound(variant):
    d, batch, layers = 4096, 4096, 4
    model = nn.Sequential(*[nn.Linear(d, d, bias=False) for _ in range(layers)]).cuda().to(torch.bfloat16)
    opt = torch.optim.SGD(model.parameters(), lr=1e-6, foreach=True)
    ready = torch.randn(batch, d, device="cuda", dtype=torch.bfloat16)

    def step(annotate):
        with annotate("data_load"):
            if variant == "loader-bound":
                time.sleep(0.008)
            x = ready
        loss = model(x).float().pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step, 2 * batch * d * d * (3 * layers - 1)


PROGRAMS = {
    "gpu-bound": make_gpu_bound, "gpu-bound-fp32-head": make_gpu_bound,
    "launch-bound": make_launch_bound, "launch-bound-graph": make_launch_bound,
    "mlp": make_mlp, "mlp-repeat": make_mlp, "mlp-loader-stall": make_mlp, "mlp-host-sleep": make_mlp,
    "mlp-host-syncs": make_mlp, "mlp-pageable": make_mlp, "mlp-slow-kernel": make_mlp, "mlp-fp32-head": make_mlp,
    "sync-bound": make_sync_bound, "sync-bound-remedy": make_sync_bound,
    "copy-bound": make_copy_bound, "copy-bound-pinned": make_copy_bound,
    "loader-bound": make_loader_bound, "loader-bound-remedy": make_loader_bound,
}


def build(name):
    variant = "mlp" if name == "mlp-repeat" else name
    return PROGRAMS[name](variant)


class StepClock:
    """CUDA events at each step's start (on the stream: the GPU's period) and the host clock."""

    def __init__(self):
        self.events, self.t0, self.t1 = [], None, None

    def start(self):
        torch.cuda.synchronize()
        self.t0 = time.perf_counter()

    def mark(self):
        e = torch.cuda.Event(enable_timing=True)
        e.record()
        self.events.append(e)

    def stop(self, steps):
        self.mark()
        torch.cuda.synchronize()
        self.t1 = time.perf_counter()
        gaps = [a.elapsed_time(b) for a, b in zip(self.events, self.events[1:])]
        return {"step_ms": (self.t1 - self.t0) * 1e3 / steps, "gpu_period_ms": sorted(gaps)[len(gaps) // 2],
                "steps_ms": gaps}


def flop_counter(step):
    """FlopCounterMode's count of one step (an independent check of flops_per_step)."""
    from torch.utils.flop_counter import FlopCounterMode
    try:
        with FlopCounterMode(display=False) as counter:
            step(no_range)
        return counter.get_total_flops()
    except Exception as e:  # a CUDA-graph replay has no aten ops to count
        return repr(e)


def unprofiled(step):
    for _ in range(WARMUP):
        step(no_range)
    clock = StepClock()
    clock.start()
    for _ in range(TIMED):
        clock.mark()
        step(no_range)
    return clock.stop(TIMED)


def kineto(name, step, heavy):
    setting = "heavy" if heavy else "light"
    trace = f"torch-2.11_judge-{name}-{setting}_{GPU}"
    path = f"/tmp/{trace}.pt.trace.json"
    extra = dict(record_shapes=True, with_stack=True, profile_memory=True,
                 experimental_config=torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True)) if heavy else {}
    clock = StepClock()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=1, warmup=2, active=ACTIVE, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(path), **extra) as prof:
        for i in range(3 + ACTIVE):
            if i == 3:
                clock.start()
            if i >= 3:
                clock.mark()
            step(record_function)
            if i == 3 + ACTIVE - 1:  # before the last prof.step(), which exports the trace
                timing = clock.stop(ACTIVE)
            prof.step()
    with open(path, "rb") as src, gzip.open(os.path.join(OUT, trace + ".pt.trace.json.gz"), "wb", 9) as dst:
        shutil.copyfileobj(src, dst)
    return trace, timing


def record_torch():
    truth = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "warmup": WARMUP, "timed": TIMED,
             "active": ACTIVE, "programs": {}}
    for name in os.environ.get("PROGRAMS", " ".join(PROGRAMS)).split():
        step, flops = build(name)
        entry = {"flops_per_step": flops, "flop_counter_per_step": flop_counter(step), "unprofiled": unprofiled(step)}
        for heavy in ([False, True] if name in HEAVY else [False]):
            trace, timing = kineto(name, step, heavy)
            entry["kineto_heavy" if heavy else "kineto_light"] = {"trace": trace, **timing}
        entry["unprofiled_after"] = unprofiled(step)
        both = sorted(entry["unprofiled"]["steps_ms"] + entry["unprofiled_after"]["steps_ms"])
        entry["unprofiled_median_ms"] = both[len(both) // 2]
        truth["programs"][name] = entry
        print(name, json.dumps({k: v.get("step_ms") for k, v in entry.items() if isinstance(v, dict)}), flush=True)
        del step
        torch.cuda.empty_cache()
    with open(os.path.join(OUT, os.environ.get("TRUTH_FILE", "judgments_truth.json")), "w") as f:
        json.dump(truth, f, indent=1, sort_keys=True)


def record_nsys(name):
    step, flops = build(name)
    for _ in range(WARMUP + 2):
        step(nvtx_range)
    clock = StepClock()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    clock.start()
    for i in range(ACTIVE):
        clock.mark()
        with nvtx_range(f"step {i}"):
            step(nvtx_range)
    timing = clock.stop(ACTIVE)
    torch.cuda.profiler.stop()
    with open(os.path.join(OUT, f"nsys_{name}_truth.json"), "w") as f:
        json.dump({"trace": f"nsys-2025.3.1_judge-{name}_{GPU}", "flops_per_step": flops, **timing}, f, indent=1)


if __name__ == "__main__":
    if sys.argv[1] == "torch":
        record_torch()
    else:
        record_nsys(sys.argv[2])
