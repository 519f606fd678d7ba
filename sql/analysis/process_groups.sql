-- process_groups: the process groups of each distributed run (process_group_calls) and
-- the parallelism each carries, its role, decided by the first of these that tells:
--   'name'        the group's name or description names it (Megatron's
--                 TENSOR_MODEL_PARALLEL_GROUP, torchtitan's mesh_tp / mesh_dp_shard, ...):
--                 a word tp/tensor -> 'tensor', pp/pipe/pipeline -> 'pipeline', ep/expert/moe
--                 -> 'expert', cp/context -> 'context', dp/data/fsdp/ddp/shard/replicate -> 'data';
--   'operations'  only sends and receives -> 'pipeline'; only all-to-all -> 'expert';
--   'membership'  a group of some of the world's ranks: a contiguous block (0,1 | 2,3) ->
--                 'tensor' (tensor parallelism is placed within a node), ranks a constant
--                 stride apart (0,2 | 1,3) -> 'data';
--   'framework'   a group of all ranks in a run under DDP, FSDP or DeepSpeed
--                 (parallel_framework) -> 'data';
-- else 'unknown' (a group of all ranks with plain collectives could be any).
-- One row per run and group.
--
-- depends: process_group_calls, collectives, traces, parallel_framework
--
-- @column run_id        Distributed run.
-- @column group_name    Process group name ('' when not recorded: process_group_calls).
-- @column group_desc    Its description as recorded (NULL when not).
-- @column ranks         Member ranks: as recorded, else the ranks whose calls are in the lake.
-- @column group_size    Ranks in the group (recorded, else the length of ranks; NULL when the group is not
--                       recorded and the lake lacks some of the run's ranks).
-- @column world_size    Ranks in the run (traces.world_size, else the ranks in the lake).
-- @column ranks_in_lake Member ranks whose traces are in the lake.
-- @column calls         Collective calls of the group, all ranks together.
-- @column operations    Its operations, most frequent first.
-- @column layout        'all' (every rank of the run), 'contiguous', 'strided', 'single', 'other' or
--                       'unknown' (group_size NULL).
-- @column role          'data', 'tensor', 'pipeline', 'expert', 'context' or 'unknown'.
-- @column role_basis    'name', 'operations', 'membership', 'framework' or NULL (unknown).
-- @column framework     parallel_framework.framework of the run (NULL when none is seen).
CREATE OR REPLACE VIEW process_groups AS
WITH calls AS (
    SELECT g.*, c.operation FROM process_group_calls g
    JOIN collectives c USING (trace_id, pid, call_index)
),
worlds AS (
    SELECT c.run_id, coalesce(max(t.world_size), count(DISTINCT c.rank)) AS world_size
    FROM (SELECT DISTINCT run_id, trace_id, rank FROM collectives) c JOIN traces t USING (trace_id)
    GROUP BY c.run_id
),
ops AS (
    SELECT run_id, group_name, operation, count(*) AS n FROM calls GROUP BY ALL
),
grouped AS (
    SELECT run_id, group_name, max(group_desc) AS group_desc, max(group_ranks) AS recorded_ranks,
           max(group_size) AS recorded_size, list(DISTINCT rank ORDER BY rank) FILTER (WHERE rank IS NOT NULL) AS seen,
           count(*) AS calls
    FROM calls
    GROUP BY ALL
),
shaped AS (
    SELECT g.*, w.world_size, coalesce(g.recorded_ranks, g.seen) AS ranks,
           -- a group the trace does not describe, of which the lake holds only some ranks: size unknown
           coalesce(g.recorded_size, CASE WHEN g.recorded_ranks IS NOT NULL OR len(g.seen) >= w.world_size
                                          THEN len(coalesce(g.recorded_ranks, g.seen)) END) AS group_size,
           (SELECT list(operation ORDER BY n DESC, operation) FROM ops o
            WHERE o.run_id = g.run_id AND o.group_name = g.group_name) AS operations,
           lower(g.group_name || ' ' || coalesce(g.group_desc, '')) AS words
    FROM grouped g JOIN worlds w USING (run_id)
),
laid AS (
    SELECT *, CASE WHEN group_size IS NULL THEN 'unknown'
                   WHEN group_size <= 1 THEN 'single'
                   WHEN group_size >= world_size THEN 'all'
                   WHEN len(list_distinct(list_transform(range(1, len(ranks)), lambda i: ranks[i + 1] - ranks[i]))) = 1
                        THEN CASE WHEN ranks[2] - ranks[1] = 1 THEN 'contiguous' ELSE 'strided' END
                   ELSE 'other' END AS layout,
              CASE WHEN regexp_matches(words, '(^|[^a-z])(tp|tensor)([^a-z]|$)') THEN 'tensor'
                   WHEN regexp_matches(words, '(^|[^a-z])(pp|pipe|pipeline)([^a-z]|$)') THEN 'pipeline'
                   WHEN regexp_matches(words, '(^|[^a-z])(ep|expert|moe)([^a-z]|$)') THEN 'expert'
                   WHEN regexp_matches(words, '(^|[^a-z])(cp|context)([^a-z]|$)') THEN 'context'
                   WHEN regexp_matches(words, '(^|[^a-z])(dp|data|fsdp|ddp|hsdp|shard|replicate)([^a-z]|$)') THEN 'data'
              END AS named_role
    FROM shaped
)
SELECT l.run_id, l.group_name, l.group_desc, l.ranks, CAST(l.group_size AS BIGINT) AS group_size,
       CAST(l.world_size AS BIGINT) AS world_size, len(l.seen) AS ranks_in_lake, l.calls, l.operations, l.layout,
       CASE WHEN l.named_role IS NOT NULL THEN l.named_role
            WHEN list_has_all(['send', 'recv', 'send_recv'], l.operations) THEN 'pipeline'
            WHEN l.operations = ['all_to_all'] THEN 'expert'
            WHEN l.layout = 'contiguous' THEN 'tensor'
            WHEN l.layout = 'strided' THEN 'data'
            WHEN l.layout = 'all' AND f.framework IN ('DDP', 'FSDP', 'DeepSpeed') THEN 'data'
            ELSE 'unknown' END AS role,
       CASE WHEN l.named_role IS NOT NULL THEN 'name'
            WHEN list_has_all(['send', 'recv', 'send_recv'], l.operations) OR l.operations = ['all_to_all'] THEN 'operations'
            WHEN l.layout IN ('contiguous', 'strided') THEN 'membership'
            WHEN l.layout = 'all' AND f.framework IN ('DDP', 'FSDP', 'DeepSpeed') THEN 'framework'
       END AS role_basis,
       f.framework
FROM laid l
LEFT JOIN parallel_framework f USING (run_id);
