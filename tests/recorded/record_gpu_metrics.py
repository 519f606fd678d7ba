"""GPU hardware metrics and conv FLOPs witnesses under Nsight Systems (issue #31 items 1 and 3).

Run on the GPU machine by `record_gpu_metrics.sh` (the device command, from the repository root with
OUT set), which runs this script twice under `nsys profile`:

- `metrics` (with `--gpu-metrics-devices=0 --gpu-metrics-frequency=5000
  --capture-range=cudaProfilerApi`): warm-up outside the capture, then STEPS steps, each an NVTX range
  `step i` holding one NVTX range per phase, in this order:
    gemm_bf16    REPS x bf16 8192^3 torch.mm (2*M*N*K FLOPs each; Tensor Cores)
    gemm_fp32    REPS x fp32 4096^3 torch.mm with TF32 off (no Tensor Cores)
    stream_copy  REPS x dst.copy_(src) of 1 GiB (bytes read + written: 2 GiB each)
    h2d          REPS x 256 MiB pinned host -> device copy_ (non_blocking)
    d2h          REPS x 256 MiB device -> pinned host copy_ (non_blocking)
  then a 10 ms host sleep (the GPU idles). Each phase is timed with CUDA events recorded on the
  stream around its ops and ends with an event synchronize inside its NVTX range, so the range's
  CPU time and its GPU time agree to a few microseconds.
  Writes `nsys-2025.3.1_gpu-metrics_<gpu>_truth.json`: per step and phase the event time, the
  bytes/FLOPs, and the device's facts (name, SMs, nvidia-smi's PCIe link generation and width).
- `convs` (with `--pytorch=autograd-shapes-nvtx`): torchvision ResNet-50 training, batch 32,
  channels_last, bf16 autocast, SGD momentum (the program of
  torch-2.11_resnet50-train-bf16-channels-last-shapes_h100), one warm-up step `step 0` and two more
  `step 1`, `step 2`; then NVTX `convs` with single convolutions of odd geometry (stride, dilation,
  groups, depthwise, transposed), each output consumed by a sum. Writes
  `nsys-2025.3.1_resnet50-train-bf16-shapes_<gpu>_flops.json`: FlopCounterMode's counts of one more
  train step and of each odd convolution.
"""
import json
import os
import subprocess
import sys
import time

import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

OUT = os.environ.get("OUT", "/tmp/out")
DEV = "cuda"
GPU = "h100" if "H100" in torch.cuda.get_device_name() else "h200"
STEPS = 4
MIB = 1 << 20
os.makedirs(OUT, exist_ok=True)


def write_json(name, obj):
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)


