-- kernel_occupancy: the theoretical occupancy of each kernel launch: how many blocks of
-- its size fit on one SM at once given its registers per thread and shared memory per
-- block, how many warps that is, and which resource runs out first. One row per
-- kernel whose launch configuration the trace records (block size and registers per
-- thread: every NVIDIA kernel of both sources; AMD kernels record no registers); the
-- occupancy columns are NULL where the GPU's limits are unknown (no devices row, or a
-- compute capability neither the trace nor gpu_arch_limits describes).
--
-- Blocks per SM is the least of four limits (as NVIDIA's occupancy calculator defines them):
--   warps:         max_warps_per_sm / warps per block (threads rounded up to whole warps);
--   blocks:        max_blocks_per_sm;
--   registers:     registers are allocated per warp, registers_per_thread x 32 rounded up to
--                  256; each of the 4 sub-partitions holds registers_per_sm / 4 and whole
--                  warps; 0 when a block exceeds registers_per_block (the hardware check
--                  rounds a block's warps up to a multiple of the sub-partitions);
--   shared memory: shared_memory_per_sm_bytes at the largest carveout / (the block's shared
--                  memory + the 1 KB the driver reserves per block on cc >= 8.0, rounded up
--                  to 128 bytes on cc >= 8.0, 256 before); 0 beyond the opt-in limit.
-- The driver may choose a smaller carveout for a kernel that needs little shared memory;
-- the largest one is assumed, as Kineto does (its occupancy call passes the default
-- carveout preference, which the calculator maps to all of the SM's shared memory).
-- A limit that does not apply is NULL: no registers used, or no shared memory on cc < 8.0
-- (from 8.0 the reserved 1 KB counts for every block).
--
-- estimated_occupancy_pct is Kineto's "est. achieved occupancy %" computed for both
-- sources: the theoretical blocks per SM capped by the blocks the grid gives each SM
-- (grid blocks / SM count, a fraction), times threads per block, over the SM's threads.
-- It agrees with Kineto's own number within 1 point on every launch of the corpus where
-- Kineto's is not 0 (tests/test_kernel_occupancy.py). Kineto's is 0 for every kernel using
-- more than 48 KB of shared memory per block: it asks the calculator without the
-- per-kernel opt-in, so such a block "does not fit"; here the opt-in limit applies (the
-- kernel did run).
--
-- depends: kernels, device_occupancy_limits
--
-- @column trace_id                   Trace.
-- @column pid                        Process.
-- @column device_id                  GPU.
-- @column stream_id                  Stream.
-- @column start_ns                   Kernel start (ns).
-- @column duration_ns                Kernel duration (ns).
-- @column name                       Kernel name.
-- @column short_name                 Kernel function name without templates and parameters.
-- @column threads_per_block          block_x * block_y * block_z.
-- @column grid_blocks                grid_x * grid_y * grid_z.
-- @column registers_per_thread       Registers per thread.
-- @column shared_memory_bytes        Shared memory per block, static + dynamic (bytes).
-- @column block_limit_warps          Blocks per SM the warp slots allow.
-- @column block_limit_blocks         Blocks per SM the block slots allow.
-- @column block_limit_registers      Blocks per SM the register file allows (NULL: no registers used).
-- @column block_limit_shared_memory  Blocks per SM shared memory allows (NULL: none used, cc < 8.0).
-- @column active_blocks_per_sm       Blocks resident on one SM at once: the least limit.
-- @column active_warps_per_sm        active_blocks_per_sm x warps per block.
-- @column theoretical_occupancy_pct  active_warps_per_sm, % of max_warps_per_sm.
-- @column estimated_occupancy_pct    Kineto's estimate: active blocks capped by grid_blocks / SM count,
--                                    x threads per block, % of the SM's threads.
-- @column limiter                    The limit that sets active_blocks_per_sm: 'warps', 'blocks',
--                                    'registers' or 'shared memory' (on a tie, in that order: a tie
--                                    with the warp or block slots means the registers or shared
--                                    memory are not what holds occupancy down).
CREATE OR REPLACE VIEW kernel_occupancy AS
WITH launch AS (
    SELECT k.trace_id, k.pid, k.device_id, k.stream_id, k.start_ns, k.duration_ns, k.name, k.short_name,
           CAST(k.block_x AS BIGINT) * k.block_y * k.block_z AS threads_per_block,
           CAST(k.grid_x AS BIGINT) * k.grid_y * k.grid_z AS grid_blocks,
           k.registers_per_thread, k.shared_memory_bytes,
           d.sm_count, d.warp_size, d.max_warps_per_sm, d.max_blocks_per_sm, d.registers_per_sm,
           d.registers_per_block, d.max_registers_per_thread, d.register_allocation_unit, d.sub_partitions,
           d.shared_memory_per_sm_bytes, d.shared_memory_per_block_optin_bytes,
           d.shared_memory_allocation_unit_bytes, d.reserved_shared_memory_per_block_bytes
    FROM kernels k
    LEFT JOIN device_occupancy_limits d ON d.trace_id = k.trace_id AND d.device_id = k.device_id
    WHERE k.registers_per_thread IS NOT NULL AND k.block_x IS NOT NULL
),
sized AS (
    SELECT *,
           (threads_per_block + warp_size - 1) // warp_size AS warps_per_block,
           (registers_per_thread * warp_size + register_allocation_unit - 1)
               // register_allocation_unit * register_allocation_unit AS registers_per_warp,
           (shared_memory_bytes + reserved_shared_memory_per_block_bytes + shared_memory_allocation_unit_bytes - 1)
               // shared_memory_allocation_unit_bytes * shared_memory_allocation_unit_bytes AS shared_memory_per_block
    FROM launch
),
limits AS (
    SELECT *,
           max_warps_per_sm // warps_per_block AS block_limit_warps,
           max_blocks_per_sm AS block_limit_blocks,
           CASE WHEN registers_per_thread = 0 THEN NULL
                WHEN registers_per_thread > max_registers_per_thread
                  OR registers_per_warp * ((warps_per_block + sub_partitions - 1) // sub_partitions * sub_partitions)
                     > registers_per_block THEN 0
                ELSE registers_per_sm // sub_partitions // registers_per_warp * sub_partitions // warps_per_block
           END AS block_limit_registers,
           CASE WHEN shared_memory_per_block = 0 THEN NULL
                WHEN shared_memory_bytes > shared_memory_per_block_optin_bytes THEN 0
                ELSE shared_memory_per_sm_bytes // shared_memory_per_block
           END AS block_limit_shared_memory
    FROM sized
    WHERE threads_per_block > 0
),
active AS (
    SELECT *,
           CASE WHEN block_limit_warps IS NOT NULL AND block_limit_blocks IS NOT NULL
                 AND (registers_per_thread = 0 OR block_limit_registers IS NOT NULL)
                 AND (shared_memory_per_block = 0 OR block_limit_shared_memory IS NOT NULL)
                THEN least(block_limit_warps, block_limit_blocks, block_limit_registers, block_limit_shared_memory)
           END AS active_blocks_per_sm
    FROM limits
)
SELECT trace_id, pid, device_id, stream_id, start_ns, duration_ns, name, short_name, threads_per_block, grid_blocks,
       registers_per_thread, shared_memory_bytes,
       CAST(block_limit_warps AS BIGINT) AS block_limit_warps,
       CAST(block_limit_blocks AS BIGINT) AS block_limit_blocks,
       CAST(block_limit_registers AS BIGINT) AS block_limit_registers,
       CAST(block_limit_shared_memory AS BIGINT) AS block_limit_shared_memory,
       CAST(active_blocks_per_sm AS BIGINT) AS active_blocks_per_sm,
       CAST(active_blocks_per_sm * warps_per_block AS BIGINT) AS active_warps_per_sm,
       100.0 * active_blocks_per_sm * warps_per_block / max_warps_per_sm AS theoretical_occupancy_pct,
       100.0 * least(active_blocks_per_sm, grid_blocks / sm_count) * threads_per_block
           / (max_warps_per_sm * warp_size) AS estimated_occupancy_pct,
       CASE WHEN active_blocks_per_sm IS NULL THEN NULL
            WHEN active_blocks_per_sm = block_limit_warps THEN 'warps'
            WHEN active_blocks_per_sm = block_limit_blocks THEN 'blocks'
            WHEN active_blocks_per_sm = block_limit_registers THEN 'registers'
            ELSE 'shared memory' END AS limiter
FROM active;
