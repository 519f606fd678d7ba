-- graph_phase_totals: how much of a trace's GPU work ran in CUDA graph replays, during
-- graph capture, in warm-up, or eagerly (gpu_phase_summary summed over its processes);
-- only for traces with any CUDA graph activity: a trace whose GPU work is all eager has
-- no rows. One row per trace and phase.
--
-- depends: gpu_phase_summary
--
-- @column trace_id  Trace.
-- @column phase     'replay', 'capture', 'warmup' or 'eager' (gpu_op_phases).
-- @column ops       GPU operations (kernels, copies, memsets) in the phase.
-- @column gpu_ns    Their summed durations (ns).
CREATE OR REPLACE VIEW graph_phase_totals AS
SELECT trace_id, phase, CAST(sum(ops) AS BIGINT) AS ops, CAST(sum(gpu_ns) AS BIGINT) AS gpu_ns
FROM gpu_phase_summary
GROUP BY trace_id, phase
QUALIFY bool_or(phase <> 'eager') OVER (PARTITION BY trace_id);