def smi(fields):
    """nvidia-smi's answer for GPU 0, one value per field (strings)."""
    try:
        out = subprocess.run(["nvidia-smi", "-i", "0", f"--query-gpu={','.join(fields)}",
                              "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=30)
        return dict(zip(fields, (v.strip() for v in out.stdout.strip().split(","))))
    except Exception as e:  # the truth file says why the facts are missing
        return {"error": repr(e)}


def flop_counts(fn):
    with FlopCounterMode(display=False) as counter:
        fn()
    torch.cuda.synchronize()
    return {str(op): int(n) for op, n in counter.get_flop_counts()["Global"].items()}


def phases():
    """name -> (reps, run one rep, bytes per rep, FLOPs per rep, what the bytes are)."""
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(8192, 8192, device=DEV, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=DEV, dtype=torch.bfloat16)
    c = torch.empty(8192, 8192, device=DEV, dtype=torch.bfloat16)
    a32 = torch.randn(4096, 4096, device=DEV)
    b32 = torch.randn(4096, 4096, device=DEV)
    c32 = torch.empty(4096, 4096, device=DEV)
    src = torch.randn(512 * MIB, device=DEV, dtype=torch.bfloat16)  # 1 GiB
    dst = torch.empty_like(src)
    host_in = torch.randint(0, 255, (256 * MIB,), dtype=torch.uint8).pin_memory()
    host_out = torch.empty(256 * MIB, dtype=torch.uint8).pin_memory()
    dev_buf = torch.empty(256 * MIB, device=DEV, dtype=torch.uint8)
    gib = src.numel() * src.element_size()
    return {
        "gemm_bf16": (24, lambda: torch.mm(a, b, out=c), 3 * 8192 * 8192 * 2, 2 * 8192 ** 3,
                      "A, B read and C written once (bf16), a lower bound on DRAM traffic"),
        "gemm_fp32": (10, lambda: torch.mm(a32, b32, out=c32), 3 * 4096 * 4096 * 4, 2 * 4096 ** 3,
                      "A, B read and C written once (fp32, TF32 off), a lower bound"),
        "stream_copy": (50, lambda: dst.copy_(src), 2 * gib, 0, "1 GiB read + 1 GiB written (DRAM)"),
        "h2d": (10, lambda: dev_buf.copy_(host_in, non_blocking=True), 256 * MIB, 0,
                "256 MiB pinned host -> device (PCIe to the GPU: rx)"),
        "d2h": (10, lambda: host_out.copy_(dev_buf, non_blocking=True), 256 * MIB, 0,
                "256 MiB device -> pinned host (PCIe from the GPU: tx)"),
    }


def part_metrics():
    work = phases()
    for _reps, run, *_ in work.values():  # warm-up: cuBLAS handles, allocator, clocks
        for _ in range(2):
            run()
    torch.cuda.synchronize()
    link = smi(["name", "pcie.link.gen.current", "pcie.link.gen.max", "pcie.link.gen.gpumax",
                "pcie.link.width.current", "pcie.link.width.max", "clocks.max.memory", "clocks.max.sm"])
    rows = []
    torch.cuda.profiler.start()
    for step in range(STEPS):
        torch.cuda.nvtx.range_push(f"step {step}")
        for name, (reps, run, nbytes, flops, _) in work.items():
            torch.cuda.nvtx.range_push(name)
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(reps):
                run()
            e1.record()
            e1.synchronize()
            torch.cuda.nvtx.range_pop()
            ms = e0.elapsed_time(e1)
            rows.append({"step": step, "phase": name, "reps": reps, "event_ms": ms,
                         "bytes": reps * nbytes, "flops": reps * flops,
                         "gb_per_s": reps * nbytes / ms / 1e6, "tflop_per_s": reps * flops / ms / 1e9})
        torch.cuda.nvtx.range_pop()
        time.sleep(0.01)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    link_after = smi(["pcie.link.gen.current", "pcie.link.width.current"])
    p = torch.cuda.get_device_properties(0)
    write_json(f"nsys-2025.3.1_gpu-metrics_{GPU}_truth.json", {
        "how": "CUDA events recorded on the current stream before the first and after the last op of "
               "each phase, inside the phase's NVTX range (which ends after an event synchronize). "
               "bytes: what the phase's ops must move (see 'bytes_are'); flops: 2*M*N*K per GEMM.",
        "phases": rows,
        "bytes_are": {n: w[4] for n, w in work.items()},
        "device": {"name": p.name, "sm_count": p.multi_processor_count,
                   "total_memory_bytes": p.total_memory, "nvidia_smi_before": link,
                   "nvidia_smi_after": link_after},
        "torch": torch.__version__})
    for r in rows:
        print(r, flush=True)


def part_convs():
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet50().to(DEV, memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(32, 3, 224, 224, device=DEV).to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (32,), device=DEV)

    def train_step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    xc = torch.randn(8, 64, 56, 56, device=DEV, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    odd = {
        "conv_3x3_pad1": lambda: F.conv2d(xc, torch.randn(128, 64, 3, 3, device=DEV, dtype=torch.bfloat16),
                                          padding=1).sum(),
        "conv_stride2_dil2_groups4": lambda: F.conv2d(
            xc, torch.randn(128, 16, 3, 3, device=DEV, dtype=torch.bfloat16),
            stride=2, padding=2, dilation=2, groups=4).sum(),
        "conv_depthwise_5x5": lambda: F.conv2d(xc, torch.randn(64, 1, 5, 5, device=DEV, dtype=torch.bfloat16),
                                               padding=2, groups=64).sum(),
        "conv_transpose_stride2": lambda: F.conv_transpose2d(
            xc, torch.randn(64, 32, 4, 4, device=DEV, dtype=torch.bfloat16), stride=2, padding=1).sum(),
        "conv_1x1_stride2_nopad": lambda: F.conv2d(
            xc, torch.randn(96, 64, 1, 1, device=DEV, dtype=torch.bfloat16), stride=2).sum(),
    }
    for i in range(3):
        torch.cuda.nvtx.range_push(f"step {i}")
        train_step()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_push("convs")
    for name, fn in odd.items():
        torch.cuda.nvtx.range_push(f"region:{name}")
        fn()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    write_json(f"nsys-2025.3.1_resnet50-train-bf16-shapes_{GPU}_flops.json", {
        "how": "FlopCounterMode around one more train_step after the recorded steps, and around each "
               "odd convolution (its sum included, which FlopCounterMode counts as 0).",
        "model": "torchvision resnet50, batch 32, 224x224, channels_last, bf16 autocast, SGD momentum",
        "step": flop_counts(train_step),
        "regions": {name: flop_counts(fn) for name, fn in odd.items()},
        "torch": torch.__version__})


if __name__ == "__main__":
    print(torch.__version__, torch.cuda.get_device_name(), flush=True)
    {"metrics": part_metrics, "convs": part_convs}[sys.argv[1]]()
