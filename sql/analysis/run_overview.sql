-- run_overview: every run with the change since the previous run of its workload and the
-- workload it belongs to (the index page's runs, the runs that got slower or faster, and
-- the chart across runs): the runs columns, the compared run, the change in step time
-- (else kernel time) and the workload. One row per run.
--
-- Runs linked by run_comparison (each to the latest earlier run of the same workload) form
-- one workload, named after the first file of its earliest run (by start on the epoch
-- clock, then file name). The links form a forest (one previous run per run, always an
-- earlier one), so a run's workload is the tree of its oldest ancestor, found by pointer
-- jumping: up_0 is the previous run (itself when none), up_k+1 = up_k of up_k; after 20
-- rounds up_20 is the ancestor 2^20 links up, or the oldest one: exact for chains of up
-- to a million runs. (DuckDB allows no recursive CTE over these views: they contain ASOF
-- joins.) runs and run_comparison are read once each.
--
-- depends: runs, run_comparison
--
-- @column run_id           Run (rank_runs.run_id, else the trace id).
-- @column trace_ids        The run's traces, sorted.
-- @column first_file       File name of its first trace (label).
-- @column start_epoch_ns   Start on the Unix-epoch clock (NULL when the trace clock is relative).
-- @column ranks            Processes with GPU work.
-- @column steps_per_rank   Steps recorded per rank (0 when none).
-- @column median_step_ns   Median wall time of the steady steps over all ranks (ns; NULL without steps).
-- @column kernel_ns_per_rank Kernel time per rank (ns).
-- @column idle_pct         GPU idle share of the steady steps, all ranks; without steps, of the whole trace (runs.idle_pct) (%).
-- @column previous_run_id  The previous run of the same workload (NULL for its first run).
-- @column previous_file    That run's first file.
-- @column paired_because   Why the two runs are the same program, in words (run_comparison).
-- @column compared_per     As in run_comparison: 'step' or 'run' (NULL without a previous run).
-- @column change_pct       step_change_pct when both runs record steps, else kernel_change_pct (%).
-- @column workload         The workload's label (run_workloads).
CREATE OR REPLACE VIEW run_overview AS
WITH r AS (
    SELECT run_id, trace_ids, first_file, start_epoch_ns, ranks, steps_per_rank, median_step_ns, kernel_ns_per_rank,
           idle_pct
    FROM runs
),
c AS (
    SELECT run_id, previous_run_id, paired_because, compared_per,
           coalesce(step_change_pct, kernel_change_pct) AS change_pct
    FROM run_comparison
),
up_0 AS (
    SELECT r.run_id, coalesce(c.previous_run_id, r.run_id) AS up FROM r LEFT JOIN c USING (run_id)
),
up_1 AS (SELECT a.run_id, b.up FROM up_0 a JOIN up_0 b ON b.run_id = a.up),
up_2 AS (SELECT a.run_id, b.up FROM up_1 a JOIN up_1 b ON b.run_id = a.up),
up_3 AS (SELECT a.run_id, b.up FROM up_2 a JOIN up_2 b ON b.run_id = a.up),
up_4 AS (SELECT a.run_id, b.up FROM up_3 a JOIN up_3 b ON b.run_id = a.up),
up_5 AS (SELECT a.run_id, b.up FROM up_4 a JOIN up_4 b ON b.run_id = a.up),
up_6 AS (SELECT a.run_id, b.up FROM up_5 a JOIN up_5 b ON b.run_id = a.up),
up_7 AS (SELECT a.run_id, b.up FROM up_6 a JOIN up_6 b ON b.run_id = a.up),
up_8 AS (SELECT a.run_id, b.up FROM up_7 a JOIN up_7 b ON b.run_id = a.up),
up_9 AS (SELECT a.run_id, b.up FROM up_8 a JOIN up_8 b ON b.run_id = a.up),
up_10 AS (SELECT a.run_id, b.up FROM up_9 a JOIN up_9 b ON b.run_id = a.up),
up_11 AS (SELECT a.run_id, b.up FROM up_10 a JOIN up_10 b ON b.run_id = a.up),
up_12 AS (SELECT a.run_id, b.up FROM up_11 a JOIN up_11 b ON b.run_id = a.up),
up_13 AS (SELECT a.run_id, b.up FROM up_12 a JOIN up_12 b ON b.run_id = a.up),
up_14 AS (SELECT a.run_id, b.up FROM up_13 a JOIN up_13 b ON b.run_id = a.up),
up_15 AS (SELECT a.run_id, b.up FROM up_14 a JOIN up_14 b ON b.run_id = a.up),
up_16 AS (SELECT a.run_id, b.up FROM up_15 a JOIN up_15 b ON b.run_id = a.up),
up_17 AS (SELECT a.run_id, b.up FROM up_16 a JOIN up_16 b ON b.run_id = a.up),
up_18 AS (SELECT a.run_id, b.up FROM up_17 a JOIN up_17 b ON b.run_id = a.up),
up_19 AS (SELECT a.run_id, b.up FROM up_18 a JOIN up_18 b ON b.run_id = a.up),
up_20 AS (SELECT a.run_id, b.up FROM up_19 a JOIN up_19 b ON b.run_id = a.up),
named AS (
    SELECT w.up AS root,
           arg_min(r.first_file, (r.start_epoch_ns IS NULL, coalesce(r.start_epoch_ns, 0), r.first_file)) AS workload
    FROM up_20 w JOIN r USING (run_id)
    GROUP BY w.up
)
SELECT r.*, c.previous_run_id, p.first_file AS previous_file, c.paired_because, c.compared_per, c.change_pct,
       n.workload
FROM r
LEFT JOIN c USING (run_id)
LEFT JOIN r p ON p.run_id = c.previous_run_id
JOIN up_20 w ON w.run_id = r.run_id
JOIN named n ON n.root = w.up;

-- run_workloads: which workload each run belongs to (see run_overview). One row per run.
--
-- @column run_id    Run.
-- @column workload  The first file of the workload's earliest run.
CREATE OR REPLACE VIEW run_workloads AS
SELECT run_id, workload FROM run_overview;
