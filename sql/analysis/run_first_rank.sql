-- run_first_rank: the trace of the lowest rank of each distributed run (rank_runs with
-- more than one rank): the index page lists the run's ranks side by side under it. One
-- row per distributed run.
--
-- depends: rank_runs
--
-- @column run_id    Distributed run (rank_runs.run_id).
-- @column trace_id  The trace of its lowest rank.
CREATE OR REPLACE VIEW run_first_rank AS
SELECT run_id, arg_min(trace_id, rank) AS trace_id
FROM rank_runs
GROUP BY run_id
HAVING count(DISTINCT rank) > 1;
