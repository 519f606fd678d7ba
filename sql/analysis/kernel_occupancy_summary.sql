-- kernel_occupancy_summary: the occupancy of each kernel launch configuration, with its GPU
-- time: which time-heavy kernels run at low occupancy, and what limits them (the trace
-- page's occupancy table). One row per trace, kernel name and configuration (threads per
-- block, registers per thread, shared memory per block) of kernel_occupancy.
--
-- depends: kernel_occupancy, kernels
--
-- @column trace_id                   Trace.
-- @column name                       Kernel name.
-- @column threads_per_block          Threads per block.
-- @column registers_per_thread       Registers per thread.
-- @column shared_memory_bytes        Shared memory per block, static + dynamic (bytes).
-- @column launches                   Launches of this kernel with this configuration.
-- @column total_ns                   Their summed duration (ns).
-- @column time_pct                   total_ns / all kernel time of the trace x 100 (%).
-- @column active_blocks_per_sm       Blocks resident on one SM at once (the least, over the launches).
-- @column theoretical_occupancy_pct  kernel_occupancy's, the least over the launches (%).
-- @column estimated_occupancy_pct    kernel_occupancy's (Kineto's estimate), weighted by duration (%).
-- @column limiter                    What sets the blocks per SM (the most common over the launches; ties to the first name).
CREATE OR REPLACE VIEW kernel_occupancy_summary AS
WITH all_kernels AS (
    SELECT trace_id, sum(duration_ns) AS kernel_ns FROM kernels GROUP BY trace_id
)
SELECT o.trace_id, o.name, o.threads_per_block, o.registers_per_thread, o.shared_memory_bytes,
       count(*) AS launches, CAST(sum(o.duration_ns) AS BIGINT) AS total_ns,
       100.0 * sum(o.duration_ns) / nullif(any_value(a.kernel_ns), 0) AS time_pct,
       min(o.active_blocks_per_sm) AS active_blocks_per_sm,
       min(o.theoretical_occupancy_pct) AS theoretical_occupancy_pct,
       sum(o.estimated_occupancy_pct * o.duration_ns) / nullif(sum(o.duration_ns), 0) AS estimated_occupancy_pct,
       mode(o.limiter ORDER BY o.limiter) AS limiter
FROM kernel_occupancy o
JOIN all_kernels a USING (trace_id)
GROUP BY o.trace_id, o.name, o.threads_per_block, o.registers_per_thread, o.shared_memory_bytes;
