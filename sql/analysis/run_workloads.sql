-- run_workloads: which workload each run belongs to: runs linked by run_comparison (each
-- to the latest earlier run of the same workload) form one workload, named after the
-- first file of its earliest run (by start on the epoch clock, then file name). The index
-- page draws a line per workload. One row per run.
--
-- The links form a forest (one previous run per run, always an earlier one), so a run's
-- workload is the tree of its oldest ancestor, found by pointer jumping: up_0 is the
-- previous run (itself when none), up_k+1 = up_k of up_k; after 20 rounds up_20 is the
-- ancestor 2^20 links up, or the oldest one: exact for chains of up to a million runs.
-- (DuckDB allows no recursive CTE over these views: they contain ASOF joins.)
--
-- depends: runs, run_comparison
--
-- @column run_id    Run.
-- @column workload  The first file of the workload's earliest run.
CREATE OR REPLACE VIEW run_workloads AS
WITH up_0 AS (
    SELECT r.run_id, coalesce(c.previous_run_id, r.run_id) AS up
    FROM runs r LEFT JOIN run_comparison c USING (run_id)
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
    FROM up_20 w JOIN runs r USING (run_id)
    GROUP BY w.up
)
SELECT w.run_id, n.workload FROM up_20 w JOIN named n ON n.root = w.up;
