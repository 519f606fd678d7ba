-- run_comparison_changes: each compared pair of runs (run_comparison) with the kernels
-- that changed most between them (run_kernel_changes): the 3 that got slower most and
-- the 3 that got faster most, in the compared unit (per rank and step when both runs
-- record steps, else per rank). The index page's "Kernels that changed" table. One row
-- per pair.
--
-- depends: run_comparison, run_kernel_changes, runs
--
-- @column run_id         Run (rank_runs.run_id, else the trace id).
-- @column previous_run_id The run it is compared with.
-- @column similarity     Jaccard similarity of their names (run_signature) (0..1).
-- @column paired_because Why the two runs are the same program, in words (run_comparison).
-- @column median_step_ns Median step wall time over all ranks (ns; NULL without steps).
-- @column previous_median_step_ns Same for the previous run (ns).
-- @column step_change_pct (median_step_ns / previous_median_step_ns - 1) x 100.
-- @column compared_per   'step' when both runs record steps, else 'run'.
-- @column kernel_ns_per_rank Kernel time per rank (ns).
-- @column previous_kernel_ns_per_rank Same for the previous run (ns).
-- @column kernel_ns_per_rank_step Kernel time per rank and step (ns); NULL when the run
--                        records no steps.
-- @column previous_kernel_ns_per_rank_step Same for the previous run (ns).
-- @column kernel_change_pct Change of kernel time in the compared unit
--                        (per step or per run) x 100; > 0: slower.
-- @column first_file     First file of the run.
-- @column previous_file  First file of the previous run.
-- @column kernels        The changed kernels, most slowed-down first: a list of
--                        run_kernel_changes rows (structs with its columns).
CREATE OR REPLACE VIEW run_comparison_changes AS
WITH run AS MATERIALIZED (SELECT run_id, first_file FROM runs),
ranked AS (
    SELECT *, coalesce(delta_ns_per_rank_step, delta_ns_per_rank) AS delta_ns,
           row_number() OVER (PARTITION BY run_id, previous_run_id,
                                           coalesce(delta_ns_per_rank_step, delta_ns_per_rank) > 0
                              ORDER BY abs(coalesce(delta_ns_per_rank_step, delta_ns_per_rank)) DESC, name) AS nth
    FROM run_kernel_changes
),
top AS (
    SELECT run_id, previous_run_id,
           list({'run_id': run_id, 'previous_run_id': previous_run_id, 'name': name, 'compared_per': compared_per,
                 'kernel_ns_per_rank': kernel_ns_per_rank, 'previous_kernel_ns_per_rank': previous_kernel_ns_per_rank,
                 'delta_ns_per_rank': delta_ns_per_rank, 'kernel_ns_per_rank_step': kernel_ns_per_rank_step,
                 'previous_kernel_ns_per_rank_step': previous_kernel_ns_per_rank_step,
                 'delta_ns_per_rank_step': delta_ns_per_rank_step, 'change_pct': change_pct}
                ORDER BY delta_ns DESC, name) AS kernels
    FROM ranked
    WHERE nth <= 3
    GROUP BY run_id, previous_run_id
)
SELECT c.*, a.first_file, b.first_file AS previous_file, coalesce(t.kernels, []) AS kernels
FROM run_comparison c
JOIN run a ON a.run_id = c.run_id
JOIN run b ON b.run_id = c.previous_run_id
LEFT JOIN top t ON t.run_id = c.run_id AND t.previous_run_id = c.previous_run_id;
