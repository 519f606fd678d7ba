"""Occupancy witness: kernels of known launch configuration, their trace, and the driver's answer.

Run on the GPU machine: `OUT=$OUT python3 tests/recorded/record_occupancy.py`. It compiles one
kernel (a register-hungry loop over dynamic shared memory) with NVRTC at several register caps
(--maxrregcount), launches it at many block sizes and dynamic shared-memory sizes (below and above
the 48 KB that needs the opt-in, and around the 1 KB the driver reserves per block) under the
PyTorch profiler, and writes

- `torch-2.11_occupancy-configs_h100.pt.trace.json.gz`: the trace (one kernel per configuration,
  each in a `config:<i>` annotation);
- `torch-2.11_occupancy-configs_h100_truth.json`: per configuration, the launch (grid, block,
  registers per thread from the compiled function's attributes, dynamic shared memory) and the
  blocks per SM the CUDA driver's occupancy calculator gives for it
  (cuOccupancyMaxActiveBlocksPerMultiprocessor), plus the device's attributes.

The driver's number is the truth tests/test_kernel_occupancy.py compares kernel_occupancy with.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil

import cupy as cp
import torch

SOURCE = r"""
extern "C" __global__ void spin(float* out, int n) {
    extern __shared__ float tile[];
    float acc[24];
    #pragma unroll
    for (int i = 0; i < 24; ++i) acc[i] = threadIdx.x * (i + 1);
    for (int k = 0; k < n; ++k) {
        #pragma unroll
        for (int i = 0; i < 24; ++i) acc[i] = acc[i] * 1.0001f + acc[(i + 7) % 24];
    }
    float s = 0.f;
    #pragma unroll
    for (int i = 0; i < 24; ++i) s += acc[i];
    tile[threadIdx.x] = s;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = tile[(threadIdx.x + 1) % blockDim.x];
}
"""
REG_CAPS = [24, 32, 40, 64, 72, 128, 168, 255]
BLOCKS = [32, 64, 96, 128, 192, 256, 384, 512, 640, 1024]
SMEM = [0, 1024, 4097, 31 * 1024, 48 * 1024, 57344, 57345, 100 * 1024, 160 * 1024, 227 * 1024]


def main() -> None:
    out_dir = os.environ.get("OUT", ".")
    dev = cp.cuda.Device(0)
    attrs = dev.attributes
    optin = attrs["MaxSharedMemoryPerBlockOptin"]
    kernels = {}
    for cap in REG_CAPS:
        k = cp.RawKernel(SOURCE, "spin", options=(f"--maxrregcount={cap}",))
        k.max_dynamic_shared_size_bytes = optin - k.shared_size_bytes
        kernels[cap] = k
    configs = []
    for cap, k in kernels.items():
        for block in BLOCKS:
            if block > k.max_threads_per_block:
                continue
            for smem in sorted({max(s, 4 * block) for s in SMEM}):  # the kernel writes a float per thread
                if smem + k.shared_size_bytes > optin:
                    continue
                blocks = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(k.kernel.ptr, block, smem)
                configs.append({"reg_cap": cap, "registers_per_thread": k.num_regs, "block": block,
                                "static_shared_memory": k.shared_size_bytes, "dynamic_shared_memory": smem,
                                "grid": 4 * attrs["MultiProcessorCount"], "driver_blocks_per_sm": blocks})
    out = cp.zeros(max(c["grid"] * c["block"] for c in configs), dtype=cp.float32)
    trace = os.path.join(out_dir, "occupancy.pt.trace.json")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                            torch.profiler.ProfilerActivity.CUDA]) as prof:
        for i, c in enumerate(configs):
            with torch.profiler.record_function(f"config:{i}"):
                kernels[c["reg_cap"]]((c["grid"],), (c["block"],), (out, cp.int32(4)),
                                      shared_mem=c["dynamic_shared_memory"])
        cp.cuda.Device(0).synchronize()
    prof.export_chrome_trace(trace)
    name = "torch-2.11_occupancy-configs_h100"
    with open(trace, "rb") as f, gzip.open(os.path.join(out_dir, f"{name}.pt.trace.json.gz"), "wb", 9) as g:
        shutil.copyfileobj(f, g)
    os.remove(trace)
    device = dict(attrs)
    with open(os.path.join(out_dir, f"{name}_truth.json"), "w") as f:
        json.dump({"device": device, "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
                   "configs": configs}, f, indent=1)
    print(len(configs), "configurations;", device)


if __name__ == "__main__":
    main()
