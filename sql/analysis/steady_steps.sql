-- steady_steps: the steps of the steady state (step_phases 'steady': after the leading
-- warm-up steps), one row each with the columns of steps: the steps that `tracelake diff`
-- and the per-step figures compare.
--
-- depends: steps, step_phases
-- materialize: per trace
--
-- @column trace_id          Trace.
-- @column rank              Distributed rank (NULL when unknown).
-- @column pid               Process.
-- @column step              Range name.
-- @column step_index        Order of the step in its process (0 = first).
-- @column start_ns          Step start (ns).
-- @column end_ns            Step end (ns).
-- @column wall_ns           end_ns - start_ns.
-- @column gpu_busy_ns       Time in the step with any GPU operation running (ns).
-- @column gpu_idle_ns       wall_ns - gpu_busy_ns.
-- @column gpu_idle_pct      gpu_idle_ns / wall_ns x 100.
-- @column compute_ns        Time with compute kernels running (ns).
-- @column communication_ns  Time with communication kernels running (ns).
-- @column memcpy_ns         Time with memcpy or memset running (ns).
-- @column dataloader_ns     Time in DataLoader iteration on the CPU (ns).
-- @column step_rule         Rule that found the step (steps.step_rule).
-- @column host_start_ns     Start of the step's host range (steps.host_start_ns).
-- @column host_end_ns       End of the step's host range (ns).
-- @column host_wall_ns      host_end_ns - host_start_ns.
-- @column step_time_basis   'host' or 'gpu': what defined start_ns (steps.step_time_basis).
CREATE OR REPLACE VIEW steady_steps AS
SELECT s.*
FROM steps s
JOIN step_phases p USING (trace_id, pid, step_index)
WHERE p.phase = 'steady';
