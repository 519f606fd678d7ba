-- run_overview: every run with the change since the previous run of its workload (the
-- index page's runs, the runs that got slower or faster, and the chart across runs): the
-- runs columns, the compared run, the change in step time (else kernel time) and the
-- workload (run_workloads). One row per run.
--
-- depends: runs, run_comparison, run_workloads
--
-- @column run_id           Run (rank_runs.run_id, else the trace id).
-- @column trace_ids        The run's traces, sorted.
-- @column first_file       File name of its first trace (label).
-- @column start_epoch_ns   Start on the Unix-epoch clock (NULL when the trace clock is relative).
-- @column ranks            Processes with GPU work.
-- @column steps_per_rank   Steps recorded per rank (0 when none).
-- @column median_step_ns   Median step wall time over all ranks (ns; NULL without steps).
-- @column kernel_ns_per_rank Kernel time per rank (ns).
-- @column idle_pct         Mean GPU idle share over the ranks (%).
-- @column previous_run_id  The previous run of the same workload (NULL for its first run).
-- @column previous_file    That run's first file.
-- @column compared_per     As in run_comparison: 'step' or 'run' (NULL without a previous run).
-- @column change_pct       step_change_pct when both runs record steps, else kernel_change_pct (%).
-- @column workload         The workload's label (run_workloads).
CREATE OR REPLACE VIEW run_overview AS
SELECT r.run_id, r.trace_ids, r.first_file, r.start_epoch_ns, r.ranks, r.steps_per_rank, r.median_step_ns,
       r.kernel_ns_per_rank, r.idle_pct, c.previous_run_id, p.first_file AS previous_file, c.compared_per,
       coalesce(c.step_change_pct, c.kernel_change_pct) AS change_pct, w.workload
FROM runs r
LEFT JOIN run_comparison c USING (run_id)
LEFT JOIN runs p ON p.run_id = c.previous_run_id
LEFT JOIN run_workloads w ON w.run_id = r.run_id;
