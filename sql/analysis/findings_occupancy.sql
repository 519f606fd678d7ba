-- finding_occupancy_limited: time-heavy kernels whose registers or shared memory hold
-- their theoretical occupancy at 50 % or less (kernel_occupancy), with the grid large
-- enough that the limit binds (more blocks than one wave of active_blocks_per_sm on
-- every SM). One row per trace, process, GPU, kernel name and launch configuration
-- (threads per block, registers per thread, shared memory per block) taking at least 5 %
-- of the trace's kernel time. Start and duration are the first launch's start and the
-- launches' summed time.
--
-- Left out: communication kernels (NCCL and the like run a few blocks by design) and the
-- vendor-tuned matrix and convolution kernels (cuBLAS/cuBLASLt/CUTLASS GEMMs, cuDNN,
-- fused attention: names matching gemm, xmma, cutlass, nvjet, cudnn, conv, wgrad,
-- dgrad, fprop, winograd, flash, fmha, attention), which choose large tiles and one or
-- two blocks per SM on purpose and hide latency with instruction-level parallelism;
-- their efficiency is judged by the operator models (findings_op_efficiency.sql).
--
-- depends: kernel_occupancy, device_occupancy_limits
-- materialize: per trace
--
-- @column trace_id     Trace.
-- @column rule         'occupancy_limited'.
-- @column severity     'info'.
-- @column pid          Process.
-- @column device_id    GPU.
-- @column start_ns     Start of the first launch (ns).
-- @column duration_ns  Summed duration of the launches (ns).
-- @column evidence     What was seen.
-- @column advice       What to do.
CREATE OR REPLACE VIEW finding_occupancy_limited AS
WITH kernel_time AS (
    SELECT trace_id, sum(duration_ns) AS ns FROM kernel_occupancy GROUP BY trace_id
),
configs AS (
    SELECT o.trace_id, o.pid, o.device_id, o.name, any_value(o.short_name) AS short_name, o.threads_per_block,
           o.registers_per_thread, o.shared_memory_bytes, o.limiter, o.active_blocks_per_sm, o.active_warps_per_sm,
           o.theoretical_occupancy_pct,
           least(o.block_limit_warps, o.block_limit_blocks,
                 CASE WHEN o.limiter = 'registers' THEN o.block_limit_shared_memory
                      ELSE o.block_limit_registers END) AS blocks_without_limit,
           count(*) AS launches, min(o.start_ns) AS start_ns, sum(o.duration_ns) AS ns,
           100.0 * sum(o.duration_ns) / any_value(t.ns) AS time_pct
    FROM kernel_occupancy o
    JOIN kernel_time t USING (trace_id)
    JOIN device_occupancy_limits d USING (trace_id, device_id)
    WHERE o.limiter IN ('registers', 'shared memory') AND o.theoretical_occupancy_pct <= 50
      AND o.grid_blocks > o.active_blocks_per_sm * d.sm_count
      AND NOT regexp_matches(o.name, '^(nccl|rccl)|ncclKernel|ncclDevKernel', 'i')
      AND NOT regexp_matches(o.name,
              'gemm|xmma|cutlass|nvjet|cudnn|conv|wgrad|dgrad|fprop|winograd|flash|fmha|attention', 'i')
    GROUP BY o.trace_id, o.pid, o.device_id, o.name, o.threads_per_block, o.registers_per_thread,
             o.shared_memory_bytes, o.limiter, o.active_blocks_per_sm, o.active_warps_per_sm,
             o.theoretical_occupancy_pct, blocks_without_limit
)
SELECT c.trace_id, 'occupancy_limited' AS rule, 'info' AS severity, c.pid, c.device_id, c.start_ns,
       CAST(c.ns AS BIGINT) AS duration_ns,
       printf('%s: %d launches, %.3f ms (%.1f %% of kernel time); blocks of %d threads with %d registers per '
              || 'thread and %d bytes of shared memory fit %d per SM (%d of %d warps: theoretical occupancy '
              || '%.0f %%), limited by %s; without that limit %d blocks per SM would fit (%.0f %%)',
              c.short_name, c.launches, c.ns / 1e6, c.time_pct, c.threads_per_block, c.registers_per_thread,
              c.shared_memory_bytes, c.active_blocks_per_sm, c.active_warps_per_sm, d.max_warps_per_sm,
              c.theoretical_occupancy_pct, c.limiter, c.blocks_without_limit,
              100.0 * c.blocks_without_limit * c.active_warps_per_sm / c.active_blocks_per_sm
                  / d.max_warps_per_sm) AS evidence,
       'Few resident warps leave the SM little to switch to while others wait on memory. Registers: cap them '
       || '(__launch_bounds__(threads, min_blocks) or -maxrregcount in CUDA; fewer warps or a smaller block '
       || 'size in Triton (num_warps, BLOCK_SIZE)), or split the work per thread. Shared memory: smaller tiles '
       || 'or fewer pipeline stages (Triton num_stages). Check the result with Nsight Compute: occupancy '
       || 'only matters if the kernel is latency-bound.' AS advice
FROM configs c
JOIN device_occupancy_limits d USING (trace_id, device_id)
WHERE c.time_pct >= 5;
