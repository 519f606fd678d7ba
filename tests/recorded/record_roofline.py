"""The measured roofline's witness (issue #31): streaming elementwise kernels and GEMMs of known bytes
and FLOPs under Nsight Systems with GPU metrics and autograd-shapes NVTX ranges.

Run on one GPU under `nsys profile --gpu-metrics-devices=0 --gpu-metrics-frequency=10000
--pytorch=autograd-shapes-nvtx --capture-range=cudaProfilerApi` (record_roofline.sh). Warm-up outside
the capture, then STEPS NVTX steps `step i`, each with one NVTX range per phase:

    add_bf16    REPS x torch.add(a, b, out=c), bf16, 512 Mi elements each (read 2 GiB, write 1 GiB)
    mul_fp32    REPS x torch.mul(x, y, out=z), fp32, 256 Mi elements each (read 2 GiB, write 1 GiB)
    cast_bf16_fp32  REPS x z.copy_(a), bf16 -> fp32, 256 Mi elements (read 0.5 GiB, write 1 GiB)
    gemm_bf16   REPS x torch.mm of bf16 8192^3 (2*M*N*K FLOPs; A, B read and C written once is a
                lower bound on its DRAM traffic)

Every tensor is far larger than the 50 MB L2, so a streaming kernel reads each input byte from DRAM
once and writes each output byte once. Each phase is timed with CUDA events around its ops.
Writes `nsys-2025.3.1_roofline_<gpu>_truth.json`: per step and phase the event time, bytes, FLOPs.
"""
import json
import os
import time

import torch

OUT = os.environ.get("OUT", "/tmp/out")
GPU = "h100" if "H100" in torch.cuda.get_device_name() else "h200"
STEPS = 3
REPS = 10
MI = 1 << 20


def phases():
    a = torch.randn(512 * MI, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(512 * MI, device="cuda", dtype=torch.bfloat16)
    c = torch.empty_like(a)
    x = torch.randn(256 * MI, device="cuda")
    y = torch.randn(256 * MI, device="cuda")
    z = torch.empty_like(x)
    a256 = a[: 256 * MI]
    ga = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    gb = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    gc = torch.empty_like(ga)
    return {
        "add_bf16": (lambda: torch.add(a, b, out=c), 3 * a.numel() * 2, 0),
        "mul_fp32": (lambda: torch.mul(x, y, out=z), 3 * x.numel() * 4, 0),
        "cast_bf16_fp32": (lambda: z.copy_(a256), a256.numel() * (2 + 4), 0),
        "gemm_bf16": (lambda: torch.mm(ga, gb, out=gc), 3 * 8192 * 8192 * 2, 2 * 8192 ** 3),
    }


def main():
    work = phases()
    for run, *_ in work.values():
        for _ in range(2):
            run()
    torch.cuda.synchronize()
    rows = []
    torch.cuda.profiler.start()
    for step in range(STEPS):
        torch.cuda.nvtx.range_push(f"step {step}")
        for name, (run, nbytes, flops) in work.items():
            torch.cuda.nvtx.range_push(name)
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(REPS):
                run()
            e1.record()
            e1.synchronize()
            torch.cuda.nvtx.range_pop()
            ms = e0.elapsed_time(e1)
            rows.append({"step": step, "phase": name, "reps": REPS, "event_ms": ms, "bytes": REPS * nbytes,
                         "flops": REPS * flops, "gb_per_s": REPS * nbytes / ms / 1e6})
        torch.cuda.nvtx.range_pop()
        time.sleep(0.01)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    with open(os.path.join(OUT, f"nsys-2025.3.1_roofline_{GPU}_truth.json"), "w") as f:
        json.dump({"how": "CUDA events around each phase's ops; bytes: each input read once and the output "
                          "written once (a lower bound for the GEMM); flops: 2*M*N*K per GEMM.",
                   "phases": rows, "device": torch.cuda.get_device_name(), "torch": torch.__version__},
                  f, indent=1, sort_keys=True)
    for r in rows:
        print(r, flush=True)


if __name__ == "__main__":
    main()
