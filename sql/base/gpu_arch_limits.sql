-- gpu_arch_limits: the per-SM limits of each NVIDIA compute capability that theoretical
-- occupancy needs (kernel_occupancy). One row per compute capability.
--
-- Sources (facts, not code): the CUDA C++ Programming Guide, "Compute Capabilities",
-- table "Technical Specifications per Compute Capability" (resident blocks and warps per
-- SM, registers per SM / block / thread, shared memory per SM and per block); and the
-- definitions of NVIDIA's CUDA Occupancy Calculator (the "GPU Data" of the spreadsheet,
-- also shipped as cuda_occupancy.h): registers are allocated per warp in units of 256,
-- to 4 SM sub-partitions (2 on cc 6.0), each holding a quarter of the register file;
-- shared memory is allocated per block in units of 256 bytes (cc 5.x-7.x) or 128 bytes
-- (cc 8.0 and later), and from cc 8.0 the driver reserves 1 KB of shared memory per
-- block (cudaDeviceProp.reservedSharedMemPerBlock), which is why a block may opt in to
-- 1 KB less than the SM holds. shared_memory_per_sm_bytes is the largest carveout
-- (the rest of the unified L1 goes to cache).
--
-- A trace's own numbers come first (device_occupancy_limits): Nsight's TARGET_INFO_GPU
-- gives every per-SM limit, PyTorch's deviceProperties all but the resident blocks per
-- SM. A compute capability not in this table has NULL where the trace gives nothing,
-- never a guess.
--
-- depends: devices
--
-- @column compute_major                         Compute capability major.
-- @column compute_minor                         Compute capability minor.
-- @column max_warps_per_sm                      Most resident warps per SM.
-- @column max_blocks_per_sm                     Most resident blocks per SM.
-- @column registers_per_sm                      32-bit registers per SM.
-- @column registers_per_block                   Most registers one block may use.
-- @column max_registers_per_thread              Most registers one thread may use.
-- @column register_allocation_unit              Registers are allocated per warp in multiples of this.
-- @column sub_partitions                        SM sub-partitions the register file is split across.
-- @column shared_memory_per_sm_bytes            Shared memory per SM at the largest carveout, bytes.
-- @column shared_memory_per_block_optin_bytes   Most shared memory one block may opt in to, bytes.
-- @column shared_memory_allocation_unit_bytes   Shared memory is allocated per block in multiples of this.
-- @column reserved_shared_memory_per_block_bytes Shared memory the driver reserves per block, bytes.
-- @column source                                Where the row comes from.
CREATE OR REPLACE VIEW gpu_arch_limits AS
SELECT *, 'CUDA C++ Programming Guide, Technical Specifications per Compute Capability; '
          || 'CUDA Occupancy Calculator allocation units' AS source
FROM (VALUES
    (5, 0, 64, 32, 65536, 65536, 255, 256, 4, 65536, 49152, 256, 0),
    (5, 2, 64, 32, 65536, 32768, 255, 256, 4, 98304, 49152, 256, 0),
    (5, 3, 64, 32, 65536, 32768, 255, 256, 4, 65536, 49152, 256, 0),
    (6, 0, 64, 32, 65536, 65536, 255, 256, 2, 65536, 49152, 256, 0),
    (6, 1, 64, 32, 65536, 65536, 255, 256, 4, 98304, 49152, 256, 0),
    (6, 2, 64, 32, 65536, 65536, 255, 256, 4, 65536, 49152, 256, 0),
    (7, 0, 64, 32, 65536, 65536, 255, 256, 4, 98304, 98304, 256, 0),
    (7, 2, 64, 32, 65536, 65536, 255, 256, 4, 98304, 98304, 256, 0),
    (7, 5, 32, 16, 65536, 65536, 255, 256, 4, 65536, 65536, 256, 0),
    (8, 0, 64, 32, 65536, 65536, 255, 256, 4, 167936, 166912, 128, 1024),
    (8, 6, 48, 16, 65536, 65536, 255, 256, 4, 102400, 101376, 128, 1024),
    (8, 7, 48, 16, 65536, 65536, 255, 256, 4, 167936, 166912, 128, 1024),
    (8, 9, 48, 24, 65536, 65536, 255, 256, 4, 102400, 101376, 128, 1024),
    (9, 0, 64, 32, 65536, 65536, 255, 256, 4, 233472, 232448, 128, 1024),
    (10, 0, 64, 32, 65536, 65536, 255, 256, 4, 233472, 232448, 128, 1024)
) AS t(compute_major, compute_minor, max_warps_per_sm, max_blocks_per_sm, registers_per_sm, registers_per_block,
       max_registers_per_thread, register_allocation_unit, sub_partitions, shared_memory_per_sm_bytes,
       shared_memory_per_block_optin_bytes, shared_memory_allocation_unit_bytes,
       reserved_shared_memory_per_block_bytes);

-- device_occupancy_limits: each NVIDIA GPU of each trace with the limits occupancy needs:
-- the trace's own value where it gives one (devices), else gpu_arch_limits' for its
-- compute capability; the allocation units and the reserved shared memory always come
-- from gpu_arch_limits (no trace records them). Same columns as gpu_arch_limits, with
-- trace_id, device_id, sm_count and warp_size (32 when the trace does not say) instead
-- of the source.
--
-- @column trace_id   Trace.
-- @column device_id  GPU.
-- @column sm_count   Streaming multiprocessors.
-- @column warp_size  Threads per warp.
CREATE OR REPLACE VIEW device_occupancy_limits AS
SELECT d.trace_id, d.device_id, d.compute_major, d.compute_minor, d.sm_count,
       coalesce(d.warp_size, 32) AS warp_size,
       coalesce(d.max_warps_per_sm, a.max_warps_per_sm) AS max_warps_per_sm,
       coalesce(d.max_blocks_per_sm, a.max_blocks_per_sm) AS max_blocks_per_sm,
       coalesce(d.registers_per_sm, a.registers_per_sm) AS registers_per_sm,
       coalesce(d.registers_per_block, a.registers_per_block) AS registers_per_block,
       a.max_registers_per_thread, a.register_allocation_unit, a.sub_partitions,
       coalesce(d.shared_memory_per_sm_bytes, a.shared_memory_per_sm_bytes) AS shared_memory_per_sm_bytes,
       coalesce(d.shared_memory_per_block_optin_bytes, a.shared_memory_per_block_optin_bytes)
           AS shared_memory_per_block_optin_bytes,
       a.shared_memory_allocation_unit_bytes, a.reserved_shared_memory_per_block_bytes
FROM devices d
LEFT JOIN gpu_arch_limits a ON a.compute_major = d.compute_major AND a.compute_minor = d.compute_minor
WHERE d.vendor IS DISTINCT FROM 'amd';
