"""Record the trace pairs behind `tracelake diff`'s golden tests (issue #30).

A small bf16 MLP training loop (2 blocks of Linear 2048 -> 8192 -> 2048, batch 8192, SGD, an
H2D copy of the input batch, a planted 4096x4096x4096 bf16 GEMM annotated `planted_gemm`,
1.5 ms of Python host work annotated `host_work` after the backward launches, a
torch.cuda.synchronize() at each step's end) and variants, each with one planted cause:

- base, base-repeat  the same program twice (the noise between two recordings);
- slow-kernel        the planted GEMM with K = 16384 instead of 4096 (a slower kernel);
- host-sync          `loss.item()` before the host work: the GPU drains and idles during it;
- fp32-gemm          the planted GEMM in fp32 with TF32 off (the GEMM leaves the Tensor Cores);
- pageable           the input copied from pageable instead of pinned host memory;
- all                the four causes together.

Usage on the GPU machine: `OUT=dir python3 record_diff.py torch` records every variant under the
PyTorch profiler (`$OUT/torch-2.11_diff-<variant>_<gpu>.pt.trace.json.gz`; the steps are its
ProfilerStep#N ranges); `OUT=dir python3 record_diff.py nsys <variant>` runs one variant for Nsight
Systems (run it under `nsys profile --capture-range=cudaProfilerApi`; the capture holds exactly the
measured steps, as NVTX ranges 'step N'). Both write the truth measured inside every recorded step
with CUDA events, independently of the trace, to `$OUT/<source>_<variant>_truth.json`:

- step_ms: per recorded step, the time between CUDA events recorded at the step's boundaries: the
  first thing after the ProfilerStep range (or NVTX range) opened and the last thing before it
  closes. Each step ends with torch.cuda.synchronize(), so the GPU is idle at both and each event
  completes as it is recorded: this is the step's wall time, host work before the first launch and
  after the last kernel included (what a user reads as the step time, and what the trace's step
  ranges hold); host_step_ms is the same interval on the host's clock (time.perf_counter);
- gpu_step_ms: the time between events recorded at the step's first launch and after its last
  (the GPU's span of the step, without the host time around it);
- gemm_ms: the planted GEMM (events around it);
- copy_ms: the input copy (events around it);
- drain_ms: the GPU's wait between the backward's end and the optimizer's start (events after the
  backward launches and before the optimizer launches): ~0 unless the host made the GPU wait;
- item_wait_ms: the host time inside `.item()` (host-sync variants).
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
VARIANTS = {
    "base": set(), "base-repeat": set(), "slow-kernel": {"slow_kernel"}, "host-sync": {"host_sync"},
    "fp32-gemm": {"fp32_gemm"}, "pageable": {"pageable"},
    "all": {"slow_kernel", "host_sync", "fp32_gemm", "pageable"},
}
WARMUP, ACTIVE = 3, 12
HOST_WORK_S = 0.0015


def make(causes):
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model = nn.Sequential(nn.Linear(1024, 2048), *[m for _ in range(2) for m in
                          (nn.Linear(2048, 8192), nn.GELU(), nn.Linear(8192, 2048))]).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-4, foreach=True)
    host = torch.randn(8192, 1024)  # 32 MiB fp32
    host = host if "pageable" in causes else host.pin_memory()
    k = 16384 if "slow_kernel" in causes else 4096
    dtype = torch.float32 if "fp32_gemm" in causes else torch.bfloat16
    ga = torch.randn(4096, k, device="cuda", dtype=dtype)
    gb = torch.randn(k, 4096, device="cuda", dtype=dtype)
    return model, opt, host, ga, gb


def spin(seconds):
    t = time.perf_counter()
    while time.perf_counter() - t < seconds:
        pass


def step(model, opt, host, ga, gb, causes, ev, annotate):
    e = {n: torch.cuda.Event(enable_timing=True) for n in
         ("start", "copy0", "copy1", "gemm0", "gemm1", "bwd", "opt", "end")}
    e["start"].record()  # the GPU span of the step: start .. end
    e["copy0"].record()
    x = host.to("cuda", non_blocking=True)
    e["copy1"].record()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(x).float().pow(2).mean()
    e["gemm0"].record()
    with annotate("planted_gemm"):
        torch.mm(ga, gb)
    e["gemm1"].record()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    e["bwd"].record()
    item_wait = None
    if "host_sync" in causes:
        t = time.perf_counter()
        loss.item()
        item_wait = (time.perf_counter() - t) * 1e3
    with annotate("host_work"):
        spin(HOST_WORK_S)
    e["opt"].record()
    opt.step()
    e["end"].record()
    torch.cuda.synchronize()
    ev["gpu_step_ms"].append(e["start"].elapsed_time(e["end"]))
    ev["gemm_ms"].append(e["gemm0"].elapsed_time(e["gemm1"]))
    ev["copy_ms"].append(e["copy0"].elapsed_time(e["copy1"]))
    ev["drain_ms"].append(e["bwd"].elapsed_time(e["opt"]))
    if item_wait is not None:
        ev["item_wait_ms"].append(item_wait)


class nvtx_range:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        torch.cuda.nvtx.range_push(self.name)

    def __exit__(self, *exc):
        torch.cuda.nvtx.range_pop()


def new_events():
    return {"step_ms": [], "host_step_ms": [], "gpu_step_ms": [], "gemm_ms": [], "copy_ms": [], "drain_ms": [],
            "item_wait_ms": []}


class Boundaries:
    """CUDA events (and host clock readings) at the boundaries of the recorded steps; read after
    the loop, so that no step waits for its own events."""

    def __init__(self):
        self.pairs = []

    def open(self):
        e = torch.cuda.Event(enable_timing=True)
        e.record()
        self.pairs.append([e, None, time.perf_counter(), None])

    def close(self):
        e = torch.cuda.Event(enable_timing=True)
        e.record()
        self.pairs[-1][1], self.pairs[-1][3] = e, time.perf_counter()

    def into(self, ev):
        torch.cuda.synchronize()
        for e0, e1, t0, t1 in self.pairs:
            ev["step_ms"].append(e0.elapsed_time(e1))
            ev["host_step_ms"].append((t1 - t0) * 1e3)


def truth(source, variant, causes, ev, trace):
    med = {k + "_median": sorted(v)[len(v) // 2] for k, v in ev.items() if v}
    with open(os.path.join(OUT, f"{source}_{variant}_truth.json"), "w") as f:
        json.dump({"variant": variant, "causes": sorted(causes), "trace": trace, "steps": len(ev["step_ms"]),
                   "host_work_ms": HOST_WORK_S * 1e3, **med, **ev}, f, indent=1, sort_keys=True)


def record_torch(variant):
    causes = VARIANTS[variant]
    model, opt, host, ga, gb = make(causes)
    for _ in range(5):  # unrecorded: cuBLAS and allocator warm-up
        step(model, opt, host, ga, gb, causes, new_events(), record_function)
    name = f"torch-2.11_diff-{variant}_{GPU}"
    path = f"/tmp/{name}.pt.trace.json"
    ev = new_events()
    config = torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=0, warmup=WARMUP, active=ACTIVE, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(path), record_shapes=True,
                 experimental_config=config) as prof:
        bounds = Boundaries()
        for i in range(WARMUP + ACTIVE):
            if i >= WARMUP:  # ProfilerStep#i opened as the last prof.step() returned
                bounds.open()
            step(model, opt, host, ga, gb, causes, new_events() if i < WARMUP else ev, record_function)
            if i >= WARMUP:  # it closes as prof.step() starts
                bounds.close()
            prof.step()
    bounds.into(ev)
    with open(path, "rb") as src, gzip.open(os.path.join(OUT, name + ".pt.trace.json.gz"), "wb", 9) as dst:
        shutil.copyfileobj(src, dst)
    truth("torch", variant, causes, ev, name)


def record_nsys(variant):
    causes = VARIANTS[variant]
    model, opt, host, ga, gb = make(causes)
    for _ in range(5 + WARMUP):  # the same warm-up as the torch recording, outside the capture
        step(model, opt, host, ga, gb, causes, new_events(), nvtx_range)
    ev = new_events()
    bounds = Boundaries()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for i in range(WARMUP, WARMUP + ACTIVE):
        with nvtx_range(f"step {i}"):
            bounds.open()
            step(model, opt, host, ga, gb, causes, ev, nvtx_range)
            bounds.close()
    torch.cuda.profiler.stop()
    bounds.into(ev)
    truth("nsys", variant, causes, ev, f"nsys-2025.3.1_diff-{variant}_{GPU}")


if __name__ == "__main__":
    if sys.argv[1] == "torch":
        for v in VARIANTS:
            record_torch(v)
            print(v, "done", flush=True)
    else:
        record_nsys(sys.argv[2])
