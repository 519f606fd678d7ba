-- step_time_split: each step split into time with compute kernels running, GPU busy
-- without compute (communication, copies, memsets only) and GPU idle; the three add up to
-- the step's GPU view (steps). is_first_process marks the process the trace page charts.
-- One row per trace, process and step.
--
-- depends: steps
--
-- @column trace_id          Trace.
-- @column pid               Process.
-- @column step_index        Order of the step in its process.
-- @column step              Step name.
-- @column compute_ns        Time with a compute kernel running (ns).
-- @column non_compute_ns    GPU busy without compute: gpu_busy_ns - compute_ns (ns).
-- @column idle_ns           GPU idle in the step (ns).
-- @column is_first_process  pid is the trace's lowest process with steps.
CREATE OR REPLACE VIEW step_time_split AS
SELECT trace_id, pid, step_index, step, compute_ns, gpu_busy_ns - compute_ns AS non_compute_ns,
       gpu_idle_ns AS idle_ns, pid = min(pid) OVER (PARTITION BY trace_id) AS is_first_process
FROM steps;
