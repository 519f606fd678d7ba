-- Parallelism rules, each a view with the columns of findings (see findings.sql):
-- exposed_communication and late_prefetch.
--
-- finding_exposed_communication: the process group whose communication nothing hid costs
-- the most in the steady steps of a distributed run (comm_overlap_groups): its exposed
-- time per step and rank, at least 5 % of the step (a warning from 20 %). The advice is
-- for the framework the run used (parallel_framework), else for the group's role. One
-- row per run, on the trace of the rank with the most exposed time in that group, at its
-- first collective of the group.
--
-- depends: comm_overlap_groups, comm_overlap, steady_steps, process_group_calls, collectives
--
-- @column trace_id     Trace.
-- @column rule         Rule name.
-- @column severity     'warning' or 'info'.
-- @column pid          Process.
-- @column device_id    GPU.
-- @column stream_id    Stream.
-- @column start_ns     Start of the group's first collective on that rank (ns, trace clock).
-- @column duration_ns  Exposed time of the group on that rank over the steady steps (ns).
-- @column evidence     What was seen.
-- @column advice       What to do.
CREATE OR REPLACE VIEW finding_exposed_communication AS
WITH worst AS (
    SELECT * FROM comm_overlap_groups
    WHERE exposed_pct >= 5
    QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY exposed_ns DESC, group_name) = 1
),
on_rank AS (
    SELECT o.run_id, o.trace_id, o.pid, sum(o.exposed_ns) AS exposed_ns
    FROM comm_overlap o
    JOIN steady_steps s USING (trace_id, pid, step_index)
    JOIN worst w ON w.run_id = o.run_id AND w.group_name = o.group_name AND w.worst_rank IS NOT DISTINCT FROM o.rank
    GROUP BY o.run_id, o.trace_id, o.pid
    QUALIFY row_number() OVER (PARTITION BY o.run_id ORDER BY sum(o.exposed_ns) DESC, o.trace_id, o.pid) = 1
),
anchor AS (
    SELECT r.run_id, c.trace_id, c.pid, c.device_id, c.stream_id, c.start_ns
    FROM on_rank r
    JOIN worst w USING (run_id)
    JOIN process_group_calls g ON g.trace_id = r.trace_id AND g.pid = r.pid AND g.group_name = w.group_name
    JOIN collectives c ON c.trace_id = g.trace_id AND c.pid = g.pid AND c.call_index = g.call_index
    QUALIFY row_number() OVER (PARTITION BY r.run_id ORDER BY c.start_ns, c.call_index) = 1
)
SELECT a.trace_id, 'exposed_communication' AS rule, CASE WHEN w.exposed_pct >= 20 THEN 'warning' ELSE 'info' END AS severity,
       a.pid, a.device_id, a.stream_id, a.start_ns, CAST(r.exposed_ns AS BIGINT) AS duration_ns,
       printf('process group %s (%s%s, %s ranks) exposed %.3f ms of communication per step and rank (%.1f %% of '
              || 'the step; compute hid %.0f %% of its %.3f ms); most on rank %s (%.3f ms per step)',
              CASE WHEN w.group_name = '' THEN '(not recorded)' ELSE '''' || w.group_name || '''' END,
              CASE WHEN w.role = 'unknown' THEN 'role unknown' ELSE w.role || ' parallel' END, CASE WHEN w.group_desc IS NOT NULL THEN ', ' || w.group_desc ELSE '' END,
              coalesce(CAST(w.group_size AS VARCHAR), '?'), w.exposed_ns / 1e6, w.exposed_pct,
              coalesce(w.overlap_pct, 0), w.communication_ns / 1e6, coalesce(CAST(w.worst_rank AS VARCHAR), '?'),
              w.worst_rank_exposed_ns / 1e6) AS evidence,
       CASE w.framework
            WHEN 'DDP' THEN 'DDP overlaps a bucket''s all-reduce with the rest of the backward: tune bucket_cap_mb '
                || '(smaller buckets start communicating earlier, larger ones cost fewer launches), set '
                || 'gradient_as_bucket_view=True, and keep the backward free of syncs and unused parameters '
                || '(find_unused_parameters) so the buckets overlap; the last bucket stays exposed.'
            WHEN 'FSDP' THEN 'Let FSDP prefetch: forward_prefetch=True and backward_prefetch=BACKWARD_PRE (FSDP1) or '
                || 'set_modules_to_forward_prefetch / set_modules_to_backward_prefetch (FSDP2), keep '
                || 'limit_all_gathers=True so prefetched all-gathers do not stall on memory, and consider '
                || 'reshard_after_forward=False for the last blocks.'
            WHEN 'Megatron' THEN 'Turn on Megatron''s overlap: --overlap-grad-reduce and --overlap-param-gather for '
                || 'data parallel, --tp-comm-overlap (Transformer Engine userbuffers) with sequence parallel for '
                || 'tensor parallel.'
            WHEN 'DeepSpeed' THEN 'Set overlap_comm and contiguous_gradients in the ZeRO config and tune '
                || 'reduce_bucket_size / allgather_bucket_size.'
            ELSE CASE w.role
                WHEN 'data' THEN 'Overlap the gradient communication with the backward (DDP buckets, FSDP prefetch) '
                    || 'instead of reducing after it.'
                WHEN 'tensor' THEN 'Overlap tensor-parallel communication with the GEMMs (Transformer Engine '
                    || '--tp-comm-overlap, async tensor parallel) or keep the group within NVLink.'
                WHEN 'pipeline' THEN 'Raise the number of micro-batches or use an interleaved schedule, so sends '
                    || 'and receives hide behind other micro-batches'' compute.'
                WHEN 'expert' THEN 'Overlap the all-to-all dispatch with expert compute (chunked or pipelined '
                    || 'dispatch) and balance the tokens per expert.'
                ELSE 'Launch the collective while independent compute still runs (async_op=True, or on its own '
                    || 'stream), split it to start earlier, or make it smaller.'
            END
       END AS advice
