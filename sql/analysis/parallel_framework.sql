-- parallel_framework: which data-parallel framework a run's ranks ran under, from the
-- operators and ranges it records: FSDP (FSDP2's 'FSDP::...' ranges, FSDP1's
-- 'FullyShardedDataParallel...'), Megatron / Transformer Engine ('megatron',
-- 'transformer_engine', 'te::' names), DeepSpeed ('deepspeed' names) or DDP
-- ('DistributedDataParallel.forward', the reducer's 'reducer::' operators). The first
-- that matches in that order wins (FSDP and Megatron wrap modules that may also use DDP's
-- names). One row per run with collectives; framework NULL when none is seen.
--
-- depends: collectives, cpu_ops, annotations
--
-- @column run_id     Distributed run (collectives.run_id).
-- @column framework  'FSDP', 'Megatron', 'DeepSpeed', 'DDP' or NULL.
-- @column evidence   A name that told: of the deciding framework's names, the first in text order
--                    (NULL when none).
CREATE OR REPLACE VIEW parallel_framework AS
WITH members AS (
    SELECT DISTINCT run_id, trace_id FROM collectives
),
names AS (
    SELECT trace_id, name FROM cpu_ops
    WHERE regexp_matches(name, '^FSDP::|FullyShardedDataParallel|megatron|transformer_engine|^te::|deepspeed|DistributedDataParallel|reducer::', 'i')
    UNION ALL
    SELECT trace_id, name FROM annotations
    WHERE regexp_matches(name, '^FSDP::|FullyShardedDataParallel|megatron|transformer_engine|^te::|deepspeed|DistributedDataParallel|reducer::', 'i')
),
told AS (
    SELECT m.run_id, n.name,
           CASE WHEN regexp_matches(n.name, '^FSDP::|FullyShardedDataParallel', 'i') THEN 1
                WHEN regexp_matches(n.name, 'megatron|transformer_engine|^te::', 'i') THEN 2
                WHEN regexp_matches(n.name, 'deepspeed', 'i') THEN 3
                ELSE 4 END AS priority
    FROM members m JOIN names n USING (trace_id)
),
best AS (
    SELECT run_id, arg_min(name, (priority, name)) AS evidence, min(priority) AS priority FROM told GROUP BY run_id
)
SELECT r.run_id, CASE b.priority WHEN 1 THEN 'FSDP' WHEN 2 THEN 'Megatron' WHEN 3 THEN 'DeepSpeed'
                                 WHEN 4 THEN 'DDP' END AS framework, b.evidence
FROM (SELECT DISTINCT run_id FROM members) r
LEFT JOIN best b USING (run_id);
