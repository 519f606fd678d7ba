"""sql/analysis/kernel_occupancy.sql and findings_occupancy.sql on literal launches.

The H100 device row is the recorded one (nsys TARGET_INFO_GPU of nsys-2025.3.1_cnn-train-pageable_h100:
64 warps, 32 blocks, 65,536 registers and 233,472 bytes of shared memory per SM). The expected block
counts are worked from NVIDIA's occupancy-calculator definitions, written out beside each row:
registers per warp rounded up to 256 and shared by 4 sub-partitions, shared memory per block plus the
1 KB reserved per block rounded up to 128 bytes (so on cc >= 8.0 even a block without shared memory takes
1 KB: 228 blocks' worth).
"""

from __future__ import annotations

from .conftest import given, load_sql, rows

DEVICE = ["trace_id", "device_id", "name", "vendor", "compute_major", "compute_minor", "sm_count", "warp_size",
          "max_warps_per_sm", "max_blocks_per_sm", "registers_per_sm", "registers_per_block",
          "shared_memory_per_sm_bytes", "shared_memory_per_block_bytes", "shared_memory_per_block_optin_bytes"]
H100 = ("t", 0, "NVIDIA H100 80GB HBM3", "nvidia", 9, 0, 132, 32, 64, 32, 65536, 65536, 233472, 49152, 232448)
KERNEL = ["trace_id", "pid", "device_id", "stream_id", "start_ns", "end_ns", "duration_ns", "name", "short_name",
          "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "registers_per_thread", "shared_memory_bytes"]


def kernel(start, name, grid, block, regs, smem, device=0, duration=10, trace="t"):
    return (trace, 1, device, 7, start, start + duration, duration, name, name, grid, 1, 1, block, 1, 1, regs, smem)


def test_limits_and_limiter(con):
    given(con, "devices", DEVICE, [H100])
    given(con, "kernels", KERNEL, [
        # 1024 threads = 32 warps: 2 blocks fill the 64 warp slots
        kernel(0, "warps", 1000, 1024, 32, 0),
        # 32 threads, 16 registers (512 per warp: 128 warps of registers): the 32 block slots fill first
        kernel(10, "blocks", 1000, 32, 16, 0),
        # 128 registers x 32 = 4096 per warp; 16384 per sub-partition hold 4 warps, 16 per SM: 2 blocks of 8 warps
        kernel(20, "registers", 1000, 256, 128, 0),
        # 57344 + 1024 reserved = 58368 (a multiple of 128): 233472 // 58368 = 4 blocks
        kernel(30, "smem exact", 1000, 128, 32, 57344),
        # one byte more rounds up to 58496: 3 blocks
        kernel(40, "smem one more", 1000, 128, 32, 57345),
        # 200 KB needs the opt-in (227 KB allowed): 1 block of 12 warps; Kineto would say 0
        kernel(50, "smem opt-in", 1000, 384, 168, 204800),
        # 72 registers x 32 = 2304, rounded up to 2560: 6 warps per sub-partition, 24 per SM, 3 blocks of 8 warps
        kernel(60, "register rounding", 1000, 256, 72, 0),
        # 66 blocks on 132 SMs: half a block per SM, whatever fits
        kernel(70, "small grid", 66, 1024, 32, 0),
        # 100 threads take 4 warp slots: 16 blocks
        kernel(80, "odd block", 10000, 100, 32, 0),
    ])
    load_sql(con, "analysis/kernel_occupancy.sql")
    got = rows(con, """SELECT name, block_limit_warps, block_limit_blocks, block_limit_registers, block_limit_shared_memory,
                              active_blocks_per_sm, active_warps_per_sm, round(theoretical_occupancy_pct, 2),
                              round(estimated_occupancy_pct, 2), limiter
                       FROM kernel_occupancy ORDER BY start_ns""")
    assert got == [
        ("warps", 2, 32, 2, 228, 2, 64, 100.0, 100.0, "warps"),
        ("blocks", 64, 32, 128, 228, 32, 32, 50.0, 11.84, "blocks"),  # 1000 blocks give each SM 7.58
        ("registers", 8, 32, 2, 228, 2, 16, 25.0, 25.0, "registers"),
        ("smem exact", 16, 32, 16, 4, 4, 16, 25.0, 25.0, "shared memory"),
        ("smem one more", 16, 32, 16, 3, 3, 12, 18.75, 18.75, "shared memory"),
        ("smem opt-in", 5, 32, 1, 1, 1, 12, 18.75, 18.75, "registers"),
        ("register rounding", 8, 32, 3, 228, 3, 24, 37.5, 37.5, "registers"),
        ("small grid", 2, 32, 2, 228, 2, 64, 100.0, 25.0, "warps"),
        ("odd block", 16, 32, 16, 228, 16, 64, 100.0, 78.13, "warps"),
    ]


def test_limits_a_trace_does_not_give_come_from_the_table(con):
    # PyTorch's deviceProperties have no resident-blocks limit: cc 9.0's 32 comes from gpu_arch_limits;
    # a GPU of unknown compute capability with nothing recorded gets no occupancy (and no guess)
    given(con, "devices", ["trace_id", "device_id", "vendor", "compute_major", "compute_minor", "sm_count",
                           "warp_size", "max_warps_per_sm", "registers_per_sm", "registers_per_block",
                           "shared_memory_per_sm_bytes", "shared_memory_per_block_optin_bytes"],
          [("k", 0, "nvidia", 9, 0, 132, 32, 64, 65536, 65536, 233472, 232448),
           ("u", 0, "nvidia", 42, 0, 100, None, None, None, None, None, None)])
    given(con, "kernels", KERNEL, [kernel(0, "tiny", 1000, 32, 16, 0, trace="k"),
                                   kernel(0, "tiny", 1000, 32, 16, 0, trace="u"),
                                   kernel(0, "no device", 1000, 32, 16, 0, trace="none")])
    load_sql(con, "analysis/kernel_occupancy.sql")
    assert rows(con, """SELECT trace_id, active_blocks_per_sm, theoretical_occupancy_pct, limiter
                        FROM kernel_occupancy ORDER BY trace_id""") == [
        ("k", 32, 50.0, "blocks"), ("none", None, None, None), ("u", None, None, None)]


def test_finding_flags_register_bound_kernels_that_fill_the_gpu(con):
    given(con, "devices", DEVICE, [H100])
    given(con, "kernels", KERNEL, [
        # 1024 threads x 42 registers: 1344 -> 1536 per warp, 10 warps per sub-partition, 40 per SM: 1 block (50 %)
        kernel(0, "void embed_backward<float>(float*)", 10_000, 1024, 42, 32768, duration=800),
        kernel(1000, "void embed_backward<float>(float*)", 10_000, 1024, 42, 32768, duration=800),
        # the same limit on a grid of 100 blocks (< 132 SMs): the grid, not the registers, holds it down
        kernel(2000, "small_grid_kernel", 100, 1024, 42, 0, duration=800),
        # a GEMM library kernel at 1 block per SM by design
        kernel(3000, "sm90_xmma_gemm_bf16bf16_bf16f32", 10_000, 384, 168, 204800, duration=800),
        # register-bound but only 10 ns of 3,210
        kernel(4000, "tiny_share", 10_000, 1024, 42, 0, duration=10),
    ])
    load_sql(con, "analysis/findings_occupancy.sql")
    assert rows(con, "SELECT rule, severity, pid, device_id, start_ns, duration_ns, evidence "
                     "FROM finding_occupancy_limited") == [
        ("occupancy_limited", "info", 1, 0, 0, 1600,
         "void embed_backward<float>(float*): 2 launches, 0.002 ms (49.8 % of kernel time); blocks of 1024 "
         "threads with 42 registers per thread and 32768 bytes of shared memory fit 1 per SM (32 of 64 warps: "
         "theoretical occupancy 50 %), limited by registers; without that limit 2 blocks per SM would fit (100 %)")]
