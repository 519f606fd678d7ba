-- process_group_calls: the process group of each collective call. The group is the one
-- Kineto recorded on the call ('Process Group Name', with its description and ranks);
-- a call launched before the profiling window records none and is taken to be of the
-- run's group when the run recorded exactly one (as collective_instance_ranks matches
-- it); otherwise, and in traces that record no groups (Nsight exports whose NCCL NVTX
-- ranges carry no payload, Kineto traces before 2023), the call is of the group ''
-- (unrecorded), whose members are the ranks of the run that launched collectives. One
-- row per collective call.
--
-- depends: collectives
--
-- @column trace_id            Trace.
-- @column pid                 Process.
-- @column call_index          collectives.call_index.
-- @column run_id              Distributed run (collectives.run_id).
-- @column rank                Rank (NULL when unknown).
-- @column group_name          Process group name ('' when the trace does not say).
-- @column group_desc          'Process Group Description' as recorded (e.g. 'default_pg'; NULL when not).
-- @column group_ranks         Member ranks as recorded ('Process Group Ranks'), else NULL.
-- @column group_size          'Group size' as recorded, else NULL.
-- @column is_recorded         True when the call itself recorded its group.
CREATE OR REPLACE VIEW process_group_calls AS
WITH named AS (
    SELECT run_id, any_value(process_group_name) AS only_name,
           count(DISTINCT process_group_name) AS names
    FROM collectives
    GROUP BY run_id
),
described AS (
    -- what the run's calls recorded about each group (the same on every call of it)
    SELECT run_id, process_group_name AS group_name, max(process_group_desc) AS group_desc,
           max(TRY_CAST(process_group_ranks AS INTEGER[])) AS group_ranks, max(group_size) AS group_size
    FROM collectives
    WHERE process_group_name IS NOT NULL
    GROUP BY ALL
)
SELECT c.trace_id, c.pid, c.call_index, c.run_id, c.rank,
       coalesce(c.process_group_name, CASE WHEN n.names = 1 THEN n.only_name END, '') AS group_name,
       d.group_desc, d.group_ranks, d.group_size, c.process_group_name IS NOT NULL AS is_recorded
FROM collectives c
JOIN named n USING (run_id)
LEFT JOIN described d ON d.run_id = c.run_id
                     AND d.group_name = coalesce(c.process_group_name, CASE WHEN n.names = 1 THEN n.only_name END);