FROM worst w
JOIN on_rank r USING (run_id)
JOIN anchor a USING (run_id);

-- finding_late_prefetch: FSDP's all-gathers kept the compute stream waiting (late
-- prefetch: fsdp_prefetch_steps) for at least 5 % of the steady steps of a rank (a warning
-- from 20 %), on the rank of the run that waited most. The advice tells apart an
-- all-gather that was late because another rank joined it late (its wait for the last
-- rank, peer_wait_ns, is most of the lateness: prefetching earlier here does not help),
-- a forward that does not prefetch, and prefetches not far enough ahead. One row per
-- run, at the rank's first late all-gather.
--
-- depends: fsdp_prefetch_steps, fsdp_prefetch, steady_steps, collectives
--
-- @column trace_id     Trace.
-- @column rule         Rule name.
-- @column severity     'warning' or 'info'.
-- @column pid          Process.
-- @column device_id    GPU.
-- @column stream_id    The compute stream that waited.
-- @column start_ns     Start of the rank's first late all-gather in the steady steps (ns, trace clock).
-- @column duration_ns  The compute stream's waits for all-gathers over the rank's steady steps (ns).
-- @column evidence     What was seen.
-- @column advice       What to do.
CREATE OR REPLACE VIEW finding_late_prefetch AS
WITH steady AS (
    SELECT f.* FROM fsdp_prefetch_steps f JOIN steady_steps s USING (trace_id, pid, step_index)
),
per_rank AS (
    SELECT run_id, trace_id, pid, any_value(rank) AS rank, count(*) AS steps, sum(wait_ns) AS wait_ns,
           avg(wait_ns) AS wait_per_step_ns, avg(wait_pct) AS wait_pct, sum(forward_wait_ns) AS forward_wait_ns,
           sum(backward_wait_ns) AS backward_wait_ns, sum(peer_wait_ns) AS peer_wait_ns,
           sum(all_gathers) AS all_gathers, sum(late) AS late, sum(prefetched) AS prefetched
    FROM steady
    GROUP BY run_id, trace_id, pid
    QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY avg(wait_ns) DESC, any_value(rank)) = 1
),
forward_prefetched AS (
    SELECT trace_id, pid, count(*) FILTER (WHERE prefetched) AS prefetched, count(*) AS gathers
    FROM fsdp_prefetch WHERE pass = 'forward'
    GROUP BY ALL
),
anchor AS (
    SELECT f.trace_id, f.pid, c.device_id, f.consumer_stream_id AS stream_id, f.start_ns
    FROM fsdp_prefetch f
    JOIN per_rank r USING (trace_id, pid)
    JOIN steady_steps s USING (trace_id, pid, step_index)
    JOIN collectives c ON c.trace_id = f.trace_id AND c.pid = f.pid AND c.call_index = f.call_index
    WHERE f.is_late
    QUALIFY row_number() OVER (PARTITION BY f.trace_id, f.pid ORDER BY f.start_ns, f.call_index) = 1
)
SELECT r.trace_id, 'late_prefetch' AS rule, CASE WHEN r.wait_pct >= 20 THEN 'warning' ELSE 'info' END AS severity,
       r.pid, a.device_id, a.stream_id, a.start_ns, CAST(r.wait_ns AS BIGINT) AS duration_ns,
       printf('FSDP all-gathers kept the compute stream of rank %s waiting %.3f ms per step (%.1f %% of the step): '
              || '%d of %d all-gathers late over %d steady steps, %.3f ms per step in the forward and %.3f ms in the '
              || 'backward; %.0f %% of the wait was the all-gathers waiting for another rank to join',
              coalesce(CAST(r.rank AS VARCHAR), '?'), r.wait_per_step_ns / 1e6, r.wait_pct, r.late, r.all_gathers,
              r.steps, r.forward_wait_ns / r.steps / 1e6, r.backward_wait_ns / r.steps / 1e6,
              100.0 * r.peer_wait_ns / nullif(r.wait_ns, 0)) AS evidence,
       CASE WHEN r.peer_wait_ns >= 0.5 * r.wait_ns
            THEN 'The all-gathers are late because another rank joins them late, not because this rank issued them '
                || 'too late: prefetching earlier here will not remove the wait. Find why that rank is behind '
                || '(collective_straggler, its host time per step: FSDP''s Python overhead, the data loader, a sync) '
                || 'and even it out first.'
            WHEN r.forward_wait_ns >= r.backward_wait_ns AND coalesce(p.prefetched, 0) < 0.5 * coalesce(p.gathers, 0)
            THEN 'The forward gathers each unit''s parameters only when the unit starts. Prefetch the next unit''s '
                || 'all-gather: set_modules_to_forward_prefetch (FSDP2) or forward_prefetch=True (FSDP1), and keep '
                || 'the host ahead of the GPU (CUDA graphs or torch.compile for launch-bound units).'
            ELSE 'The all-gathers are prefetched but still finish after the compute that needs them: prefetch two '
                || 'units ahead (set_modules_to_forward_prefetch / set_modules_to_backward_prefetch with the next '
                || 'two), wrap larger units so compute hides more, or give the all-gathers more bandwidth.'
       END AS advice
FROM per_rank r
JOIN anchor a USING (trace_id, pid)
LEFT JOIN forward_prefetched p USING (trace_id, pid)
WHERE r.wait_pct >= 5;
